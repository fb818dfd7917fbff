"""The package's functions. Each runs the C++ function the command line runs (``analyze``: the
analysis behind ``modelcost MODEL``; the others: ``modelcost diff|llm|calibrate`` themselves), with
the keywords turned into the command line's options."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, List, Optional, Sequence, Tuple, Union

from . import _modelcost
from ._options import option_args, python_message, raise_for
from ._sources import model_file
from .errors import ModelcostError
from .results import Calibration, DeviceList, DiffResult, LlmResult, Result, SearchResult, ServeResult

_PACKAGE_HWDB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hwdb")


def _package_hwdb() -> List[str]:
    """--hwdb of the package's copy of hwdb/ where the built-in one is not found (an installed package)."""
    return [] if _modelcost.builtin_hwdb_dir() or not os.path.isdir(_PACKAGE_HWDB) else ["--hwdb", _PACKAGE_HWDB]


def _run(args: List[str]) -> Tuple[str, str]:
    code, out, err = _modelcost.run(args)
    raise_for(code, err)
    return out, err


def _run_for_json(args: List[str]):
    """The command's --json report, written to a private file."""
    with tempfile.TemporaryDirectory(prefix="modelcost-") as folder:
        path = os.path.join(folder, "report.json")
        _run(args + ["--json", path, "-q"])
        with open(path, encoding="utf-8") as f:
            return json.load(f)


def html_report(args: Optional[List[str]]) -> str:
    if args is None:
        raise ModelcostError("this result has no model file to report on", 2)
    with tempfile.TemporaryDirectory(prefix="modelcost-") as folder:
        path = os.path.join(folder, "report.html")
        _run(args + _package_hwdb() + ["--html", path, "-q"])
        with open(path, encoding="utf-8") as f:
            return f.read()


def analyze(model: Any, *example_inputs: Any, **options: Any) -> Result:
    source = model_file(model, example_inputs)
    args = [source.path] + option_args(options)
    try:
        report = _modelcost.analyze(args, _PACKAGE_HWDB)
    except ModelcostError as error:
        raise ModelcostError(python_message(error.message), error.exit_code) from None
    # The HTML report reruns the same analysis (without measuring again).
    html_args = [source.path] + option_args({k: v for k, v in options.items()
                                             if k not in ("measure", "cpu", "cold", "autotune", "counters")})
    return Result(report, html_args, source)


def diff(a: Any, b: Any, **options: Any) -> DiffResult:
    source_a, source_b = model_file(a, argument="a"), model_file(b, argument="b")
    return DiffResult(_run_for_json(["diff", source_a.path, source_b.path] + option_args(options) + _package_hwdb()))


def llm(model: Any, gpu: str, **options: Any) -> LlmResult:
    source = model_file(model)
    return LlmResult(_run_for_json(["llm", source.path, "--gpu", gpu] + option_args(options) + _package_hwdb()))


def serve(model: Any, gpu: Union[str, Sequence[str]], **options: Any) -> Union[ServeResult, SearchResult]:
    source = model_file(model)
    if options.get("trace") is not None:
        options["trace"] = os.fspath(options["trace"])
    for name in ("prompt_len", "output_len"):  # (low, high): uniform lengths, the command line's LOW:HIGH
        if isinstance(options.get(name), (tuple, list)):
            low, high = options[name]
            options[name] = "{}:{}".format(int(low), int(high))
    report = _run_for_json(["serve", source.path, "--gpu", gpu if isinstance(gpu, str) else ",".join(gpu)]
                           + option_args(options) + _package_hwdb())
    return SearchResult(report) if options.get("search") else ServeResult(report)


def list_gpus(hwdb: Union[None, str, "os.PathLike[str]", Sequence[str]] = None) -> DeviceList:
    extra = [a for a in option_args({"hwdb": hwdb}) if a != "--hwdb"]
    package = _package_hwdb()[1:]
    try:
        return DeviceList(_modelcost.devices(package + extra))
    except ModelcostError as error:
        raise ModelcostError(python_message(error.message), error.exit_code) from None


def calibrate(out: Union[None, str, "os.PathLike[str]"] = None, **options: Any) -> Calibration:
    if options.get("from_grid") is not None:
        text, _ = _run(["calibrate"] + option_args(options))
        return Calibration(text, None, None)
    with tempfile.TemporaryDirectory(prefix="modelcost-") as folder:
        path = os.fspath(out) if out is not None else os.path.join(folder, "calibrated.toml")
        text, _ = _run(["calibrate", "--out", path] + option_args(options) + _package_hwdb())
        with open(path, encoding="utf-8") as f:
            toml = f.read()
    return Calibration(text, toml, os.fspath(out) if out is not None else None)
