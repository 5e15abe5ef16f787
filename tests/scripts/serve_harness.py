"""The harness of the `servesim serve` checks (serve_test.py runs them): a server process on a
free port, HTTP helpers over curl and http.client, the Prometheus text-format parser of
prometheus_client on /metrics, and the failure list each check appends to.

Every process a check starts is killed when the test exits, however it exits: a server left
behind keeps ctest's output pipe open, and ctest then waits for the test's timeout instead of
failing.
"""
import atexit
import http.client
import json
import re
import subprocess

from prometheus_client.parser import text_string_to_metric_families

# The servesim binary under test; serve_test.py sets it from its command line.
BIN = None
MODEL = "llama-3.1-8b"
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)


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
