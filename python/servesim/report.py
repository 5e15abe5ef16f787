"""A one-page HTML report of a capacity plan: the page a buyer forwards.

Command line (`servesim report` runs the same module):

    python3 -m servesim.report plan.json [sweep.json] -o report.html

From one `plan --output` file (required) and at most one `sweep --output` file of the same model
and workload, one self-contained HTML file (figures inline as SVG, no script, no network):

  #answer        the Answer line, the latencies at the answer, its prediction basis, its error
                 band, the headroom and the candidates it ties with;
  #candidates    every candidate: GPUs, replicas, per-replica capacity, binding constraint,
                 latencies at the target, cost, basis and band;
  #curve         latency against request rate for one replica, with the SLO lines and the
                 maximum rate that meets each SLO (from the sweep; without one, from the answer's
                 capacity probes, the simulations plan's search ran);
  #gpus          the GPUs each candidate needs (servesim.plot.candidate_bars);
  #vllm          the `vllm serve` command of one replica of the answer and the `vllm bench serve`
                 command that checks it.

The page is deterministic: the same files give the same bytes (no date; SVG ids salted by a
constant). The output follows the CLI's rule (servesim.plot.check_output): never an input, a
symbolic link or a device; written to a temporary file and renamed into place.
"""

import argparse
import hashlib
import html
import io
import json
import os
import sys

try:
    import matplotlib
except ImportError:  # named, not a traceback: the one dependency a bare Python lacks
    sys.exit("servesim report: error: python3-matplotlib is not installed for "
             f"{sys.executable}; expected it (scripts/setup.sh installs Debian's)")

matplotlib.use("Agg")  # files only
import matplotlib.pyplot as plt  # noqa: E402

from . import plot as splot  # noqa: E402

# The ids and classes of the page's parts: tests/scripts/report_browser_test.sh checks them in
# the DOM a headless browser builds.
SECTION_IDS = ("answer", "candidates", "curve", "gpus", "vllm")


def _esc(text):
    return html.escape(str(text), quote=True)


def _num(value, fmt="{:.3g}"):
    return "—" if value is None else fmt.format(value)


def _pct(value):
    return "—" if value is None else f"±{100 * value:.2g}%"


def load_inputs(paths):
    """(plan, sweep or None) from the given files: exactly one plan and at most one
    sweep. Raises ValueError naming the file and what was expected."""
    plan = sweep = None
    plan_path = None
    for p in paths:
        try:
            with open(p) as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise ValueError(f"{p}: cannot read servesim output: {e}") from None
        try:
            kind = splot.kind_of(data) if isinstance(data, dict) else None
        except ValueError:
            kind = None
        if kind == "plan":
            if plan is not None:
                raise ValueError(f"{p}: a second plan output (the first is {plan_path}); expected "
                                 "one plan file per report")
            plan, plan_path = data, p
        elif kind == "sweep":
            if sweep is not None:
                raise ValueError(f"{p}: a second sweep output; expected at most one sweep file")
            sweep = data
        else:
            raise ValueError(f"{p}: is {'a ' + kind if kind else 'not a servesim'} output; "
                             "expected a plan output (plan --output) and optionally a sweep "
                             "output (sweep --output)")
    if plan is None:
        raise ValueError("no plan output given; expected a plan --output file (and optionally a "
                         "sweep --output file)")
    if sweep is not None:
        check_sweep_matches(plan, sweep)
    return plan, sweep


def check_sweep_matches(plan, sweep):
    """A sweep drawn beside a plan must be of the plan's model and workload, by request rate, and
    each of its curves a candidate of the plan: otherwise its curve answers another question."""
    pc, sc = plan["config"], sweep["config"]
    if sc.get("model") != pc.get("model"):
        raise ValueError(f"sweep: model '{sc.get('model')}' differs from the plan's "
                         f"'{pc.get('model')}'; expected a sweep of the plan's model")
    if splot.workload_text(sc) != splot.workload_text(pc):
        raise ValueError(f"sweep: workload '{splot.workload_text(sc)}' differs from the plan's "
                         f"'{splot.workload_text(pc)}'; expected a sweep of the plan's workload")
    if sweep["axis"] != "request_rate":
        raise ValueError(f"sweep: swept '{sweep['axis']}'; expected a sweep of --request-rate "
                         "(the plan's target is a request rate)")
    labels = {(c["gpu"], c["tensor_parallel_size"], c.get("pipeline_parallel_size", 1))
              for c in plan["candidates"]}
    for curve in sweep["curves"]:
        d = curve.get("deployment") or {}
        key = (d.get("gpu"), d.get("tensor_parallel_size"), d.get("pipeline_parallel_size", 1))
        if d and key not in labels:
            raise ValueError(f"sweep: curve {key[0]} TP{key[1]} is not a candidate of the plan; "
                             "expected a sweep of one of its candidates")


def answer_candidate(plan):
    """The candidate the Answer line names (the best-ranked that passed), or None."""
    ok = [c for c in plan["candidates"] if c["status"] == "ok" and c.get("rank") is not None]
    return min(ok, key=lambda c: c["rank"]) if ok else None


def svg_of(fig, label):
    """The figure as an inline <svg> element (no XML prolog), closed after drawing."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    start = text.index("<svg")
    return text[start:].replace("<svg ", f'<svg role="img" aria-label="{_esc(label)}" ', 1)


def _probe_figure(plan, cand):
    """The answer's capacity probes: each SLO metric (mean over seeds) against the per-replica
    rate plan simulated, passes filled and failures hollow, the SLO lines and the per-replica
    maximum plan found. Returns (figure, caption)."""
    slos = []
    for text in plan["servesim_plan"].get("slos") or []:
        try:
            slos.append((text,) + splot.parse_slo(text))
        except ValueError:
            continue
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    colours = plt.cm.tab10.colors
    for i, (text, stat, metric, value) in enumerate(slos):
        key = f"{stat}_{metric}_ms"
        c = colours[i % len(colours)]
        for passed in (True, False):
            pts = [(p["rate"], p["mean"][key]) for p in cand.get("capacity_probes", [])
                   if p.get("pass") == passed and p.get("mean", {}).get(key) is not None]
            if pts:
                ax.scatter(*zip(*pts), s=30, edgecolors=c, facecolors=c if passed else "none",
                           label=f"{splot.slo_text(stat, metric, value)}: "
                                 f"{'meets' if passed else 'misses'} (probe)")
        ax.axhline(value, color="red", linewidth=1.2)
    top = cand.get("per_replica_max_qps")
    if top:
        ax.axvline(top, color="black", linestyle=":",
                   label=f"max {top:.3g} req/s per replica ({cand.get('binding_slo')} binds)")
    ax.set_yscale("log")
    splot._plain_log_labels(ax)
    ax.set_xlabel("request rate per replica (req/s)")
    ax.set_ylabel("latency (ms)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"{cand['label']}: the simulations plan's capacity search ran", fontsize=9)
    fig.tight_layout()
    return fig, ("No sweep given: the points are the answer's capacity probes. For the whole "
                 "curve, pass a sweep output of the answer's configuration too.")


def _sweep_caption(plan, sweep):
    """The maximum rate meeting each SLO, per curve, as text lines."""
    lines = []
    for curve in sweep["curves"]:
        if curve.get("error"):
            continue
        d = curve.get("deployment") or {}
        name = f"{d.get('gpu')} TP{d.get('tensor_parallel_size')}"
        pts = curve["points"]
        x = [p["request_rate"] for p in pts]
        for text in plan["servesim_plan"].get("slos") or []:
            try:
                stat, metric, value = splot.parse_slo(text)
            except ValueError:
                lines.append(f"{name}: {text} is not drawn (a workload class's SLO)")
                continue
            y = [None if p["saturated"] else p.get(f"{stat}_{metric}_ms") for p in pts]
            crossing = splot.slo_crossing(x, y, value)
            if crossing is None:
                lines.append(f"{name}: no swept rate meets {splot.slo_text(stat, metric, value)}")
            else:
                lines.append(f"{name}: {splot.crossing_label(crossing, stat, metric, value)} "
                             "(one replica; linear between swept rates)")
    return lines


def _sweeps_answer(sweep, answer):
    """Whether the sweep has a curve of the answer's GPU and parallelism."""
    want = (answer["gpu"], answer["tensor_parallel_size"], answer.get("pipeline_parallel_size", 1))
    return any(((c.get("deployment") or {}).get("gpu"),
                (c.get("deployment") or {}).get("tensor_parallel_size"),
                (c.get("deployment") or {}).get("pipeline_parallel_size", 1)) == want
               for c in sweep["curves"])


def _basis_rows(plan, cand):
    head = plan["servesim_plan"]
    band = plan.get("answer_band") or {}
    rows = [("prediction basis", f"{cand.get('prediction_basis')} — "
                                 f"{cand.get('prediction_basis_reason') or ''}"),
            ("error band", f"TTFT {_pct(band.get('ttft'))}, TPOT {_pct(band.get('tpot'))}, "
                           f"E2E {_pct(band.get('e2e'))} ({band.get('source', '')})"),
            ("headroom", f"{100 * head.get('headroom', 0):g}%: clusters verified at "
                         f"{head.get('verify_qps', 0):g} req/s for a {head['target_qps']:g} req/s "
                         "target"),
            ("SLOs", f"{splot.slos_text(head.get('slos'))} ({head.get('slo_rule', '')}, "
                     f"{head.get('seeds')} seeds)")]
    ties = plan.get("ties") or []
    if ties:
        rows.append(("ties within the band", "; ".join(
            f"{t['label']} ({t['prediction_basis']}, {100 * t['relative_difference']:.2g}% apart "
            f"within ±{100 * t['band']:.2g}%)" for t in ties)))
    return rows


def _candidates_table(plan, answer):
    cols = ("rank", "candidate", "GPUs", "replicas", "max req/s per replica", "binding",
            "P99 TTFT (ms)", "P99 TPOT (ms)", "$/hour", "$/M output tokens", "basis", "band (TTFT)")
    out = ['<table id="candidates-table">',
           "<thead><tr>" + "".join(f"<th>{_esc(c)}</th>" for c in cols) + "</tr></thead>",
           "<tbody>"]
    for c in plan["candidates"]:
        cls = "candidate" + (" answer" if c is answer else "") + (
            "" if c["status"] == "ok" else " failed")
        if c["status"] != "ok":
            cells = [c.get("rank") or "—", c["label"]]
            out.append(f'<tr class="{cls}">' + "".join(f"<td>{_esc(v)}</td>" for v in cells) +
                       f'<td colspan="{len(cols) - 2}">{_esc(c["status"])}: '
                       f'{_esc(c.get("reason") or "")}</td></tr>')
            continue
        at = c.get("at_target") or {}
        mean = (lambda k: (at.get(k) or {}).get("mean"))
        band = (c.get("error_band") or {}).get("ttft")
        cells = [c.get("rank"), c["label"], c.get("total_gpus"), c.get("replicas"),
                 _num(c.get("per_replica_max_qps")), c.get("binding_slo"),
                 _num(mean("p99_ttft_ms"), "{:.4g}"), _num(mean("p99_tpot_ms"), "{:.3g}"),
                 _num(c.get("cost_per_hour_usd"), "{:.2f}"),
                 _num(c.get("usd_per_million_output_tokens"), "{:.2f}"),
                 c.get("prediction_basis"), _pct(band)]
        out.append(f'<tr class="{cls}">' + "".join(f"<td>{_esc(v)}</td>" for v in cells) + "</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out)


_STYLE = """
body { font-family: sans-serif; max-width: 1150px; margin: 1.5em auto; color: #222; }
h1 { font-size: 1.35em; } h2 { font-size: 1.1em; border-bottom: 1px solid #ccc; }
.answer-line { font-size: 1.05em; background: #eef5ff; border-left: 4px solid #1f77b4;
               padding: 0.6em; }
table { border-collapse: collapse; font-size: 0.85em; }
td, th { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
tr.answer td { background: #eef5ff; font-weight: bold; }
tr.failed td { color: #777; }
pre { background: #f6f6f6; padding: 0.6em; white-space: pre-wrap; word-break: break-all; }
figure { margin: 0; } figure svg { max-width: 100%; height: auto; }
footer { font-size: 0.8em; color: #666; margin-top: 2em; }
"""


def render(plan, sweep=None, inputs=()):
    """The report's HTML text."""
    matplotlib.rcParams["svg.hashsalt"] = "servesim-report"  # stable ids: same input, same bytes
    answer = answer_candidate(plan)
    title = "Capacity plan: " + splot.plan_title(plan)
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             f"<title>{_esc(title)}</title>", f"<style>{_STYLE}</style>", "</head>", "<body>",
             f'<h1 id="title">{_esc(title)}</h1>']

    parts += ['<section id="answer">', "<h2>Answer</h2>",
              f'<p class="answer-line">{_esc(plan.get("answer") or "no answer")}</p>']
    if plan.get("answer_latencies"):
        parts.append(f'<p id="answer-latencies">{_esc(plan["answer_latencies"])}</p>')
    if answer is not None:
        parts.append('<table id="basis">')
        for k, v in _basis_rows(plan, answer):
            parts.append(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>")
        parts.append("</table>")
    parts.append("</section>")

    parts += ['<section id="candidates">', "<h2>Candidates</h2>", _candidates_table(plan, answer),
              "</section>"]

    parts += ['<section id="curve">', "<h2>Latency against request rate (one replica)</h2>"]
    if sweep is not None:
        label = splot.sweep_title(sweep)
        fig = splot.latency_vs_rate(sweep, [s for s in plan["servesim_plan"].get("slos") or []
                                            if _drawable(s)])
        lines = _sweep_caption(plan, sweep)
        top = answer.get("per_replica_max_qps") if answer is not None else None
        if top and _sweeps_answer(sweep, answer):
            # plan's own search, beside the sweep's reading: both per replica, they can differ
            # (plan's saturation rule, seeds and run length are its own).
            for ax in fig.axes:
                ax.axvline(top, color="black", linestyle="-.", linewidth=1,
                           label=f"plan: max {top:.3g} req/s per replica")
                ax.legend(fontsize=7, loc="best")
            lines.append(f"plan's search for {answer['label']}: max {top:.3g} req/s per replica "
                         f"({answer.get('binding_slo')} binds)")
        fig.suptitle(label, fontsize=11)
        fig.tight_layout()
        parts.append(f'<figure id="latency-curve">{svg_of(fig, label)}</figure>')
        parts.append('<ul id="max-rate">' + "".join(
            f"<li>{_esc(line)}</li>" for line in lines) + "</ul>")
    elif answer is not None:
        fig, caption = _probe_figure(plan, answer)
        parts.append(f'<figure id="latency-curve">{svg_of(fig, answer["label"])}</figure>')
        top = answer.get("per_replica_max_qps")
        parts.append(f'<ul id="max-rate"><li>{_esc(answer["label"])}: max {_num(top)} req/s per '
                     f'replica ({_esc(answer.get("binding_slo"))} binds; plan\'s search)</li></ul>')
        parts.append(f"<p>{_esc(caption)}</p>")
    else:
        parts.append('<p id="max-rate">No candidate meets the SLOs: no curve to show.</p>')
    parts.append("</section>")

    parts += ['<section id="gpus">', "<h2>GPUs per candidate</h2>",
              f'<figure id="gpu-chart">{svg_of(splot.candidate_bars(plan), "GPUs per candidate")}'
              "</figure>", "</section>"]

    cmds = plan.get("vllm_commands") or {}
    parts += ['<section id="vllm">', "<h2>vLLM commands for the answer</h2>"]
    if cmds.get("serve"):
        parts.append(f"<p>One replica (of {cmds.get('replicas')}, behind a router):</p>")
        parts.append(f'<pre id="vllm-serve">{_esc(cmds["serve"])}</pre>')
        if cmds.get("bench"):
            parts.append(f"<p>The benchmark that checks it at {cmds.get('bench_rate'):g} req/s "
                         "(sent to the router):</p>")
            parts.append(f'<pre id="vllm-bench">{_esc(cmds["bench"])}</pre>')
        elif cmds.get("bench_why_not"):
            parts.append(f"<p>No benchmark command: {_esc(cmds['bench_why_not'])}</p>")
    else:
        parts.append('<p id="vllm-serve">No answer, so no command.</p>')
    parts.append("</section>")

    files = "; ".join(f"{os.path.basename(p)} (sha256 {_sha(p)})" for p in inputs)
    parts += [f'<footer id="inputs">Made by servesim report from {_esc(files)}. Predictions of '
              "a simulator: the band above is its measured error for this basis.</footer>",
              "</body>", "</html>", ""]
    return "\n".join(parts)


def _drawable(slo):
    try:
        splot.parse_slo(slo)
        return True
    except ValueError:
        return False


def _sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


def write_atomically(path, text):
    """Writes `text` to a temporary file beside `path` and renames it into place."""
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.remove(tmp)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="servesim report",
                                 description="One self-contained HTML page of a capacity plan: "
                                             "the answer, its basis and band, the candidates, "
                                             "the latency curve, the GPUs per candidate and the "
                                             "vllm serve command.")
    ap.add_argument("files", nargs="+", help="a plan --output file and optionally a sweep "
                                             "--output file of the same model and workload")
    ap.add_argument("-o", "--output", required=True, help="HTML file to write")
    args = ap.parse_args(argv)
    try:
        splot.check_output(args.output, args.files)
        plan, sweep = load_inputs(args.files)
        text = render(plan, sweep, args.files)
    except ValueError as e:
        print(f"servesim report: error: {e}", file=sys.stderr)
        return 2
    write_atomically(args.output, text)
    print(f"Report written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
