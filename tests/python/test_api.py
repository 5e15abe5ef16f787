"""The Python API: same flags, same results and same errors as the CLI; numpy/pandas views."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import pandas as pd
import pytest

import servesim
from conftest import REPO, SMALL


def cli_result(cli_binary, args):
    """Runs the real executable with --save-detailed and returns its result file, parsed."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        subprocess.run([cli_binary, "simulate", *args, "--save-detailed", "--result-filename", path],
                       check=True, capture_output=True)
        with open(path) as f:
            return json.load(f)


def test_simulate_returns_the_cli_result_file(cli_binary):
    r = servesim.simulate(**SMALL)
    file = cli_result(cli_binary, ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--request-rate",
                                   "10", "--num-prompts", "200", "--random-input-len", "512",
                                   "--random-output-len", "64", "--seed", "1"])
    # Every scalar key identical (same code, same seed: deterministic); arrays moved to .requests.
    for k, v in r.items():
        assert file[k] == v, k
    np.testing.assert_array_equal(r.requests["ttfts"], np.asarray(file["ttfts"]))
    np.testing.assert_array_equal(r.requests["input_lens"], np.asarray(file["input_lens"]))
    assert set(file) - set(r) <= {"input_lens", "output_lens", "ttfts", "itls", "start_times",
                                  "latencies", "errors", "generated_texts"}


def test_per_request_arrays_reproduce_the_summary():
    # The shipped H100 profile adds a client TTFT overhead: the arrays must carry it too.
    r = servesim.simulate(**SMALL, percentile_metrics=["ttft", "tpot", "itl", "e2el"])
    q = r.requests
    n = SMALL["num_prompts"]
    assert r["completed"] == n
    for k in ("ttfts", "latencies", "start_times", "input_lens", "output_lens", "itls", "tpots"):
        assert len(q[k]) == n, k
    assert q["ttfts"].dtype == np.float64 and q["input_lens"].dtype == np.int64
    # vLLM computes percentiles with numpy's default (linear) interpolation over the same arrays.
    assert np.percentile(q["ttfts"] * 1e3, 99) == pytest.approx(r["p99_ttft_ms"], rel=1e-9)
    assert np.mean(q["latencies"]) * 1e3 == pytest.approx(r["mean_e2el_ms"], rel=1e-9)
    assert np.mean(q["tpots"]) * 1e3 == pytest.approx(r["mean_tpot_ms"], rel=1e-9)
    # ignore_eos: every request generates exactly the requested tokens; ITL has output-1 gaps.
    assert (q["output_lens"] == SMALL["random_output_len"]).all()
    assert all(len(g) == SMALL["random_output_len"] - 1 for g in q["itls"])
    # E2E = TTFT + sum of the inter-token gaps, per request.
    np.testing.assert_allclose(q["latencies"], q["ttfts"] + np.array([g.sum() for g in q["itls"]]),
                               rtol=1e-9)


def test_dataframe_one_row_per_request():
    r = servesim.simulate(**SMALL)
    df = r.to_dataframe()
    assert isinstance(df, pd.DataFrame) and len(df) == SMALL["num_prompts"]
    assert df["ttft_ms"].median() == pytest.approx(r["median_ttft_ms"], rel=1e-9)
    assert servesim.to_dataframe(r).equals(df)


def test_keywords_map_to_the_cli_flags():
    base = servesim.simulate(**SMALL)["servesim"]["config"]
    via_config = servesim.simulate(config={k: v for k, v in SMALL.items()})["servesim"]["config"]
    assert via_config == base
    r = servesim.simulate(**SMALL, tp=2, enable_prefix_caching=False, max_num_seqs=64,
                          metric_percentiles=[50, 90, 99], percentile_metrics=["ttft", "e2el"],
                          goodput=["ttft:500"], burstiness=None)
    cfg = r["servesim"]["config"]
    assert cfg["tensor_parallel_size"] == 2
    assert cfg["enable_prefix_caching"] is False
    assert cfg["max_num_seqs"] == 64
    # metric_percentiles=[50, 90, 99] with percentile_metrics ttft,e2el: those and only those.
    for key in ("p50_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "p50_e2el_ms", "p90_e2el_ms"):
        assert key in r, key
    assert "p90_tpot_ms" not in r and "p99_tpot_ms" not in r
    inf = servesim.simulate(**{**SMALL, "request_rate": float("inf")})
    assert inf["request_rate"] == "inf"


def test_errors_carry_the_cli_message(cli_binary):
    with pytest.raises(servesim.ServesimError) as e:
        servesim.simulate(**SMALL, max_num_seqs=0)
    p = subprocess.run([cli_binary, "simulate", "--max-num-seqs", "0"], capture_output=True, text=True)
    assert p.returncode == 2 and e.value.exit_code == 2
    assert p.stderr.strip() == "servesim: error: " + str(e.value)
    with pytest.raises(servesim.ServesimError, match="no-such-model"):
        servesim.simulate(model="no-such-model")
    with pytest.raises(servesim.ServesimError, match="--not-a-flag"):
        servesim.simulate(not_a_flag=3)


def test_model_as_vllm_serve_takes_it():
    r = servesim.simulate(**dict(SMALL, model="meta-llama/Llama-3.1-8B-Instruct"))
    assert r["model_id"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert r["servesim"]["config"]["catalog_model"] == "llama-3.1-8b"
    with pytest.raises(servesim.ServesimError, match="not in the catalog") as e:
        servesim.simulate(model="acme/No-Such-Model-7B")
    assert e.value.exit_code == 2


def test_gil_is_released_while_simulating():
    """A run in another thread must not stop this (main) thread: it keeps running Python code
    while the simulation runs. With the GIL held for the whole C++ call, this thread could take no
    step between the call's start and its end. (An earlier version read --config from a FIFO that
    only this thread wrote; servesim now refuses a FIFO as an input file.)"""
    times = {}

    def work():
        times["start"] = time.monotonic()
        servesim.run("simulate", "--num-prompts", "500000", "--request-rate", "50")
        times["end"] = time.monotonic()

    worker = threading.Thread(target=work)
    worker.start()
    steps = []
    while worker.is_alive():
        steps.append(time.monotonic())
        time.sleep(0.001)
    worker.join()
    start, end = times["start"], times["end"]
    assert end - start > 0.05, "the run was too short to tell"
    inside = [t for t in steps if start + 0.2 * (end - start) < t < end - 0.2 * (end - start)]
    assert len(inside) >= 3


def test_a_fifo_input_is_refused_without_blocking():
    with tempfile.TemporaryDirectory() as tmp:
        fifo = os.path.join(tmp, "config.json")
        os.mkfifo(fifo)
        with pytest.raises(servesim.ServesimError, match="--config: .* is a FIFO"):
            servesim.run("simulate", "--config", fifo)


def test_parallel_runs_in_threads_match_serial_runs():
    seeds = [1, 2, 3, 4]
    serial = [servesim.simulate(**{**SMALL, "seed": s})["p99_ttft_ms"] for s in seeds]
    out = {}
    threads = [threading.Thread(target=lambda s=s: out.__setitem__(
        s, servesim.simulate(**{**SMALL, "seed": s})["p99_ttft_ms"])) for s in seeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [out[s] for s in seeds] == serial


def test_studies_from_several_threads_all_complete():
    """sweep/plan/compare hold a process-wide Ctrl-C guard of which only one may exist; the module
    runs them one at a time, so concurrent calls all succeed (and match a serial call)."""
    kw = {**SMALL, "request_rate": [4, 8]}
    serial = servesim.sweep(**kw)
    out, errors = [], []

    def work():
        try:
            out.append(servesim.sweep(**kw))
        except Exception as e:  # noqa: BLE001 - the assertion below reports it
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(out) == 3
    assert all(dict(o) == dict(serial) for o in out)


def test_a_study_stopped_by_ctrl_c_returns_its_finished_points_as_partial():
    """Ctrl-C (SIGINT) during sweep(): the finished points come back, flagged partial, instead of
    an error. The signal is sent once the run has used 1.5 s of CPU (past start-up, inside the
    study), so the test does not depend on the machine's load."""
    start = time.process_time()
    finished = threading.Event()

    def interrupt():
        while time.process_time() - start < 1.5 and not finished.is_set():
            time.sleep(0.05)
        if not finished.is_set():
            os.kill(os.getpid(), signal.SIGINT)

    killer = threading.Thread(target=interrupt)
    killer.start()
    try:
        sw = servesim.sweep(model="llama-3.1-8b", request_rate="1:30:0.1", num_prompts=20000,
                            jobs=1)
    finally:
        finished.set()
        killer.join()
    assert sw.partial
    assert sw["interrupted"] is True
    points = sw["curves"][0]["points"]
    assert 0 < len(points) < 291


def test_sweep_points_and_knee():
    sw = servesim.sweep(**{**SMALL, "request_rate": [2, 4, 8, 16, 32, 64]})
    assert sw["axis"] == "request_rate"
    df = sw.to_dataframe()
    pts = sw["curves"][0]["points"]
    assert len(df) == len(pts) and list(df["request_rate"]) == [p["request_rate"] for p in pts]
    assert list(df["request_rate"]) == sorted(df["request_rate"])
    assert "Knee" in sw.text or "knee" in sw.text
    string_axis = servesim.sweep(**{**SMALL, "request_rate": "2:8:2"})
    assert [p["request_rate"] for p in string_axis["curves"][0]["points"]][:4] == [2, 4, 6, 8]


def test_sweep_vary_dict_gives_one_curve_per_value():
    sw = servesim.sweep(**{**SMALL, "request_rate": [4, 8]}, vary={"max_num_seqs": [16, 64]})
    assert [c["label"] for c in sw["curves"]] == ["max-num-seqs=16", "max-num-seqs=64"]
    assert set(sw.to_dataframe()["curve"]) == {"max-num-seqs=16", "max-num-seqs=64"}


def test_plan_answer_and_candidates():
    p = servesim.plan(model="llama-3.1-8b", gpu=["h100-sxm", "a100-80gb"], tensor_parallel_size=[1],
                      target_qps=12, slo=["p99_ttft_ms<=1000"], num_prompts=200, seeds=1,
                      random_input_len=512, random_output_len=64)
    assert p["answer"].startswith("Answer:")
    df = p.to_dataframe()
    assert len(df) == 2 and set(df["gpu"]) == {"h100-sxm", "a100-80gb"}
    ok = df[df["status"] == "ok"]
    # Ranked by cost: the first candidate is the cheapest that passed.
    assert ok["cost_per_hour_usd"].iloc[0] == ok["cost_per_hour_usd"].min()


def test_compare_vary_and_config_dicts():
    c = servesim.compare(vary={"max_num_seqs": [8, 256]}, **{**SMALL, "request_rate": 20}, seeds=3)
    df = c.to_dataframe()
    ttft = df[df["key"] == "p99_ttft_ms"].iloc[0]
    assert ttft["mean_diff"] == pytest.approx(ttft["b_mean"] - ttft["a_mean"], rel=1e-9)
    assert ttft["ci_low"] <= ttft["mean_diff"] <= ttft["ci_high"]
    a = {**SMALL, "max_num_seqs": 8}
    b = {**SMALL, "max_num_seqs": 256}
    c2 = servesim.compare(a, b, seeds=3, request_rate=20)
    assert c2.to_dataframe()["a_mean"].tolist() == df["a_mean"].tolist()


def test_matrix_rows():
    m = servesim.matrix(model="llama-3.1-8b", gpu="h100-sxm", num_prompts=100)
    assert len(m.to_dataframe()) == len(m["rows"]) > 0


def test_validate_one_measured_run():
    run = os.path.join(REPO, "data", "realdata", "llmk8s_llama33_70b_a100x8", "01_tp8_pp1",
                       "serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_01.json")
    v = servesim.validate(measured=[run], sidecars=[os.path.join(REPO, "tests", "data",
                                                                 "realdata_sidecars")], seeds=1)
    assert len(v["runs"]) == 1
    df = v.to_dataframe()
    m = df[df["metric"] == "mean_ttft_ms"].iloc[0]
    assert m["error_pct"] == pytest.approx(100 * (m["predicted"] - m["measured"]) / m["measured"],
                                           rel=1e-6)
    assert (df["abs_error_pct"] == df["error_pct"].abs()).all()


def test_calibrate_writes_and_returns_the_profile():
    mlp = os.path.join(REPO, "data", "realdata", "vidur_profiling", "profiling", "compute", "h100",
                       "meta-llama", "Llama-2-7b-hf", "mlp.csv")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.json")
        prof = servesim.calibrate(gpu="h100-sxm", vidur_mlp=[mlp], out=out)
        with open(out) as f:
            assert json.load(f) == dict(prof)
    assert prof["gpu"] == "h100-sxm"
    assert 0 < prof["parameters"]["compute_efficiency"]["value"] <= 1


def test_run_options_and_catalog():
    opts = servesim.run_options()
    assert "max_num_seqs" in opts and "request_rate" in opts
    cat = servesim.catalog()
    assert "llama-3.1-70b" in cat["models"] and "h100-sxm" in cat["gpus"]
    assert "llama-3.1-8b" in servesim.run("list")


def test_without_numpy_the_functions_work_and_requests_names_numpy():
    # `python3 -S` skips the site packages, where Debian's numpy lives: a Python without numpy.
    # import servesim and simulate() must work there (numpy is needed only for arrays), and
    # .requests must raise ModuleNotFoundError naming numpy and how to install it.
    code = """
import sys, servesim
r = servesim.simulate(model="llama-3.1-8b", gpu="h100-sxm", request_rate=10, num_prompts=50)
assert "numpy" not in sys.modules, "numpy was imported"
print(r["completed"])
try:
    r.requests
except ModuleNotFoundError as e:
    print(e.name, "|", e)
"""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(servesim.__file__)))
    out = subprocess.run([sys.executable, "-S", "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert out[0] == "50"
    name, message = out[1].split(" | ", 1)
    assert name == "numpy"
    assert "pip install numpy" in message and sys.executable in message, message
    # With numpy, the same result has its arrays: one entry per request.
    r = servesim.simulate(model="llama-3.1-8b", gpu="h100-sxm", request_rate=10, num_prompts=50)
    assert len(r.requests["ttfts"]) == 50
