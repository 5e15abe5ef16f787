"""servesim.plot: every figure kind from real outputs, the Pareto rule, and bad input."""
import json
import os
import subprocess
import sys

import pytest

import servesim
import servesim.plot as splot
from conftest import REPO, SMALL

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_pareto_front_closed_form():
    pts = [(1, 10), (2, 8), (2, 9), (3, 3), (1.5, 5), (4, 1), (0.5, 10)]
    # (1.5, 5) is dominated by (2, 9); (2, 8) by (2, 9); (0.5, 10) by (1, 10).
    assert splot.pareto_front(pts) == [(1, 10), (2, 9), (3, 3), (4, 1)]
    assert splot.pareto_front([]) == []


def test_parse_slo():
    assert splot.parse_slo("p99_ttft_ms<=500") == ("p99", "ttft", 500.0)
    assert splot.parse_slo(" mean_tpot_ms < 50 ") == ("mean", "tpot", 50.0)
    with pytest.raises(ValueError, match="p99_ttft_ms<=500"):
        splot.parse_slo("ttft<=500")


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("outputs")
    files = {}

    def save(name, data):
        files[name] = str(d / (name + ".json"))
        with open(files[name], "w") as f:
            json.dump(dict(data), f)

    save("sweep", servesim.sweep(**{**SMALL, "request_rate": [4, 16, 64]},
                                 vary={"max_num_seqs": [16, 256]}))
    for q in (5, 20):
        save(f"plan{q}", servesim.plan(model="llama-3.1-8b", gpu=["h100-sxm", "a100-80gb"],
                                       target_qps=q, slo=["p99_ttft_ms<=1000"], num_prompts=150,
                                       seeds=1, random_input_len=512, random_output_len=64))
    save("compare", servesim.compare(vary={"max_num_seqs": [8, 256]},
                                     **{**SMALL, "request_rate": 20}, seeds=3))
    run = os.path.join(REPO, "data", "realdata", "llmk8s_llama33_70b_a100x8", "01_tp8_pp1",
                       "serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_04.json")
    save("validate", servesim.validate(measured=[run], seeds=1, sidecars=[
        os.path.join(REPO, "tests", "data", "realdata_sidecars")]))
    return files


def run_plot(*args):
    return subprocess.run([sys.executable, "-m", "servesim.plot", *args], capture_output=True,
                          text=True)


@pytest.mark.parametrize("kind,inputs,ext", [
    ("latency", ["sweep"], "png"), ("pareto", ["sweep"], "svg"), ("gpus", ["plan5", "plan20"], "png"),
    ("validation", ["validate"], "png"), ("compare", ["compare"], "png")])
def test_each_kind_writes_an_image(outputs, tmp_path, kind, inputs, ext):
    out = tmp_path / f"{kind}.{ext}"
    p = run_plot(*[outputs[i] for i in inputs], "--kind", kind, "--slo", "p99_ttft_ms<=500",
                 "-o", str(out))
    assert p.returncode == 0, p.stderr
    data = out.read_bytes()
    assert data.startswith(PNG_MAGIC) if ext == "png" else b"<svg" in data[:2000]


def test_default_kind_follows_the_file(outputs, tmp_path):
    for name in ("sweep", "plan5", "compare", "validate"):
        out = tmp_path / f"{name}.png"
        p = run_plot(outputs[name], "-o", str(out))
        assert p.returncode == 0, p.stderr
        assert out.read_bytes().startswith(PNG_MAGIC)


def test_gpus_figure_uses_each_plans_verified_minimum(outputs):
    plans = []
    for name in ("plan5", "plan20"):
        with open(outputs[name]) as f:
            plans.append(json.load(f))
    fig = splot.gpus_vs_qps(plans)
    lines = {l.get_label(): l for l in fig.axes[0].get_lines()}
    for gpu in ("h100-sxm", "a100-80gb"):
        # A GPU with a verified candidate: the fewest verified GPUs; one whose candidates were all
        # pruned: a hollow marker at the fewest bound GPUs.
        want, bound = [], []
        for p in plans:
            ok = [c["total_gpus"] for c in p["candidates"] if c["gpu"] == gpu and c["status"] == "ok"]
            pruned = [c["bound_gpus"] for c in p["candidates"]
                      if c["gpu"] == gpu and c["status"] == "pruned"]
            (want if ok else bound).append(min(ok) if ok else min(pruned))
        if want:
            assert list(lines[gpu].get_ydata()) == want
        if bound:
            assert list(lines[f"{gpu}: pruned, at least"].get_ydata()) == bound
    assert any(c["status"] == "ok" for p in plans for c in p["candidates"])


def test_bad_input_exits_2_and_writes_nothing(outputs, tmp_path):
    out = tmp_path / "x.png"
    p = run_plot(outputs["plan5"], "--kind", "latency", "-o", str(out))
    assert p.returncode == 2 and "needs sweep output" in p.stderr and not out.exists()
    p = run_plot(outputs["sweep"], outputs["plan5"], "-o", str(out))
    assert p.returncode == 2 and "different kinds" in p.stderr and not out.exists()
    p = run_plot(str(tmp_path / "missing.json"), "-o", str(out))
    assert p.returncode == 2 and "missing.json" in p.stderr and not out.exists()
    p = run_plot(outputs["sweep"], "--slo", "ttft<500", "-o", str(out))
    assert p.returncode == 2 and "--slo" in p.stderr and not out.exists()


def test_output_rule_input_symlink_and_device_refused(outputs, tmp_path):
    # The CLI's output rule (sim/base/output_file.h) holds for the plot's image too.
    sweep = outputs["sweep"]
    before = open(sweep, "rb").read()
    p = run_plot(sweep, "-o", sweep)
    assert p.returncode == 2 and "is also an input" in p.stderr
    assert open(sweep, "rb").read() == before
    target = tmp_path / "target.png"
    target.write_bytes(b"keep")
    link = tmp_path / "link.png"
    link.symlink_to(target)
    p = run_plot(sweep, "-o", str(link))
    assert p.returncode == 2 and "symbolic link" in p.stderr
    assert link.is_symlink() and target.read_bytes() == b"keep"
    p = run_plot(sweep, "-o", "/dev/null")
    assert p.returncode == 2 and "is a device" in p.stderr
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["link.png", "target.png"]


def test_slo_crossing_closed_form():
    # On y = 100 + 50 x, y = 500 at x = 8 exactly: linear interpolation between the swept points
    # is exact on a line, whatever the step.
    xs = [1, 2, 3, 5, 7, 9, 11]
    line = [100 + 50 * x for x in xs]
    assert splot.slo_crossing(xs, line, 500) == {"value": 8.0, "bound": "exact"}
    # Between (2, 400) and (3, 700): 2 + (500 - 400) / (700 - 400) = 2.333...
    c = splot.slo_crossing([1, 2, 3], [300, 400, 700], 500)
    assert c["bound"] == "exact" and abs(c["value"] - 7 / 3) < 1e-12
    # Order of the points does not matter; the walk is from the lowest rate.
    assert splot.slo_crossing([3, 1, 2], [700, 300, 400], 500) == c
    # The next point saturated: the last one that met the SLO, as a bound.
    assert splot.slo_crossing([1, 2, 3], [300, 400, None], 500) == {"value": 2, "bound": "saturated"}
    # Every point meets it: a lower bound at the highest rate swept.
    assert splot.slo_crossing([1, 2], [300, 400], 500) == {"value": 2, "bound": "lower"}
    # The lowest rate already misses it (or saturates): no rate meets it.
    assert splot.slo_crossing([1, 2], [600, 700], 500) is None
    assert splot.slo_crossing([1, 2], [None, None], 500) is None
    # Exactly at the limit meets it (<=).
    assert splot.slo_crossing([1, 2, 3], [300, 500, 900], 500)["value"] == 2


def test_crossing_and_title_texts(outputs):
    c = {"value": 7.7, "bound": "exact"}
    assert splot.crossing_label(c, "p99", "ttft", 500) == "max 7.7 req/s at p99 TTFT <= 500 ms"
    assert (splot.crossing_label({"value": 35, "bound": "saturated"}, "p99", "tpot", 50)
            == "max >= 35 req/s at p99 TPOT <= 50 ms")
    with open(outputs["sweep"]) as f:
        sweep = json.load(f)
    # SMALL: Llama-3.1-8B on one H100, 512 in / 64 out; the curves vary max-num-seqs only.
    assert splot.sweep_title(sweep) == "llama-3.1-8b × h100-sxm × TP1 × random 512 in / 64 out"
    with open(outputs["plan5"]) as f:
        plan = json.load(f)
    assert splot.plan_title(plan) == ("llama-3.1-8b × h100-sxm, a100-80gb × random 512 in / 64 out"
                                      " at 5 req/s, p99 TTFT <= 1000 ms")


def test_latency_figure_marks_the_crossing_and_the_saturated_range():
    # A hand-made sweep: P99 TTFT 100 + 50 x at 1..9 req/s, saturated at 10: the crossing of
    # 500 ms is at 8 req/s and the saturated range starts at 10.
    def point(x, sat=False):
        p = {"request_rate": x, "saturated": sat}
        for stat, k in (("p50", 0.5), ("p99", 1.0)):
            p[f"{stat}_ttft_ms"] = None if sat else k * (100 + 50 * x)
            p[f"{stat}_tpot_ms"] = None if sat else k * (10 + x)
        return p
    sweep = {"axis": "request_rate", "config": {"model": "m", "dataset_name": "random",
                                                "random_input_len": 10, "random_output_len": 5},
             "curves": [{"label": "", "deployment": {"model": "m", "gpu": "g",
                                                     "tensor_parallel_size": 2},
                         "points": [point(x) for x in range(1, 10)] + [point(10, True)]}]}
    fig = splot.latency_vs_rate(sweep, ["p99_ttft_ms<=500"])
    ttft, tpot = fig.axes
    labels = ttft.get_legend_handles_labels()[1]
    assert "max 8 req/s at p99 TTFT <= 500 ms" in labels
    assert "SLO p99 TTFT <= 500 ms" in labels
    assert "saturated from 10 req/s" in labels
    marker = [l for l in ttft.get_lines() if l.get_label().startswith("max ")][0]
    assert list(marker.get_xdata()) == [8.0] and list(marker.get_ydata()) == [500]
    # Every panel has its legend; every marker is drawn in data coordinates (none pinned to
    # the top edge in axes coordinates).
    assert ttft.get_legend() is not None and tpot.get_legend() is not None
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_marker() not in (None, "None", "", " "):
                assert line.get_transform() == ax.transData, line.get_label()
    assert splot.sweep_title(sweep) == "m × g × TP2 × random 10 in / 5 out"


def test_compare_colours_follow_the_metrics_direction():
    def m(key, diff, p):
        return {"key": key, "mean_diff": diff, "p_value": p}
    assert splot.compare_colour(m("p99_ttft_ms", -5, 0.01), 0.95) == "tab:green"  # faster
    assert splot.compare_colour(m("p99_ttft_ms", 5, 0.01), 0.95) == "tab:red"     # slower
    assert splot.compare_colour(m("output_throughput", 5, 0.01), 0.95) == "tab:green"
    assert splot.compare_colour(m("output_throughput", -5, 0.01), 0.95) == "tab:red"
    assert splot.compare_colour(m("p99_ttft_ms", 5, 0.2), 0.95) == "tab:grey"


def test_candidate_bars_are_each_candidates_gpus(outputs):
    with open(outputs["plan5"]) as f:
        plan = json.load(f)
    fig = splot.candidate_bars(plan)
    bars = fig.axes[0].patches
    # A verified candidate's GPUs; a pruned one's bound (its lighter bar); nothing for the others.
    want = [c["total_gpus"] if c["status"] == "ok" else c["bound_gpus"] if c["status"] == "pruned"
            else 0 for c in plan["candidates"]]
    assert any(c["status"] == "pruned" for c in plan["candidates"])
    assert [b.get_width() for b in bars] == want
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [c["label"] for c in
                                                                      plan["candidates"]]
    # The answer's bar (the best-ranked that passed) has the answer's colour, alone.
    import matplotlib.colors as mc
    answer = [b for b in bars if mc.to_hex(b.get_facecolor()) == mc.to_hex("tab:blue")]
    assert len(answer) == 1
    assert fig.axes[0].get_legend() is not None


def test_one_plan_draws_its_candidates_several_their_gpus_per_rate(outputs):
    fig, title = splot.plot_files([outputs["plan5"]])
    assert fig.axes[0].get_xlabel().startswith("GPUs needed")
    assert title.startswith("llama-3.1-8b × h100-sxm, a100-80gb")
    fig, title = splot.plot_files([outputs["plan5"], outputs["plan20"]])
    assert fig.axes[0].get_xlabel() == "target QPS (req/s)"
