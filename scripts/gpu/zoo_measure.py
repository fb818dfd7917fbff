#!/usr/bin/env python3
"""Measures the zoo on this machine's GPU with `modelcost --measure` (fp16) at each batch, one model
after another, and appends one CSV row per model and batch: the whole-model latency of the graph as
written (one CUDA graph replay, median) with its spread and the as-written prediction of the entry
named; the deployed graph's measured latency and the deployed prediction; and the wall time.
Usage: python3 scripts/gpu/zoo_measure.py MODELCOST ZOO_DIR OUT.csv --gpu h100 [--batches 1,32] [--part K/N]
[--skip-done DONE.csv | --only NET,NET] [--deadline S] [--lock FILE: hold it while measuring, as zoo_torch.py does] [--keep-json DIR]"""
import argparse, csv, json, os, shutil, subprocess, sys, tempfile, time

p = argparse.ArgumentParser()
p.add_argument("binary")
p.add_argument("zoo")
p.add_argument("out")
p.add_argument("--gpu", default="auto")
p.add_argument("--batches", default="1,32")
p.add_argument("--part", default="1/1")
p.add_argument("--skip-done", default="")
p.add_argument("--timeout", type=int, default=90)
p.add_argument("--deadline", type=float, default=0, help="start no run after this many seconds")
p.add_argument("--lock", default="")
p.add_argument("--keep-json", default="", help="keep each report as DIR/MODEL-bBATCH.json (per-kernel figures)")
p.add_argument("--only", default="", help="comma-separated networks: these alone, measured again even if done")
a = p.parse_args()
k, n = (int(x) for x in a.part.split("/"))
models = sorted(f for f in os.listdir(a.zoo) if f.endswith(".onnx"))[k - 1::n]
if a.only:
    models = [m for m in models if m[:-5] in a.only.split(",")]
elif a.skip_done and os.path.exists(a.skip_done):  # models an earlier call measured already
    done = {row["model"] for row in csv.DictReader(open(a.skip_done))}
    models = [m for m in models if m[:-5] not in done]
new = not os.path.exists(a.out)
with open(a.out, "a", newline="") as f:
    w = csv.writer(f)
    if new:
        w.writerow(["model", "batch", "gpu", "rc", "measured_ms", "rel_spread", "predicted_ms", "nodes_measured",
                    "nodes_not_measured", "wall_s", "error", "measured_deployed_ms", "predicted_deployed_ms"])
    start = time.time()
    for model in models:
        for batch in a.batches.split(","):
            if a.deadline and time.time() - start > a.deadline:
                print(f"deadline: stopped before {model} b{batch}", flush=True)
                sys.exit(0)
            with tempfile.NamedTemporaryFile(suffix=".json") as js:
                text = model[:-5] in {"bert_base", "distilbert", "roberta_base", "albert_base", "electra_small", "mpnet_base"}
                cmd = [a.binary, os.path.join(a.zoo, model), "--gpu", a.gpu, "--measure", "--dtype", "fp16", "--batch", batch,
                       "-q", "--json", js.name] + (["--dim", "seq=128"] if text else [])
                if a.lock:  # no other timing on the GPU meanwhile
                    cmd = ["flock", a.lock] + cmd
                t0 = time.time()
                try:
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
                    rc, err = r.returncode, r.stderr.strip().splitlines()[-1:] if r.stderr.strip() else []
                except subprocess.TimeoutExpired:
                    rc, err = "timeout", []
                wall = time.time() - t0
                row = [model[:-5], batch, a.gpu, rc, "", "", "", "", "", f"{wall:.1f}", " ".join(err)[:200], "", ""]
                try:
                    report = json.load(open(js.name))
                    row[11:13] = [report["totals"].get("measured_latency_deployed_ms"),
                                  report["totals"].get("predicted_latency_deployed_ms")]
                    m = report["measurement"]
                    row[4:9] = [m.get("model_latency_ms"), m.get("model_rel_stddev"), m.get("predicted_latency_ms"),
                                m.get("nodes_measured"), m.get("nodes_not_measured")]
                except Exception:  # noqa: BLE001 - the row records the failure
                    pass
                if a.keep_json and os.path.getsize(js.name):
                    os.makedirs(a.keep_json, exist_ok=True)
                    shutil.copy(js.name, os.path.join(a.keep_json, f"{model[:-5]}-b{batch}.json"))
            w.writerow(row)
            f.flush()
            print(",".join(str(x) for x in row), flush=True)
