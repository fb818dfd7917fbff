"""Python keywords to the command line's options, and the command line's messages back to Python's
names: the package runs the same C++ functions as the ``modelcost`` binary, with the same options."""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import ModelcostError

# keyword -> option, for every keyword that takes a value (flags are in _FLAGS).
_VALUED = {
    "gpu": "--gpu", "dtype": "--dtype", "batch": "--batch", "batch_dim": "--batch-dim", "view": "--view",
    "ceilings": "--ceilings", "by_module": "--by-module", "target_qps": "--target-qps",
    "latency_slo_ms": "--latency-slo-ms", "price_per_hour": "--price-per-hour", "peak_tflops": "--peak-tflops",
    "bandwidth_gbps": "--bandwidth-gbps", "top": "--top",
    # llm
    "prompt": "--prompt", "generate": "--generate", "context": "--context", "weights": "--weights",
    "activations": "--activations", "kv_cache": "--kv-cache", "tp": "--tp", "link": "--link",
    "collective": "--collective", "workspace_gb": "--workspace-gb", "tpot_slo_ms": "--tpot-slo-ms",
    "ttft_slo_ms": "--ttft-slo-ms", "target_tokens_per_s": "--target-tokens-per-s", "ep": "--ep",
    "prefill_chunk": "--prefill-chunk", "iteration": "--iteration",
    # calibrate
    "from_grid": "--from-grid", "kernels_csv": "--kernels-csv", "out": "--out",
    # serve
    "rate": "--rate", "trace": "--trace", "requests": "--requests", "prompt_len": "--prompt-len",
    "output_len": "--output-len", "scheduler": "--scheduler", "max_batch": "--max-batch", "chunk": "--chunk",
    "pp": "--pp", "seed": "--seed",
    # llm and serve: the chart, to a file
    "svg": "--svg",
}
_FLAGS = {"strict": "--strict", "measure": "--measure", "cpu": "--cpu", "cold": "--cold", "autotune": "--autotune",
          "counters": "--counters", "search": "--search"}
_REPEATED = {"dims": "--dim", "inputs": "--input", "ops": "--ops", "hwdb": "--hwdb"}

# In messages: the option -> how a Python caller spells it.
_PYTHON_NAMES = dict(sorted(
    [(flag, name) for name, flag in {**_VALUED, **_FLAGS, **_REPEATED}.items()]
    + [("--list-gpus", "modelcost.list_gpus()"), ("--json", "the report"), ("--csv", "the report")],
    key=lambda item: -len(item[0])))
_OPTION = re.compile(r"--[a-z][a-z0-9-]*")


def python_message(message: str) -> str:
    """The command line's message with its options named as Python keywords."""
    message = message.replace(" (see modelcost --help)", "")
    return _OPTION.sub(lambda m: _PYTHON_NAMES.get(m.group(0), m.group(0)), message)


def _integer(name: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("{} values must be integers, not {!r}".format(name, value))
    return str(value)


def _shape(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "x".join(_integer("inputs", d) for d in value)


def _listed(name: str, value: Any) -> str:
    """A value or a sequence of them as the option's comma list."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Sequence):
        return ",".join(str(v) for v in value)
    raise TypeError("{} must be a value or a list of them, not {}".format(name, type(value).__name__))


def _paths(name: str, value: Any) -> List[str]:
    """One path (str or os.PathLike) or a list of them; a str is one path, never its letters."""
    if isinstance(value, (str, os.PathLike)):
        return [os.fspath(value)]
    if isinstance(value, Sequence):
        return [os.fspath(v) for v in value]
    raise TypeError("{} must be a path or a list of paths, not {}".format(name, type(value).__name__))


def _assignments(name: str, value: Any, text) -> List[str]:
    if not isinstance(value, Mapping):
        raise TypeError("{} must be a dict, not {}".format(name, type(value).__name__))
    return ["{}={}".format(key, text(v)) for key, v in value.items()]


def option_args(options: Mapping[str, Any]) -> List[str]:
    """``{"gpu": ["a100", "h100"], "target_qps": 500, "strict": True}`` -> the command line's options."""
    args: List[str] = []
    for name, value in options.items():
        if value is None or value is False:
            continue
        if name in _FLAGS:
            args.append(_FLAGS[name])
        elif name == "dims":
            args += [a for item in _assignments(name, value, lambda v: _integer("dims", v)) for a in ("--dim", item)]
        elif name == "inputs":
            args += [a for item in _assignments(name, value, _shape) for a in ("--input", item)]
        elif name in ("ops", "hwdb"):
            args += [a for path in _paths(name, value) for a in (_REPEATED[name], path)]
        elif name == "by_module" and value is True:  # by_module=True: the first level
            args += ["--by-module", "1"]
        elif name == "view":
            args += ["--view", str(value).replace("_", "-")]
        elif name in _VALUED:
            args += [_VALUED[name], _listed(name, value)]
        else:
            raise TypeError("unexpected keyword argument '{}'".format(name))
    return args


def raise_for(code: int, stderr: str) -> None:
    """A failed command line as ModelcostError: its one-line message, with Python's names."""
    if code == 0:
        return
    lines = [line for line in stderr.splitlines() if line.startswith("modelcost: error: ")]
    message = lines[-1][len("modelcost: error: "):] if lines else (stderr.strip() or "failed")
    raise ModelcostError(python_message(message), code)
