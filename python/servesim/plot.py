"""Plots of servesim outputs (matplotlib): the figures capacity planning is read from.

Command line (the kind of each file is recognised from its keys):

    python3 -m servesim.plot sweep.json -o latency.png [--slo 'p99_ttft_ms<=500']
    python3 -m servesim.plot sweep.json --kind pareto -o pareto.svg
    python3 -m servesim.plot plan.json -o candidates.png
    python3 -m servesim.plot plan-50.json plan-100.json plan-200.json -o gpus.png
    python3 -m servesim.plot validation.json -o predicted_vs_measured.png
    python3 -m servesim.plot compare.json -o compare.png

Every figure is titled from its files (model × GPU × TP × workload; --title replaces it) and has
a legend on every panel. Kinds:
  latency     (sweep)    P50 (dashed) and P99 (solid) TTFT and TPOT, and ITL/E2E when an SLO
                         names them, against the swept request rate (or concurrency); each SLO as
                         a red line and each curve's SLO crossing marked and labelled ("max 7.7
                         req/s at p99 TTFT <= 500 ms", linear between the swept points); the
                         saturated range of each curve shaded (no steady-state latency there).
  pareto      (sweep)    output tokens/s per GPU against interactivity (tokens/s per user =
                         1000 / median TPOT in ms), every unsaturated point of every curve, and the
                         Pareto frontier over all of them (the InferenceX / vLLM dashboard view).
  candidates  (one plan) GPUs each candidate needs, the answer marked, cost and basis beside each
                         bar, a pruned one's bound as a lighter bar, the reason beside a
                         candidate that fails (default for one plan).
  gpus        (plans)    GPUs needed against target QPS, one line per GPU type: each plan file
                         gives one marker per GPU type, the fewest GPUs of its candidates on that
                         GPU that passed (verified on the whole cluster; hollow: all pruned, the
                         fewest bound GPUs). Run one plan per target (default for several plans).
  validation (validate)  predicted against measured, one panel per metric, log-log, the diagonal
                         and +-10% bands; runs in the fit set hollow (said in the legend).
  compare    (compare)   B - A per metric with its confidence interval: green where B is
                         significantly better, red where significantly worse, grey otherwise.

The same functions take the parsed JSON (or a servesim result) and an optional matplotlib Axes,
for notebooks: latency_vs_rate, throughput_vs_interactivity, gpus_vs_qps, predicted_vs_measured,
candidate_bars, compare_bars. Needs python3-matplotlib.
"""

import argparse
import json
import math
import os
import re
import stat
import sys
import textwrap

import matplotlib

if __name__ == "__main__":
    matplotlib.use("Agg")  # files only; a notebook keeps its own backend
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import (FuncFormatter, LogFormatter, LogLocator,  # noqa: E402
                               NullFormatter)

from .plot_plan import candidate_bars, gpus_vs_qps  # noqa: E402,F401  (the plan figures)


def _plain_log_labels(ax, axis="y"):
    """Log-scale tick labels as plain numbers (60, not 6×10^1), minor ticks labelled too when the
    axis spans less than a decade, where otherwise few labels would show."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    target.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))

def log_ticks(ax, lo, hi):
    """Both axes of a log-log panel from `lo` to `hi`: labelled ticks at 1, 2 and 5 per decade
    when the span is under two decades, at 1 per decade otherwise (more would overlap on a
    4-inch panel), as plain numbers; unlabelled minor ticks."""
    decades = math.log10(hi / lo)
    subs = (1.0, 2.0, 5.0) if decades < 2 else (1.0,)
    for target in (ax.xaxis, ax.yaxis):
        target.set_major_locator(LogLocator(base=10, subs=subs))
        target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        target.set_minor_formatter(NullFormatter())


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


def workload_text(config):
    """The workload in a few words, from a result's `config`: 'random 1024 in / 256 out',
    'sharegpt', 'workload mix.yaml', 'trace t.csv'."""
    if config.get("workload"):
        return "workload " + os.path.basename(config["workload"])
    name = config.get("dataset_name") or "random"
    if name == "random":
        return f"random {config.get('random_input_len')} in / {config.get('random_output_len')} out"
    if name == "trace" and config.get("trace"):
        return "trace " + os.path.basename(config["trace"])
    return name


def _joined(values):
    seen = []
    for v in values:
        if v is not None and v not in seen:
            seen.append(v)
    return ", ".join(str(v) for v in seen)


def sweep_title(sweep):
    """'llama-3.1-70b × h100-sxm × TP4 × random 1024 in / 256 out' from a sweep's curves (several
    values of a field varied across the curves are listed)."""
    deps = [c["deployment"] for c in sweep["curves"] if c.get("deployment")]
    model = _joined(d.get("model") for d in deps) or sweep["config"].get("model")
    gpu = _joined(d.get("gpu") for d in deps) or _joined(sweep["config"].get("gpu") or [])
    tps = _joined(d.get("tensor_parallel_size") for d in deps)
    pps = _joined(d.get("pipeline_parallel_size") for d in deps)
    reps = _joined(d.get("num_replicas") for d in deps)
    parts = [model, gpu, f"TP{tps}" if "," not in tps else f"TP {tps}"]
    if pps and pps != "1":
        parts.append(f"PP{pps}")
    if reps and reps != "1":
        parts.append(f"{reps} replicas")
    parts.append(workload_text(sweep["config"]))
    return " × ".join(parts)


def plan_title(plan):
    """'llama-3.1-8b × h100-sxm, a100-80gb × random 1024 in / 256 out at 20 req/s, p99_ttft_ms<=500'."""
    head = plan["servesim_plan"]
    gpus = _joined(plan["config"].get("gpu") or [c["gpu"] for c in plan["candidates"]])
    return (f"{plan['config'].get('model')} × {gpus} × {workload_text(plan['config'])} "
            f"at {head['target_qps']:g} req/s, {slos_text(head.get('slos'))}")


_STAT_NAMES = {"mean": "mean", "median": "median"}
_METRIC_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "E2E"}


def slos_text(slos):
    """A plan's SLO list as words: ['p99_ttft_ms<=500'] -> 'p99 TTFT <= 500 ms'."""
    def words(text):
        try:
            return slo_text(*parse_slo(text))
        except ValueError:  # a form the figures do not draw: shown as written
            return text
    return ", ".join(words(s) for s in slos or []) or "no SLO"


def slo_text(stat, metric, value):
    """('p99', 'ttft', 500) -> 'p99 TTFT <= 500 ms'."""
    return f"{_STAT_NAMES.get(stat, stat)} {_METRIC_NAMES[metric]} <= {value:g} ms"


def slo_crossing(xs, ys, limit):
    """The largest swept x at which the metric still meets `limit`, walking up from the lowest x.

    `ys` holds the metric at each x, None where the point saturated (no steady-state latency).
    Returns None when the lowest x already misses the SLO (or saturates); otherwise a dict:
      value  the crossing: linear interpolation between the last point that meets the SLO and
             the next, which misses it (y0 + (x - x0)(y1 - y0)/(x1 - x0) = limit); or the last
             point that meets it when the next one saturated or no point misses it;
      bound  'exact' (interpolated), 'saturated' (next point saturated: the crossing lies between
             value and that point) or 'lower' (every point meets it: the crossing is above value).
    """
    pts = sorted(zip(xs, ys), key=lambda p: p[0])
    last = None
    for x, y in pts:
        if y is None or (isinstance(y, float) and math.isnan(y)):
            return None if last is None else {"value": last[0], "bound": "saturated"}
        if y > limit:
            if last is None:
                return None
            x0, y0 = last
            return {"value": x0 + (limit - y0) * (x - x0) / (y - y0), "bound": "exact"}
        last = (x, y)
    return None if last is None else {"value": last[0], "bound": "lower"}


def crossing_label(crossing, stat, metric, value, unit="req/s"):
    """'max 7.7 req/s at p99 TTFT <= 500 ms' ('max >= 35 req/s ...' for a lower bound)."""
    op = "" if crossing["bound"] == "exact" else ">= "
    return f"max {op}{crossing['value']:.3g} {unit} at {slo_text(stat, metric, value)}"


def latency_vs_rate(sweep, slos=(), axes=None):
    """P50 and P99 latency against the swept axis, one panel per metric (TTFT and TPOT, and
    ITL/E2E when an SLO names them); each SLO as a red line, each curve's SLO crossing marked and
    labelled, each curve's saturated range shaded (a saturated point has no steady-state latency:
    it grows with the run's length). Returns the figure."""
    slos = [parse_slo(s) if isinstance(s, str) else s for s in slos]
    metrics = ["ttft", "tpot"] + [m for m in ("itl", "e2el") if any(s[1] == m for s in slos)]
    if axes is None:
        fig, axes = plt.subplots(1, len(metrics), figsize=(5.5 * len(metrics), 4.4))
    fig = axes[0].figure
    axis = sweep["axis"]
    unit = "req/s" if axis == "request_rate" else "concurrent requests"
    colours = plt.cm.tab10.colors
    curves = [c for c in sweep["curves"] if not c.get("error") and c.get("points")]
    x_max = max((p[axis] for c in curves for p in c["points"]), default=1.0)
    steps = sorted({p[axis] for c in curves for p in c["points"]})
    pad = (steps[-1] - steps[-2]) / 2 if len(steps) > 1 else x_max * 0.05
    for ci, curve in enumerate(curves):
        colour = colours[ci % len(colours)]
        pts = curve["points"]
        x = [p[axis] for p in pts]
        name = _curve_label(curve) if len(curves) > 1 or curve.get("label") else ""
        sat = [xi for xi, p in zip(x, pts) if p["saturated"]]
        for ax, metric in zip(axes, metrics):
            for stat, style in (("p50", "--"), ("p99", "-")):
                y = [None if p["saturated"] else p.get(f"{stat}_{metric}_ms") for p in pts]
                if all(v is None for v in y):
                    continue
                ax.plot(x, [math.nan if v is None else v for v in y], style, color=colour,
                        marker="o", markersize=3, label=f"{name} {stat.upper()}".strip())
            if sat:
                ax.axvspan(min(sat), x_max + pad, color=colour, alpha=0.12, hatch="//",
                           label=f"{name} saturated from {min(sat):g} {unit}".strip())
            for stat, m, value in slos:
                if m != metric:
                    continue
                y = [None if p["saturated"] else p.get(f"{stat}_{metric}_ms") for p in pts]
                crossing = slo_crossing(x, y, value)
                if crossing is None:
                    continue
                # An interpolated crossing sits on the SLO line; a bound (the next point
                # saturated, or none missed) is the last point that meets it, pointing right.
                at = value if crossing["bound"] == "exact" else dict(zip(x, y))[crossing["value"]]
                ax.plot([crossing["value"]], [at], "D" if crossing["bound"] == "exact" else ">",
                        color=colour, markersize=8, markeredgecolor="black", zorder=5,
                        label=f"{name} {crossing_label(crossing, stat, metric, value, unit)}".strip())
                ax.axvline(crossing["value"], color=colour, linestyle=":", linewidth=1)
    for ax, metric in zip(axes, metrics):
        name = _METRIC_NAMES[metric]
        for stat, m, value in slos:
            if m == metric:
                ax.axhline(value, color="red", linewidth=1.2, label=f"SLO {slo_text(stat, m, value)}")
        ax.set_yscale("log")
        _plain_log_labels(ax)
        ax.set_xlim(right=x_max + pad)
        ax.set_xlabel("request rate (req/s)" if axis == "request_rate" else "max concurrency")
        ax.set_ylabel(f"{name} (ms)")
        ax.set_title(f"{name}: P99 solid, P50 dashed", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="best")
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
    any_fit = False
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
                any_fit = any_fit or fit
        if hi > 0:
            lo, hi = lo / 1.5, hi * 1.5
            ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8)
            for f in (0.9, 1.1):
                ax.plot([lo, hi], [lo * f, hi * f], color="grey", linewidth=0.5, linestyle="--")
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
        ax.set_xscale("log")
        ax.set_yscale("log")
        if hi > 0:
            log_ticks(ax, lo, hi)
        ax.set_xlabel("measured " + label)
        ax.set_ylabel("predicted " + label)
        ax.grid(True, which="both", alpha=0.2)
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        if any_fit:
            handles.append(ax.scatter([], [], s=22, edgecolors="black", facecolors="none"))
            labels.append("hollow: runs the profile was fitted on")
        handles += [plt.Line2D([], [], color="black", linewidth=0.8),
                    plt.Line2D([], [], color="grey", linewidth=0.5, linestyle="--")]
        labels += ["predicted = measured", "±10%"]
        ax.legend(handles, labels, fontsize=6, loc="upper left")
    axes[0].figure.tight_layout()
    return axes[0].figure


def compare_colour(metric, confidence):
    """Green when B is significantly better at the metric, red when significantly worse, grey
    when the difference is not significant at `confidence`. Lower is better for latencies (keys
    ending in _ms), higher for throughputs."""
    if metric["p_value"] >= 1 - confidence:
        return "tab:grey"
    lower_is_better = metric.get("key", "").endswith("_ms") or metric.get("unit") == "ms"
    better = metric["mean_diff"] < 0 if lower_is_better else metric["mean_diff"] > 0
    return "tab:green" if better else "tab:red"


def compare_bars(compare, ax=None):
    """B - A (mean over paired seeds) per metric with its confidence interval, as % of A."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    rows = [m for m in compare["metrics"] if m.get("a_mean")]
    names = [m["name"] for m in rows]
    pct = [100.0 * m["mean_diff"] / m["a_mean"] for m in rows]
    lo = [100.0 * (m["mean_diff"] - m["ci_low"]) / m["a_mean"] for m in rows]
    hi = [100.0 * (m["ci_high"] - m["mean_diff"]) / m["a_mean"] for m in rows]
    colours = [compare_colour(m, compare["confidence"]) for m in rows]
    ax.barh(names, pct, xerr=[lo, hi], color=colours, capsize=3)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel(f"B - A, % of A (error bars: {compare['confidence']:.0%} CI)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in ("tab:green", "tab:red", "tab:grey")]
    ax.legend(handles, ["B significantly better", "B significantly worse", "not significant"],
              fontsize=7, loc="best")
    ax.invert_yaxis()
    ax.figure.tight_layout()
    return ax.figure


def default_title(data, kind):
    """The figure's title from the files themselves: model × GPU × TP × workload (and the target
    and SLOs for plans), so that a figure pasted on a slide says what it shows."""
    first = data[0]
    if kind in ("latency", "pareto"):
        return sweep_title(first)
    if kind == "candidates":
        return plan_title(first)
    if kind == "gpus":
        head = first["servesim_plan"]
        tps = first["config"].get("tensor_parallel_size")
        tps = ", ".join(str(t) for t in tps) if isinstance(tps, list) else tps
        return (f"{first['config'].get('model')} × {_joined(first['config'].get('gpu') or [])} × "
                f"TP {tps} × {workload_text(first['config'])}, {slos_text(head.get('slos'))}")
    if kind == "compare":
        return f"compare: A = {first.get('a', {}).get('label', 'A')}, B = {first.get('b', {}).get('label', 'B')}"
    return None


def plot_files(paths, kind=None, slos=()):
    """The figure for the given output files (all of one kind) and its default title."""
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
    plan_default = "candidates" if len(data) == 1 else "gpus"
    kind = kind or {"sweep": "latency", "plan": plan_default, "validation": "validation",
                    "compare": "compare", "simulation": None}[found]
    needs = {"latency": "sweep", "pareto": "sweep", "gpus": "plan", "candidates": "plan",
             "validation": "validation", "compare": "compare"}
    if kind not in needs:
        raise ValueError(f"--kind: '{kind}' is invalid for a {found} output; expected one of "
                         f"{', '.join(k for k, v in needs.items() if v == found) or 'none'}")
    if needs[kind] != found:
        raise ValueError(f"--kind {kind} needs {needs[kind]} output; the files are {found} output")
    if kind in ("latency", "candidates", "compare") and len(data) != 1:
        raise ValueError(f"--kind {kind} takes one {found} file; {len(data)} given")
    title = default_title(data, kind)
    if kind == "latency":
        return latency_vs_rate(data[0], slos), title
    if kind == "pareto":
        return throughput_vs_interactivity(data), title
    if kind == "gpus":
        return gpus_vs_qps(data), title
    if kind == "candidates":
        return candidate_bars(data[0]), title
    if kind == "validation":
        return predicted_vs_measured(data), title
    return compare_bars(data[0]), title


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
    ap.add_argument("--kind", choices=["latency", "pareto", "gpus", "candidates", "validation",
                                       "compare"],
                    help="which figure (default: latency for sweeps, candidates for one plan, "
                         "gpus for several, ...)")
    ap.add_argument("--slo", action="append", default=[],
                    help="SLO line on the latency figure, e.g. 'p99_ttft_ms<=500' (repeatable)")
    ap.add_argument("--title", help="figure title (default: model × GPU × TP × workload, from "
                                    "the files)")
    ap.add_argument("--dpi", type=int, default=120, help="resolution of PNG output [120]")
    args = ap.parse_args(argv)
    try:
        check_output(args.output, args.files)
        fig, title = plot_files(args.files, args.kind, args.slo)
    except ValueError as e:
        print(f"servesim plot: error: {e}", file=sys.stderr)
        return 2
    title = args.title or title
    if title:
        # Wrapped to the figure's width (about 11 characters per inch at this size).
        width = int(fig.get_figwidth() * 11)
        fig.suptitle(textwrap.fill(title, width), fontsize=11)
        fig.tight_layout()
    save_figure(fig, args.output, args.dpi)
    print(f"Plot written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
