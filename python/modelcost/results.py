"""Typed results: the report's members as attributes, each table as a pandas DataFrame with one
dtype per column (int64 for counts, float64 for figures with gaps as NaN, bool for flags)."""

from __future__ import annotations

import html
import math
from typing import Any, Dict, List, Optional, Sequence


# Whole counts: int64 whenever every row has one. Every other number is float64, so a column's
# dtype depends on its name, never on whether this model's values happen to be whole.
_COUNT_COLUMNS = {"macs", "flops", "params", "bytes_read", "bytes_written", "bytes", "count", "count_a", "count_b",
                  "nodes", "batch", "context", "id", "group", "depth", "compute_bound_nodes", "memory_bound_nodes",
                  "max_batch_fits", "devices_needed", "kv_bytes", "memory_bytes"}


def _is_count(name: str) -> bool:
    base = name.split("@")[0]
    for side in ("_a", "_b", "_delta"):
        if base.endswith(side) and base[: -len(side)] in _COUNT_COLUMNS - {"count_a", "count_b"}:
            return True
    return base in _COUNT_COLUMNS


def _column_dtype(name: str, values: List[Any], complete: bool) -> Optional[str]:
    present = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not present:
        return None
    if all(isinstance(v, bool) for v in present):
        return "bool" if complete else "boolean"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        whole = all(float(v).is_integer() for v in present)
        return "int64" if complete and whole and _is_count(name) else "float64"
    return None  # text and nested values stay objects


def frame(rows: Sequence[Dict[str, Any]], columns: Optional[Sequence[str]] = None):
    """rows as a DataFrame with consistent column dtypes (needs pandas)."""
    try:
        import pandas
    except ImportError as missing:
        raise ImportError("to_pandas() needs pandas: pip install pandas") from missing
    df = pandas.DataFrame(list(rows), columns=list(columns) if columns is not None else None)
    for name in df.columns:
        values = list(df[name])
        dtype = _column_dtype(str(name), values, all(v is not None and not (isinstance(v, float) and math.isnan(v)) for v in values))
        if dtype == "float64":
            df[name] = pandas.to_numeric(df[name].astype(object).where(df[name].notna(), None), errors="coerce").astype("float64")
        elif dtype is not None:
            df[name] = df[name].astype(dtype)
    return df


def _table(tables: Dict[str, Any], table: str):
    if table not in tables:
        raise ValueError("table must be one of {}, not {!r}".format(", ".join(sorted(tables)), table))
    rows = tables[table]
    if rows is None:
        raise ValueError("this result has no {} table".format(table))
    return frame(rows)


class Result:
    """One model's analysis, as ``modelcost MODEL --json`` reports it (docs/reports.md).

    ``totals``: model totals (macs, flops, params, bytes_read, bytes_written, ...). With a gpu it
    holds ``predicted_latency_as_written_ms`` (one kernel per node) and
    ``predicted_latency_deployed_ms`` (fused kernels, the default view); ``predicted_latency_ms`` is
    the as-written figure, kept under its report name. ``latency_ms`` is the headline: the figure
    of the view asked for.
    ``nodes``, ``by_op_type``, ``groups`` (fused kernels), ``plan`` (first device), ``plans`` (every
    device), ``comparison`` (several devices), ``by_module``: the report's tables.
    ``to_pandas(table)`` gives any of them as a DataFrame.
    """

    def __init__(self, report: Dict[str, Any], html_args: Optional[List[str]] = None, source: Any = None):
        self.report = report
        self.model: Dict[str, Any] = report["model"]
        self.totals: Dict[str, Any] = dict(report["totals"])
        if "predicted_latency_ms" in self.totals:
            self.totals["predicted_latency_as_written_ms"] = self.totals["predicted_latency_ms"]
        self.nodes: List[Dict[str, Any]] = report["nodes"]
        self.by_op_type: List[Dict[str, Any]] = report["by_op_type"]
        self.warnings: List[str] = report["warnings"]
        self.roofline: Optional[Dict[str, Any]] = report.get("hardware")
        self.groups: Optional[List[Dict[str, Any]]] = report.get("groups")
        self.plan: Optional[Dict[str, Any]] = report.get("plan")
        self.plans: Optional[List[Dict[str, Any]]] = report.get("plans") or ([self.plan] if self.plan else None)
        self.comparison: Optional[List[Dict[str, Any]]] = report.get("comparison")
        self.by_module: Optional[List[Dict[str, Any]]] = report.get("by_module")
        self._html_args = html_args
        self._source = source  # keeps a temporary model file alive for _repr_html_

    @property
    def view(self) -> Optional[str]:
        """"deployed" or "as-written" with a gpu, else None."""
        return self.roofline.get("view") if self.roofline else None

    @property
    def latency_ms(self) -> Optional[float]:
        """The predicted latency in the view asked for (deployed by default); None without a gpu."""
        if self.roofline is None:
            return None
        key = "predicted_latency_deployed_ms" if self.view == "deployed" else "predicted_latency_ms"
        return self.totals.get(key)

    def _plan_rows(self) -> Optional[List[Dict[str, Any]]]:
        if not self.plans:
            return None
        return [dict(row, device=plan["device"], dtype=plan["dtype"]) for plan in self.plans for row in plan["rows"]]

    def to_pandas(self, table: str = "nodes"):
        """A table as a DataFrame: nodes (default), by_op_type, groups, plan (every device's rows,
        with a device column), comparison or by_module."""
        return _table({"nodes": self.nodes, "by_op_type": self.by_op_type, "groups": self.groups,
                       "plan": self._plan_rows(), "comparison": self.comparison, "by_module": self.by_module}, table)

    def to_html(self) -> str:
        """The HTML report (``modelcost MODEL --html``) of this analysis."""
        from . import _commands
        return _commands.html_report(self._html_args)

    def _repr_html_(self) -> str:
        # In an iframe: the page's script and styles stay its own in a notebook.
        return '<iframe srcdoc="{}" style="width:100%;height:640px;border:0"></iframe>'.format(
            html.escape(self.to_html(), quote=True))

    def __repr__(self) -> str:
        latency = "" if self.latency_ms is None else ", {:.3g} ms {}".format(self.latency_ms, self.view)
        return "<modelcost.Result {}: {} nodes, {} MACs, {} params{}>".format(
            self.model.get("path"), len(self.nodes), self.totals.get("macs"), self.totals.get("params"), latency)


def _flattened(row: Dict[str, Any]) -> Dict[str, Any]:
    """{"flops": {"a": 1, "b": 2, "delta": 1}} -> {"flops_a": 1, "flops_b": 2, "flops_delta": 1}."""
    flat: Dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dict) and set(value) >= {"a", "b", "delta"}:
            for side in ("a", "b", "delta"):
                flat["{}_{}".format(key, side)] = value[side]
        else:
            flat[key] = value
    return flat


class DiffResult:
    """Two models compared (``modelcost diff A B --json``): ``totals`` ({figure: {a, b, delta}}),
    ``whole_model`` (latency in both views on every device, the plan per batch), ``nodes``,
    ``by_op_type``, ``matching``. ``to_pandas(table)``: nodes (default), by_op_type, totals, whole_model."""

    def __init__(self, report: Dict[str, Any]):
        self.report = report
        self.a, self.b = report["a"], report["b"]
        self.figures: List[str] = report["figures"]
        self.matching: Dict[str, int] = report["matching"]
        self.totals: Dict[str, Dict[str, float]] = report["totals"]
        self.whole_model: Dict[str, Dict[str, Any]] = report.get("whole_model", {})
        self.nodes: List[Dict[str, Any]] = report["nodes"]
        self.by_op_type: List[Dict[str, Any]] = report["by_op_type"]

    def to_pandas(self, table: str = "nodes"):
        totals = [dict(figure=name, **values) for name, values in self.totals.items()]
        whole = [dict(figure=name, **values) for name, values in self.whole_model.items()]
        return _table({"nodes": [_flattened(n) for n in self.nodes], "by_op_type": [_flattened(o) for o in self.by_op_type],
                       "totals": totals, "whole_model": whole}, table)

    def __repr__(self) -> str:
        return "<modelcost.DiffResult {} -> {}: {} matched, {} removed, {} added>".format(
            self.a["path"], self.b["path"], self.matching["by_name"] + self.matching["by_structure"],
            self.matching["removed"], self.matching["added"])


class LlmResult:
    """An LLM serving plan (``modelcost llm MODEL --json``): ``plan`` is the report's ``llm`` member
    (decoder, precision, batches with prefill, per-context decode, memory). ``to_pandas()``: one row
    per batch x context; ``iterations``: the serving iterations asked for (``iteration=[...]``),
    each its mix and its deployed step."""

    def __init__(self, report: Dict[str, Any]):
        self.report = report
        self.plan: Dict[str, Any] = report["llm"]
        self.decoder: Dict[str, Any] = self.plan["decoder"]
        self.batches: List[Dict[str, Any]] = self.plan["batches"]
        self.iterations: List[Dict[str, Any]] = self.plan.get("iterations", [])

    def rows(self) -> List[Dict[str, Any]]:
        rows = []
        for b in self.batches:
            for c in b["contexts"]:
                rows.append({"batch": b["batch"], "context": c["context"], "ttft_ms": b["ttft_ms"], "tpot_ms": c["tpot_ms"],
                             "tokens_per_s_per_sequence": c["tokens_per_s_per_sequence"],
                             "tokens_per_s_per_device": c["tokens_per_s_per_device"], "kv_bytes": c["kv_bytes"],
                             "memory_bytes": c["memory_per_device"]["total_bytes"], "fits": c["fits"],
                             "beyond_graph": c["beyond_graph"]})
        return rows

    def to_pandas(self):
        return frame(self.rows())

    def __repr__(self) -> str:
        return "<modelcost.LlmResult {} on {}: {} batches>".format(self.plan.get("model"), self.plan.get("device"),
                                                                  len(self.batches))


class ServeResult:
    """A serving simulation (``modelcost serve MODEL --json``): ``summary`` is the report's ``serve``
    member without its requests (percentiles of TTFT, TPOT and latency, throughput, KV-cache use),
    ``requests`` one dict per request. ``to_pandas()``: one row per request."""

    def __init__(self, report: Dict[str, Any]):
        self.report = report
        self.summary: Dict[str, Any] = {k: v for k, v in report["serve"].items() if k != "requests"}
        self.requests: List[Dict[str, Any]] = report["serve"]["requests"]

    def to_pandas(self):
        return frame(self.requests)

    def __repr__(self) -> str:
        s = self.summary
        return "<modelcost.ServeResult {} on {}: {} requests, P99 TTFT {:.4g} ms>".format(
            s.get("model"), s.get("device"), len(self.requests), s["ttft_ms"]["p99"])


class SearchResult:
    """A configuration search (``modelcost serve MODEL --search --json``): ``configurations``, the
    best requests per dollar first, each with its device, TP, PP, max batch, chunk, highest rate
    meeting the SLOs and whether it is on the Pareto front; with ``rate``, the replicas that serve
    it and their cost per hour. ``to_pandas()``: one row each."""

    def __init__(self, report: Dict[str, Any]):
        self.report = report
        self.search: Dict[str, Any] = report["search"]
        self.configurations: List[Dict[str, Any]] = self.search["configurations"]

    def to_pandas(self):
        return frame(self.configurations)

    def __repr__(self) -> str:
        return "<modelcost.SearchResult: {} configurations>".format(len(self.configurations))


class Calibration:
    """``modelcost calibrate``: ``text`` as printed, ``toml`` the hwdb entry (None for from_grid),
    ``entry`` that entry parsed, ``path`` where it was written."""

    def __init__(self, text: str, toml: Optional[str], path: Optional[str]):
        self.text, self.toml, self.path = text, toml, path
        self.entry: Optional[Dict[str, Any]] = None
        if toml:
            try:
                import tomllib  # Python 3.11+
            except ImportError:
                tomllib = None
            self.entry = tomllib.loads(toml) if tomllib else None

    def __repr__(self) -> str:
        return "<modelcost.Calibration{}>".format(" written to " + self.path if self.path else "")


class DeviceList(list):
    """The hardware database's devices (dicts: id, name, aliases, memory_gb, memory_bandwidth_gbps,
    vector_tflops, tensor_tflops, ...)."""

    def to_pandas(self):
        return frame([{k: v for k, v in d.items() if not isinstance(v, (dict, list))} for d in self])
