#!/usr/bin/env python3
"""The zoo's measured kernels as one table: joins the per-kernel medians of kept `--measure`
reports (scripts/gpu/zoo_call.sh with KEEP_JSON=1: one MODEL-bBATCH.json per point) with this
build's plan of the same point (each kernel's class, reduction length K, FLOPs and bytes), and
writes tests/models/zoo/kernels-GPU.csv (one row per measured kernel) and
tests/models/zoo/graphs-GPU.csv (one row per point: the whole graph's time, the sum of its kernels'
medians and its kernel count). bench/fit_kernel_classes.py fits the per-class curves from them.
Usage: bench/zoo_kernels.py --gpu h100 REPORTS_DIR [MODELCOST]"""
import argparse, csv, glob, json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_validation import ROOT, TEXT, ZOO, families  # noqa: E402


def plan(binary, model, batch, gpu):
    cmd = [binary, os.path.join(ZOO, model + ".onnx"), "--gpu", gpu, "--dtype", "fp16", "--dim", f"batch={batch}",
           "--json", "-", "-q"] + (["--dim", "seq=128"] if model in TEXT else [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gpu", default="h100")
    p.add_argument("reports")
    p.add_argument("binary", nargs="?", default=os.path.join(ROOT, "build/modelcost"))
    a = p.parse_args()
    fam = families()
    kernels, graphs = [], []
    for path in sorted(glob.glob(os.path.join(a.reports, "*-b*.json"))):
        model, batch = os.path.basename(path)[:-5].rsplit("-b", 1)
        measured = json.load(open(path)).get("deployed_measurement") or {}
        mine = plan(a.binary, model, batch, a.gpu)
        if not measured.get("measured") or not mine:
            continue
        groups = {g["id"]: g for g in mine["groups"]}
        if len(groups) != sum(measured.get(k, 0) for k in ("fused_groups", "fallback_groups", "empty_groups")):
            print(f"{model} b{batch}: the measured plan differs from this build's; skipped", file=sys.stderr)
            continue
        held = fam.get(model, ("?", False))[1]
        graphs.append(dict(model=model, batch=batch, held_out=int(held), whole_us=measured["median_us"],
                           sum_of_kernels_us=measured["sum_of_group_medians_us"], kernels=measured["kernels_per_run"]))
        for m in measured["groups"]:
            g = groups.get(m["id"])
            if not g or not m.get("measured_us") or g.get("predicted_us", 0) <= 0:
                continue
            kernels.append(dict(model=model, batch=batch, held_out=int(held), kernel_class=g["kernel_class"],
                                k=g.get("kernel_k", 0), flops=g["flops"], bytes=g["bytes"],
                                launches=len(m.get("kernels", [])) or 1, measured_us=m["measured_us"]))
    for name, rows in (("kernels", kernels), ("graphs", graphs)):
        out = os.path.join(ZOO, f"{name}-{a.gpu}.csv")
        with open(out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
        print(f"{out}: {len(rows)} rows")


if __name__ == "__main__":
    main()
