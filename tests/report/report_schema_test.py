#!/usr/bin/env python3
"""Every kind of JSON report validates against docs/report.schema.json.

Usage: report_schema_test.py MODELCOST_BINARY SOURCE_DIR [SHARED_MODELS_DIR]
The kinds: plain analysis, --dtype recast, several devices with a plan (listed and swept batches,
price), --by-module, a CPU measurement, and `diff`. Exits non-zero on the first invalid report.
"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema


def run(binary, args, out):
    result = subprocess.run([binary, *args, "-q", "--json", out], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"modelcost {' '.join(args)} failed ({result.returncode}): {result.stderr}")
    with open(out) as f:
        return json.load(f)


def small_model(folder):
    """A MatMul and a Relu: quick to time on the CPU backend. None without the onnx package."""
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError:
        return None
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 128])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 64])
    w = helper.make_tensor("w", TensorProto.FLOAT, [128, 64], [0.5] * (128 * 64))
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"], name="mm"),
                               helper.make_node("Relu", ["h"], ["y"], name="relu")], "small", [x], [y], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    path = os.path.join(folder, "small.onnx")
    onnx.save(model, path)
    return path


def main():
    binary, source = sys.argv[1], sys.argv[2]
    shared = sys.argv[3] if len(sys.argv) > 3 else os.path.join(source, "..", "shared", "models")
    with open(os.path.join(source, "docs", "report.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    sample = os.path.join(source, "samples", "resnet50.onnx")
    kinds = {
        "plain": [sample],
        "fp16 on one device": [sample, "--gpu", "h100", "--dtype", "fp16"],
        "devices and plan": [sample, "--gpu", "a100,h100,l4", "--batch", "1,8", "--target-qps", "5000",
                             "--latency-slo-ms", "20", "--price-per-hour", "2,4,0.8"],
        "swept plan": [sample, "--gpu", "a100", "--target-qps", "2000", "--latency-slo-ms", "20"],
        "by module": [sample, "--gpu", "a100", "--by-module", "2"],
        "diff": ["diff", sample, sample, "--gpu", "a100"],
    }
    if os.path.isdir(shared):
        kinds["diff of two exports"] = ["diff", os.path.join(shared, "resnet50_op13.onnx"),
                                        os.path.join(shared, "resnet50_op18.onnx")]
        kinds["transformer by module"] = [os.path.join(shared, "bert_base_op17.onnx"), "--by-module", "3"]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        measured = small_model(tmp) or sample
        kinds["cpu measurement"] = [measured, "--peak-tflops", "1", "--bandwidth-gbps", "100", "--measure", "--cpu"]
        for name, args in kinds.items():
            report = run(binary, args, os.path.join(tmp, "r.json"))
            errors = sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path))
            for e in errors[:5]:
                print(f"{name}: {'/'.join(map(str, e.absolute_path))}: {e.message[:300]}")
            failures += bool(errors)
            print(f"{name}: {'INVALID' if errors else 'valid'}")
        # The schema can fail: a report with a wrong type is refused.
        broken = run(binary, [sample], os.path.join(tmp, "r.json"))
        broken["totals"]["bytes_read"] = "many"
        if validator.is_valid(broken):
            print("a report with a string for totals.bytes_read passed the schema")
            failures += 1
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
