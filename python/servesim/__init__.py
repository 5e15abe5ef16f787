"""servesim from Python: the CLI's commands as functions that return plain data.

Every function takes the CLI's flags as keyword arguments, with underscores for dashes:

    import servesim
    r = servesim.simulate(model="llama-3.1-70b", gpu="h100-sxm", tensor_parallel_size=4,
                          request_rate=8, num_prompts=500, random_input_len=2048)
    r["p99_ttft_ms"]            # the vllm bench serve result keys, as in the CLI's result file
    r.requests["ttfts"]         # per-request data as numpy arrays
    r.to_dataframe()            # one row per request

How a keyword becomes a flag (the same flags `servesim COMMAND --help` lists):
  - ``max_num_seqs=64``          -> ``--max-num-seqs 64``; vLLM's short names ``tp``, ``pp``,
                                    ``dp``, ``ep``, ``q`` -> ``-tp``, ``-pp``, ``-dp``, ``-ep``,
                                    ``-q``
  - ``True``                     -> the bare flag (``save_detailed=True`` -> ``--save-detailed``)
  - ``False``                    -> ``--no-X`` where the command has one (``async_scheduling=False``
                                    -> ``--no-async-scheduling``, as in vLLM), else left out (the
                                    bare flags without a ``--no-`` form are off by default)
  - ``None``                     -> left out (the CLI's default)
  - a list, tuple or numpy array of numbers -> one comma-separated value
                                    (``request_rate=[1, 2, 5]`` -> ``1,2,5``)
  - a list of strings            -> several values (``slo=["p99_ttft_ms<=500", "p99_tpot_ms<=50"]``)
  - ``vary={"max_num_seqs": [64, 256]}`` -> ``--vary max-num-seqs=64,256`` (one per key)
  - ``config={...}`` (a dict)    -> written to a temporary file and given as ``--config``
  - any other dict               -> its JSON (``speculative_config={"method": "ngram", ...}``)
  - ``float("inf")``             -> ``inf``; ``-inf`` and ``nan`` go to the CLI as written (refused)
  - numpy scalars                -> the Python number or bool they hold
  - ``help=True``                -> the command's ``--help`` text, returned as a string

Refused with :class:`ServesimError` before anything runs, rather than dropped or coerced: a keyword
that names no option of the command (whatever its value), ``True`` for an option that takes a
value, ``False`` for an option that takes a value and has no ``--no-`` form, an empty list, a short
name given together with its long name (``tp=2, tensor_parallel_size=4``), and an output the call
would not return (``output=``, ``shard=``).

The work is done by the CLI's own code, in process (servesim._core.run_cli), with the GIL released:
the defaults, the validation and the results are exactly the CLI's. Bad input raises
:class:`ServesimError` whose message is the CLI's error line without its ``servesim: error:``
prefix; a bug in servesim (the CLI's exit code 1, "internal error") raises
:class:`ServesimInternalError`.
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
           "run_options", "ServesimError", "ServesimInternalError", "to_dataframe", "Result",
           "SimulationResult", "SweepResult", "PlanResult", "CompareResult", "ValidationResult",
           "CalibrationResult", "DATA_DIR"]

DATA_DIR = _core.data_dir()
"""The folder holding models/catalog, hardware/catalog and data/realdata."""

_ERROR_PREFIX = "servesim: error: "


class ServesimError(ValueError):
    """Bad input, as the CLI reports it (exit code 2). ``exit_code`` and ``stderr`` are kept."""

    def __init__(self, message, exit_code=2, stderr=""):
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr


class ServesimInternalError(RuntimeError):
    """A bug in servesim, not bad input: the CLI's "internal error (please report)", exit code 1.
    ``exit_code`` and ``stderr`` are kept."""

    def __init__(self, message, exit_code=1, stderr=""):
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
        # Exit 1 is the CLI's internal-error path (sim/app/cli.h): a bug, not the caller's input.
        error = ServesimInternalError if code == 1 else ServesimError
        raise error(line[len(_ERROR_PREFIX):] if line.startswith(_ERROR_PREFIX) else line,
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
            return "inf" if v > 0 else "-inf"  # -inf goes to the CLI as written, which refuses it
        return repr(v)
    return str(v)


# vLLM's short names, as the CLI takes them (sim/app/cli.cpp), and the long options they stand for.
_SHORT = {"tp": ("-tp", "--tensor-parallel-size"), "pp": ("-pp", "--pipeline-parallel-size"),
          "dp": ("-dp", "--data-parallel-size"), "ep": ("-ep", "--enable-expert-parallel"),
          "q": ("-q", "--quantization")}


def _flag(key):
    if key in _SHORT:
        return _SHORT[key][0]
    return "--" + key.replace("_", "-")


_OPTIONS = {}


def _options(command):
    """{option name: takes a value} for COMMAND, from the CLI's own option list."""
    if not _OPTIONS:
        for cmd, name, takes_value in _core.options():
            _OPTIONS.setdefault(cmd, {})[name] = takes_value
    return _OPTIONS.get(command, {})


def _plain(value):
    """numpy scalars and arrays -> the Python numbers, bools and lists they hold; paths -> str."""
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":
        return value.tolist()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


def _args(command, kwargs, tmpdir):
    """Keyword arguments of COMMAND -> CLI arguments (the rules are in the module docstring)."""
    options = _options(command)

    def refuse(why):
        raise ServesimError(f"{command}(): {why}")

    for short, (_, long_flag) in _SHORT.items():
        long_key = long_flag[2:].replace("-", "_")
        if kwargs.get(short) is not None and kwargs.get(long_key) is not None:
            refuse(f"{short} and {long_key} are the same option ({long_flag}); give one")
    out = []
    for key, value in kwargs.items():
        flag = _flag(key)
        long_flag = _SHORT[key][1] if key in _SHORT else flag
        if long_flag not in options:
            refuse(f"{key}: no such option ({long_flag}); `servesim {command} --help` lists them")
        value = _plain(value)
        takes_value = options[long_flag]
        if value is None:
            continue
        if key == "config" and isinstance(value, dict):
            path = os.path.join(tmpdir, "config.json")
            with open(path, "w") as f:
                json.dump(value, f)
            out += ["--config", path]
        elif key == "vary" and isinstance(value, dict):
            for knob, values in value.items():
                vals = _plain(values)
                vals = vals if isinstance(vals, (list, tuple)) else [vals]
                out += ["--vary", knob.replace("_", "-") + "=" + ",".join(_number(v) for v in vals)]
        elif value is True:
            if takes_value:
                refuse(f"{key}=True: {long_flag} takes a value, not True")
            out.append(flag)
        elif value is False:
            negative = "--no-" + long_flag[2:]
            if negative in options:
                out.append(negative)
            elif takes_value:
                refuse(f"{key}=False: {long_flag} takes a value and has no --no- form")
            # else: a bare flag without a --no- form, off unless given: False is its default.
        elif isinstance(value, dict):
            out += [flag, json.dumps(value)]  # vLLM's JSON options (--speculative-config, ...)
        elif isinstance(value, (list, tuple)):
            if not value:
                refuse(f"{key}=[]: an empty list gives {long_flag} no value; give values, "
                       f"or leave {key} out")
            value = [_plain(v) for v in value]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
                out += [flag, ",".join(_number(v) for v in value)]
            else:
                out += [flag] + [_number(v) if not isinstance(v, str) else v for v in value]
        else:
            out += [flag, value if isinstance(value, str) else _number(value)]
    return out


def _run_json(command, kwargs, output_flag, result_cls, extra=()):
    """Runs COMMAND with the kwargs, asks it to write its JSON to a temp file, returns it parsed.
    With help=True, returns the command's --help text instead (it runs nothing)."""
    if kwargs.pop("help", None):
        return run(command, "--help")
    # Keywords whose output the call would not return: refused by name (the CLI would see a
    # second --output and say "At Most 1 required but received 2"; a shard writes no result).
    if isinstance(output_flag, str) and output_flag[2:].replace("-", "_") in kwargs:
        key = output_flag[2:].replace("-", "_")
        raise ServesimError(f"{command}(): {key} is set by the Python API (the result is "
                            f"returned; servesim.run('{command}', ..., '{output_flag}', PATH) "
                            "writes a file)")
    for key in ("shard", "part_file"):
        if kwargs.get(key) is not None:
            raise ServesimError(f"{command}(): {key}: a shard writes a part file for `servesim "
                                f"merge`, not a result; run shards with servesim.run('{command}', "
                                "..., '--shard', 'I/N')")
    with tempfile.TemporaryDirectory(prefix="servesim-") as tmp:
        path = os.path.join(tmp, "output.json")
        args = [command] + _args(command, kwargs, tmp) + list(extra)
        if isinstance(output_flag, str):
            args += [output_flag, path]
        else:
            args += output_flag(path)
        code, text, err = _core.run_cli([str(a) for a in args])
        # Ctrl-C or SIGTERM during a study: the CLI wrote what finished, marked interrupted.
        partial = code in _STOPPED_BY_SIGNAL and os.path.exists(path)
        if not partial:
            _raise_on_failure(code, err)
        if not os.path.exists(path):  # exit 0 without the output: a bug, not the caller's input
            raise ServesimInternalError(f"servesim {command} exited 0 without writing its output",
                                        exit_code=code, stderr=err)
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
    keep = _plain(kwargs.pop("out", None))
    if keep is None or kwargs.get("help"):
        return _run_json("calibrate", kwargs, "--out", CalibrationResult)
    with tempfile.TemporaryDirectory(prefix="servesim-") as tmp:  # for a config dict
        text = run(*(["calibrate"] + _args("calibrate", kwargs, tmp) + ["--out", str(keep)]))
    with open(keep) as f:
        return CalibrationResult(json.load(f), text)
