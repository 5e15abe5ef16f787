"""How keyword arguments become flags: nothing the caller wrote is dropped or coerced in silence.
Each case is either the same run as the CLI given the flag vLLM names, or a ServesimError that
names the keyword, before anything runs."""
import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

import servesim
from conftest import REPO, SMALL

SMALL_ARGS = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--request-rate", "10",
              "--num-prompts", "200", "--random-input-len", "512", "--random-output-len", "64",
              "--seed", "1"]


def cli_scalars(cli_binary, args):
    """The scalar keys of the result file the real executable writes for ARGS."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        subprocess.run([cli_binary, "simulate", *args, "--save-detailed", "--result-filename",
                        path], check=True, capture_output=True)
        with open(path) as f:
            data = json.load(f)
    return {k: v for k, v in data.items() if not isinstance(v, list)}


def scalars(result):
    return {k: v for k, v in result.items() if not isinstance(v, list)}


def test_async_scheduling_false_is_vllms_no_async_scheduling(cli_binary):
    off = servesim.simulate(**SMALL, async_scheduling=False)
    assert off["servesim"]["config"]["async_scheduling"] is False
    # The same run, key for key, as the CLI given --no-async-scheduling (deterministic: same seed).
    assert scalars(off) == cli_scalars(cli_binary, SMALL_ARGS + ["--no-async-scheduling"])
    # vLLM 0.19 schedules asynchronously by default: False changed the engine, it was not dropped.
    assert servesim.simulate(**SMALL)["servesim"]["config"]["async_scheduling"] is True


def test_enable_chunked_prefill_false_is_vllms_no_enable_chunked_prefill(cli_binary):
    v0 = dict(SMALL, vllm_version="0.6")
    off = servesim.simulate(**v0, enable_chunked_prefill=False)
    assert scalars(off) == cli_scalars(cli_binary, SMALL_ARGS + ["--vllm-version", "0.6",
                                                                 "--no-enable-chunked-prefill"])
    # On 0.6 with max-model-len 131072 > 32768 chunking is on by default; off selects the
    # prefill-first scheduler, a different schedule and so different latencies.
    assert off["mean_ttft_ms"] != servesim.simulate(**v0)["mean_ttft_ms"]
    # On V1 the CLI refuses the flag by name; the keyword reaches it rather than vanishing.
    with pytest.raises(servesim.ServesimError, match="--no-enable-chunked-prefill"):
        servesim.simulate(**SMALL, enable_chunked_prefill=False)


@pytest.mark.parametrize("rate", [float("-inf"), float("nan"), -1.0, 0])
def test_negative_nan_and_zero_rates_are_refused_by_name(rate):
    with pytest.raises(servesim.ServesimError, match="--request-rate") as e:
        servesim.simulate(**{**SMALL, "request_rate": rate})
    assert e.value.exit_code == 2


def test_minus_infinity_is_not_turned_into_infinity():
    with pytest.raises(servesim.ServesimError, match="'-inf'"):
        servesim.simulate(**{**SMALL, "request_rate": float("-inf")})
    with pytest.raises(servesim.ServesimError, match="'1,-inf'"):
        servesim.sweep(**{**SMALL, "request_rate": [1, float("-inf")]})
    assert servesim.simulate(**{**SMALL, "request_rate": float("inf")})["request_rate"] == "inf"


@pytest.mark.parametrize("fn,command", [(servesim.simulate, "simulate"), (servesim.sweep, "sweep"),
                                        (servesim.plan, "plan"), (servesim.compare, "compare"),
                                        (servesim.matrix, "matrix"),
                                        (servesim.validate, "validate"),
                                        (servesim.calibrate, "calibrate")])
def test_help_returns_the_commands_help_text(fn, command):
    text = fn(help=True)
    assert text == servesim.run(command, "--help")
    assert f"Usage: {command} [OPTIONS]" in text


@pytest.mark.parametrize("value", [None, False, True, 3])
def test_a_keyword_that_names_no_option_is_refused_whatever_its_value(value):
    # A typo of enable_prefix_caching: with False or None it used to vanish without a word.
    with pytest.raises(servesim.ServesimError,
                       match=r"simulate\(\): enable_prefix_cachin: no such option"):
        servesim.simulate(**SMALL, enable_prefix_cachin=value)


def test_true_and_false_for_an_option_that_takes_a_value_are_refused():
    # True used to become a bare --num-prompts that swallowed the next flag as its value.
    with pytest.raises(servesim.ServesimError, match=r"num_prompts=True: --num-prompts takes a"):
        servesim.simulate(**SMALL | {"num_prompts": True})
    with pytest.raises(servesim.ServesimError, match=r"max_num_seqs=False: --max-num-seqs takes a"):
        servesim.simulate(**SMALL, max_num_seqs=False)


def test_false_for_a_bare_flag_without_a_no_form_is_its_default():
    # --enforce-eager has no --no- form and is off unless given: False is the default run.
    assert scalars(servesim.simulate(**SMALL, enforce_eager=False)) == scalars(
        servesim.simulate(**SMALL))


def test_an_empty_list_is_refused_not_dropped():
    # request_rate=[] used to leave the flag out: a simulate() at the default rate (inf).
    with pytest.raises(servesim.ServesimError, match=r"request_rate=\[\]: an empty list"):
        servesim.simulate(**{**SMALL, "request_rate": []})
    with pytest.raises(servesim.ServesimError, match=r"percentile_metrics=\[\]"):
        servesim.simulate(**SMALL, percentile_metrics=[])


def test_short_and_long_names_of_one_option_together_are_refused():
    # The CLI takes the last of -tp 2 --tensor-parallel-size 4; keyword order is no place for that.
    with pytest.raises(servesim.ServesimError, match="tp and tensor_parallel_size"):
        servesim.simulate(**SMALL, tp=2, tensor_parallel_size=4)
    # vLLM's other short names reach their options (q and dp were "no such flag" errors).
    cfg = servesim.simulate(**SMALL, q="fp8", dp=2)["servesim"]["config"]
    assert cfg["quantization"] == "fp8" and cfg["data_parallel_size"] == 2


def test_numpy_values_are_the_numbers_they_hold():
    base = servesim.simulate(**SMALL)
    # np.bool_(False) used to reach the CLI as the word "False", an unexpected argument.
    off = servesim.simulate(**SMALL, enable_prefix_caching=np.bool_(False))
    assert off["servesim"]["config"]["enable_prefix_caching"] is False
    same = servesim.simulate(**{**SMALL, "seed": np.int64(1), "request_rate": np.float64(10)})
    assert scalars(same) == scalars(base)
    # An array of rates used to reach the CLI as "[2 4]".
    swept = servesim.sweep(**{**SMALL, "request_rate": np.array([2, 4])})
    assert [p["request_rate"] for p in swept["curves"][0]["points"]] == [2, 4]


def test_a_dict_for_a_json_option_is_its_json():
    spec = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4,
            "acceptance_length": 2.0}
    # It used to reach the CLI as Python's repr ({'method': ...}), refused as malformed JSON.
    as_dict = servesim.simulate(**SMALL, speculative_config=spec)
    as_text = servesim.simulate(**SMALL, speculative_config=json.dumps(spec))
    assert scalars(as_dict) == scalars(as_text)
    assert as_dict["servesim"]["config"]["speculative_config"]["method"] == "ngram"


def test_calibrate_keeps_its_output_with_a_config_dict():
    # calibrate(out=..., config={...}) raised TypeError (a config file with no folder to go to).
    mlp = os.path.join(REPO, "data", "realdata", "vidur_profiling", "profiling", "compute", "h100",
                       "meta-llama", "Llama-2-7b-hf", "mlp.csv")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.json")
        prof = servesim.calibrate(gpu="h100-sxm", vidur_mlp=[mlp], config={"gpu": "h100-sxm"},
                                  out=out)
        with open(out) as f:
            assert json.load(f) == dict(prof)


def test_internal_errors_are_not_reported_as_bad_input(monkeypatch):
    # Exit code 1 is the CLI's "internal error (please report)": a bug, not the caller's value.
    with pytest.raises(servesim.ServesimInternalError, match="please report") as e:
        servesim._raise_on_failure(1, "servesim: internal error (please report): boom\n")
    assert not isinstance(e.value, ValueError) and e.value.exit_code == 1
    with pytest.raises(servesim.ServesimError) as bad:
        servesim._raise_on_failure(2, "servesim: error: --seed: 'x' is invalid\n")
    assert isinstance(bad.value, ValueError) and str(bad.value) == "--seed: 'x' is invalid"
    # A command that exits 0 but writes no output: was a FileNotFoundError on a temp path.
    monkeypatch.setattr(servesim._core, "run_cli", lambda args: (0, "", ""))
    with pytest.raises(servesim.ServesimInternalError, match="without writing its output"):
        servesim.simulate(**SMALL)


def test_outputs_the_call_would_not_return_are_refused_by_name():
    kw = {**SMALL, "request_rate": [2, 4]}
    # The CLI would have said "--output: At Most 1 required but received 2" (given once).
    with pytest.raises(servesim.ServesimError, match=r"sweep\(\): output is set by the Python API"):
        servesim.sweep(**kw, output="s.json")
    # A shard exits 0 having written only its part file: it was "exited 0 without its output".
    with tempfile.TemporaryDirectory() as tmp:
        with pytest.raises(servesim.ServesimError, match=r"sweep\(\): shard: a shard writes"):
            servesim.sweep(**kw, shard="0/2", part_file=os.path.join(tmp, "p.part"))
        assert os.listdir(tmp) == []
