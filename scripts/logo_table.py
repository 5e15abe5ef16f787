#!/usr/bin/env python3
"""Markdown table of a leave-one-group-out run (`servesim validate --leave-one-group-out --output
FILE`), as docs/validation.md §6 shows it.

Usage: scripts/logo_table.py logo.json
Per group: runs, what its profile was fitted on, then median |error| of mean TPOT, mean E2E, mean
TTFT and P99 TTFT as "calibrated / none" (a static batch's E2E is its latency, the last E2E) (bold where the calibrated value meets the target), and
the group score (mean of the metrics present) of each.
"""
import json
import statistics
import sys

METRICS = ["mean_tpot_ms", "mean_e2el_ms", "mean_ttft_ms", "p99_ttft_ms"]


def error(table, key):
    """The group's median |error| of `key`; mean E2E falls back to the last E2E (p100: a static
    batch measures only its latency), as servesim's cross_validation target_error does."""
    m = table["median_abs_error"]
    return m.get(key) or (m.get("p100_e2el_ms") if key == "mean_e2el_ms" else None)


def cell(g, key, limit):
    a = error(g["calibrated"], key)
    b = error(g["uncalibrated"], key)
    if a is None:
        return "–"
    ca = "%.1f%%" % a["median_abs_error_pct"]
    if a["median_abs_error_pct"] <= limit:
        ca = "**" + ca + "**"
    return ca + " / %.1f%%" % b["median_abs_error_pct"]


def main():
    j = json.load(open(sys.argv[1]))
    t = j["targets_pct"]
    print("| group | runs | profile | mean TPOT (≤%g%%) | mean E2E (≤%g%%) | mean TTFT (≤%g%%) | "
          "P99 TTFT (≤%g%%) | score cal. / none |" % tuple(t[k] for k in METRICS))
    print("|---|---|---|---|---|---|---|---|")
    for g in j["groups"]:
        cells = " | ".join(cell(g, k, t[k]) for k in METRICS)
        print("| %s | %d | %s | %s | %.1f%% / %.1f%% |" % (
            g["group"], g["runs"], g["basis"], cells, g["calibrated_score_pct"],
            g["uncalibrated_score_pct"]))
    m, n = j["median_over_groups_calibrated_pct"], j["median_over_groups_uncalibrated_pct"]
    print("| **median over groups** | | | " + " | ".join(
        "%.1f%% / %.1f%%" % (m[k], n[k]) if k in m else "–" for k in METRICS) + " | |")
    # The same over the serving groups only (without the offline static batches, whose E2E is
    # their latency): the medians a server's own benchmark runs would see.
    serving = [g for g in j["groups"]
               if not all(r.get("format") == "argonne" for r in g["calibrated"]["runs"])]
    if len(serving) < len(j["groups"]):
        cells = []
        for k in METRICS:
            a = [error(g["calibrated"], k) for g in serving]
            b = [error(g["uncalibrated"], k) for g in serving]
            a = [x["median_abs_error_pct"] for x in a if x]
            b = [x["median_abs_error_pct"] for x in b if x]
            cells.append("%.1f%% / %.1f%%" % (statistics.median(a), statistics.median(b)) if a else "–")
        print("| **median over the %d serving groups** | | | %s | |" % (len(serving), " | ".join(cells)))


if __name__ == "__main__":
    main()
