#!/usr/bin/env python3
"""Accuracy on the public A100 runs (data/realdata/public_vllm_runs), as docs/validation.md §7
shows it: per source and per model, median and P90 |error| with the median signed error, for
benchmark duration, mean TTFT, mean TPOT, P99 TTFT and P99 TPOT, uncalibrated and with the
shipped calibration.

Usage:
  scripts/public_runs_table.py --run BUILD/servesim OUTDIR   # runs validate twice, writes
                                                             # OUTDIR/public_runs_{none,shipped}.json,
                                                             # then prints the tables
  scripts/public_runs_table.py NONE.json SHIPPED.json        # prints the tables of two outputs
  scripts/public_runs_table.py --check BUILD/servesim        # ctest: this build predicts what
                                                             # docs/data holds, and
                                                             # docs/validation.md shows its tables
                                                             # (the held-out one included)
  scripts/public_runs_table.py --held-out LOGO.json          # the held-out table of a
                                                             # validate --leave-one-group-out
                                                             # --output: every group scored with
                                                             # host terms fitted on the others

Benchmark duration is not a metric of its own in validate: vLLM's request_throughput is
completed / duration, so the duration's error is measured / predicted throughput - 1.
Percentiles are numpy's linear ones (here by hand: no numpy needed).
"""
import json
import os
import subprocess
import sys

CSV = "data/realdata/public_vllm_runs/public_vllm_runs_a100.csv"
METRICS = [("duration", "duration"), ("mean_ttft_ms", "mean TTFT"), ("mean_tpot_ms", "mean TPOT"),
           ("p99_ttft_ms", "P99 TTFT"), ("p99_tpot_ms", "P99 TPOT")]


def percentile(values, q):
    """numpy.percentile(values, q) with linear interpolation."""
    v = sorted(values)
    pos = (len(v) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def errors(run):
    """Signed errors in % per metric key of one validated run."""
    out = {}
    for m in run["metrics"]:
        out[m["metric"]] = m["error_pct"]
        if m["metric"] == "request_throughput" and m["predicted"] > 0:
            out["duration"] = (m["measured"] / m["predicted"] - 1) * 100
    return out


def source_of(run):
    return run["label"].split(" row ")[0]


def model_of(run):
    """The row's Hugging Face id (the FP8 checkpoint apart from the BF16 one)."""
    return run["label"].split(": ", 1)[1].rsplit(" TP", 1)[0]


def cell(errs):
    if not errs:
        return "–"
    a = [abs(e) for e in errs]
    return "%.0f / %.0f (%+.0f)" % (percentile(a, 50), percentile(a, 90), percentile(errs, 50))


def table(title, groups, none, shipped):
    print("| %s | runs | %s |" % (title, " | ".join(label for _, label in METRICS)))
    print("|---|---|" + "---|" * len(METRICS))
    for g in sorted(groups):
        ids = groups[g]
        cells = []
        for key, _ in METRICS:
            a = [none[i][key] for i in ids if key in none[i]]
            b = [shipped[i][key] for i in ids if key in shipped[i]]
            cells.append(cell(a) + " · " + cell(b) if a else "–")
        print("| %s | %d | %s |" % (g, len(ids), " | ".join(cells)))


def check(binary):
    """Re-runs validate into a temporary folder; fails when a run's predictions differ from
    docs/data/public_runs_*.json (regenerate with --run) or when docs/validation.md does not show
    the tables line for line."""
    import io
    import tempfile
    from contextlib import redirect_stdout
    with tempfile.TemporaryDirectory() as tmp:
        fresh = run_validate(binary, tmp)
        for new, old in zip(fresh, DATA):
            a = json.load(open(new, encoding="utf-8"))["runs"]
            b = json.load(open(old, encoding="utf-8"))["runs"]
            if a != b:
                diff = [x["id"] for x, y in zip(a, b) if x != y] or ["(run count)"]
                sys.exit("%s is stale: this build predicts otherwise for %s; regenerate with "
                         "scripts/public_runs_table.py --run build/servesim docs/data"
                         % (old, ", ".join(diff[:5])))
    buf = io.StringIO()
    with redirect_stdout(buf):
        print_tables(DATA)
        print()
        print_held_out(HELD_OUT)
    doc = open("docs/validation.md", encoding="utf-8").read().split("\n")
    for block in buf.getvalue().strip("\n").split("\n\n"):
        lines = block.split("\n")
        starts = [i for i, line in enumerate(doc) if line == lines[0]]
        if not starts or doc[starts[0]:starts[0] + len(lines)] != lines:
            sys.exit("docs/validation.md does not show this table as the script prints it "
                     "(paste its output):\n" + block)
    print("docs/data/public_runs_*.json are this build's predictions; docs/validation.md shows "
          "their tables")


DATA = ["docs/data/public_runs_none.json", "docs/data/public_runs_shipped.json"]
# validate --leave-one-group-out --logo-groups model over the public runs (docs/validation.md §7:
# its command; minutes, so ctest checks the page against the stored output and does not re-run it).
HELD_OUT = "docs/data/public_runs_logo_model.json"
HELD_METRICS = METRICS[:3]


def print_held_out(path):
    """Per source and per model, each group scored with host terms fitted on the other groups:
    held out (fitted) · --calibration none, for duration, mean TTFT and mean TPOT."""
    j = json.load(open(path, encoding="utf-8"))
    fitted, none, label = {}, {}, {}
    for g in j["groups"]:
        for side, out in (("calibrated", fitted), ("uncalibrated", none)):
            for r in g[side]["runs"]:
                if "error" in r:
                    continue
                out[r["id"]] = errors(r)
                label[r["id"]] = r
    ids = [i for i in fitted if i in none]
    by_source, by_model = {"all": ids}, {}
    for i in ids:
        by_source.setdefault(source_of(label[i]), []).append(i)
        by_model.setdefault(model_of(label[i]), []).append(i)
    for title, groups in (("source", by_source), ("model", by_model)):
        print("| %s (held out) | runs | %s |" % (title, " | ".join(l for _, l in HELD_METRICS)))
        print("|---|---|" + "---|" * len(HELD_METRICS))
        for g in sorted(groups):
            cells = []
            for key, _ in HELD_METRICS:
                a = [fitted[i][key] for i in groups[g] if key in fitted[i]]
                b = [none[i][key] for i in groups[g] if key in none[i]]
                cells.append(cell(a) + " · " + cell(b) if a else "–")
            print("| %s | %d | %s |" % (g, len(groups[g]), " | ".join(cells)))
        if title == "source":
            print()


def run_validate(binary, outdir):
    os.makedirs(outdir, exist_ok=True)
    paths = [os.path.join(outdir, os.path.basename(p)) for p in DATA]
    for calibration, path in zip(["none", None], paths):
        cmd = [binary, "validate", "--measured", CSV, "--output", path]
        if calibration:
            cmd += ["--calibration", calibration]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return paths


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        return check(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "--held-out":
        return print_held_out(sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "--run":
        paths = run_validate(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3:
        paths = sys.argv[1:]
    else:
        sys.exit(__doc__)
    print_tables(paths)


def print_tables(paths):
    none_j, shipped_j = (json.load(open(p, encoding="utf-8")) for p in paths)
    runs = [r for r in none_j["runs"] if "error" not in r]
    none = {r["id"]: errors(r) for r in runs}
    shipped = {r["id"]: errors(r) for r in shipped_j["runs"] if "error" not in r}
    runs = [r for r in runs if r["id"] in shipped]
    by_source, by_model = {}, {}
    for r in runs:
        by_source.setdefault(source_of(r), []).append(r["id"])
        by_model.setdefault(model_of(r), []).append(r["id"])
    by_source["all"] = [r["id"] for r in runs]
    table("source", by_source, none, shipped)
    print()
    table("model", by_model, none, shipped)
    refused = none_j.get("refused", [])
    print()
    print("%d runs scored, %d refused." % (len(runs), len(refused)))


if __name__ == "__main__":
    main()
