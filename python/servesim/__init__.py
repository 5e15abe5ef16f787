"""servesim from Python: the CLI's commands as functions that return plain data.

Every function takes the CLI's flags as keyword arguments, with underscores for dashes:

    import servesim
    r = servesim.simulate(model="llama-3.1-70b", gpu="h100-sxm", tensor_parallel_size=4,
                          request_rate=8, num_prompts=500, random_input_len=2048)
    r["p99_ttft_ms"]            # the vllm bench serve result keys, as in the CLI's result file
    r.requests["ttfts"]         # per-request data as numpy arrays
    r.to_dataframe()            # one row per request

How a keyword becomes a flag (the same flags `servesim COMMAND --help` lists):
  - ``max_num_seqs=64``          -> ``--max-num-seqs 64``; ``tp``/``pp`` -> ``-tp``/``-pp``
  - ``True``                     -> the bare flag (``save_detailed=True`` -> ``--save-detailed``)
  - ``False`` / ``None``         -> left out, except ``enable_prefix_caching=False``
                                    -> ``--no-enable-prefix-caching``
  - a list of numbers            -> one comma-separated value (``request_rate=[1, 2, 5]`` -> ``1,2,5``)
  - a list of strings            -> several values (``slo=["p99_ttft_ms<=500", "p99_tpot_ms<=50"]``)
  - ``vary={"max_num_seqs": [64, 256]}`` -> ``--vary max-num-seqs=64,256`` (one per key)
  - ``config={...}`` (a dict)    -> written to a temporary file and given as ``--config``
  - ``float("inf")``             -> ``inf``

The work is done by the CLI's own code, in process (servesim._core.run_cli), with the GIL released:
the defaults, the validation and the results are exactly the CLI's. Bad input raises
:class:`ServesimError` whose message is the CLI's error line without its ``servesim: error:`` prefix.
"""

import json
import math
import os
import signal
import tempfile

# An installed package (pip install .) carries its own copy of the data catalogs; the module built
# in build/python reads the checkout's. SERVESIM_DATA_DIR, when set, wins over both.
_PACKAGED_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
if os.path.isdir(_PACKAGED_DATA):
    os.environ.setdefault("SERVESIM_DATA_DIR", _PACKAGED_DATA)

from . import _core  # noqa: E402  (after SERVESIM_DATA_DIR: the module reads it on each call)
from .results import (CalibrationResult, CompareResult, MatrixResult, PlanResult, Result,
                      SimulationResult, SweepResult, ValidationResult, to_dataframe)

__all__ = ["simulate", "sweep", "plan", "compare", "matrix", "validate", "calibrate", "run", "catalog",
           "run_options", "ServesimError", "to_dataframe", "Result", "SimulationResult",
           "SweepResult", "PlanResult", "CompareResult", "ValidationResult", "CalibrationResult",
           "DATA_DIR"]

DATA_DIR = _core.data_dir()
"""The folder holding models/catalog, hardware/catalog and data/realdata."""

_ERROR_PREFIX = "servesim: error: "


class ServesimError(ValueError):
    """Bad input, as the CLI reports it (exit code 2). ``exit_code`` and ``stderr`` are kept."""

    def __init__(self, message, exit_code=2, stderr=""):
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr


# 128 + SIGINT, 128 + SIGTERM: a study stopped by the signal, its finished work written.
_STOPPED_BY_SIGNAL = (128 + signal.SIGINT, 128 + signal.SIGTERM)


def run(*args):
    """Runs ``servesim ARGS...`` in process. Returns its stdout; raises ServesimError on failure."""
    code, out, err = _core.run_cli([str(a) for a in args])
    _raise_on_failure(code, err)
    return out


def _raise_on_failure(code, err):
    if code != 0:
        lines = [l for l in err.splitlines() if l.strip()]
        line = next((l for l in lines if l.startswith(("servesim: error:", "servesim: internal"))),
                    lines[-1] if lines else f"servesim exited with code {code}")
        raise ServesimError(line[len(_ERROR_PREFIX):] if line.startswith(_ERROR_PREFIX) else line,
                            exit_code=code, stderr=err)


def run_options():
    """The run options (deployment, engine, load, metrics) as {key: help}, in --help order."""
    return dict(_core.run_fields())


def catalog():
    """The model and GPU catalogs: {"models": [...], "gpus": [...]} (file names without .json)."""
    names = {}
    for kind, folder in (("models", "models/catalog"), ("gpus", "hardware/catalog")):
        path = os.path.join(DATA_DIR, folder)
        names[kind] = sorted(f[:-5] for f in os.listdir(path) if f.endswith(".json"))
    return names


def _number(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isinf(v):
            return "inf"
        return repr(v)
    return str(v)


def _flag(key):
    if key in ("tp", "pp"):
        return "-" + key
    return "--" + key.replace("_", "-")


def _args(kwargs, tmpdir):
    """Keyword arguments -> CLI arguments (the rules are in the module docstring)."""
    out = []
    for key, value in kwargs.items():
        if value is None:
            continue
        if key == "config" and isinstance(value, dict):
            path = os.path.join(tmpdir, "config.json")
            with open(path, "w") as f:
                json.dump(value, f)
            out += ["--config", path]
        elif key == "vary" and isinstance(value, dict):
            for knob, values in value.items():
                vals = values if isinstance(values, (list, tuple)) else [values]
                out += ["--vary", knob.replace("_", "-") + "=" + ",".join(_number(v) for v in vals)]
        elif value is True:
            out.append(_flag(key))
        elif value is False:
            if key == "enable_prefix_caching":
                out.append("--no-enable-prefix-caching")
        elif isinstance(value, (list, tuple)):
            if not value:
                continue
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
                out += [_flag(key), ",".join(_number(v) for v in value)]
            else:
                out += [_flag(key)] + [_number(v) if not isinstance(v, str) else v for v in value]
        else:
            out += [_flag(key), value if isinstance(value, str) else _number(value)]
    return out


def _run_json(command, kwargs, output_flag, result_cls, extra=()):
    """Runs COMMAND with the kwargs, asks it to write its JSON to a temp file, returns it parsed."""
    with tempfile.TemporaryDirectory(prefix="servesim-") as tmp:
        path = os.path.join(tmp, "output.json")
        args = [command] + _args(kwargs, tmp) + list(extra)
        if isinstance(output_flag, str):
            args += [output_flag, path]
        else:
            args += output_flag(path)
        code, text, err = _core.run_cli([str(a) for a in args])
        # Ctrl-C or SIGTERM during a study: the CLI wrote what finished, marked interrupted.
        partial = code in _STOPPED_BY_SIGNAL and os.path.exists(path)
        if not partial:
            _raise_on_failure(code, err)
        with open(path) as f:
            data = json.load(f)
    result = result_cls(data, text)
    result.partial = partial
    return result


def simulate(**kwargs):
    """One run (``servesim simulate``). Returns a :class:`SimulationResult`: the result file's keys
    (vLLM's ``--save-result`` schema plus ``servesim``), per-request numpy arrays in ``.requests``,
    the printed table in ``.text``."""
    for k in ("save_result", "save_detailed", "result_dir", "result_filename"):
        if k in kwargs:
            raise ServesimError(f"simulate(): {k} is set by the Python API (the result is returned)")
    return _run_json("simulate", kwargs,
                     lambda p: ["--save-detailed", "--result-filename", p], SimulationResult)


def sweep(**kwargs):
    """The QPS-latency curve (``servesim sweep``): knee and saturation per curve."""
    return _run_json("sweep", kwargs, "--output", SweepResult)


def plan(**kwargs):
    """The cheapest deployment that meets every SLO at ``target_qps`` (``servesim plan``)."""
    return _run_json("plan", kwargs, "--output", PlanResult)


def compare(a=None, b=None, **kwargs):
    """A/B of two configurations (``servesim compare``): ``a``/``b`` are config dicts or JSON file
    paths, or use ``vary={"max_num_seqs": [128, 256]}``."""
    extra = []
    with tempfile.TemporaryDirectory(prefix="servesim-ab-") as tmp:
        for name, side in (("a", a), ("b", b)):
            if isinstance(side, dict):
                path = os.path.join(tmp, name + ".json")
                with open(path, "w") as f:
                    json.dump(side, f)
                extra.append(path)
            elif side is not None:
                extra.append(str(side))
        return _run_json("compare", kwargs, "--output", CompareResult, extra)


def matrix(**kwargs):
    """The standard workload rows for one deployment (``servesim matrix``); ``to_dataframe()``
    gives one row per workload."""
    return _run_json("matrix", kwargs, "--output", MatrixResult)


def validate(**kwargs):
    """Predicted vs measured for measured runs (``servesim validate``), e.g.
    ``validate(measured=[...files...], sidecars=[...])``."""
    return _run_json("validate", kwargs, "--output", ValidationResult)


def calibrate(**kwargs):
    """Fits a calibration profile (``servesim calibrate``). Returns the profile; with
    ``out=PATH`` the CLI also keeps the file there."""
    keep = kwargs.pop("out", None)
    if keep is None:
        return _run_json("calibrate", kwargs, "--out", CalibrationResult)
    text = run(*(["calibrate"] + _args(kwargs, None) + ["--out", str(keep)]))
    with open(keep) as f:
        return CalibrationResult(json.load(f), text)
