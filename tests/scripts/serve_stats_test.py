#!/usr/bin/env python3
"""2,000 Poisson requests through `servesim serve` (with --time-scale) against `servesim
simulate` on the same arrivals (a CSV trace): the TTFT and ITL distributions the client measures
equal simulate's within the server's measured overhead (a KS test with that allowance), and the
counters of /metrics equal the result file's totals exactly.

Why an allowance. The client measures wall time × S. Each value can be off by the lateness of
the chunk sends (measured by the server: servesim:token_send_lateness_seconds) and by the delay
of the request reaching the engine (it enters at the simulated time it is received; the client
measures from its send), both in wall seconds, so × S in simulated seconds. Two checks:
  1. Shape (the KS test the issue asks for): with a shift of at most δ between two samples of one
     distribution, F_client(x) lies between F_sim(x − δ) and F_sim(x + δ). With δ = S × (p99 send
     lateness + p99 loopback round trip), both measured during the run, the shifted distance
       D_δ = sup_x max(F_client(x) − F_sim(x + δ), F_sim(x − δ) − F_client(x), 0)
     must be under the two-sample KS critical value at α = 0.001 plus the 1 % the p99s leave out.
  2. Location: the medians differ by at most the typical overhead (the median is robust to the
     tail of the jitter): for ITL, S × the median send lateness (a gap is off by the difference
     of two latenesses); for TTFT, S × (median send lateness + 2 × the median round trip of a
     probe request like the load's (new connection, a 550-token body parsed, an error answer) +
     the client's median lag behind its schedule — a client thread that starts late also reads
     late on a busy machine). The round trip counts twice: a TTFT crosses the loopback on the
     way in and again for the first chunk, under the load of ~20 streams, where the probe
     measures one lone exchange (one round trip fell short by 0.2 ms wall in a full ctest run).
The p99 allowance is wide on a busy 2-core machine (a few ms × S), so check 1 alone would pass an
engine far off; check 2 is what refuses one. The test also runs both checks against simulate's
ITL × 1.5 and TTFT × 2 and requires them to fail there: the resolution it has at time scale 2.5
on this shared 2-core machine (runs here: ITL medians within 0.02 ms, so ITL resolves much
less than 1.5×; TTFT medians 3.4-4.5 ms apart, the client's overhead).

Usage: serve_stats_test.py SERVESIM_BINARY [REQUESTS] [RATE] [TIME_SCALE]
"""
import bisect
import http.client
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

from prometheus_client.parser import text_string_to_metric_families

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
RATE = float(sys.argv[3]) if len(sys.argv) > 3 else 16.0
SCALE = float(sys.argv[4]) if len(sys.argv) > 4 else 2.5
MODEL = "llama-3.1-8b"
DEPLOY = ["--model", MODEL, "--gpu", "h100-sxm", "--max-model-len", "4096"]


def ecdf(xs):
    xs = sorted(xs)
    n = len(xs)
    return lambda x: bisect.bisect_right(xs, x) / n


def ks(a, b, delta=0.0):
    """sup over the pooled points of the δ-shifted distance (delta = 0: the plain KS D)."""
    fa, fb = ecdf(a), ecdf(b)
    d = 0.0
    for x in a + b:
        for y in (x, x - 1e-12):
            d = max(d, fa(y) - fb(y + delta), fb(y - delta) - fa(y))
    return d


def ks_critical(n, m, alpha=0.001):
    c = math.sqrt(-math.log(alpha / 2) / 2)
    return c * math.sqrt((n + m) / (n * m))


def quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def histogram_quantile(fam, q):
    """Upper bound of the bucket holding quantile q (a bound on it, as Prometheus buckets allow)."""
    buckets = [(float(s.labels["le"]), s.value) for s in fam.samples if s.name.endswith("_bucket")]
    total = buckets[-1][1]
    for le, c in buckets:
        if c >= q * total:
            return le
    return math.inf


def main():
    rng = random.Random(11)
    t, reqs = 0.0, []
    for _ in range(N):
        t += rng.expovariate(RATE)
        reqs.append((t, rng.randint(100, 1000), rng.randint(16, 128)))
    tmp = tempfile.mkdtemp(prefix="serve_stats_")
    trace = os.path.join(tmp, "arrivals.csv")
    with open(trace, "w") as f:
        f.write("arrival_s,prompt_tokens,output_tokens\n")
        for a, p, o in reqs:
            f.write(f"{a:.9f},{p},{o}\n")
    subprocess.run([BIN, "simulate", *DEPLOY, "--dataset-name", "trace", "--trace", trace,
                    "--trace-format", "csv", "--save-detailed", "--result-dir", tmp,
                    "--result-filename", "sim.json"], check=True, capture_output=True)
    with open(os.path.join(tmp, "sim.json")) as f:
        sim = json.load(f)
    sim_ttft = [x for x in sim["ttfts"]]
    sim_itl = [x for per in sim["itls"] for x in per]

    proc = subprocess.Popen([BIN, "serve", *DEPLOY, "--port", "0", "--time-scale", str(SCALE)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+)", proc.stdout.readline()).group(1))
        ttft, itl, errors, rtts, lags = [None] * N, [None] * N, [], [], []

        def one(i, prompt, output, due):
            body = json.dumps({"model": MODEL, "prompt": [1] * prompt, "max_tokens": output,
                               "ignore_eos": True, "stream": True})
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
                t0 = time.monotonic()
                lags.append(t0 - due)
                conn.request("POST", "/v1/completions", body=body)
                resp = conn.getresponse()
                times = []
                for raw in resp:
                    if raw.startswith(b"data: "):
                        times.append(time.monotonic())
                conn.close()
                times = times[:-1]  # [DONE]
                if len(times) != output:
                    errors.append(f"request {i}: {len(times)} tokens, expected {output}")
                    return
                ttft[i] = (times[0] - t0) * SCALE
                itl[i] = [(b - a) * SCALE for a, b in zip(times, times[1:])]
            except Exception as e:  # noqa: BLE001 - reported as a failure below
                errors.append(f"request {i}: {e}")

        probe_body = json.dumps({"model": "no-such-model", "prompt": [1] * 550})

        def probe():
            # The round trip of a request like the load's (a new connection, a 550-token body
            # parsed, an error answer) while the load runs: part of the allowance.
            while not done.is_set():
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                t0 = time.monotonic()
                c.request("POST", "/v1/completions", body=probe_body)
                c.getresponse().read()
                rtts.append(time.monotonic() - t0)
                c.close()
                time.sleep(0.05)

        done = threading.Event()
        prober = threading.Thread(target=probe)
        prober.start()
        start = time.monotonic()
        threads = []
        for i, (a, p, o) in enumerate(reqs):
            delay = start + a / SCALE - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            threads.append(threading.Thread(target=one, args=(i, p, o, start + a / SCALE)))
            threads[-1].start()
        for th in threads:
            th.join()
        done.set()
        prober.join()
        wall = time.monotonic() - start
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", "/metrics")
        fam = {f.name: f for f in text_string_to_metric_families(conn.getresponse().read().decode())}
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    failures = list(errors[:5])

    def counter(name):
        return sum(s.value for s in fam[name].samples if s.name == name + "_total")

    # Counters: exact.
    for metric, key in (("vllm:request_success", "completed"),
                        ("vllm:prompt_tokens", "total_input_tokens"),
                        ("vllm:generation_tokens", "total_output_tokens")):
        got, want = counter(metric), sim[key]
        print(f"{metric}_total = {got:.0f}, result file {key} = {want}")
        if got != want:
            failures.append(f"{metric}: {got} != {want}")

    late = fam["servesim:token_send_lateness_seconds"]
    lateness_p50, lateness_p99 = histogram_quantile(late, 0.5), histogram_quantile(late, 0.99)
    rtt_p50, rtt_p99 = quantile(rtts, 0.5), quantile(rtts, 0.99)
    delta = SCALE * (lateness_p99 + rtt_p99)
    lag_p50 = quantile(lags, 0.5)
    tols = {"TTFT": SCALE * (lateness_p50 + 2 * rtt_p50 + lag_p50), "ITL": SCALE * lateness_p50}
    print(f"{N} requests at {RATE}/s, time scale {SCALE}: {wall:.1f} s wall; send lateness p50 "
          f"<= {lateness_p50 * 1e3:.3f} ms, p99 <= {lateness_p99 * 1e3:.2f} ms; loopback RTT p50 "
          f"{rtt_p50 * 1e3:.2f} ms, p99 {rtt_p99 * 1e3:.2f} ms; client lag p50 "
          f"{lag_p50 * 1e3:.3f} ms => δ = {delta * 1e3:.2f} simulated ms, median tolerance TTFT "
          f"{tols['TTFT'] * 1e3:.2f}, ITL {tols['ITL'] * 1e3:.2f} simulated ms")
    cli_ttft = [x for x in ttft if x is not None]
    cli_itl = [x for per in itl if per is not None for x in per]

    def verdict(a, b, tol):
        """(D, D_δ, KS limit, median difference, passes)."""
        d, dd = ks(a, b), ks(a, b, delta)
        crit = ks_critical(len(a), len(b)) + 0.01
        dm = abs(quantile(a, .5) - quantile(b, .5))
        return d, dd, crit, dm, dd <= crit and dm <= tol

    for name, a, b, off in (("TTFT", cli_ttft, sim_ttft, 2.0), ("ITL", cli_itl, sim_itl, 1.5)):
        d, dd, crit, dm, ok = verdict(a, b, tols[name])
        print(f"{name}: n = {len(a)} / {len(b)}, median {quantile(a, .5) * 1e3:.2f} / "
              f"{quantile(b, .5) * 1e3:.2f} ms, p90 {quantile(a, .9) * 1e3:.2f} / "
              f"{quantile(b, .9) * 1e3:.2f} ms, p99 {quantile(a, .99) * 1e3:.2f} / "
              f"{quantile(b, .99) * 1e3:.2f} ms; KS D = {d:.4f}, D_δ = {dd:.4f} "
              f"(limit {crit:.4f}), median difference {dm * 1e3:.2f} ms")
        if not ok:
            failures.append(f"{name}: client and simulate differ beyond the measured overhead")
        # The test can fail: a slower engine (simulate's values × off) is refused.
        d, dd, crit, dm, ok = verdict(a, [x * off for x in b], tols[name])
        print(f"{name} against simulate × {off}: D_δ = {dd:.4f}, median difference "
              f"{dm * 1e3:.2f} ms: {'passes (the test cannot tell)' if ok else 'refused'}")
        if ok:
            failures.append(f"{name}: an engine × {off} is not told apart")
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("serve_stats_test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
