#!/usr/bin/env python3
"""Measures `servesim serve` holding many streams: N asyncio clients, each keeping one
streaming completion open (a new one as soon as the last ends), for D wall seconds.

Prints one row per N:
  held      the most streams open at once on the client side (headers received, [DONE] not yet),
            sampled every 0.25 s, and the server's running + waiting requests at that moment;
  completed streams that ended with [DONE], and the clients that got at least one;
  cut       streams that ended without [DONE] before the deadline, connections reset, closed
            before any header, or refused, and non-200 answers (each should be 0);
  tokens    tokens the clients received, and per second;
  CPU       the server's CPU time (utime + stime from /proc) and CPU per token;
  memory    the server's threads and resident memory (VmRSS) at the peak, and RSS per held stream;
  backlog   the listen socket's accept-queue limit (ss -ltn's Send-Q) and the machine's
            TcpExtListenOverflows during the run (nstat; counts every socket on the host);
  lateness  the mean send lateness (servesim:token_send_lateness_seconds).
Also the load average before and after each run.

Usage: measure_serve_streams.py SERVESIM [--streams 1000,2000,4000] [--seconds 20]
       [--time-scale 1] [--max-tokens 256] [--threads T] [server flags after --]
Timings depend on the machine and its load; they are not checked by CI.
"""
import argparse
import asyncio
import json
import os
import re
import resource
import subprocess
import time

MODEL = "llama-3.1-8b"


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status(pid):
    with open(f"/proc/{pid}/status") as f:
        text = f.read()
    return (int(re.search(r"Threads:\s+(\d+)", text).group(1)),
            int(re.search(r"VmRSS:\s+(\d+)", text).group(1)))


def listen_overflows():
    out = subprocess.run(["nstat", "-az", "TcpExtListenOverflows"], capture_output=True,
                         text=True).stdout
    m = re.search(r"TcpExtListenOverflows\s+(\d+)", out)
    return int(m.group(1)) if m else -1


def listen_backlog(port):
    """ss -ltn's Send-Q of the listening socket: its accept-queue limit."""
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True,
                         text=True).stdout.split()
    return int(out[2]) if len(out) >= 3 else -1


def metrics(port):
    import urllib.request
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60).read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([a-z_:]+)(\{[^}]*\})? ([0-9.e+-]+)$", line)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(3))
    return out


async def one_stream(port, request, deadline, counts):
    """One streaming completion; returns True when it ended with [DONE]."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            counts["non_200"] += 1
            return False
        counts["open"] += 1
        counts["peak"] = max(counts["peak"], counts["open"])
        tail = b""
        try:
            # Counting "data: " in raw reads keeps the client cheap (no line splitting).
            while time.monotonic() < deadline:
                chunk = await reader.read(65536)
                if not chunk:
                    return False
                text = tail + chunk
                counts["tokens"] += text.count(b"data: ") - tail.count(b"data: ")
                if b"data: [DONE]" in text:
                    counts["tokens"] -= 1  # [DONE] is not a token
                    return True
                tail = text[-16:]
            return None  # the deadline, not a cut
        finally:
            counts["open"] -= 1
    finally:
        writer.close()


async def client(port, request, deadline, counts):
    served = False
    while time.monotonic() < deadline:
        try:
            done = await one_stream(port, request, deadline, counts)
        except (ConnectionResetError, BrokenPipeError):
            counts["reset"] += 1
            return
        except asyncio.IncompleteReadError:  # closed before its headers
            counts["closed"] += 1
            return
        except ConnectionRefusedError:
            counts["refused"] += 1
            return
        if done is None:
            return
        if not done:
            counts["cut"] += 1
            return
        counts["completed"] += 1
        if not served:
            served = True
            counts["clients_served"] += 1


async def run(proc, port, n, seconds, max_tokens):
    body = json.dumps({"model": MODEL, "prompt": [1] * 32, "max_tokens": max_tokens,
                       "stream": True, "ignore_eos": True}).encode()
    request = (f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
               f"application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    counts = {k: 0 for k in ("tokens", "completed", "clients_served", "open", "peak", "cut", "reset", "closed",
                             "refused", "non_200")}
    deadline = time.monotonic() + seconds
    tasks = [asyncio.create_task(client(port, request, deadline, counts)) for _ in range(n)]
    peak = {"open": 0, "server": 0, "threads": 0, "rss_kib": 0, "at": 0.0}
    t0 = time.monotonic()
    loop = asyncio.get_running_loop()
    next_scrape = t0
    while time.monotonic() < deadline - 0.5:
        await asyncio.sleep(0.25)
        threads, rss = proc_status(proc.pid)
        if os.environ.get("MEASURE_VERBOSE"):
            print(f"  {time.monotonic() - t0:5.1f} s: {counts}, {threads} threads", flush=True)
        peak["threads"] = max(peak["threads"], threads)
        peak["rss_kib"] = max(peak["rss_kib"], rss)
        if counts["open"] >= peak["open"]:
            peak.update(open=counts["open"], at=time.monotonic() - t0)
            if time.monotonic() >= next_scrape:  # a scrape costs the server: once a second
                m = await loop.run_in_executor(None, metrics, port)
                peak["server"] = m["vllm:num_requests_running"] + m["vllm:num_requests_waiting"]
                next_scrape = time.monotonic() + 1.0
    # A stream still open at the deadline (waiting for a token, or for its connect) ends there.
    await asyncio.wait(tasks, timeout=max(0.0, deadline - time.monotonic()) + 1.0)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return counts, peak


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("servesim")
    ap.add_argument("--streams", default="1000,2000,4000")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--time-scale", default="1")
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--threads", type=int, default=0, help="server --threads (0: its default)")
    ap.add_argument("server_flags", nargs="*", help="more `servesim serve` flags (after --)")
    args = ap.parse_args()
    # Each stream is a socket here: N streams need N descriptors and a few more.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = max(int(x) for x in args.streams.split(",")) + 64
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            raise SystemExit(f"ulimit -n: {hard} descriptors at most; {need} are needed")
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    for n in [int(x) for x in args.streams.split(",")]:
        load0 = os.getloadavg()[0]
        cmd = [args.servesim, "serve", "--model", MODEL, "--gpu", "h100-sxm", "--port", "0",
               "--time-scale", args.time_scale] + args.server_flags
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        port = int(re.search(r"127\.0\.0\.1:(\d+)", proc.stdout.readline()).group(1))
        try:
            cpu0 = cpu_seconds(proc.pid)
            m0 = metrics(port)
            over0 = listen_overflows()
            counts, peak = asyncio.run(run(proc, port, n, args.seconds, args.max_tokens))
            over = listen_overflows() - over0
            cpu = cpu_seconds(proc.pid) - cpu0
            m1 = metrics(port)
            late_n = (m1["servesim:token_send_lateness_seconds_count"] -
                      m0.get("servesim:token_send_lateness_seconds_count", 0))
            late_s = (m1["servesim:token_send_lateness_seconds_sum"] -
                      m0.get("servesim:token_send_lateness_seconds_sum", 0))
            tokens = counts["tokens"]
            print(f"N={n}: held {peak['open']} at once (at {peak['at']:.1f} s; server running + "
                  f"waiting {peak['server']:.0f}); {counts['completed']} streams completed, "
                  f"{counts['clients_served']} of {n} clients got a full stream, "
                  f"{counts['cut']} cut, {counts['reset']} reset, {counts['closed']} closed before "
                  f"headers, {counts['refused']} refused, "
                  f"{counts['non_200']} non-200; {tokens} tokens received, "
                  f"{tokens / args.seconds:.0f} tokens/s; server CPU {cpu:.1f} s in "
                  f"{args.seconds:.0f} s = {1e6 * cpu / max(tokens, 1):.1f} us per token; "
                  f"{peak['threads']} threads, RSS {peak['rss_kib'] / 1024:.0f} MiB = "
                  f"{peak['rss_kib'] / max(peak['open'], 1):.0f} KiB per held stream; "
                  f"listen backlog {listen_backlog(port)}, ListenOverflows +{over}; "
                  f"lateness mean {1e3 * late_s / max(late_n, 1):.1f} ms; load average "
                  f"{load0:.2f} -> {os.getloadavg()[0]:.2f}", flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=60)


if __name__ == "__main__":
    main()
