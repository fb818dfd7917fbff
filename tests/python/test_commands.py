"""diff(), llm(), list_gpus(), calibrate() and measure=True: the command line's subcommands."""

import os
import shutil

import pytest

import modelcost


def test_diff_of_a_model_with_itself(sample):
    d = modelcost.diff(sample, sample, gpu=["a100", "h100"], batch=[1, 8])
    assert d.matching["by_name"] == 169 and d.matching["removed"] == 0
    assert d.totals["flops"]["delta"] == 0
    assert d.whole_model["plan_latency_ms@h100-sxm@8"]["delta"] == 0
    assert "predicted_latency_deployed_ms@h100-sxm" in d.whole_model
    frame = d.to_pandas("whole_model")
    assert frame["delta"].dtype == "float64" and (frame["delta"] == 0).all()
    assert {"macs_a", "macs_b", "macs_delta"} <= set(d.to_pandas().columns)


def test_llm_plan(repo, tmp_path):
    model = os.path.join(repo, "tests", "models", "llm", "llama_gqa_kv.onnx")
    plan = modelcost.llm(model, gpu="h100", dtype="FP16", prompt=64, generate=32, batch=[1, 8], context=[128, 2048],
                         svg=tmp_path / "plan.svg")
    assert plan.decoder["layers"] == 2
    assert (tmp_path / "plan.svg").read_text().startswith("<svg")
    frame = plan.to_pandas()
    assert len(frame) == 4  # batch x context
    assert list(frame["batch"]) == [1, 1, 8, 8]
    assert frame["tpot_ms"].dtype == "float64" and frame["fits"].dtype == "bool"


def test_llm_iterations_and_chunked_prefill(repo):
    config = os.path.join(repo, "tests", "models", "llm", "configs", "qwen2-0.5b.json")
    plan = modelcost.llm(config, gpu="h100", dtype="fp16", prompt=1024, prefill_chunk=256,
                         iteration=["1x256@512+16@1024", "8@2048"])
    assert [i["mix"] for i in plan.iterations] == ["1x256@512+16@1024", "8@2048"]
    assert plan.iterations[0]["step"]["kernels"] == 12 * 24 + 4
    assert plan.batches[0]["prefill"]["kernels"] == 4 * (9 * 24 + 4)
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.llm(config, gpu="h100", iteration="1x@0")
    assert raised.value.exit_code == 2 and "iteration" in str(raised.value)


def test_llm_errors_name_python_arguments(repo):
    model = os.path.join(repo, "tests", "models", "llm", "llama_gqa_kv.onnx")
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.llm(model, gpu="h100", prompt=512, context=100)
    assert raised.value.exit_code == 2
    assert "context 100 is shorter than prompt 512" in str(raised.value)
    assert "--" not in str(raised.value)


def test_list_gpus():
    gpus = modelcost.list_gpus()
    a100 = next(d for d in gpus if d["id"] == "a100-sxm4-80gb")
    assert "a100" in a100["aliases"] and a100["memory_gb"] == 80
    assert gpus.to_pandas()["memory_gb"].dtype == "float64"


def test_list_gpus_takes_one_hwdb_path_as_a_string(repo, tmp_path):
    entry = tmp_path / "mine.toml"
    shutil.copy(os.path.join(repo, "hwdb", "l4.toml"), entry)
    text = entry.read_text().replace('id = "l4"', 'id = "my-l4"', 1)
    entry.write_text(text)
    assert any(d["id"] == "my-l4" for d in modelcost.list_gpus(hwdb=str(entry)))
    assert any(d["id"] == "my-l4" for d in modelcost.list_gpus(hwdb=tmp_path))


def test_calibrate_refits_a_grid_without_a_gpu(repo):
    c = modelcost.calibrate(from_grid=os.path.join(repo, "docs", "calibration", "h100-sxm-grid.csv"))
    assert "gemm" in c.text and "[achievable.kernels]" in c.text
    assert c.toml is None


def _has_gpu():
    return shutil.which("nvidia-smi") is not None and os.system("nvidia-smi >/dev/null 2>&1") == 0


def test_calibrate_and_measure_without_a_gpu_raise_clearly(sample):
    if _has_gpu():
        pytest.skip("a GPU is here")
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.calibrate()
    assert raised.value.exit_code == 6
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.analyze(sample, measure=True)
    assert raised.value.exit_code == 6
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.analyze(sample, gpu="auto")
    assert raised.value.exit_code == 6


def test_measure_on_the_cpu_reference_backend():
    torch = pytest.importorskip("torch")
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())
    r = modelcost.analyze(net, torch.randn(1, 3, 16, 16), measure=True, cpu=True)
    assert all(n.get("measured_us") is not None for n in r.nodes if n["op_type"] == "Conv")


def test_serve_simulation_and_search(repo, tmp_path):
    config = os.path.join(repo, "tests", "models", "llm", "configs", "llama-3-8b.json")
    run = modelcost.serve(config, gpu="h100", rate=2, requests=20, prompt_len=(128, 256), output_len=32, dtype="fp16",
                          pp=2, svg=tmp_path / "rates.svg")
    assert run.summary["pipeline_stages"] == 2 and run.summary["ttft_ms"]["p99"] > 0
    assert len(run.summary["stage_busy"]) == 2 and all(0 < busy <= 1 for busy in run.summary["stage_busy"])
    assert (tmp_path / "rates.svg").read_text().startswith("<svg")
    requests = run.to_pandas()
    assert len(requests) == 20
    assert requests["prompt_len"].between(128, 256).all() and (requests["output_len"] == 32).all()
    found = modelcost.serve(config, gpu=["h100", "a100"], search=True, ttft_slo_ms=2000, tpot_slo_ms=100, requests=40,
                            price_per_hour=[2.5, 1.5], dtype="fp16", rate=30)
    table = found.to_pandas()
    assert set(table["device"]) == {"h100-sxm", "a100-sxm4-80gb"} and set(table["pipeline_stages"]) == {1, 2, 3, 4}
    assert table["requests_per_dollar"].is_monotonic_decreasing
    serving = table[table["replicas"] > 0]  # rate=30 with search: the replicas that serve it, and their cost
    assert not serving.empty and (serving["replicas"] * serving["max_rate"] >= 30).all()


def test_serve_errors_name_python_arguments(repo):
    config = os.path.join(repo, "tests", "models", "llm", "configs", "llama-3-8b.json")
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.serve(config, gpu="h100", rate=1, pp=64)
    assert raised.value.exit_code == 2
    assert "pp must be between 1 and" in str(raised.value) and "--" not in str(raised.value)
