"""Every command-line option is a keyword of analyze(); errors name the keyword, not the flag."""

import pytest

import modelcost


def test_plan_keywords(sample):
    r = modelcost.analyze(sample, gpu=["a100", "h100"], target_qps=2000, latency_slo_ms=20, price_per_hour=[2.0, 4.5])
    assert r.plan["target_qps"] == 2000 and r.plan["latency_slo_ms"] == 20
    assert r.plan["devices_needed"] >= 1
    assert [row["device"] for row in r.comparison] == ["a100-sxm4-80gb", "h100-sxm"]
    assert r.comparison[1]["cost_per_million_usd"] > 0
    plan = r.to_pandas("plan")
    assert set(plan["device"]) == {"a100-sxm4-80gb", "h100-sxm"}
    assert plan["cost_per_million_usd"].dtype == "float64"


def test_view_and_ceilings(sample):
    deployed = modelcost.analyze(sample, gpu="a100")
    written = modelcost.analyze(sample, gpu="a100", view="as-written", ceilings="datasheet")
    assert deployed.view == "deployed" and written.view == "as-written"
    assert written.roofline["ceilings"] == "datasheet"
    assert deployed.latency_ms == deployed.totals["predicted_latency_deployed_ms"]
    assert written.latency_ms == written.totals["predicted_latency_as_written_ms"]
    # Fusing never adds work: the deployed view is faster than the as-written one on the same ceilings.
    assert deployed.latency_ms < modelcost.analyze(sample, gpu="a100", view="as-written").latency_ms
    assert modelcost.analyze(sample, gpu="a100", view="as_written").view == "as-written"


def test_custom_device_and_dtype_without_gpu(sample):
    custom = modelcost.analyze(sample, peak_tflops=100, bandwidth_gbps=1000)
    assert custom.roofline["bandwidth_gbps_used"] == 1000
    half = modelcost.analyze(sample, dtype="float16")
    assert half.roofline is None
    assert half.totals["bytes_read"] < modelcost.analyze(sample).totals["bytes_read"]


def test_by_module_strict_and_ops(sample, tmp_path):
    r = modelcost.analyze(sample, by_module=1, strict=True)
    assert {row["module"] for row in r.by_module} >= {"/layer1", "/layer4"}
    rules = tmp_path / "fancy.toml"
    rules.write_text('[[op]]\ndomain = "com.example"\ntype = "FancyNorm"\nshape = "same_as_input"\nflops_per_output = 8\n')
    assert modelcost.analyze(sample, ops=str(rules)).totals["macs"] == 4089184256


def test_hwdb_is_one_path_not_letters(sample, repo):
    import os
    r = modelcost.analyze(sample, gpu="a100", hwdb=os.path.join(repo, "hwdb", "a100-sxm4-80gb.toml"))
    assert r.roofline["id"] == "a100-sxm4-80gb"
    r = modelcost.analyze(sample, gpu="a100", hwdb=[os.path.join(repo, "hwdb")])
    assert r.roofline["id"] == "a100-sxm4-80gb"


def test_errors_name_python_arguments(sample):
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.analyze(sample, batch=[1, 8])
    assert raised.value.exit_code == 2
    assert str(raised.value).endswith("batch needs a device: gpu NAME (see modelcost.list_gpus()) or peak_tflops with bandwidth_gbps")
    with pytest.raises(modelcost.ModelcostError) as raised:
        modelcost.analyze(sample, gpu="a100", target_qps=-1)
    assert "target_qps" in str(raised.value) and "--" not in str(raised.value)
    with pytest.raises(TypeError, match="unexpected keyword"):
        modelcost.analyze(sample, no_such_option=1)
