"""The OpenAI API of `servesim serve` with real clients (serve_test.py runs these checks): plain
endpoints, curl (streaming and not), a Python standard-library client, bad requests, /metrics
through prometheus_client's parser, the OpenAI Node SDK and wrk when installed, one port per
replica, and clients that disconnect mid-stream or before a non-streaming answer (aborted in the
engine).
"""
import http.client
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

import serve_harness as harness
from serve_harness import MODEL, Server, check, curl, sse_events, value


def endpoint_checks(s):
    """/health, /v1/models, /version; completions from token ids and from text."""
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


def streaming_checks(s):
    """A streaming chat over curl with usage, and a streaming completion read and timed by
    http.client."""
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


def bad_request_checks(s):
    """Bad requests: OpenAI error bodies with vLLM's status codes."""
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


def metrics_checks(s):
    """/metrics after the requests of the checks above: names, types, totals, histograms."""
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


def node_sdk_checks(s):
    """The OpenAI Node SDK, when installed (skipped, and said so, without it)."""
    # --- the OpenAI Node SDK (npm `openai`), when installed: scripts/setup.sh puts it in
    # build/node (SERVESIM_NODE_MODULES overrides); skipped, and said so, without it
    build = os.path.dirname(os.path.abspath(harness.BIN))
    node_modules = os.environ.get("SERVESIM_NODE_MODULES",
                                  os.path.join(build, "node", "node_modules"))
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


def wrk_checks(s):
    """wrk, when installed: load from 64 connections."""
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


def disconnect_checks(s):
    """A streaming client that disconnects: its request is aborted in the engine."""
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


def api_checks():
    """The checks above, in order, on one server at time scale 10."""
    s = Server("--time-scale", "10")
    try:
        endpoint_checks(s)
        streaming_checks(s)
        bad_request_checks(s)
        metrics_checks(s)
        node_sdk_checks(s)
        wrk_checks(s)
        disconnect_checks(s)
    finally:
        s.stop()


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
