"""What servesim's Python functions return: the command's JSON output as a plain dict, with
``to_dataframe()`` giving its natural table in one call and ``text`` holding what the CLI printed.

Each class is a ``dict`` (``json.dumps(result)`` writes the same data the CLI's file holds) that
knows which part of its JSON is "one row per ...":

  SimulationResult  one row per request (from the per-request arrays, see ``requests``)
  SweepResult       one row per point of every curve (``curve`` column = the curve's label)
  PlanResult        one row per candidate deployment
  CompareResult     one row per compared metric
  MatrixResult      one row per workload of the matrix
  ValidationResult  one row per (measured run, metric)
  CalibrationResult one row per fitted parameter
"""

import sys

# The per-request arrays of a --save-detailed result file (vLLM's names, seconds), moved out of
# the dict into numpy arrays. ``itls`` is ragged (one array per request).
_REQUEST_ARRAYS = ("input_lens", "output_lens", "ttfts", "itls", "start_times", "latencies",
                   "errors", "generated_texts")


def _pandas():
    import pandas  # imported on use: the simulation API does not need it
    return pandas


def _numpy():
    """numpy, imported where arrays are returned: ``import servesim`` and every function's dict
    work without it (a conda or venv Python need not have it); ``.requests`` names it."""
    try:
        import numpy
    except ImportError as e:
        raise ModuleNotFoundError(
            "servesim: SimulationResult.requests holds numpy arrays, and numpy is not installed "
            f"for this Python ({sys.executable}); install it with `pip install numpy` (or "
            "`pip install .[arrays]` from the servesim checkout; Debian's python3-numpy for "
            "/usr/bin/python3). The result's other keys do not need it.", name="numpy") from e
    return numpy


class Result(dict):
    """A command's JSON output. ``text``: what the command printed (its table). ``partial``: True
    when a study (sweep, plan, compare) was stopped by SIGINT (Ctrl-C) or SIGTERM: the finished
    work is kept, the rest is marked as in the CLI's output (``"interrupted": true``)."""

    def __init__(self, data, text=""):
        super().__init__(data)
        self.text = text
        self.partial = False

    def rows(self):
        """The list of flat dicts that ``to_dataframe`` turns into rows."""
        return [dict(self)]

    def to_dataframe(self):
        """The result's table as a pandas DataFrame (nested keys joined with '.')."""
        return _pandas().json_normalize(self.rows(), sep=".")


class SimulationResult(Result):
    """``servesim simulate``: vLLM's result keys (``p99_ttft_ms``, ``request_throughput``, ...) and
    ``servesim`` (engine view). ``requests``: per-request numpy arrays (vLLM's detailed-result
    names and units, seconds): input_lens, output_lens, ttfts, start_times, latencies (E2E),
    itls (object array of per-request gap arrays), errors, plus derived ``tpots`` (seconds per
    output token after the first; NaN for single-token outputs)."""

    def __init__(self, data, text=""):
        data = dict(data)
        self._arrays = {k: data.pop(k) for k in _REQUEST_ARRAYS if k in data}
        super().__init__(data, text)
        self._requests = None

    @property
    def requests(self):
        """The per-request numpy arrays, built on first use (numpy is needed only here)."""
        if self._requests is None:
            self._requests = _request_arrays(_numpy(), self._arrays)
        return self._requests

    def to_dataframe(self):
        """One row per request: start_time_s, input_len, output_len, ttft_ms, tpot_ms, e2el_ms,
        itl_mean_ms, error."""
        np = _numpy()
        r = self.requests
        n = len(r.get("ttfts", []))
        itl_mean = np.array([g.mean() * 1e3 if len(g) else np.nan for g in r["itls"]]) \
            if "itls" in r else np.full(n, np.nan)
        return _pandas().DataFrame({
            "start_time_s": r["start_times"],
            "input_len": r["input_lens"],
            "output_len": r["output_lens"],
            "ttft_ms": r["ttfts"] * 1e3,
            "tpot_ms": r["tpots"] * 1e3,
            "e2el_ms": r["latencies"] * 1e3,
            "itl_mean_ms": itl_mean,
            "error": r["errors"] if "errors" in r else np.full(n, "", dtype=object),
        })


def _request_arrays(np, arrays):
    """vLLM's per-request lists -> numpy arrays, plus the derived ``tpots``."""
    requests = {}
    for k, v in arrays.items():
        if k == "itls":
            ragged = np.empty(len(v), dtype=object)
            for i, gaps in enumerate(v):
                ragged[i] = np.asarray(gaps, dtype=np.float64)
            requests[k] = ragged
        elif k in ("errors", "generated_texts"):
            requests[k] = np.asarray(v, dtype=object)
        elif k in ("input_lens", "output_lens"):
            requests[k] = np.asarray(v, dtype=np.int64)
        else:
            requests[k] = np.asarray(v, dtype=np.float64)
    if "latencies" in requests and "ttfts" in requests:
        out = requests["output_lens"].astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            tpot = (requests["latencies"] - requests["ttfts"]) / (out - 1.0)
        requests["tpots"] = np.where(out > 1, tpot, np.nan)
    return requests


class SweepResult(Result):
    """``servesim sweep``: ``curves`` (each with ``points``, ``knee``, ``saturation_value``)."""

    def rows(self):
        rows = []
        for c in self["curves"]:
            for p in c.get("points", []):
                rows.append({"curve": c.get("label") or "", **p})
        return rows


class PlanResult(Result):
    """``servesim plan``: ``candidates`` ranked, and ``answer``."""

    def rows(self):
        return list(self["candidates"])


class CompareResult(Result):
    """``servesim compare``: ``metrics`` (mean difference, CI, p-value per metric)."""

    def rows(self):
        return list(self["metrics"])


class MatrixResult(Result):
    """``servesim matrix``: ``rows``, one per standard workload."""

    def rows(self):
        return list(self["rows"])


class ValidationResult(Result):
    """``servesim validate``: one entry per measured run in ``runs``, each with ``metrics``
    (measured, predicted, error_pct). The table has one row per (run, metric), with
    ``abs_error_pct`` added."""

    def rows(self):
        rows = []
        for r in self["runs"]:
            run = {k: r.get(k) for k in ("id", "label", "deployment", "format", "engine_version",
                                         "replay", "in_fit_set")}
            for m in r.get("metrics", []):
                err = m.get("error_pct")
                rows.append({**run, **m, "abs_error_pct": abs(err) if err is not None else None})
        return rows


class CalibrationResult(Result):
    """``servesim calibrate``: the calibration profile (as written to ``--out``)."""


def to_dataframe(result):
    """``result.to_dataframe()`` for any servesim result (or a dict read from one of its files:
    the kind is recognised from its keys)."""
    if isinstance(result, Result):
        return result.to_dataframe()
    for cls, key in ((SweepResult, "curves"), (PlanResult, "candidates"),
                     (CompareResult, "metrics"), (ValidationResult, "runs"),
                     (SimulationResult, "ttfts")):
        if key in result:
            return cls(result).to_dataframe()
    return Result(result).to_dataframe()
