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
        want = [min(c["total_gpus"] for c in p["candidates"] if c["gpu"] == gpu and c["status"] == "ok")
                for p in plans]
        assert list(lines[gpu].get_ydata()) == want


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
