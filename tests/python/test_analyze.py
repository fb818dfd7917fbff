"""modelcost.analyze(): the C++ engine's report as Python values, errors as ModelcostError."""

import json
import os
import subprocess

import pytest

import modelcost

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(REPO, "samples", "resnet50.onnx")
SHARED = os.path.join(REPO, "..", "shared", "models")


def shared_model(name):
    path = os.path.join(SHARED, name)
    if not os.path.exists(path):
        pytest.skip("no ../shared/models/" + name)
    return path


def test_sample_totals():
    r = modelcost.analyze(SAMPLE)
    assert r.totals["macs"] == 4089184256
    assert r.totals["params"] == 25507944  # the sample's Identity-shared weights count once
    assert r.totals["nodes"] == len(r.nodes)
    assert r.roofline is None and r.plan is None


def test_nodes_carry_the_report_columns_and_sum_to_the_totals():
    r = modelcost.analyze(SAMPLE)
    assert list(r.nodes[0]) == ["name", "op_type", "domain", "macs", "flops", "params", "bytes_read", "bytes_written",
                                "arithmetic_intensity", "outputs", "estimate", "known"]
    stem = next(n for n in r.nodes if n["op_type"] == "Conv")
    assert stem["outputs"][0]["shape"] == [1, 64, 112, 112]
    assert stem["macs"] == 118013952  # 64 x 3 x 7 x 7 x 112 x 112
    for column in ("macs", "flops", "bytes_read", "bytes_written"):
        assert sum(n[column] for n in r.nodes) == r.totals[column], column


def test_dims_scale_the_model():
    path = shared_model("resnet50_op13.onnx")
    one = modelcost.analyze(path, dims={"batch": 1})
    eight = modelcost.analyze(path, dims={"batch": 8})
    assert eight.totals["macs"] == 8 * one.totals["macs"]
    assert not any("batch" in w for w in one.warnings)
    unset = modelcost.analyze(path)
    assert any("batch" in w for w in unset.warnings)


def test_inputs_set_a_whole_shape():
    path = shared_model("resnet50_op13.onnx")
    r = modelcost.analyze(path, inputs={"input": (2, 3, 112, 112)})
    assert r.model["inputs"][0]["shape"] == [2, 3, 112, 112]
    assert modelcost.analyze(path, inputs={"input": "2x3x112x112"}).totals == r.totals


def test_gpu_adds_roofline_and_plan():
    r = modelcost.analyze(SAMPLE, gpu="a100", dtype="fp16")
    assert r.roofline is not None
    assert r.totals["predicted_latency_ms"] > 0
    assert {"bound", "predicted_us", "share"} <= set(r.nodes[0])
    assert r.plan is not None and r.plan["dtype"] == "fp16"
    assert [row["batch"] for row in r.plan["rows"]] == [1]


def test_batch_list_plans_each_batch():
    path = shared_model("resnet50_op13.onnx")
    r = modelcost.analyze(path, gpu="h100", dtype="fp16", batch=[1, 8])
    assert [row["batch"] for row in r.plan["rows"]] == [1, 8]
    assert r.model["inputs"][0]["shape"][0] == 1  # the nodes are at the first batch


def test_same_figures_as_the_command_line(tmp_path):
    binary = os.path.join(REPO, "build", "modelcost")
    if not os.path.exists(binary):
        pytest.skip("no build/modelcost")
    out = tmp_path / "r.json"
    subprocess.run([binary, SAMPLE, "--gpu", "a100", "--dtype", "fp16", "--batch", "1", "-q", "--json", str(out)],
                   check=True)
    cli = json.loads(out.read_text())
    r = modelcost.analyze(SAMPLE, gpu="a100", dtype="fp16", batch=1)
    assert {k: v for k, v in r.totals.items() if k != "predicted_latency_as_written_ms"} == cli["totals"]
    assert r.nodes == cli["nodes"]
    # The device file's path differs: the package reads its own copy of hwdb/.
    for hardware in (r.roofline, cli["hardware"]):
        hardware.pop("origin", None)
    assert r.roofline == cli["hardware"]


def test_missing_file_raises_with_message_and_exit_code(tmp_path):
    missing = str(tmp_path / "missing.onnx")
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.analyze(missing)
    assert raised.value.exit_code == 3
    assert str(raised.value).startswith(missing + ": ")
    assert "\n" not in str(raised.value)


def test_invalid_model_raises(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07this is not a model")
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.analyze(str(bad))
    assert raised.value.exit_code == 4


def test_bad_options_are_usage_errors():
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.analyze(SAMPLE, gpu="no-such-gpu")
    assert raised.value.exit_code == 2
    assert "unknown device 'no-such-gpu'" in str(raised.value)
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.analyze(SAMPLE, dims={"batch": -1})
    assert raised.value.exit_code == 2
    with pytest.raises(TypeError):
        modelcost.analyze(SAMPLE, dims={"batch": "one"})


def test_to_pandas():
    pandas = pytest.importorskip("pandas")
    frame = modelcost.analyze(SAMPLE).to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert len(frame) == len(modelcost.analyze(SAMPLE).nodes)
    assert frame["macs"].sum() == 4089184256
