#!/usr/bin/env bash
# `servesim report` opened in a headless browser (Debian's chromium):
#   report_browser_test.sh SERVESIM_BINARY REPO_ROOT
# Makes a plan and a sweep of the same model and workload, writes the report, then checks
# - the page is self-contained: no http(s) URL in a src/href attribute, no <script>, no <link>;
# - the DOM chromium builds (--dump-dom) holds the report's parts (python/servesim/report.py:
#   #answer with the Answer line, #candidates-table with one row per candidate and the answer's
#   row marked, #latency-curve and #gpu-chart each an <svg>, #max-rate naming the SLO crossing,
#   #vllm-serve holding the `vllm serve` command);
# - chromium's screenshot of it is a PNG of more than a few kilobytes.
# SERVESIM_UPDATE_DOCS=1 copies the screenshot to docs/img/report.png (the page docs show).
# Skipped (exit 77) with a message when chromium or python3-matplotlib is missing
# (scripts/setup.sh installs both).
set -euo pipefail
bin=$1
root=$2
py=/usr/bin/python3
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: chromium is not installed (scripts/setup.sh installs Debian's chromium)"
  exit 77
fi
if ! "$py" -c "import matplotlib" 2>/dev/null; then
  echo "SKIPPED: python3-matplotlib is not installed (scripts/setup.sh installs it)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The commands of docs/capacity-planning.md, "The one-page report": Llama-3.1-70B on H100 at
# 100 req/s, P99 TTFT <= 500 ms, TP 1, 2, 4, 8 (one refused: the weights do not fit), and the sweep
# of the answer's TP4 replica. ~5 s on 2 cores.
common=(--model llama-3.1-70b --gpu h100-sxm --max-model-len 8192 --random-input-len 1024
        --random-output-len 256)
"$bin" plan "${common[@]}" --tensor-parallel-size 1,2,4,8 --target-qps 100 \
  --slo 'p99_ttft_ms<=500' --output "$out/plan.json" > /dev/null
"$bin" sweep "${common[@]}" -tp 4 --request-rate 1:12:1 \
  --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,99 \
  --output "$out/sweep.json" > /dev/null
"$bin" report "$out/plan.json" "$out/sweep.json" -o "$out/report.html"
# The same inputs give the same bytes.
"$bin" report "$out/plan.json" "$out/sweep.json" -o "$out/again.html" > /dev/null
cmp "$out/report.html" "$out/again.html" || { echo "FAIL: two reports of the same files differ"; exit 1; }

# Chromium as root needs --no-sandbox; the profile goes to the temporary folder.
chrome=("$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars
        "--user-data-dir=$out/profile" --window-size=1200,1950)
timeout 120 "${chrome[@]}" --dump-dom "file://$out/report.html" > "$out/dom.html" 2> "$out/chromium.log" ||
  { echo "FAIL: chromium --dump-dom failed"; tail -5 "$out/chromium.log"; exit 1; }
timeout 120 "${chrome[@]}" --screenshot="$out/report.png" "file://$out/report.html" \
  > /dev/null 2>> "$out/chromium.log" ||
  { echo "FAIL: chromium --screenshot failed"; tail -5 "$out/chromium.log"; exit 1; }

"$py" - "$out/report.html" "$out/dom.html" "$out/plan.json" <<'PY'
import html.parser
import json
import re
import sys

page, dom_text, plan = (open(p, encoding="utf-8").read() for p in sys.argv[1:4])
plan = json.loads(plan)
fails = []

# Self-contained: nothing fetched from the network, no script.
for m in re.finditer(r'(?:src|href)\s*=\s*"([^"]*)"', page):
    if re.match(r"(?i)(https?:)?//", m.group(1)):
        fails.append(f"the page fetches {m.group(1)}")
for tag in ("<script", "<link", "<iframe"):
    if tag in page.lower():
        fails.append(f"the page has a {tag}> element")


class Dom(html.parser.HTMLParser):
    """Elements by id (tag, classes, text), the <svg> under each id, the candidate rows."""

    def __init__(self):
        super().__init__()
        self.by_id, self.stack, self.rows = {}, [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "tr" and "candidate" in classes:
            self.rows.append(classes)
        for _, entry in self.stack:
            if entry is not None and tag == "svg":
                entry["svg"] = True
        entry = None
        if "id" in a:
            entry = self.by_id.setdefault(a["id"], {"tag": tag, "text": "", "svg": False})
        if tag not in ("br", "img", "meta", "input", "hr", "col", "wbr"):  # HTML's void elements
            self.stack.append((tag, entry))

    def handle_endtag(self, tag):
        if any(t == tag for t, _ in self.stack):
            while self.stack and self.stack.pop()[0] != tag:
                pass

    def handle_data(self, data):
        for _, entry in self.stack:
            if entry is not None:
                entry["text"] += data


dom = Dom()
dom.feed(dom_text)
ids = dom.by_id


def need(id_, tag=None, text=None, svg=False):
    e = ids.get(id_)
    if e is None:
        fails.append(f"no element #{id_} in the DOM")
        return
    if tag and e["tag"] != tag:
        fails.append(f"#{id_} is a <{e['tag']}>, expected <{tag}>")
    if text and text not in " ".join(e["text"].split()):
        fails.append(f"#{id_} does not contain {text!r}: {e['text'][:200]!r}")
    if svg and not e["svg"]:
        fails.append(f"#{id_} holds no <svg> figure")


for section in ("answer", "candidates", "curve", "gpus", "vllm"):
    need(section, "section")
need("title", "h1", "llama-3.1-70b × h100-sxm × random 1024 in / 256 out at 100 req/s")
need("answer", text=" ".join(plan["answer"].split())[:60])
need("basis", "table", "error band")
need("candidates-table", "table")
need("latency-curve", "figure", svg=True)
need("gpu-chart", "figure", svg=True)
need("max-rate", text="h100-sxm TP4: max 7.61 req/s at p99 TTFT <= 500 ms")
need("vllm-serve", "pre", "vllm serve meta-llama/Llama-3.1-70B --tensor-parallel-size 4")
need("vllm-bench", "pre", "vllm bench serve")
if len(dom.rows) != len(plan["candidates"]):
    fails.append(f"{len(dom.rows)} candidate rows; the plan has {len(plan['candidates'])}")
if sum("answer" in r for r in dom.rows) != 1:
    fails.append("not exactly one candidate row is marked as the answer")
if fails:
    print("FAIL:\n  " + "\n  ".join(fails))
    sys.exit(1)
print(f"the DOM chromium built holds every part of the report ({len(dom.rows)} candidates)")
PY

size=$(stat -c %s "$out/report.png")
[ "$(head -c 8 "$out/report.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] && [ "$size" -gt 50000 ] ||
  { echo "FAIL: chromium's screenshot is not a PNG of more than 50 kB ($size bytes)"; exit 1; }
echo "chromium's screenshot: $size bytes"
if [ "${SERVESIM_UPDATE_DOCS:-0}" = 1 ]; then
  cp "$out/report.png" "$root/docs/img/report.png"
  echo "wrote docs/img/report.png"
fi
