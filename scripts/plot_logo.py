#!/usr/bin/env python3
"""Leave-one-group-out plots: predicted versus measured, one colour per group (model x GPU x TP x
vLLM version), from `servesim validate --leave-one-group-out --output FILE`.

Usage: scripts/plot_logo.py logo.json OUT.png
Top row: each group predicted with the profile fitted on the OTHER groups of its GPU (what a user
gets for a deployment the calibration has not seen). Bottom row: the same runs with
--calibration none. One panel per transfer metric (mean TPOT, mean E2E, mean TTFT, P99 TTFT),
log-log, diagonal and +-10 % bands. Needs python3-matplotlib (Debian package).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import parity_axes  # noqa: E402  (scripts/, beside this file)

METRICS = [("mean_tpot_ms", "mean TPOT (ms)"), ("mean_e2el_ms", "mean E2E (ms; batches: last)"),
           ("mean_ttft_ms", "mean TTFT (ms)"), ("p99_ttft_ms", "P99 TTFT (ms)")]


def points(table, key):
    # A static batch measures only its latency, the last E2E (p100): it stands in the E2E panel.
    keys = (key, "p100_e2el_ms") if key == "mean_e2el_ms" else (key,)
    return [(m["measured"], m["predicted"]) for r in table["runs"] for m in r.get("metrics", [])
            if m["metric"] in keys and m["measured"] > 0 and m["predicted"] > 0]


def static_batches(group):
    """Whether a group holds offline static batches (Argonne): their E2E is the batch latency."""
    return all(r.get("format") == "argonne" for r in group["calibrated"]["runs"])


def main():
    src, out = sys.argv[1], sys.argv[2]
    groups = json.load(open(src))["groups"]
    cmap = plt.get_cmap("tab20")
    fig, axes = plt.subplots(2, len(METRICS), figsize=(4.4 * len(METRICS), 9.4))
    for row, (which, title) in enumerate([("calibrated", "left-out group, profile fitted on the others"),
                                          ("uncalibrated", "--calibration none")]):
        for ax, (key, label) in zip(axes[row], METRICS):
            lo, hi = float("inf"), 0.0
            serving = [g for g in groups if not static_batches(g)]
            for g in groups:
                pts = points(g[which], key)
                if not pts:
                    continue
                xs, ys = zip(*pts)
                lo, hi = min(lo, *xs, *ys), max(hi, *xs, *ys)
                if static_batches(g):  # one colour per GPU: 27 groups would repeat the palette
                    ax.scatter(xs, ys, s=8, marker="x", linewidths=0.6,
                               color="0.35" if g["gpu"].startswith("a100") else "0.65",
                               label="static batches (Argonne), " + g["gpu"] if row == 0 else None)
                else:
                    ax.scatter(xs, ys, s=18, color=cmap(serving.index(g) % 20),
                               label=g["group"] if row == 0 else None)
            parity_axes.finish(ax, lo, hi, "measured " + label, "predicted (" + title + ")",
                               ylabel_fontsize=8)
    legend = {}
    for ax in axes[0]:
        for h, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, h)
    fig.legend(list(legend.values()), list(legend.keys()), fontsize=7, loc="lower center", ncol=3)
    fig.suptitle("Leave-one-group-out (diagonal = exact, dotted = ±10 %)")
    fig.tight_layout(rect=(0, 0.13, 1, 0.97))
    fig.savefig(out, dpi=80)


if __name__ == "__main__":
    main()
