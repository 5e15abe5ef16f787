#!/usr/bin/env python3
"""Measures `servesim serve` holding many streams: N asyncio clients, each keeping one
streaming completion open (a new one as soon as the last ends), for D wall seconds.

Prints one row per N: streams held at once (the server's running + waiting requests at the
end), streams completed, tokens the clients received and per second, the server's CPU time
(utime + stime from /proc) and CPU per token, and the mean send lateness
(servesim:token_send_lateness_seconds). Also the load average before and after.

Usage: measure_serve_streams.py SERVESIM [--streams 1000,2000,4000] [--seconds 20]
       [--time-scale 1] [--max-tokens 256]
Timings depend on the machine and its load; they are not checked by CI.
"""
import argparse
import asyncio
import json
import os
import re
import subprocess
import time

MODEL = "llama-3.1-8b"


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metrics(port):
    import urllib.request
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60).read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([a-z_:]+)(\{[^}]*\})? ([0-9.e+-]+)$", line)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(3))
    return out


async def client(port, body, deadline, counts):
    while time.monotonic() < deadline:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write((f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                      f"application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
        await writer.drain()
        done = False
        while time.monotonic() < deadline:
            line = await reader.readline()
            if not line:
                break
            if line.startswith(b"data: "):
                if line.startswith(b"data: [DONE]"):
                    done = True
                    break
                counts["tokens"] += 1
        counts["completed"] += done
        writer.close()
        if not done:
            return


async def run(port, n, seconds, max_tokens):
    body = json.dumps({"model": MODEL, "prompt": [1] * 32, "max_tokens": max_tokens,
                       "stream": True, "ignore_eos": True}).encode()
    counts = {"tokens": 0, "completed": 0}
    deadline = time.monotonic() + seconds
    tasks = [asyncio.create_task(client(port, body, deadline, counts)) for _ in range(n)]
    await asyncio.sleep(seconds - 1.0)
    held = None
    m = await asyncio.get_running_loop().run_in_executor(None, metrics, port)
    held = m["vllm:num_requests_running"] + m["vllm:num_requests_waiting"]
    await asyncio.gather(*tasks, return_exceptions=True)
    return counts, held


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("servesim")
    ap.add_argument("--streams", default="1000,2000,4000")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--time-scale", default="1")
    ap.add_argument("--max-tokens", type=int, default=256)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for n in [int(x) for x in args.streams.split(",")]:
        proc = subprocess.Popen([args.servesim, "serve", "--model", MODEL, "--gpu", "h100-sxm",
                                 "--port", "0", "--threads", str(n + 16), "--time-scale",
                                 args.time_scale], stdout=subprocess.PIPE, text=True)
        port = int(re.search(r"127\.0\.0\.1:(\d+)", proc.stdout.readline()).group(1))
        try:
            cpu0 = cpu_seconds(proc.pid)
            m0 = metrics(port)
            counts, held = asyncio.run(run(port, n, args.seconds, args.max_tokens))
            cpu = cpu_seconds(proc.pid) - cpu0
            m1 = metrics(port)
            late_n = (m1["servesim:token_send_lateness_seconds_count"] -
                      m0.get("servesim:token_send_lateness_seconds_count", 0))
            late_s = (m1["servesim:token_send_lateness_seconds_sum"] -
                      m0.get("servesim:token_send_lateness_seconds_sum", 0))
            tokens = counts["tokens"]
            print(f"N={n}: held {held:.0f} at once, {counts['completed']} streams completed, "
                  f"{tokens} tokens received, {tokens / args.seconds:.0f} tokens/s; server CPU "
                  f"{cpu:.1f} s in {args.seconds:.0f} s = {1e6 * cpu / max(tokens, 1):.1f} us "
                  f"per token; lateness mean {1e3 * late_s / max(late_n, 1):.1f} ms", flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
