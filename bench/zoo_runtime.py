#!/usr/bin/env python3
"""The deployed view of the validation zoo against PyTorch, from one GPU's figures:
tests/models/zoo/deployed-GPU.csv (`modelcost --measure`, fp16: the deployed graph's measured
latency and its prediction, recorded by the same binary) and torch-GPU.csv (PyTorch eager and
torch.compile with inductor and freezing, each captured in one CUDA graph; scripts/gpu/zoo_torch.py),
written by zoo_call.sh's compare calls with one lock on the GPU (each file keeps a network's latest
rows, which may come from different calls: docs/validation.md says which). Prints ratios, never asserts:
  * deployed prediction / deployed measurement, per family and for the held-out families apart;
  * the deployed runtime's latency / torch.compile's, and / eager's;
  * with --transfer, the deployed prediction of an entry that knows the GPU only by its datasheet
    (its figures derived at load time from the other calibrated GPU), run here for every point;
  * with --repredict, the shipped entry's prediction by this build rather than the measuring one's.
Usage: bench/zoo_runtime.py [--gpu h100|h200] [--markdown] [--transfer] [--repredict] [MODELCOST]"""
import argparse, csv, math, os, shutil, sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_validation  # noqa: E402 - its prediction helpers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZOO = os.path.join(ROOT, "tests/models/zoo")


def number(text):
    try:
        value = float(text)
        return value if value > 0 and math.isfinite(value) else None
    except (TypeError, ValueError):
        return None


def last_rows(path, value_key):
    """(model, batch) -> the last row of the file that has a figure under value_key."""
    rows = {}
    if not os.path.exists(path):
        return rows
    for r in csv.DictReader(open(path)):
        if number(r.get(value_key)):
            rows[(r["model"], int(r["batch"]))] = r
    return rows


def ratio_summary(label, ratios):
    n = len(ratios)
    if not n:
        return f"| {label} | 0 | | | | |"
    gmean = math.exp(sum(math.log(r) for r in ratios) / n)
    return (f"| {label} | {n} | {sum(r <= 1.0 for r in ratios)} ({100 * sum(r <= 1.0 for r in ratios) / n:.0f}%) | "
            f"{sum(r <= 1.2 for r in ratios)} ({100 * sum(r <= 1.2 for r in ratios) / n:.0f}%) | {gmean:.2f}x | {max(ratios):.2f}x |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gpu", default="h100")
    p.add_argument("--markdown", action="store_true", help="also print every point")
    p.add_argument("--transfer", action="store_true", help="also predict from the datasheet-only entry")
    p.add_argument("--repredict", action="store_true",
                   help="predict with BINARY (this build) instead of the prediction the measuring build wrote")
    p.add_argument("binary", nargs="?", default=os.path.join(ROOT, "build/modelcost"))
    a = p.parse_args()
    zoo_validation.BINARY = a.binary
    derived = zoo_validation.datasheet_only_hwdb({"h100": "h100-sxm"}.get(a.gpu, a.gpu)) if a.transfer else None
    try:
        report(a, derived)
    finally:
        if derived:
            shutil.rmtree(derived)


def report(a, derived):
    fam = zoo_validation.families()
    ours = last_rows(os.path.join(ZOO, f"deployed-{a.gpu}.csv"), "measured_deployed_ms")
    torch = last_rows(os.path.join(ZOO, f"torch-{a.gpu}.csv"), "compile_ms")
    errors, compile_ratios, eager_ratios, lines = defaultdict(list), defaultdict(list), [], []
    for (model, batch), r in sorted(ours.items()):
        family, held_out = fam.get(model, ("?", False))
        measured, predicted = number(r["measured_deployed_ms"]), number(r["predicted_deployed_ms"])
        if a.repredict and measured:
            predicted = zoo_validation.predict(model, batch, a.gpu, key="predicted_latency_deployed_ms")
        e = predicted / measured - 1 if predicted else None
        if e is not None:
            for key in ("all", f"batch {batch}", "held-out families" if held_out else "tuned families", "family " + family):
                errors[key].append(e)
        if derived:
            moved = zoo_validation.predict(model, batch, a.gpu, derived, key="predicted_latency_deployed_ms")
            if moved:
                errors["transfer (datasheet-only entry)"].append(moved / measured - 1)
        t = torch.get((model, batch))
        compiled, eager = (number(t["compile_ms"]), number(t["eager_ms"])) if t else (None, None)
        if compiled:
            for key in ("all", f"batch {batch}", "held-out families" if held_out else "tuned families"):
                compile_ratios[key].append(measured / compiled)
        if eager:
            eager_ratios.append(measured / eager)
        fmt = lambda v: f"{v:.3f}" if v else ""
        lines.append(f"| {model} | {family}{' (held out)' if held_out else ''} | {batch} | {measured:.3f} | {fmt(predicted)} | "
                     f"{'' if e is None else f'{100 * e:+.0f}%'} | {fmt(compiled)} | {f'{measured / compiled:.2f}' if compiled else ''} | "
                     f"{fmt(eager)} |")
    print(f"### Deployed prediction against the deployed measurement ({a.gpu.upper()}, fp16)\n")
    print("| points | n | within 10% | within 15% | within 25% | geo-mean error | worst |\n|---|---|---|---|---|---|---|")
    order = ["all", "batch 1", "batch 32", "tuned families", "held-out families", "transfer (datasheet-only entry)"]
    for key in [k for k in order if errors[k]] + sorted(k for k in errors if k.startswith("family ")):
        print(zoo_validation.summary(key, errors[key]))
    if not compile_ratios["all"]:
        print(f"\nNo PyTorch figures for the {a.gpu.upper()} (torch-{a.gpu}.csv).")
    else:
        print(f"\n### Deployed runtime against torch.compile ({a.gpu.upper()}, fp16)\n")
        print("| points | n | at most 1.0x | at most 1.2x | geo-mean ratio | worst |\n|---|---|---|---|---|---|")
        for key in [k for k in order if compile_ratios[k]]:
            print(ratio_summary(key, compile_ratios[key]))
        print(ratio_summary("against eager PyTorch", eager_ratios))
    if a.markdown:
        print("\n| model | family | batch | deployed ms | predicted ms | error | torch.compile ms | ours / compile | eager ms |")
        print("|---|---|---|---|---|---|---|---|---|")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
