#!/usr/bin/env python3
"""Predicted-versus-measured scatter plots from `servesim validate --output` JSON files.

Usage: scripts/plot_validation.py OUT.png TITLE table1.json [table2.json ...]
One panel per metric (mean TTFT, mean TPOT, mean E2E, P99 TTFT), log-log, one colour per
deployment, the diagonal and ±10 % bands, a legend on every panel. Runs marked in_fit_set are
drawn hollow (the legend says so).
Needs python3-matplotlib (Debian package).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import parity_axes  # noqa: E402  (scripts/, beside this file)

METRICS = [("mean_ttft_ms", "mean TTFT (ms)"), ("mean_tpot_ms", "mean TPOT (ms)"),
           ("mean_e2el_ms", "mean E2E (ms)"), ("p99_ttft_ms", "P99 TTFT (ms)")]


def main():
    out, title, tables = sys.argv[1], sys.argv[2], sys.argv[3:]
    runs = []
    for t in tables:
        runs += json.load(open(t))["runs"]
    groups = sorted({r["deployment"] for r in runs})
    colours = plt.cm.tab10.colors
    fig, axes = plt.subplots(1, len(METRICS), figsize=(4.2 * len(METRICS), 4.4))
    shown = {ax: set() for ax in axes}  # deployments already in a panel's legend
    for ax, (key, label) in zip(axes, METRICS):
        lo, hi = float("inf"), 0.0
        for gi, g in enumerate(groups):
            for fit in (False, True):
                pts = [(m["measured"], m["predicted"]) for r in runs if r["deployment"] == g
                       and r.get("in_fit_set", False) == fit for m in r.get("metrics", [])
                       if m["metric"] == key and m["measured"] > 0 and m["predicted"] > 0]
                if not pts:
                    continue
                xs, ys = zip(*pts)
                lo, hi = min(lo, *xs, *ys), max(hi, *xs, *ys)
                c = colours[gi % len(colours)]
                ax.scatter(xs, ys, s=28, label=g if g not in shown[ax] else None,
                           facecolors="none" if fit else c, edgecolors=c)
                shown[ax].add(g)
        parity_axes.finish(ax, lo, hi, "measured " + label, "predicted")
    # A legend on every panel: the deployments, what hollow means, the diagonal and the bands.
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        if any(r.get("in_fit_set", False) for r in runs):
            handles.append(ax.scatter([], [], s=28, facecolors="none", edgecolors="black"))
            labels.append("hollow: run the profile was fitted on")
        handles += [plt.Line2D([], [], color="black", lw=0.8),
                    plt.Line2D([], [], color="black", lw=0.6, linestyle=":")]
        labels += ["predicted = measured", "±10 %"]
        ax.legend(handles, labels, fontsize=6, loc="upper left")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


if __name__ == "__main__":
    main()
