#!/usr/bin/env python3
"""A weight-free ONNX Runtime-optimized save of a weight-free export: fills its weights with random
values, lets ORT's extended graph optimizations rewrite it (FusedConv, FusedGemm, SkipLayerNormalization,
...), saves the result and drops the weights again, so the same math reaches modelcost in ORT's spelling.
Usage: scripts/models/ort_optimized.py IN.onnx OUT.onnx   (needs onnx and onnxruntime)"""
import os, sys, tempfile
import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

src, dst = sys.argv[1], sys.argv[2]
model = onnx.load(src, load_external_data=False)
rng = np.random.default_rng(0)
for t in model.graph.initializer:
    if t.data_location == onnx.TensorProto.EXTERNAL:
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.data_type)
        filled = numpy_helper.from_array((rng.standard_normal(tuple(t.dims)) * 0.02).astype(dtype), t.name)
        t.CopyFrom(filled)
with tempfile.TemporaryDirectory() as tmp:
    full = os.path.join(tmp, "full.onnx")
    onnx.save(model, full)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = os.path.join(tmp, "optimized.onnx")
    ort.InferenceSession(full, options, providers=["CPUExecutionProvider"])
    optimized = onnx.load(options.optimized_model_filepath)
for t in optimized.graph.initializer:  # weight-free again, as the shared reference models are
    if t.HasField("raw_data") and len(t.raw_data) > 4096:
        onnx.external_data_helper.set_external_data(t, location="weights.bin")
        t.ClearField("raw_data")
        t.data_location = onnx.TensorProto.EXTERNAL
onnx.save(optimized, dst)
ops = sorted({(n.domain or "ai.onnx") + "::" + n.op_type for n in optimized.graph.node})
print(f"{dst}: {len(optimized.graph.node)} nodes, {os.path.getsize(dst) / 1e3:.0f} KB; ops: {', '.join(ops)}")
