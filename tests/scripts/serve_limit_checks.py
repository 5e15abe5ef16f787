"""Limits of `servesim serve` (serve_test.py runs these checks): the waiting-queue limit (503),
a flood beyond it (429, bounded memory, no connection reset) and the file-descriptor budget of
--threads.
"""
import json
import os
import re
import subprocess
import threading
import time

import serve_harness as harness
from serve_harness import MODEL, Server, check, terminate, value


def queue_limit_test():
    """The waiting-queue limit: one seat (max_num_seqs 1), two waiting places, six requests sent
    0.1 s apart, each running ~1 s: the 4th, 5th and 6th find two waiting and get 503."""
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
    cmd = [harness.BIN, "serve", "--model", MODEL, "--gpu", "h100-sxm", "--port", "0",
           "--threads", "1000"]
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
