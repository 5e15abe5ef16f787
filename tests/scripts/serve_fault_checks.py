"""Faults and shutdown of `servesim serve` (serve_test.py runs these checks): SIGTERM (immediate,
drain, drain timeout), injected failures (--fail-rate), a replica outage (--replica-outage) and a
latency spike (--latency-spike).
"""
import json
import signal
import threading
import time

from serve_harness import (MODEL, Server, check, open_stream, open_stream_on, read_rest, stopped,
                           value)


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
