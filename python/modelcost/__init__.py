"""What a model costs: per-node MACs, FLOPs, params and memory traffic, and on a named GPU the
roofline, a capacity plan, LLM serving and measured times. The engine is modelcost's C++ code, the
one behind the ``modelcost`` command, and every command-line option is a keyword here::

    import modelcost
    r = modelcost.analyze("resnet50.onnx", dims={"batch": 1}, gpu="a100", dtype="fp16")
    r.totals["macs"], r.latency_ms, r.to_pandas("nodes"), r.to_pandas("plan")
    modelcost.analyze(torch_module, torch.randn(1, 3, 224, 224), by_module=2)
    modelcost.diff("a.onnx", "b.onnx", gpu=["a100", "h100"], batch=[1, 32]).to_pandas("whole_model")
    modelcost.llm("tinyllama.onnx", gpu="l4", dtype="fp16", prompt=512, generate=256).to_pandas()
    modelcost.serve("llama-3-8b.json", gpu="h100", rate=4, prompt_len=(256, 1024)).to_pandas()
    modelcost.list_gpus(), modelcost.calibrate(out="local.toml")

Errors raise ModelcostError with the command line's message (options named as Python keywords)
and exit code.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional, Sequence, Union

from . import _commands
from .errors import ModelcostError
from .results import Calibration, DeviceList, DiffResult, LlmResult, Result, SearchResult, ServeResult

__all__ = ["analyze", "diff", "llm", "serve", "list_gpus", "calibrate", "Result", "DiffResult", "LlmResult",
           "ServeResult", "SearchResult", "Calibration", "DeviceList", "ModelcostError"]
__version__ = "0.1.0"

Path = Union[str, "os.PathLike[str]"]
Paths = Union[None, Path, Sequence[Path]]
Names = Union[None, str, Sequence[str]]
Numbers = Union[None, float, Sequence[float]]


def analyze(model: Any, *example_inputs: Any,
            dims: Optional[Mapping[str, int]] = None,
            inputs: Optional[Mapping[str, Union[str, Sequence[int]]]] = None,
            gpu: Names = None, dtype: Optional[str] = None,
            batch: Union[None, int, Sequence[int]] = None, batch_dim: Optional[str] = None,
            target_qps: Optional[float] = None, latency_slo_ms: Optional[float] = None,
            price_per_hour: Numbers = None, view: Optional[str] = None, ceilings: Optional[str] = None,
            by_module: Optional[int] = None, ops: Paths = None, strict: bool = False,
            peak_tflops: Optional[float] = None, bandwidth_gbps: Optional[float] = None, hwdb: Paths = None,
            measure: bool = False, cpu: bool = False, cold: bool = False, autotune: bool = False,
            counters: bool = False) -> Result:
    """Analyse a model as ``modelcost MODEL [options]`` does.

    model: a path, the bytes of an ONNX file, an ``onnx.ModelProto``, or a ``torch.nn.Module``
    followed by its example inputs (``analyze(net, torch.randn(1, 3, 224, 224))``: exported with
    torch.onnx.export in-process; by_module then groups by the module names).
    dims: symbolic input dims, ``{"batch": 1}``; inputs: whole shapes, ``{"input": (1, 3, 224, 224)}``.
    gpu: a device (``"a100"``), several (``["a100", "h100"]``) or ``"auto"``; dtype: ``"fp16"``,
    ``"bf16"``, ... (any case, ``"float16"``, ``"half"``; without a gpu it re-sizes bytes only).
    batch, batch_dim, target_qps, latency_slo_ms, price_per_hour (one per gpu): the capacity plan
    (with a gpu and none of them, the plan is at the model's own batch).
    view: ``"deployed"`` (fused kernels, the default) or ``"as-written"``; ceilings: ``"achievable"``
    or ``"datasheet"``; by_module: depth of the per-module totals; ops: op rule files; strict: an
    op without a rule is an error; peak_tflops, bandwidth_gbps: a custom device or overrides;
    hwdb: a device folder or file, or a list of them.
    measure: time every node on this machine's NVIDIA GPU (cpu=True: the CPU reference kernels),
    with cold, autotune, counters as on the command line; raises ModelcostError (exit_code 6)
    without one.
    """
    options = dict(dims=dims, inputs=inputs, gpu=gpu, dtype=dtype, batch=batch, batch_dim=batch_dim,
                   target_qps=target_qps, latency_slo_ms=latency_slo_ms, price_per_hour=price_per_hour, view=view,
                   ceilings=ceilings, by_module=by_module, ops=ops, strict=strict, peak_tflops=peak_tflops,
                   bandwidth_gbps=bandwidth_gbps, hwdb=hwdb, measure=measure, cpu=cpu, cold=cold, autotune=autotune,
                   counters=counters)
    return _commands.analyze(model, *example_inputs, **options)


def diff(a: Any, b: Any, *, dims: Optional[Mapping[str, int]] = None,
         inputs: Optional[Mapping[str, Union[str, Sequence[int]]]] = None, gpu: Names = None,
         dtype: Optional[str] = None, batch: Union[None, int, Sequence[int]] = None, view: Optional[str] = None,
         ceilings: Optional[str] = None, target_qps: Optional[float] = None,
         latency_slo_ms: Optional[float] = None, hwdb: Paths = None, ops: Paths = None,
         measure: bool = False, cpu: bool = False) -> DiffResult:
    """Compare two models (paths, bytes or onnx.ModelProto) with the same options, as
    ``modelcost diff A B``: per node, per op type, in total, and the whole-model latency in both
    views on every gpu and per batch (``whole_model``)."""
    return _commands.diff(a, b, dims=dims, inputs=inputs, gpu=gpu, dtype=dtype, batch=batch, view=view,
                          ceilings=ceilings, target_qps=target_qps, latency_slo_ms=latency_slo_ms, hwdb=hwdb, ops=ops,
                          measure=measure, cpu=cpu)


def llm(model: Any, gpu: str, *, prompt: Optional[int] = None, generate: Optional[int] = None,
        batch: Union[None, int, Sequence[int]] = None, context: Union[None, int, Sequence[int]] = None,
        dtype: Optional[str] = None, weights: Optional[str] = None, activations: Optional[str] = None,
        kv_cache: Optional[str] = None, tp: Optional[int] = None, ep: Optional[int] = None, link: Optional[str] = None,
        collective: Optional[str] = None, workspace_gb: Optional[float] = None,
        tpot_slo_ms: Optional[float] = None, ttft_slo_ms: Optional[float] = None,
        target_tokens_per_s: Optional[float] = None, prefill_chunk: Optional[int] = None,
        iteration: Union[None, str, Sequence[str]] = None, dims: Optional[Mapping[str, int]] = None,
        hwdb: Paths = None, measure: bool = False, svg: Optional[Path] = None) -> LlmResult:
    """The serving plan of a decoder LLM, as ``modelcost llm MODEL --gpu GPU`` (docs/llm.md).
    ``iteration``: serving iterations to price, e.g. ``["1x512@1024+32@2048", "64@4096"]``;
    ``svg``: a file for the plan's chart against batch."""
    return _commands.llm(model, gpu, prompt=prompt, generate=generate, batch=batch, context=context, dtype=dtype,
                         weights=weights, activations=activations, kv_cache=kv_cache, tp=tp, ep=ep, link=link,
                         collective=collective, workspace_gb=workspace_gb, tpot_slo_ms=tpot_slo_ms,
                         ttft_slo_ms=ttft_slo_ms, target_tokens_per_s=target_tokens_per_s,
                         prefill_chunk=prefill_chunk, iteration=iteration, dims=dims, hwdb=hwdb, measure=measure, svg=svg)


def serve(model: Any, gpu: Union[str, Sequence[str]], *, rate: Optional[float] = None, trace: Optional[Path] = None,
          requests: Optional[int] = None, prompt_len: Union[None, int, str, Sequence[int]] = None,
          output_len: Union[None, int, str, Sequence[int]] = None, scheduler: Optional[str] = None,
          max_batch: Optional[int] = None, chunk: Optional[int] = None, tp: Optional[int] = None,
          pp: Optional[int] = None, dtype: Optional[str] = None, workspace_gb: Optional[float] = None,
          seed: Optional[int] = None, search: bool = False, ttft_slo_ms: Optional[float] = None,
          tpot_slo_ms: Optional[float] = None, price_per_hour: Union[None, float, Sequence[float]] = None,
          dims: Optional[Mapping[str, int]] = None, hwdb: Paths = None,
          svg: Optional[Path] = None) -> Union[ServeResult, SearchResult]:
    """A serving simulation, as ``modelcost serve MODEL --gpu GPU`` (docs/llm.md): a ServeResult;
    with ``search=True`` (several ``gpu`` allowed) the configuration search, a SearchResult (with
    ``rate``: also the replicas of each configuration that serve that rate, and their cost).
    ``prompt_len``/``output_len``: a length, or (low, high) for uniform lengths; ``svg``: a file
    for latency against rate (the workload simulated at 1/8 to 4 times its rate)."""
    return _commands.serve(model, gpu, rate=rate, trace=trace, requests=requests, prompt_len=prompt_len,
                           output_len=output_len, scheduler=scheduler, max_batch=max_batch, chunk=chunk, tp=tp, pp=pp,
                           dtype=dtype, workspace_gb=workspace_gb, seed=seed, search=search, ttft_slo_ms=ttft_slo_ms,
                           tpot_slo_ms=tpot_slo_ms, price_per_hour=price_per_hour, dims=dims, hwdb=hwdb, svg=svg)


def list_gpus(hwdb: Paths = None) -> DeviceList:
    """The devices of the hardware database (and of ``hwdb``), as ``modelcost --list-gpus``."""
    return _commands.list_gpus(hwdb)


def calibrate(out: Optional[Path] = None, *, gpu: Optional[str] = None, cpu: bool = False,
              kernels_csv: Optional[Path] = None, from_grid: Optional[Path] = None,
              hwdb: Paths = None) -> Calibration:
    """This machine's achievable roofline as a hwdb entry (``modelcost calibrate``; needs an NVIDIA
    GPU, or cpu=True), written to ``out`` when given; ``from_grid``: refit a saved kernel grid (no
    GPU needed)."""
    return _commands.calibrate(out, gpu=gpu, cpu=cpu, kernels_csv=kernels_csv, from_grid=from_grid, hwdb=hwdb)
