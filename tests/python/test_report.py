"""servesim.report (and `servesim report`, which runs it): the page's parts from real outputs,
its determinism, and the inputs it refuses. The page in a browser: tests/scripts/
report_browser_test.sh (ctest report.headless_chromium)."""
import json
import subprocess
import sys

import pytest

import servesim
import servesim.report as sreport

COMMON = dict(model="llama-3.1-8b", random_input_len=512, random_output_len=64, num_prompts=200,
              seed=1)


@pytest.fixture(scope="module")
def files(tmp_path_factory, cli_binary):
    d = tmp_path_factory.mktemp("report")
    out = {}

    def save(name, data):
        out[name] = str(d / (name + ".json"))
        with open(out[name], "w") as f:
            json.dump(dict(data), f)

    save("plan", servesim.plan(**COMMON, gpu=["h100-sxm", "a100-80gb"], tp=[1],
                               target_qps=10, slo=["p99_ttft_ms<=300"], seeds=1))
    save("sweep", servesim.sweep(**COMMON, gpu="h100-sxm", request_rate=[2, 6, 10, 20, 40],
                                 percentile_metrics="ttft,tpot,itl,e2el", metric_percentiles="50,99"))
    save("other_model", servesim.sweep(**{**COMMON, "model": "qwen2.5-7b"}, gpu="h100-sxm",
                                       request_rate=[2, 6]))
    # No candidate meets 1 ms: plan exits 3 (no answer) and still writes its file.
    out["none"] = str(d / "none.json")
    p = subprocess.run([cli_binary, "plan", "--model", "llama-3.1-8b", "--gpu", "a100-80gb",
                        "-tp", "1", "--random-input-len", "512", "--random-output-len", "64",
                        "--num-prompts", "200", "--target-qps", "10", "--slo", "p99_ttft_ms<=1",
                        "--seeds", "1", "--output", out["none"]], capture_output=True, text=True)
    assert p.returncode == 3 and "no candidate meets" in p.stdout, p.stderr
    return out


def load(path):
    with open(path) as f:
        return json.load(f)


def test_page_has_every_part_and_is_deterministic(files):
    plan, sweep = load(files["plan"]), load(files["sweep"])
    page = sreport.render(plan, sweep, [files["plan"], files["sweep"]])
    for part in sreport.SECTION_IDS:
        assert f'<section id="{part}">' in page
    for id_ in ("title", "basis", "candidates-table", "latency-curve", "gpu-chart", "max-rate",
                "vllm-serve", "vllm-bench"):
        assert f'id="{id_}"' in page
    assert page.count('<tr class="candidate') == len(plan["candidates"])
    assert page.count('class="candidate answer') == 1
    # The Answer line and the vllm serve command are the plan's own, escaped for HTML.
    import html
    assert html.escape(plan["answer"]) in page
    assert html.escape(plan["vllm_commands"]["serve"]) in page
    # Two figures, inline; nothing fetched (no src or href to a URL; the SVG's xmlns names are
    # not fetched), nothing run.
    import re
    assert page.count("<svg ") == 2 and "<script" not in page
    assert not re.search(r'(?:src|href)\s*=\s*"(?:https?:)?//', page)
    # The crossing printed is the one servesim.plot computes from the sweep's points.
    import servesim.plot as splot
    pts = sweep["curves"][0]["points"]
    crossing = splot.slo_crossing([p["request_rate"] for p in pts],
                                  [None if p["saturated"] else p["p99_ttft_ms"] for p in pts], 300)
    assert html.escape(splot.crossing_label(crossing, "p99", "ttft", 300)) in page
    assert sreport.render(plan, sweep, [files["plan"], files["sweep"]]) == page


def test_without_a_sweep_the_curve_is_the_plans_probes(files):
    plan = load(files["plan"])
    page = sreport.render(plan, None, [files["plan"]])
    answer = sreport.answer_candidate(plan)
    assert f"max {answer['per_replica_max_qps']:.3g} req/s per replica" in page
    assert "capacity probes" in page and page.count("<svg ") == 2


def test_a_plan_without_an_answer_says_so(files):
    page = sreport.render(load(files["none"]), None, [files["none"]])
    assert "No answer, so no command." in page and "no candidate meets" in page


def run_report(*args):
    return subprocess.run([sys.executable, "-m", "servesim.report", *args], capture_output=True,
                          text=True)


def test_inputs_refused_by_name(files, tmp_path):
    out = tmp_path / "r.html"
    cases = [((files["plan"], files["other_model"]), "model 'qwen2.5-7b' differs"),
             ((files["sweep"],), "no plan output given"),
             ((files["plan"], files["plan"]), "a second plan output"),
             ((files["plan"], files["sweep"], files["sweep"]), "a second sweep output"),
             ((str(tmp_path / "missing.json"),), "missing.json")]
    for args, needle in cases:
        p = run_report(*args, "-o", str(out))
        assert p.returncode == 2 and needle in p.stderr, (args, p.stderr)
        assert not out.exists()
    p = run_report(files["plan"], "-o", files["plan"])
    assert p.returncode == 2 and "is also an input" in p.stderr


def test_the_cli_subcommand_runs_the_module(files, tmp_path, cli_binary):
    out = tmp_path / "r.html"
    p = subprocess.run([cli_binary, "report", files["plan"], files["sweep"], "-o", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"Report written to {out}" in p.stdout
    assert out.read_text() == sreport.render(load(files["plan"]), load(files["sweep"]),
                                             [files["plan"], files["sweep"]])
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.html"]  # no temporary left
    p = subprocess.run([cli_binary, "report", files["plan"], files["other_model"], "-o",
                        str(tmp_path / "x.html")], capture_output=True, text=True)
    assert p.returncode == 2 and "differs from the plan's" in p.stderr
