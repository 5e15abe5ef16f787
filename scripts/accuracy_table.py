#!/usr/bin/env python3
"""Accuracy per data set, as docs/validation.md §8 publishes it: for every data set of the page,
uncalibrated and with the shipped profiles, the median and P90 |error| of mean TTFT, TPOT, ITL and
E2E with the share of runs under-predicted, and, where the files have per-request values, how many
runs pass the two-sample Kolmogorov-Smirnov test and the TOST equivalence test (±10 % of the
measured mean) per metric (validate's "distribution_tests", sim/measured/distribution_tests.h).

Usage (from the repository root):
  scripts/accuracy_table.py --write BUILD/servesim   # runs validate on every data set, writes
                                                     # docs/data/accuracy.json and the tables
                                                     # between the markers in docs/validation.md
  scripts/accuracy_table.py --check BUILD/servesim   # ctest: the same, compared, nothing written;
                                                     # fails when either differs

With the shipped profiles, runs a profile was fitted on (validate's in_fit_set) are left out: their
errors are fit residuals. Percentiles are numpy's linear ones (by hand: no numpy needed). Static
batches (Argonne) measure one latency per batch, the last request's E2E: their E2E column is that.
"""
import json
import os
import subprocess
import sys
import tempfile

R = "data/realdata"
S = "tests/data/realdata_sidecars"
L = R + "/llmk8s_llama33_70b_a100x8"
# (name, files); every data set of docs/validation.md, in the page's order.
DATASETS = [
    ("llm-k8s TP8, A100-40GB", [L + "/01_tp8_pp1"], "serving_*.json"),
    ("llm-k8s TP4×PP2, A100-40GB", [L + "/02_tp4_pp2_no_IB", L + "/03_tp4_pp2_IB",
                                    L + "/04_tp4_pp2_IB"], "serving_*.json"),
    ("LLMServingSim, RTX 4090 / PRO 6000", [R + "/llmservingsim/bench_examples"], "*/*"),
    ("inference-sim guidellm, H100", [R + "/inferencesim_eval_vllm0110"],
     "*/guidellm_per_request_DERIVED.csv"),
    ("InferenceX, H100 / H200", [R + "/inferencex_subset"], "inferencex_vllm_h100_h200_DERIVED.csv"),
    ("Argonne static batches, A100 / H100", [R + "/argonne_llm_inference_bench"],
     "All_results.csv"),
    ("public runs, A100-80GB", [R + "/public_vllm_runs"], "public_vllm_runs_a100.csv"),
]
CALIBRATIONS = [("none", ["--calibration", "none"]), ("shipped", [])]
METRICS = [("ttft", "TTFT"), ("tpot", "TPOT"), ("itl", "ITL"), ("e2el", "E2E")]
JSON_OUT = "docs/data/accuracy.json"
DOC = "docs/validation.md"
BEGIN = "<!-- accuracy_table.py: begin -->"
END = "<!-- accuracy_table.py: end -->"


def files_of(folders, pattern):
    import glob
    out = []
    for f in folders:
        out += sorted(glob.glob(os.path.join(f, pattern)))
    return out


def percentile(values, q):
    """numpy.percentile(values, q) with linear interpolation."""
    v = sorted(values)
    pos = (len(v) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def run_validate(binary, files, flags, out):
    cmd = [binary, "validate", "--sidecars", S] + flags + ["--measured"] + files + ["--output", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.load(open(out, encoding="utf-8"))


def summarize(result, calibration):
    """One data set under one calibration: error and test counts per metric."""
    runs = [r for r in result["runs"] if "error" not in r]
    if calibration == "shipped":
        runs = [r for r in runs if not r["in_fit_set"]]
    out = {"runs": len(runs), "metrics": {}, "distribution_tests": {}}
    for metric, _ in METRICS:
        errs = []
        for r in runs:
            rows = {m["metric"]: m["error_pct"] for m in r["metrics"]}
            key = "mean_%s_ms" % metric
            if key not in rows and metric == "e2el":
                key = "p100_e2el_ms"  # a static batch's latency
            if key in rows:
                errs.append(rows[key])
        if errs:
            a = [abs(e) for e in errs]
            out["metrics"][metric] = {
                "runs": len(errs),
                "median_abs_error_pct": round(percentile(a, 50), 6),
                "p90_abs_error_pct": round(percentile(a, 90), 6),
                "under_predicted": sum(1 for e in errs if e < 0)}
        tests = [r["distribution_tests"][metric] for r in runs
                 if metric in r.get("distribution_tests", {})]
        if tests:
            out["distribution_tests"][metric] = {
                "runs": len(tests),
                "ks_same": sum(1 for t in tests if not t["ks"]["differ"]),
                "tost_equivalent": sum(1 for t in tests if t["tost"]["equivalent"])}
    return out


def compute(binary):
    data = {"generated_by": "scripts/accuracy_table.py", "datasets": []}
    with tempfile.TemporaryDirectory() as tmp:
        for name, folders, pattern in DATASETS:
            files = files_of(folders, pattern)
            entry = {"name": name, "files": [os.path.join(f, pattern) for f in folders]}
            for calibration, flags in CALIBRATIONS:
                result = run_validate(binary, files, flags, os.path.join(tmp, "v.json"))
                entry[calibration] = summarize(result, calibration)
            data["datasets"].append(entry)
    return data


def error_cell(m):
    if not m:
        return "–"
    return "%.1f / %.1f (%d/%d under)" % (m["median_abs_error_pct"], m["p90_abs_error_pct"],
                                         m["under_predicted"], m["runs"])


def tables(data):
    lines = ["| data set | calibration | runs | " + " | ".join(l for _, l in METRICS) + " |",
             "|---|---|---|" + "---|" * len(METRICS)]
    for d in data["datasets"]:
        for calibration, _ in CALIBRATIONS:
            s = d[calibration]
            label = "none" if calibration == "none" else "shipped, held out"
            lines.append("| %s | %s | %d | %s |" % (
                d["name"], label, s["runs"],
                " | ".join(error_cell(s["metrics"].get(m)) for m, _ in METRICS)))
    lines += ["", "| data set | calibration | runs with per-request values | " +
              " | ".join(l + " KS / TOST" for _, l in METRICS) + " |",
              "|---|---|---|" + "---|" * len(METRICS)]
    for d in data["datasets"]:
        for calibration, _ in CALIBRATIONS:
            t = d[calibration]["distribution_tests"]
            if not t:
                continue
            label = "none" if calibration == "none" else "shipped, held out"
            n = max(x["runs"] for x in t.values())
            cells = ["%d / %d of %d" % (t[m]["ks_same"], t[m]["tost_equivalent"], t[m]["runs"])
                     if m in t else "–" for m, _ in METRICS]
            lines.append("| %s | %s | %d | %s |" % (d["name"], label, n, " | ".join(cells)))
    return lines


def page_with(doc, lines):
    if doc.count(BEGIN) != 1 or doc.count(END) != 1:
        sys.exit("%s: needs one '%s' and one '%s' line" % (DOC, BEGIN, END))
    head, rest = doc.split(BEGIN + "\n", 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + tail


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("--write", "--check"):
        sys.exit(__doc__)
    data = compute(sys.argv[2])
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    doc = open(DOC, encoding="utf-8").read()
    page = page_with(doc, tables(data))
    if sys.argv[1] == "--write":
        open(JSON_OUT, "w", encoding="utf-8").write(text)
        open(DOC, "w", encoding="utf-8").write(page)
        print("\n".join(tables(data)))
        return
    old = open(JSON_OUT, encoding="utf-8").read() if os.path.exists(JSON_OUT) else ""
    if old != text:
        sys.exit("%s is stale: this build's validate gives other errors or test counts; "
                 "regenerate with scripts/accuracy_table.py --write build/servesim" % JSON_OUT)
    if page != doc:
        sys.exit("%s does not show the accuracy tables of %s between its markers; regenerate with "
                 "scripts/accuracy_table.py --write build/servesim" % (DOC, JSON_OUT))
    print("%s and %s's accuracy tables are this build's" % (JSON_OUT, DOC))


if __name__ == "__main__":
    main()
