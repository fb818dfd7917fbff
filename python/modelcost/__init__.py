"""What an ONNX model costs: per-node MACs, FLOPs, params and memory traffic, and on a named GPU
the roofline and a capacity plan. The analysis is modelcost's C++ engine, the one behind the
``modelcost`` command; its results are the JSON report's members (docs/reports.md)::

    import modelcost
    r = modelcost.analyze("resnet50.onnx", dims={"batch": 1}, gpu="a100", dtype="fp16")
    r.totals["macs"], r.nodes[0]["flops"], r.roofline["verdict"], r.plan["rows"]
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _modelcost
from .errors import ModelcostError

__all__ = ["analyze", "Result", "ModelcostError"]
__version__ = "0.1.0"

_PACKAGE_HWDB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hwdb")


class Result:
    """One model's analysis.

    ``totals``: model totals (macs, flops, params, bytes_read, bytes_written, arithmetic_intensity,
    node counts; with a gpu also predicted_latency_ms and the bound counts).
    ``nodes``: one dict per top-level node with the report's columns (name, op_type, domain, macs,
    flops, params, bytes_read, bytes_written, arithmetic_intensity, outputs, estimate, known; with a
    gpu also bound, predicted_us, share, peak).
    ``roofline``: the device, dtype and predicted totals (None without a gpu).
    ``plan``: the capacity plan per batch (None without a gpu, or for a model with no batch dim).
    ``report``: the whole report, as ``modelcost MODEL --json`` writes it.
    """

    def __init__(self, report: Dict[str, Any]):
        self.report = report
        self.model: Dict[str, Any] = report["model"]
        self.totals: Dict[str, Any] = report["totals"]
        self.nodes: List[Dict[str, Any]] = report["nodes"]
        self.by_op_type: List[Dict[str, Any]] = report["by_op_type"]
        self.warnings: List[str] = report["warnings"]
        self.roofline: Optional[Dict[str, Any]] = report.get("hardware")
        self.plan: Optional[Dict[str, Any]] = report.get("plan")
        self.comparison: Optional[List[Dict[str, Any]]] = report.get("comparison")

    def to_pandas(self):
        """The nodes as a pandas DataFrame, one row per node (needs pandas installed)."""
        try:
            import pandas
        except ImportError as missing:
            raise ImportError("Result.to_pandas() needs pandas: pip install pandas") from missing
        return pandas.DataFrame(self.nodes)

    def __repr__(self) -> str:
        return "<modelcost.Result {}: {} nodes, {} MACs, {} params>".format(
            self.model.get("path"), len(self.nodes), self.totals.get("macs"), self.totals.get("params"))


def _assignments(values: Optional[Mapping[str, Any]], what: str, text) -> List[str]:
    if values is None:
        return []
    if not isinstance(values, Mapping):
        raise TypeError("{} must be a dict, not {}".format(what, type(values).__name__))
    return ["{}={}".format(name, text(value)) for name, value in values.items()]


def _integer(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("dims values must be integers, not {!r}".format(value))
    return str(value)


def _shape(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "x".join(_integer(d) for d in value)


def _names(value: Union[None, str, Sequence[str]]) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else ",".join(value)


def _batches(value: Union[None, int, Sequence[int]]) -> str:
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return ",".join(_integer(b) for b in value)


def analyze(path: Union[str, "os.PathLike[str]"],
            dims: Optional[Mapping[str, int]] = None,
            inputs: Optional[Mapping[str, Union[str, Sequence[int]]]] = None,
            gpu: Union[None, str, Sequence[str]] = None,
            dtype: Optional[str] = None,
            batch: Union[None, int, Sequence[int]] = None,
            hwdb: Optional[Sequence[str]] = None) -> Result:
    """Analyse the ONNX model at ``path``, as ``modelcost path [options]`` does.

    dims: symbolic input dims, ``{"batch": 1, "seq": 128}`` (``--dim``; unset ones are 1, with a warning).
    inputs: whole input shapes, ``{"input": (1, 3, 224, 224)}`` or ``"1x3x224x224"`` (``--input``).
    gpu: a device of the hardware database (``"a100"``) or several (``["a100", "h100"]``) (``--gpu``).
    dtype: re-cost every float tensor as ``fp16``, ``bf16``, ``fp32``, ``tf32``, ``fp8`` or ``int8``.
    batch: a batch size or list of them for the capacity plan (``--batch``); the nodes are at the first.
    hwdb: extra folders of device files (``--hwdb``).

    Raises ModelcostError (its message and exit_code as the command line's) for a file that cannot
    be read, an invalid model or a bad option.
    """
    return Result(_modelcost.analyze(
        os.fspath(path),
        _assignments(dims, "dims", _integer),
        _assignments(inputs, "inputs", _shape),
        _names(gpu),
        dtype or "",
        _batches(batch),
        [os.fspath(d) for d in (hwdb or [])],
        _PACKAGE_HWDB))
