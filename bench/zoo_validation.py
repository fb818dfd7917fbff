#!/usr/bin/env python3
"""Predicted against measured latency on the validation zoo (tests/models/zoo): for every measured
point of tests/models/zoo/measured-*.csv (fp16, the graph as written replayed whole in one CUDA
graph by `modelcost --measure`; the files' `measured_ms` column), the as-written prediction of the
shipped entry and of an entry that knows the GPU only by its datasheet (its figures derived from the
other calibrated GPU), as ratios per point, per family and for the held-out families apart. Rows
that also carry `measured_deployed_ms` are set against the deployed prediction too.
Usage: bench/zoo_validation.py [MODELCOST] [--markdown]"""
import csv, json, math, os, re, shutil, subprocess, sys, tempfile
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZOO = os.path.join(ROOT, "tests/models/zoo")
BINARY = next((a for a in sys.argv[1:] if not a.startswith("--")), os.path.join(ROOT, "build/modelcost"))
MARKDOWN = "--markdown" in sys.argv
TEXT = {"bert_base", "distilbert", "roberta_base", "albert_base", "electra_small", "mpnet_base"}


def families():
    """name -> (family, held_out), from the zoo's export script."""
    text = open(os.path.join(ROOT, "scripts/gpu/zoo.py")).read()
    pattern = r'^\s*\("([a-z0-9_]+)", "(?:tv|timm|hf|tvseg)", "[^"]+", "([a-z_]+)", (True|False)\)'
    return {m.group(1): (m.group(2), m.group(3) == "True") for m in re.finditer(pattern, text, re.M)}


def datasheet_only_hwdb(entry):
    """A folder whose copy of `entry` has no measured figures: it is derived when the database loads."""
    folder = tempfile.mkdtemp()
    text = open(os.path.join(ROOT, "hwdb", entry + ".toml")).read()
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("["):
            skipping = line.startswith("[achievable")
        if not skipping and not line.startswith('"achievable.'):
            kept.append(line)
    text = "".join(kept)
    open(os.path.join(folder, entry + ".toml"), "w").write(text)
    return folder


def predict(model, batch, gpu, hwdb=None, key="predicted_latency_ms"):
    cmd = [BINARY, os.path.join(ZOO, model + ".onnx"), "--gpu", gpu, "--dtype", "fp16", "--dim", f"batch={batch}",
           "--json", "-", "-q"] + (["--dim", "seq=128"] if model in TEXT else []) + (["--hwdb", hwdb] if hwdb else [])
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, MODELCOST_HWDB=""))
    if out.returncode != 0:
        return None
    return json.loads(out.stdout)["totals"][key]


def summary(label, errors):
    n = len(errors)
    if not n:
        return f"| {label} | 0 | | | | | |"
    within = lambda t: sum(abs(e) <= t for e in errors)
    worst = max(errors, key=abs)
    gmean = math.exp(sum(math.log(1 + e) for e in errors) / n) - 1
    share = lambda t: f"{within(t)} ({100 * within(t) / n:.0f}%)"
    return f"| {label} | {n} | {share(0.10)} | {share(0.15)} | {share(0.25)} | {100 * gmean:+.0f}% | {100 * worst:+.0f}% |"


def main():
    fam = families()
    header = "| points | n | within 10% | within 15% | within 25% | geo-mean error | worst |\n|---|---|---|---|---|---|---|"
    derived_from = {"h100": "h200", "h200": "h100-sxm"}
    for gpu, source in (("h100", "h100-sxm"), ("h200", "h200")):
        path = os.path.join(ZOO, f"measured-{gpu}.csv")
        if not os.path.exists(path):
            continue
        rows = [r for r in csv.DictReader(open(path)) if r["measured_ms"] not in ("", "None")]
        hwdb = datasheet_only_hwdb(source)
        by_kind = defaultdict(list)
        lines = []
        for r in rows:
            model, batch, measured = r["model"], int(r["batch"]), float(r["measured_ms"])
            shipped = predict(model, batch, gpu)
            derived = predict(model, batch, gpu, hwdb)
            family, held_out = fam.get(model, ("?", False))
            e = shipped / measured - 1 if shipped else float("nan")
            t = derived / measured - 1 if derived else float("nan")
            by_kind["all"].append(e)
            by_kind["held-out families" if held_out else "tuned families"].append(e)
            by_kind["family " + family].append(e)
            by_kind["transfer"].append(t)
            if r.get("measured_deployed_ms") not in (None, "", "None"):
                deployed = predict(model, batch, gpu, key="predicted_latency_deployed_ms")
                by_kind["deployed view"].append(deployed / float(r["measured_deployed_ms"]) - 1 if deployed else float("nan"))
            lines.append(f"| {model} | {family}{' (held out)' if held_out else ''} | {batch} | {measured:.3f} | {shipped:.3f} | {100 * e:+.0f}% | {derived:.3f} | {100 * t:+.0f}% |")
        shutil.rmtree(hwdb)
        print(f"\n### {gpu.upper()}: shipped `{source}` entry; transfer: the entry derived from {derived_from[gpu]} alone\n")
        print(header)
        kinds = ["all", "tuned families", "held-out families", "transfer", "deployed view"]
        for kind in [k for k in kinds if by_kind[k]] + sorted(k for k in by_kind if k.startswith("family ")):
            print(summary(kind, [e for e in by_kind[kind] if e == e]))
        if MARKDOWN:
            print("\n| model | family | batch | measured ms | predicted ms | error | transfer ms | error |\n|---|---|---|---|---|---|---|---|")
            print("\n".join(lines))


if __name__ == "__main__":
    main()
