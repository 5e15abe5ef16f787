"""Plots of servesim outputs (matplotlib): the figures capacity planning is read from.

Command line (the kind of each file is recognised from its keys):

    python3 -m servesim.plot sweep.json -o latency.png [--slo 'p99_ttft_ms<=500']
    python3 -m servesim.plot sweep.json --kind pareto -o pareto.svg
    python3 -m servesim.plot plan-50.json plan-100.json plan-200.json -o gpus.png
    python3 -m servesim.plot validation.json -o predicted_vs_measured.png
    python3 -m servesim.plot compare.json -o compare.png

Kinds:
  latency     (sweep)    TTFT and TPOT, P50 dashed and P99 solid, against the swept request rate
                         (or concurrency); the SLO as a horizontal line, each curve's knee as a
                         dotted vertical line, saturated points as crosses.
  pareto      (sweep)    output tokens/s per GPU against interactivity (tokens/s per user =
                         1000 / median TPOT in ms), every unsaturated point of every curve, and the
                         Pareto frontier over all of them (the InferenceX / vLLM dashboard view).
  gpus        (plans)    GPUs needed against target QPS, one line per GPU type: each plan file
                         gives one marker per GPU type, the fewest GPUs of its candidates on that
                         GPU that passed (verified on the whole cluster). Run one plan per target.
  validation (validate)  predicted against measured, one panel per metric, log-log, the diagonal
                         and +-10% bands; runs in the fit set hollow.
  compare    (compare)   B - A per metric with its confidence interval.

The same functions take the parsed JSON (or a servesim result) and an optional matplotlib Axes,
for notebooks: latency_vs_rate, throughput_vs_interactivity, gpus_vs_qps, predicted_vs_measured,
compare_bars. Needs python3-matplotlib.
"""

import argparse
import json
import math
import os
import re
import stat
import sys

import matplotlib

if __name__ == "__main__":
    matplotlib.use("Agg")  # files only; a notebook keeps its own backend
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import LogFormatter  # noqa: E402


def _plain_log_labels(ax, axis="y"):
    """Log-scale tick labels as plain numbers (60, not 6×10^1), minor ticks labelled too when the
    axis spans less than a decade, where otherwise few labels would show."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    target.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))

_SLO = re.compile(r"^\s*(p\d+(?:\.\d+)?|mean|median)_(ttft|tpot|itl|e2el)_ms\s*(<=|<|>=|>)\s*([0-9.]+)\s*$")


def parse_slo(text):
    """'p99_ttft_ms<=500' -> ('p99', 'ttft', 500.0). Raises ValueError naming the text."""
    m = _SLO.match(text)
    if not m:
        raise ValueError(f"--slo: '{text}' is invalid; expected e.g. 'p99_ttft_ms<=500' "
                         "(statistic p50/p90/p99/mean/median, metric ttft/tpot/itl/e2el, ms)")
    return m.group(1), m.group(2), float(m.group(4))


def kind_of(data):
    """'sweep', 'plan', 'compare', 'validation' or 'simulation', from the keys of an output."""
    if "curves" in data:
        return "sweep"
    if "candidates" in data:
        return "plan"
    if "metrics" in data and "seeds" in data:
        return "compare"
    if "runs" in data:
        return "validation"
    if "request_throughput" in data:
        return "simulation"
    raise ValueError("not a servesim sweep, plan, compare or validate output "
                     f"(keys: {', '.join(list(data)[:8])})")


def _curve_label(curve):
    return curve.get("label") or "sweep"


def latency_vs_rate(sweep, slos=(), axes=None):
    """TTFT and TPOT P50/P99 against the swept axis, with SLO lines and knees. Returns the figure."""
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    fig = axes[0].figure
    axis = sweep["axis"]
    slos = [parse_slo(s) if isinstance(s, str) else s for s in slos]
    colours = plt.cm.tab10.colors
    for ci, curve in enumerate(sweep["curves"]):
        if curve.get("error"):
            continue
        colour = colours[ci % len(colours)]
        pts = curve["points"]
        x = [p[axis] for p in pts]
        for ax, metric in zip(axes, ("ttft", "tpot")):
            for stat, style in (("p50", "--"), ("p99", "-")):
                y = [p.get(f"{stat}_{metric}_ms") for p in pts]
                y = [math.nan if v is None else v for v in y]
                ax.plot(x, y, style, color=colour, marker="o", markersize=3,
                        label=f"{_curve_label(curve)} {stat.upper()}")
            # A saturated point has no latencies (they grow with the run's length): an x at the
            # top of the panel marks its rate.
            sat = [xi for xi, p in zip(x, pts) if p["saturated"]]
            if sat:
                ax.plot(sat, [0.96] * len(sat), "x", color=colour, markersize=8,
                        transform=ax.get_xaxis_transform(), clip_on=False)
            knee = curve.get("knee", {}).get("value")
            if knee is not None:
                ax.axvline(knee, color=colour, linestyle=":", linewidth=1)
    for ax, metric, name in zip(axes, ("ttft", "tpot"), ("TTFT", "TPOT")):
        for stat, m, value in slos:
            if m == metric:
                ax.axhline(value, color="red", linewidth=1.2)
                ax.annotate(f"SLO {stat} {name} {value:g} ms", (0.01, value), color="red",
                            xycoords=("axes fraction", "data"), va="bottom", fontsize=8)
        ax.set_yscale("log")
        _plain_log_labels(ax)
        ax.set_xlabel("request rate (req/s)" if axis == "request_rate" else "max concurrency")
        ax.set_ylabel(f"{name} (ms)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_title("TTFT: P99 solid, P50 dashed; knee dotted; x saturated", fontsize=9)
    axes[1].set_title("TPOT (time per output token)", fontsize=9)
    axes[1].legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def pareto_front(points):
    """The (x, y) points not dominated by another with both x and y at least as large, by x."""
    front = []
    for x, y in sorted(points, key=lambda p: (-p[0], -p[1])):
        if not front or y > front[-1][1]:
            front.append((x, y))
    return sorted(front)


def throughput_vs_interactivity(sweeps, ax=None):
    """Output tokens/s per GPU against tokens/s per user for every unsaturated point of every curve
    of the given sweeps, with the Pareto frontier. Returns the figure."""
    if isinstance(sweeps, dict):
        sweeps = [sweeps]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 4.5))
    colours = plt.cm.tab10.colors
    everything = []
    i = 0
    for sweep in sweeps:
        for curve in sweep["curves"]:
            pts = [p for p in curve.get("points", []) if not p["saturated"]
                   and p.get("median_tpot_ms", 0) > 0]
            xy = [(1000.0 / p["median_tpot_ms"], p["output_tokens_per_s_per_gpu"]) for p in pts]
            if not xy:
                continue
            everything += xy
            ax.plot(*zip(*xy), "o", color=colours[i % len(colours)], markersize=4,
                    label=_curve_label(curve))
            i += 1
    front = pareto_front(everything)
    if front:
        ax.plot(*zip(*front), "-", color="black", linewidth=1.2, label="Pareto frontier")
    ax.set_xlabel("interactivity (output tokens/s per user = 1000 / median TPOT ms)")
    ax.set_ylabel("output tokens/s per GPU")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.figure.tight_layout()
    return ax.figure


def gpus_vs_qps(plans, ax=None):
    """GPUs against target QPS per GPU type, from one or more plan outputs. Returns the figure."""
    if isinstance(plans, dict):
        plans = [plans]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 4.5))
    verified = {}   # gpu -> [(target QPS, GPUs of its cheapest passing candidate)]
    for plan in plans:
        q = plan["servesim_plan"]["target_qps"]
        best = {}
        for c in plan["candidates"]:
            if c["status"] != "ok" or not c.get("total_gpus"):
                continue
            g = c["gpu"]
            if g not in best or c["total_gpus"] < best[g]:
                best[g] = c["total_gpus"]
        for g, n in best.items():
            verified.setdefault(g, []).append((q, n))
    colours = plt.cm.tab10.colors
    for i, g in enumerate(sorted(verified)):
        pts = sorted(verified[g])
        ax.plot(*zip(*pts), "o-", color=colours[i % len(colours)], label=g)
        for q, n in pts:
            ax.annotate(str(n), (q, n), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel("target QPS (req/s)")
    ax.set_ylabel("GPUs")
    ax.set_title("each marker: the GPUs one plan verified at that target (any TP)", fontsize=9)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.figure.tight_layout()
    return ax.figure


VALIDATION_METRICS = (("mean_ttft_ms", "mean TTFT (ms)"), ("mean_tpot_ms", "mean TPOT (ms)"),
                      ("mean_e2el_ms", "mean E2E (ms)"), ("p99_ttft_ms", "P99 TTFT (ms)"))


def predicted_vs_measured(validations, metrics=VALIDATION_METRICS, axes=None):
    """Predicted against measured per metric, one colour per deployment. Returns the figure."""
    if isinstance(validations, dict):
        validations = [validations]
    runs = [r for v in validations for r in v["runs"]]
    if axes is None:
        _, axes = plt.subplots(1, len(metrics), figsize=(4.0 * len(metrics), 4.2))
    groups = sorted({r["deployment"] for r in runs})
    colours = plt.cm.tab10.colors
    for ax, (key, label) in zip(axes, metrics):
        lo, hi = math.inf, 0.0
        for gi, g in enumerate(groups):
            for fit in (False, True):
                pts = [(m["measured"], m["predicted"]) for r in runs
                       if r["deployment"] == g and r.get("in_fit_set", False) == fit
                       for m in r.get("metrics", [])
                       if m["metric"] == key and m["measured"] > 0 and m["predicted"] > 0]
                if not pts:
                    continue
                xs, ys = zip(*pts)
                lo, hi = min(lo, *xs, *ys), max(hi, *xs, *ys)
                c = colours[gi % len(colours)]
                ax.scatter(xs, ys, s=22, edgecolors=c, facecolors="none" if fit else c,
                           label=g if not fit else None)
        if hi > 0:
            lo, hi = lo / 1.5, hi * 1.5
            ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8)
            for f in (0.9, 1.1):
                ax.plot([lo, hi], [lo * f, hi * f], color="grey", linewidth=0.5, linestyle="--")
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("measured " + label)
        ax.set_ylabel("predicted " + label)
        ax.grid(True, which="both", alpha=0.2)
    axes[0].legend(fontsize=6, loc="upper left")
    axes[0].figure.tight_layout()
    return axes[0].figure


def compare_bars(compare, ax=None):
    """B - A (mean over paired seeds) per metric with its confidence interval, as % of A."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    rows = [m for m in compare["metrics"] if m.get("a_mean")]
    names = [m["name"] for m in rows]
    pct = [100.0 * m["mean_diff"] / m["a_mean"] for m in rows]
    lo = [100.0 * (m["mean_diff"] - m["ci_low"]) / m["a_mean"] for m in rows]
    hi = [100.0 * (m["ci_high"] - m["mean_diff"]) / m["a_mean"] for m in rows]
    colours = ["tab:green" if m["p_value"] < 1 - compare["confidence"] else "tab:grey"
               for m in rows]
    ax.barh(names, pct, xerr=[lo, hi], color=colours, capsize=3)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel(f"B - A, % of A (bars: {compare['confidence']:.0%} CI; green: significant)")
    ax.invert_yaxis()
    ax.figure.tight_layout()
    return ax.figure


def plot_files(paths, kind=None, slos=()):
    """The figure for the given output files (all of one kind)."""
    data = []
    for p in paths:
        try:
            with open(p) as f:
                data.append(json.load(f))
        except (OSError, json.JSONDecodeError) as e:
            raise ValueError(f"{p}: cannot read servesim output: {e}") from None
    kinds = {kind_of(d) for d in data}
    if len(kinds) != 1:
        raise ValueError(f"files of different kinds given: {', '.join(sorted(kinds))}")
    found = kinds.pop()
    kind = kind or {"sweep": "latency", "plan": "gpus", "validation": "validation",
                    "compare": "compare", "simulation": None}[found]
    needs = {"latency": "sweep", "pareto": "sweep", "gpus": "plan", "validation": "validation",
             "compare": "compare"}
    if kind not in needs:
        raise ValueError(f"--kind: '{kind}' is invalid for a {found} output; expected one of "
                         f"{', '.join(k for k, v in needs.items() if v == found) or 'none'}")
    if needs[kind] != found:
        raise ValueError(f"--kind {kind} needs {needs[kind]} output; the files are {found} output")
    if kind == "latency":
        if len(data) != 1:
            raise ValueError("--kind latency takes one sweep file")
        return latency_vs_rate(data[0], slos)
    if kind == "pareto":
        return throughput_vs_interactivity(data)
    if kind == "gpus":
        return gpus_vs_qps(data)
    if kind == "validation":
        return predicted_vs_measured(data)
    return compare_bars(data[0])


def check_output(path, inputs):
    """servesim's output rule (sim/base/output_file.h) for the image: its folder exists; an
    existing path is a regular file (not a symlink, directory, FIFO or device) and none of the
    `inputs`. Raises ValueError naming -o/--output."""
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise ValueError(f"-o/--output: '{path}': folder '{folder}' does not exist; expected a "
                         "path in an existing folder")
    if not os.path.lexists(path):
        return
    mode = os.lstat(path).st_mode
    kind = ("a symbolic link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode)
            else "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else None)
    if kind:
        raise ValueError(f"-o/--output: '{path}' is {kind}; expected a new or regular file "
                         "(the image is written to a temporary file and renamed into place)")
    for p in inputs:
        if os.path.exists(p) and os.path.samefile(path, p):
            raise ValueError(f"-o/--output: '{path}' is also an input ('{p}'); expected a "
                             "different output path (writing it would destroy the input)")


def save_figure(fig, path, dpi):
    """Writes `fig` to a temporary file beside `path` and renames it into place."""
    tmp = f"{path}.tmp.{os.getpid()}"
    fmt = os.path.splitext(path)[1].lstrip(".") or None
    try:
        fig.savefig(tmp, dpi=dpi, format=fmt)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.remove(tmp)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m servesim.plot",
                                 description="Plots servesim sweep, plan, compare and validate "
                                             "outputs (PNG, SVG or PDF by the file extension).")
    ap.add_argument("files", nargs="+", help="servesim JSON outputs (all of one kind)")
    ap.add_argument("-o", "--output", required=True, help="image file to write (.png, .svg, .pdf)")
    ap.add_argument("--kind", choices=["latency", "pareto", "gpus", "validation", "compare"],
                    help="which figure (default: latency for sweeps, gpus for plans, ...)")
    ap.add_argument("--slo", action="append", default=[],
                    help="SLO line on the latency figure, e.g. 'p99_ttft_ms<=500' (repeatable)")
    ap.add_argument("--title", help="figure title")
    ap.add_argument("--dpi", type=int, default=120, help="resolution of PNG output [120]")
    args = ap.parse_args(argv)
    try:
        check_output(args.output, args.files)
        fig = plot_files(args.files, args.kind, args.slo)
    except ValueError as e:
        print(f"servesim plot: error: {e}", file=sys.stderr)
        return 2
    if args.title:
        fig.suptitle(args.title)
        fig.tight_layout()
    save_figure(fig, args.output, args.dpi)
    print(f"Plot written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
