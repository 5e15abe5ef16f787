#!/usr/bin/env python3
"""`servesim serve` with real clients on the loopback interface, started by this test:
curl (streaming and not), a Python standard-library client (http.client), the Prometheus
text-format parser of prometheus_client on /metrics, bad requests, the waiting-queue limit and a
client that disconnects mid-stream or before a non-streaming answer (aborted in the engine),
SIGTERM (immediate and drain), one port per replica, a flood beyond the queue limit (429), a
replica outage and a latency spike.

Usage: serve_test.py SERVESIM_BINARY
"""
import atexit
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from prometheus_client.parser import text_string_to_metric_families

BIN = sys.argv[1]
MODEL = "llama-3.1-8b"
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)


# Every process this test starts is killed when it exits, however it exits: a server left behind
# keeps ctest's output pipe open, and ctest then waits for the test's timeout instead of failing.
_STARTED = []


class _Tracked(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _STARTED.append(self)


subprocess.Popen = _Tracked
atexit.register(lambda: [p.kill() for p in _STARTED if p.poll() is None])


def terminate(proc, what):
    """SIGTERM, then the exit within 20 s (a failure, and SIGKILL, if it does not come)."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        check(False, f"{what}: SIGTERM did not stop the server within 20 s")


class Server:
    """A `servesim serve` process on a free port; stopped with SIGTERM."""

    def __init__(self, *flags):
        self.proc = subprocess.Popen(
            [BIN, "serve", "--model", MODEL, "--gpu", "h100-sxm", "--port", "0", *flags],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if not m:
            raise SystemExit("server did not start: " + line + self.proc.stdout.read())
        self.port = int(m.group(1))
        self.ports = [int(p) for p in re.findall(r"http://127\.0\.0\.1:(\d+)", line)]

    def stop(self):
        self.proc.terminate()
        code, out = stopped(self)
        check(code == 0 and "stopped" in out, f"SIGTERM stops the server (exit {code}: {out!r})")

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def request(self, method, path, body=None, port=None):
        """(status, body bytes) over http.client (the standard library's client)."""
        conn = http.client.HTTPConnection("127.0.0.1", port or self.port, timeout=60)
        data = json.dumps(body) if isinstance(body, (dict, list)) else body
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        out = r.status, r.read()
        conn.close()
        return out

    def metrics(self, port=None):
        status, text = self.request("GET", "/metrics", port=port)
        check(status == 200, "/metrics answers 200")
        return {f.name: f for f in text_string_to_metric_families(text.decode())}


def curl(*args):
    return subprocess.run(["curl", "-sS", *args], capture_output=True, text=True, timeout=60)


def sse_events(text):
    return [line[len("data: "):] for line in text.split("\n") if line.startswith("data: ")]


def value(families, name, **labels):
    for s in families[name].samples:
        if s.name == name + "_total" or s.name == name:
            if all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise KeyError(name)


def main():
    s = Server("--time-scale", "10")
    try:
        # --- plain endpoints
        r = curl("-o", "/dev/null", "-w", "%{http_code}", s.url("/health"))
        check(r.stdout == "200", f"/health 200 (got {r.stdout})")
        models = json.loads(curl(s.url("/v1/models")).stdout)
        check(models["object"] == "list" and models["data"][0]["id"] == MODEL,
              f"/v1/models lists {MODEL}: {models}")
        check(json.loads(curl(s.url("/version")).stdout)["version"] == "0.19", "/version")

        # --- curl, not streaming: token ids give the prompt length, max_tokens the output
        body = {"model": MODEL, "prompt": list(range(100)), "max_tokens": 20, "ignore_eos": True}
        r = json.loads(curl(s.url("/v1/completions"), "-H", "Content-Type: application/json",
                            "-d", json.dumps(body)).stdout)
        check(r["object"] == "text_completion" and r["id"].startswith("cmpl-"), f"shape {r}")
        check(r["usage"] == {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                             "prompt_tokens_details": None}, f"usage {r['usage']}")
        check(r["choices"][0]["text"] == " hello" * 20 and
              r["choices"][0]["finish_reason"] == "length", f"choice {r['choices']}")
        # Text prompts: ceil(characters / 4) tokens (30 characters -> 8).
        r = json.loads(curl(s.url("/v1/completions"), "-d", json.dumps(
            {"model": MODEL, "prompt": "x" * 30, "max_tokens": 2})).stdout)
        check(r["usage"]["prompt_tokens"] == 8, f"30 characters are 8 tokens: {r['usage']}")

        # --- curl, streaming chat with usage: role chunk, one chunk per token, usage, [DONE]
        body = {"model": MODEL, "messages": [{"role": "user", "content": "y" * 40}],
                "max_tokens": 12, "stream": True, "stream_options": {"include_usage": True}}
        events = sse_events(curl("-N", s.url("/v1/chat/completions"), "-d",
                                 json.dumps(body)).stdout)
        check(len(events) == 1 + 12 + 1 + 1 and events[-1] == "[DONE]",
              f"chat stream has 15 events: {len(events)}")
        chunks = [json.loads(e) for e in events[:-1]]
        check(chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""},
              "chat stream opens with the assistant role")
        check(all(c["object"] == "chat.completion.chunk" for c in chunks), "chunk objects")
        check([c["choices"][0]["finish_reason"] for c in chunks[1:13]] ==
              [None] * 11 + ["length"], "finish_reason on the last token only")
        check(chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 12 and
              chunks[-1]["usage"]["prompt_tokens"] == 10, f"usage chunk {chunks[-1]}")

        # --- Python standard-library client: a streaming completion, timed
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
        conn.request("POST", "/v1/completions", body=json.dumps(
            {"model": MODEL, "prompt": [1] * 500, "max_tokens": 50, "stream": True}))
        resp = conn.getresponse()
        check(resp.status == 200 and resp.getheader("Content-Type") == "text/event-stream",
              "SSE content type")
        t0 = time.monotonic()
        arrivals, texts = [], []
        for raw in resp:
            line = raw.decode().strip()
            if not line.startswith("data: "):
                continue
            payload = line[6:]
            if payload == "[DONE]":
                break
            arrivals.append(time.monotonic() - t0)
            texts.append(json.loads(payload)["choices"][0]["text"])
        conn.close()
        check(texts == [" hello"] * 50, f"50 token chunks ({len(texts)})")
        # Tokens come one step apart: 49 gaps of a decode step (8B on H100: ~5-10 ms simulated,
        # / time scale 10), not all at once.
        span = arrivals[-1] - arrivals[0]
        check(0.02 < span * 10 < 2.0, f"49 decode steps span {span * 10:.3f} simulated s")

        # --- bad requests: OpenAI error bodies with vLLM's status codes
        def error(body, status, typ):
            st, out = s.request("POST", "/v1/completions", body)
            err = json.loads(out).get("error", {})
            check(st == status and err.get("type") == typ and err.get("code") == status and
                  err.get("message"), f"{body!r:.60}: {st} {out[:200]!r}")
        error('{"model": "llama-3.1-8b", "prompt": "a"', 400, "BadRequestError")
        error({"model": "gpt-4", "prompt": "a"}, 404, "NotFoundError")
        error({"model": MODEL}, 400, "BadRequestError")
        error({"prompt": "a"}, 400, "BadRequestError")
        error({"model": MODEL, "prompt": "a", "max_tokens": 131072}, 400, "BadRequestError")
        error({"model": MODEL, "prompt": "a", "max_tokens": 4, "min_tokens": 5}, 400,
              "BadRequestError")
        st, out = s.request("POST", "/v1/chat/completions", {"model": MODEL, "messages": []})
        check(st == 400, f"empty messages: {st}")

        # --- /metrics through the Prometheus text-format parser: names, types, totals
        time.sleep(0.2)
        fam = s.metrics()
        types = {"vllm:num_requests_running": "gauge", "vllm:num_requests_waiting": "gauge",
                 "vllm:kv_cache_usage_perc": "gauge", "vllm:prompt_tokens": "counter",
                 "vllm:generation_tokens": "counter", "vllm:request_success": "counter",
                 "vllm:prefix_cache_queries": "counter", "vllm:prefix_cache_hits": "counter",
                 "vllm:time_to_first_token_seconds": "histogram",
                 "vllm:inter_token_latency_seconds": "histogram",
                 "vllm:e2e_request_latency_seconds": "histogram"}
        for name, typ in types.items():
            check(name in fam and fam[name].type == typ, f"{name} is a {typ}")
        # Requests so far: 100+20, 8+2, 10+12, 500+50 (the refused ones count nothing).
        check(value(fam, "vllm:request_success", finished_reason="length") == 4, "4 successes")
        check(value(fam, "vllm:request_success", finished_reason="stop") == 0 and
              value(fam, "vllm:request_success", finished_reason="abort") == 0,
              "vLLM's other finish reasons, at 0")
        check(value(fam, "vllm:prompt_tokens") == 618, "prompt tokens 100+8+10+500")
        check(value(fam, "vllm:generation_tokens") == 84, "generation tokens 20+2+12+50")
        for name in ("vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds",
                     "vllm:inter_token_latency_seconds"):
            buckets = [x for x in fam[name].samples if x.name.endswith("_bucket")]
            counts = [x.value for x in buckets]
            total = [x.value for x in fam[name].samples if x.name.endswith("_count")][0]
            check(counts == sorted(counts) and buckets[-1].labels["le"] == "+Inf" and
                  counts[-1] == total, f"{name}: cumulative buckets ending at +Inf = count")
        itl_count = [x.value for x in fam["vllm:inter_token_latency_seconds"].samples
                     if x.name.endswith("_count")][0]
        check(itl_count == 19 + 1 + 11 + 49, f"one ITL per token gap: {itl_count}")
        check(value(fam, "vllm:num_requests_running") == 0, "idle: nothing running")

        # --- the OpenAI Node SDK (npm `openai`), when installed: scripts/setup.sh puts it in
        # build/node (SERVESIM_NODE_MODULES overrides); skipped, and said so, without it
        node_modules = os.environ.get("SERVESIM_NODE_MODULES",
                                      os.path.join(os.path.dirname(os.path.abspath(BIN)), "node",
                                                   "node_modules"))
        node_modules = os.path.abspath(node_modules)
        if shutil.which("node") and os.path.isdir(os.path.join(node_modules, "openai")):
            script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  "serve_openai_node.mjs")
            # An ES module resolves packages from its own folder upwards: link the modules there.
            with tempfile.TemporaryDirectory() as tmp:
                os.symlink(node_modules, os.path.join(tmp, "node_modules"))
                shutil.copy(script, tmp)
                r = subprocess.run(["node", os.path.join(tmp, "serve_openai_node.mjs"),
                                    s.url("/v1"), MODEL], capture_output=True, text=True,
                                   timeout=60)
            check(r.returncode == 0, f"OpenAI Node SDK ran: {r.stderr[-500:]}")
            if r.returncode == 0:
                seen = json.loads(r.stdout.strip().splitlines()[-1])
                check(seen["text"] == " hello" * 9 and seen["finish_reason"] == "length" and
                      seen["chunks"] == 1 + 9 + 1 and seen["usage"]["completion_tokens"] == 9,
                      f"Node SDK streaming chat: {seen}")
                check(seen["completion_text"] == " hello" * 4 and
                      seen["completion_usage"]["prompt_tokens"] == 5, f"Node SDK completion {seen}")
                check(seen["models"] == [MODEL], f"Node SDK models {seen['models']}")
                check(seen["error_status"] == 404 and seen["error_type"] == "NotFoundError",
                      f"Node SDK error {seen}")
                print("OpenAI Node SDK: streaming chat, completion, models, error checked")
        else:
            print(f"SKIPPED (part): the OpenAI Node SDK is not installed in {node_modules} "
                  "(scripts/setup.sh installs it with npm when npm is present)")

        # --- wrk (Debian) for load: 64 connections streaming completions for 3 s
        if shutil.which("wrk"):
            before = value(s.metrics(), "vllm:request_success", finished_reason="length")
            with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
                lua.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                          "wrk.body = '" + json.dumps({"model": MODEL, "prompt": [1] * 64,
                                                       "max_tokens": 32, "stream": True}) + "'\n")
            r = subprocess.run(["wrk", "-t1", "-c64", "-d3s", "--timeout", "30s", "-s", lua.name,
                                s.url("/v1/completions")], capture_output=True, text=True,
                               timeout=60)
            os.unlink(lua.name)
            m = re.search(r"(\d+) requests in", r.stdout)
            done = int(m.group(1)) if m else 0
            check(done > 64 and "Non-2xx" not in r.stdout, f"wrk load: {r.stdout}")
            time.sleep(1.5)  # the streams wrk cut end (and count as disconnects) by then
            served = value(s.metrics(), "vllm:request_success",
                           finished_reason="length") - before
            # wrk counts the streams it read to the end; the engine finished those, and those of
            # the ones wrk cut at its deadline (at most its 64 connections) that were past their
            # last token before the server saw the cut (the others were aborted).
            check(done <= served <= done + 64, f"wrk read {done} streams, the engine served {served}")
            print(f"wrk: {done} streams of 32 tokens in 3 s over 64 connections")
        else:
            print("SKIPPED (part): wrk is not installed (scripts/setup.sh installs it)")

        # --- a client that disconnects mid-stream: its request is aborted in the engine, as
        # vLLM aborts it (it leaves the batch, its KV blocks are freed, its tokens stop)
        time.sleep(1.0)  # wrk's last streams are over
        body = {"model": MODEL, "prompt": [1] * 2000, "max_tokens": 20000, "stream": True}
        fam = s.metrics()
        cut_before = value(fam, "servesim:client_disconnects")
        gen_before = value(fam, "vllm:generation_tokens")
        check(value(fam, "vllm:num_requests_running") == 0 and
              value(fam, "vllm:kv_cache_usage_perc") == 0, "idle before the stream")
        cutter = threading.Thread(target=curl, args=(
            "-N", "--max-time", "1", s.url("/v1/completions"), "-d", json.dumps(body)))
        cutter.start()
        time.sleep(0.5)
        mid = s.metrics()
        check(value(mid, "vllm:num_requests_running") == 1, "the stream's request runs")
        # 2,000 prompt tokens hold at least 125 blocks of 16.
        check(value(mid, "vllm:kv_cache_usage_perc") > 0, "its KV blocks are used")
        cutter.join()
        time.sleep(0.5)
        after = s.metrics()
        check(value(after, "servesim:client_disconnects") == cut_before + 1,
              "one disconnect counted")
        check(value(after, "vllm:num_requests_running") == 0 and
              value(after, "vllm:num_requests_waiting") == 0, "the aborted request left")
        check(value(after, "vllm:kv_cache_usage_perc") == 0, "its KV blocks were freed")
        # vLLM does not count a client's abort in request_success (its OutputProcessor drops
        # the request's state without a finished-request stat).
        check(value(after, "vllm:request_success", finished_reason="abort") == 0,
              "a client abort is not a request_success")
        got = value(after, "vllm:generation_tokens") - gen_before
        check(0 < got < 20000, f"the tokens it got count as generated: {got}")
        time.sleep(0.3)
        check(value(s.metrics(), "vllm:generation_tokens") - gen_before == got,
              "no token is generated for it after the abort")
        # Every answer is written and counted: the engine holds no request (bounded memory);
        # a released slot is reused after the engine's next slice, at most ~1 s when idle.
        deadline = time.monotonic() + 3
        while (value(s.metrics(), "servesim:engine_retained_requests") > 0 and
               time.monotonic() < deadline):
            time.sleep(0.1)
        check(value(s.metrics(), "servesim:engine_retained_requests") == 0,
              "the engine holds no finished request")
    finally:
        s.stop()

    # --- the waiting-queue limit: one seat (max_num_seqs 1), two waiting places, six requests
    # sent 0.1 s apart, each running ~1 s: the 4th, 5th and 6th find two waiting and get 503.
    s = Server("--max-num-seqs", "1", "--max-waiting-requests", "2")
    try:
        results = []

        def send():
            results.append(s.request("POST", "/v1/completions",
                                     {"model": MODEL, "prompt": [1] * 10, "max_tokens": 150}))
        threads = []
        for _ in range(6):
            threads.append(threading.Thread(target=send))
            threads[-1].start()
            time.sleep(0.1)
        for t in threads:
            t.join()
        statuses = sorted(st for st, _ in results)
        check(statuses == [200, 200, 200, 503, 503, 503], f"queue limit: {statuses}")
        for st, out in results:
            if st == 503:
                check(json.loads(out)["error"]["type"] == "ServiceUnavailableError", "503 body")
        check(value(s.metrics(), "servesim:rejected_requests") == 3, "3 rejections counted")
    finally:
        s.stop()

    shutdown_tests()
    port_per_replica_test()
    fail_rate_test()
    non_streaming_disconnect_test()
    flood_test()
    descriptor_limit_test()
    outage_test()
    latency_spike_test()

    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("serve_test: all checks passed")
    return 0


def open_stream(s, max_tokens, first_events):
    """A streaming completion on its own connection, read up to its first events."""
    return open_stream_on(s.port, max_tokens, first_events)


def read_rest(resp, events):
    """The stream's remaining events until [DONE] or the server closes it."""
    try:
        for raw in resp:
            line = raw.decode().strip()
            if line.startswith("data: "):
                events.append(line[6:])
    except (http.client.IncompleteRead, ConnectionError):
        pass  # cut mid-chunk
    return events


def stopped(s, timeout=20):
    """(exit code, the rest of its output); SIGKILL and (None, output) if it does not exit."""
    try:
        out, _ = s.proc.communicate(timeout=timeout)
        return s.proc.returncode, out
    except subprocess.TimeoutExpired:
        s.proc.kill()
        out, _ = s.proc.communicate()
        return None, out


def shutdown_tests():
    """SIGTERM as vLLM's --shutdown-mode: immediate cuts the open streams; drain answers new
    requests 503 with vLLM's body while the requests in flight finish, up to the timeout."""
    # Time scale 1: a decode step of 8B on H100 takes ~5-10 ms, so 300 tokens take >= 1.5 s.
    s = Server("--shutdown-mode", "drain")
    conn, resp, events = open_stream(s, 300, 3)
    t0 = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    st, out = s.request("POST", "/v1/completions", {"model": MODEL, "prompt": "a", "max_tokens": 2})
    check(st == 503 and json.loads(out) == {"error": "Server is unavailable. Please try again later."},
          f"drain: a new request gets vLLM's 503 ({st} {out!r})")
    st, out = s.request("GET", "/health")
    check(st == 503, f"drain: /health is 503 for a readiness probe ({st})")
    st, _ = s.request("GET", "/metrics")
    check(st == 200, "drain: /metrics still answers")
    events = read_rest(resp, events)
    conn.close()
    check(len(events) == 301 and events[-1] == "[DONE]",
          f"drain: the stream in flight finishes (300 tokens and [DONE]: {len(events)} events)")
    code, out = stopped(s)
    check(code == 0 and "stopped" in out, f"drain: exit 0 once drained ({code}: {out!r})")
    check(time.monotonic() - t0 < 15, "drain: it stops once the stream is done")

    # A drain timeout cuts the streams still open when it passes.
    s = Server("--shutdown-mode", "drain", "--shutdown-drain-timeout", "0.5")
    conn, resp, events = open_stream(s, 5000, 3)
    t0 = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    events = read_rest(resp, events)
    conn.close()
    took = time.monotonic() - t0
    code, out = stopped(s)
    check("[DONE]" not in events and 3 < len(events) < 5000 and 0.4 < took < 5,
          f"drain timeout 0.5 s: the stream is cut ({len(events)} events after {took:.2f} s)")
    check(code == 0, f"drain timeout: exit 0 ({code})")

    # Immediate (the default): the open stream is cut at once.
    s = Server()
    conn, resp, events = open_stream(s, 5000, 3)
    t0 = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    events = read_rest(resp, events)
    conn.close()
    took = time.monotonic() - t0
    code, out = stopped(s)
    check("[DONE]" not in events and took < 2, f"immediate: the stream is cut ({took:.2f} s)")
    check(code == 0 and "stopped" in out, f"immediate: exit 0 ({code})")


def port_per_replica_test():
    """--num-replicas 2 --port-per-replica: two ports, each one replica with its own metrics,
    as two vLLM instances behind an external gateway."""
    s = Server("--num-replicas", "2", "--port-per-replica", "--time-scale", "10")
    try:
        check(len(s.ports) == 2 and s.ports[0] != s.ports[1], f"two ports: {s.ports}")
        a, b = s.ports
        for port, n in ((a, 3), (b, 1)):
            for _ in range(n):
                st, out = s.request("POST", "/v1/completions",
                                    {"model": MODEL, "prompt": [1] * 50, "max_tokens": 5},
                                    port=port)
                check(st == 200 and json.loads(out)["usage"]["completion_tokens"] == 5,
                      f"port {port} answers")
        time.sleep(0.2)
        for port, n in ((a, 3), (b, 1)):
            fam = s.metrics(port)
            check(value(fam, "vllm:request_success", finished_reason="length") == n and
                  value(fam, "vllm:prompt_tokens") == 50 * n,
                  f"port {port} counts its own {n} request(s)")
    finally:
        s.stop()


def unit_draw(seed, n):
    """servesim's --fail-rate draw for request number n (server.cpp: splitmix64's finaliser)."""
    m = (1 << 64) - 1
    z = (seed + (n + 1) * 0x9e3779b97f4a7c15) & m
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & m
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & m
    z ^= z >> 31
    return (z >> 11) * 2.0 ** -53


def fail_rate_test():
    """--fail-rate 0.3 --seed 3: exactly the requests whose draw is below 0.3 get vLLM's empty
    500, in arrival order; the others are served; /metrics counts both."""
    s = Server("--fail-rate", "0.3", "--seed", "3", "--time-scale", "10")
    try:
        want = [500 if unit_draw(3, n) < 0.3 else 200 for n in range(40)]
        got = []
        for _ in range(40):
            st, out = s.request("POST", "/v1/completions",
                                {"model": MODEL, "prompt": [1] * 20, "max_tokens": 3})
            got.append(st)
            if st == 500:
                check(out == b"", f"an injected failure has an empty body: {out!r}")
        check(got == want, f"--fail-rate picks the seed's requests: {got} vs {want}")
        fails = want.count(500)
        check(0 < fails < 40, f"some fail, some not ({fails})")
        time.sleep(0.2)
        fam = s.metrics()
        check(value(fam, "servesim:injected_failures") == fails and
              value(fam, "vllm:request_success", finished_reason="length") == 40 - fails,
              "/metrics counts the injected failures and the served requests")
    finally:
        s.stop()


def non_streaming_disconnect_test():
    """A non-streaming client that goes away before its answer: its request is aborted in the
    engine (it leaves the batch, its KV blocks are freed), as the streaming case."""
    s = Server("--time-scale", "1")
    try:
        body = {"model": MODEL, "prompt": [1] * 2000, "max_tokens": 20000}
        cutter = threading.Thread(target=curl, args=(
            "--max-time", "1", s.url("/v1/completions"), "-d", json.dumps(body)))
        cutter.start()
        time.sleep(0.5)
        mid = s.metrics()
        check(value(mid, "vllm:num_requests_running") == 1 and
              value(mid, "vllm:kv_cache_usage_perc") > 0, "non-streaming: its request runs")
        cutter.join()
        time.sleep(0.4)  # seen within 50 ms, applied at the next step boundary
        after = s.metrics()
        check(value(after, "servesim:client_disconnects") == 1,
              "non-streaming: one disconnect counted")
        check(value(after, "vllm:num_requests_running") == 0 and
              value(after, "vllm:kv_cache_usage_perc") == 0,
              "non-streaming: the aborted request left, its KV blocks freed")
        gen = value(after, "vllm:generation_tokens")
        check(0 < gen < 20000, f"non-streaming: the tokens it got count ({gen})")
        time.sleep(0.3)
        check(value(s.metrics(), "vllm:generation_tokens") == gen,
              "non-streaming: no token is generated for it after the abort")
        # A client that stays gets its answer (the check does not take a live client for gone).
        st, out = s.request("POST", "/v1/completions",
                            {"model": MODEL, "prompt": [1] * 10, "max_tokens": 30})
        check(st == 200 and json.loads(out)["usage"]["completion_tokens"] == 30,
              f"non-streaming: a client that waits is answered ({st})")
    finally:
        s.stop()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def flood_test():
    """A flood: 64 clients sending 5 requests each back to back (320) against 2 seats and 5
    waiting places, refused with 429 (--max-waiting-status): only 200 and 429, never more than 5
    waiting, memory bounded, and no connection reset: the server listens with a backlog of
    max(2048, --threads), so the 64 connects of the burst all queue."""
    s = Server("--max-num-seqs", "2", "--max-waiting-requests", "5", "--max-waiting-status",
               "429")
    try:
        rss_before = rss_kib(s.proc.pid)
        results = []
        waiting_seen = []
        stop = threading.Event()

        resets = []

        def send():
            for _ in range(5):
                try:
                    results.append(s.request("POST", "/v1/completions",
                                             {"model": MODEL, "prompt": [1] * 10,
                                              "max_tokens": 40}))
                except ConnectionResetError:
                    resets.append(1)

        def scrape():
            while not stop.is_set():
                waiting_seen.append(value(s.metrics(), "vllm:num_requests_waiting"))
                time.sleep(0.02)
        scraper = threading.Thread(target=scrape)
        scraper.start()
        threads = [threading.Thread(target=send) for _ in range(64)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        scraper.join()
        statuses = [st for st, _ in results]
        ok, limited = statuses.count(200), statuses.count(429)
        # With cpp-httplib's own backlog of 5 this burst overflowed the accept queue (up to 33
        # resets with a second run beside it); with the server's backlog (>= 2048 > 64 connects)
        # none was reset in 15 floods, two at once beside a build. A margin of 3 (1 %) for a
        # loaded sanitizer run; more is a regression of the backlog.
        check(ok + limited + len(resets) == 320 and len(resets) <= 3,
              f"flood: only 200 and 429 ({sorted(set(statuses))}), {len(resets)} resets")
        check(ok >= 7 and limited > 150, f"flood: {ok} served, {limited} refused")
        bodies = [json.loads(out) for st, out in results if st == 429]
        check(all(b["error"]["type"] == "RateLimitError" and b["error"]["code"] == 429
                  for b in bodies), "flood: 429 bodies are OpenAI errors")
        check(max(waiting_seen) <= 5, f"flood: at most 5 waiting ({max(waiting_seen)})")
        fam = s.metrics()
        check(value(fam, "servesim:rejected_requests") == limited, "flood: refusals counted")
        grown = rss_kib(s.proc.pid) - rss_before
        # Under AddressSanitizer (scripts/sanitize.sh sets ASAN_OPTIONS) freed memory stays in
        # its quarantine: the bound is not checked there.
        if "ASAN_OPTIONS" not in os.environ:
            check(grown < 64 * 1024, f"flood: resident memory grew {grown} KiB (< 64 MiB)")
        print(f"flood: 320 from 64 clients, {ok} served, {limited} refused with 429, "
              f"{len(resets)} connections reset, RSS +{grown} KiB")
    finally:
        s.stop()


def descriptor_limit_test():
    """Each connection is a descriptor: the server raises its soft limit to --threads + 64, and
    refuses, naming --threads, a budget the hard limit cannot hold (prlimit, util-linux)."""
    cmd = [BIN, "serve", "--model", MODEL, "--gpu", "h100-sxm", "--port", "0", "--threads", "1000"]
    r = subprocess.run(["prlimit", "--nofile=200:200", *cmd], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 2 and "--threads: 1000 connections need 1064 file descriptors; this "
          "process may open at most 200" in r.stderr, f"descriptor limit refused: {r.stderr!r}")
    proc = subprocess.Popen(["prlimit", "--nofile=200:2000", *cmd], stdout=subprocess.PIPE,
                            text=True)
    try:
        check("listening on" in proc.stdout.readline(), "descriptor limit raised: starts")
        with open(f"/proc/{proc.pid}/limits") as f:
            soft = re.search(r"Max open files\s+(\d+)", f.read()).group(1)
        check(soft == "1064", f"descriptor limit raised to 1000 + 64 ({soft})")
    finally:
        terminate(proc, "descriptor limit raised")
    # One server per port: their connections add up.
    proc = subprocess.Popen(["prlimit", "--nofile=200:3000", *cmd, "--num-replicas", "2",
                             "--port-per-replica"], stdout=subprocess.PIPE, text=True)
    try:
        check("listening on" in proc.stdout.readline(), "descriptor limit of 2 ports: starts")
        with open(f"/proc/{proc.pid}/limits") as f:
            soft = re.search(r"Max open files\s+(\d+)", f.read()).group(1)
        check(soft == "2064", f"descriptor limit raised to 2 x 1000 + 64 ({soft})")
    finally:
        terminate(proc, "descriptor limit of 2 ports")


def outage_test():
    """--replica-outage 1@1.5-3.5 with a port per replica: the port answers as a proxy in front
    of a crashed vLLM (503, Envoy's bodies), its stream is cut, the other port serves; it comes
    back empty. With servesim's router (one port) the other replica takes every request."""
    s = Server("--num-replicas", "2", "--port-per-replica", "--replica-outage", "1@1.5-3.5")
    try:
        a, b = s.ports
        t0 = time.monotonic()
        conn, resp, events = open_stream_on(b, 5000, 3)
        blocking = []
        worker = threading.Thread(target=lambda: blocking.append(s.request(
            "POST", "/v1/completions", {"model": MODEL, "prompt": [1] * 10, "max_tokens": 2000},
            port=b)))
        worker.start()
        events = read_rest(resp, events)
        cut_after = time.monotonic() - t0
        conn.close()
        # t0 is taken after the server answered, so its clock has already run a little: the cut
        # comes at most 1.5 s after t0, earlier by the server's start-up lag (large under load).
        check("[DONE]" not in events and 0.5 < cut_after < 2.5,
              f"outage: the stream is cut at the crash ({len(events)} events, {cut_after:.2f} s)")
        worker.join()
        st, out = blocking[0]
        check(st == 503 and out.startswith(b"upstream connect error"),
              f"outage: a request in flight gets the proxy's 503 ({st} {out[:60]!r})")
        time.sleep(max(0.0, 2.0 - (time.monotonic() - t0)))
        st, out = s.request("POST", "/v1/completions",
                            {"model": MODEL, "prompt": [1] * 10, "max_tokens": 2}, port=b)
        check(st == 503 and out == b"no healthy upstream", f"outage: a new request 503 ({st})")
        check(s.request("GET", "/health", port=b)[0] == 503, "outage: /health 503")
        st, _ = s.request("POST", "/v1/completions",
                          {"model": MODEL, "prompt": [1] * 10, "max_tokens": 2}, port=a)
        check(st == 200, "outage: the other port serves")
        fam = s.metrics(b)
        check(value(fam, "vllm:kv_cache_usage_perc") == 0 and
              value(fam, "vllm:num_requests_running") == 0, "outage: the dead replica holds nothing")
        time.sleep(max(0.0, 3.7 - (time.monotonic() - t0)))
        st, _ = s.request("POST", "/v1/completions",
                          {"model": MODEL, "prompt": [1] * 10, "max_tokens": 2}, port=b)
        check(st == 200, f"outage: back at T2 ({st})")
        fam = s.metrics(b)
        check(value(fam, "servesim:outage_failures") == 3,
              "outage: the cut stream, the 503 in flight and the refused request counted")
        check(value(fam, "vllm:request_success", finished_reason="length") == 1,
              "outage: one request served on the port after")
    finally:
        s.stop()
    s = Server("--num-replicas", "2", "--router", "round-robin", "--time-scale", "10",
               "--replica-outage", "0@0-1000")
    try:
        statuses = [s.request("POST", "/v1/completions",
                              {"model": MODEL, "prompt": [1] * 10, "max_tokens": 2})[0]
                    for _ in range(6)]
        check(statuses == [200] * 6, f"outage behind servesim's router: all served {statuses}")
        check(value(s.metrics(), "servesim:outage_failures") == 0, "nothing failed")
    finally:
        s.stop()


def latency_spike_test():
    """--latency-spike 2-3:x5 at time scale 1 (the window starts 2 s after the server, so a
    request that reaches a slow-starting server late still straddles all of it): the gaps between a stream's tokens are 5 times
    longer while the spike lasts — in /metrics' ITL histogram (simulated time, exact: a decode
    step of 8B on H100, ~6.5 ms, falls in le=0.01; five of them in (0.025, 0.05]) and, roughly,
    on the wall clock (medians; printed, not checked: the machine is shared)."""
    s = Server("--latency-spike", "2-3:x5")
    try:
        t0 = time.monotonic()
        conn, resp, events = open_stream_on(s.port, 600, 0)
        times = []
        for raw in resp:
            line = raw.decode().strip()
            if line.startswith("data: "):
                if line == "data: [DONE]":
                    break
                times.append(time.monotonic() - t0)
        conn.close()
        check(len(times) == 600, f"spike: 600 tokens ({len(times)})")
        time.sleep(0.2)
        itl = {x.labels["le"]: x.value for x in
               s.metrics()["vllm:inter_token_latency_seconds"].samples
               if x.name.endswith("_bucket")}
        fast, inside = itl["0.01"], itl["0.05"] - itl["0.025"]
        # 1 s of steps of ~32 ms: ~31 gaps inside the window, the other gaps one step each.
        check(itl["0.025"] == fast and fast + inside == 599 and 20 < inside < 45,
              f"spike: {inside:.0f} gaps of 5 steps, {fast:.0f} of one ({itl})")
        slow = sorted(b - a for a, b in zip(times, times[1:]) if 2.1 < a and b < 2.9)
        quick = sorted(b - a for a, b in zip(times, times[1:]) if b < 1.9 or a > 3.1)
        if len(slow) > 10 and len(quick) > 10:
            print(f"latency spike x5: {inside:.0f} gaps inside; wall-clock median gap ratio "
                  f"{slow[len(slow) // 2] / quick[len(quick) // 2]:.2f}")
    finally:
        s.stop()


def open_stream_on(port, max_tokens, first_events):
    """A streaming completion on `port`, read up to its first events."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("POST", "/v1/completions", body=json.dumps(
        {"model": MODEL, "prompt": [1] * 10, "max_tokens": max_tokens, "stream": True}))
    resp = conn.getresponse()
    events = []
    while len(events) < first_events:
        line = resp.readline().decode().strip()
        if line.startswith("data: "):
            events.append(line[6:])
    return conn, resp, events


if __name__ == "__main__":
    sys.exit(main())
