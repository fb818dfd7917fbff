"""Typed results: every table as a DataFrame with one dtype per column; the HTML report."""

import pytest

import modelcost


def test_node_columns_have_one_dtype(sample):
    pytest.importorskip("pandas")
    nodes = modelcost.analyze(sample, gpu="a100").to_pandas()
    assert nodes["macs"].dtype == "int64"
    assert nodes["predicted_us"].dtype == "float64"
    assert nodes["arithmetic_intensity"].dtype == "float64"
    assert nodes["estimate"].dtype == "bool"
    assert nodes["macs"].sum() == 4089184256


def test_every_table(sample):
    pytest.importorskip("pandas")
    r = modelcost.analyze(sample, gpu=["a100", "h100"], batch=[1, 8], by_module=1)
    assert len(r.to_pandas("groups")) == len(r.groups) == 56
    assert list(r.to_pandas("plan")["batch"]) == [1, 8, 1, 8]
    assert r.to_pandas("comparison")["latency_ms"].dtype == "float64"
    assert r.to_pandas("by_module")["macs"].sum() == 4089184256
    assert r.to_pandas("by_op_type")["count"].dtype == "int64"
    with pytest.raises(ValueError, match="table must be one of"):
        r.to_pandas("nope")
    with pytest.raises(ValueError, match="no groups table"):
        modelcost.analyze(sample).to_pandas("groups")


def test_repr_html_is_the_html_report(sample):
    r = modelcost.analyze(sample, gpu="a100")
    page = r.to_html()
    assert page.lstrip().lower().startswith("<!doctype html")
    assert "resnet50" in page
    shown = r._repr_html_()
    assert shown.startswith("<iframe srcdoc=") and "&lt;" in shown


def test_repr_html_of_bytes_keeps_its_file(sample):
    with open(sample, "rb") as f:
        r = modelcost.analyze(f.read())
    assert "<svg" in r.to_html() or "<table" in r.to_html()
