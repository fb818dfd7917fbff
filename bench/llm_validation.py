# The LLM set's deployed steps (prefill, decode, serving iterations) measured on a GPU beside the
# predictions of the current build, and the deployed prefill beside PyTorch's (SDPA, a CUDA graph where
# the model can be captured, eagerly where not: transformers' mixtures of experts)
# from the same device call. Prints markdown tables and ratio counts.
#   python3 bench/llm_validation.py [--modelcost build/modelcost] [--gpu h100] [--measured bench/llm_set/h100-measured.csv]
#   python3 bench/llm_validation.py --collect RESULTS_DIR --measured OUT.csv   (from scripts/gpu/llm_call.sh's results.tar)
import argparse, csv, glob, json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The LLM set's configs kept in bench/llm_set (TinyLlama, and mixtures of experts at a reduced
# depth that PyTorch also holds); the others are tests/models/llm/configs'.
CONFIGS = {name: f"bench/llm_set/{name}.json" for name in ("tinyllama-1.1b", "mixtral-8x7b-4l", "qwen3-30b-a3b-8l")}
FIELDS = ["model", "phase", "mix", "batch", "tokens", "measured_ms", "p10_ms", "p90_ms", "kernels", "torch_ms", "torch_form"]


def config_path(model):
    return os.path.join(ROOT, CONFIGS.get(model, f"tests/models/llm/configs/{model}.json"))


def collect(results, out):
    torch, eager = {}, set()
    if os.path.exists(os.path.join(results, "torch-prefill.json")):
        reference = json.load(open(os.path.join(results, "torch-prefill.json")))
        torch, eager = reference["prefill_ms"], set(reference.get("eager", []))
    rows, seen = [], set()
    for path in sorted(glob.glob(os.path.join(results, "llm-*-p*.json"))):
        model = os.path.basename(path)[4:].rsplit("-p", 1)[0]
        for m in json.load(open(path))["llm"].get("measured", []):
            if m["form"] != "deployed step" or not m["measured"]:
                continue
            key = (model, m["phase"], m.get("label", ""), m["batch"], m["tokens"])
            if key in seen:
                continue
            seen.add(key)
            name = f"{model}_b{m['batch']}_s{m['tokens']}"
            t = torch.get(name, "") if m["phase"] == "prefill" else ""
            form = ("eager" if name in eager else "CUDA graph") if t != "" else ""
            rows.append(dict(zip(FIELDS, [*key, round(m["measured_ms"], 4), round(m["p10_ms"], 4), round(m["p90_ms"], 4),
                                          m["kernels"], t, form])))
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} measured steps to {out}")


def predict(binary, gpu, model, phase_rows):
    """One plan per model and prompt: the prefill at each batch, the decodes, the iterations."""
    out = {}
    prompts = sorted({int(r["tokens"]) for r in phase_rows if r["phase"] == "prefill"}) or [128]
    for prompt in prompts:
        batches = sorted({int(r["batch"]) for r in phase_rows if r["phase"] != "iteration"})
        contexts = sorted({int(r["tokens"]) for r in phase_rows if r["phase"] == "decode" and int(r["tokens"]) >= prompt})
        args = [binary, "llm", config_path(model), "--gpu", gpu, "--dtype", "fp16", "--prompt", str(prompt),
                "--batch", ",".join(map(str, batches)), "--json", "-", "-q"]
        if contexts:
            args += ["--context", ",".join(map(str, contexts))]
        if prompt == prompts[0]:
            for r in phase_rows:
                if r["phase"] == "iteration":
                    args += ["--iteration", r["mix"]]
        plan = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)["llm"]
        for b in plan["batches"]:
            out[("prefill", "", b["batch"], prompt)] = b["ttft_ms"]
            for c in b["contexts"]:
                out[("decode", "", b["batch"], c["context"])] = c["tpot_ms"]
        for it in plan.get("iterations", []):
            out[("iteration", it["mix"])] = it["step"]["total_ms"]
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modelcost", default=os.path.join(ROOT, "build/modelcost"))
    p.add_argument("--gpu", default="h100")
    p.add_argument("--measured", default=os.path.join(ROOT, "bench/llm_set/h100-measured.csv"))
    p.add_argument("--collect", metavar="RESULTS_DIR")
    a = p.parse_args()
    if a.collect:
        return collect(a.collect, a.measured)
    rows = list(csv.DictReader(open(a.measured)))
    ratios = {"prefill": [], "decode": [], "iteration": []}
    torch_ratios = []
    tables = {"prefill": [], "decode": [], "iteration": []}
    for model in sorted({r["model"] for r in rows}):
        mine = [r for r in rows if r["model"] == model]
        pred = predict(a.modelcost, a.gpu, model, mine)
        for r in mine:
            key = ("iteration", r["mix"]) if r["phase"] == "iteration" else (r["phase"], "", int(r["batch"]), int(r["tokens"]))
            if key not in pred:
                continue
            measured, predicted = float(r["measured_ms"]), pred[key]
            ratios[r["phase"]].append(measured / predicted)
            line = f"| {model} | {r['mix'] or 'b' + r['batch'] + ', ' + r['tokens']} | {measured:.3f} | {predicted:.3f} | {measured / predicted:.2f}"
            if r["phase"] == "prefill" and r["torch_ms"]:
                torch_ratios.append(measured / float(r["torch_ms"]))
                eager = " (eager)" if r.get("torch_form") == "eager" else ""
                line += f" | {float(r['torch_ms']):.3f}{eager} | {measured / float(r['torch_ms']):.2f}"
            tables[r["phase"]].append(line + " |")
    heads = {"prefill": "| model | batch, prompt | deployed prefill ms | predicted TTFT ms | measured / predicted | PyTorch SDPA + CUDA graph ms | deployed / PyTorch |\n|---|---|---|---|---|---|---|",
             "decode": "| model | batch, context | deployed step ms | predicted TPOT ms | measured / predicted |\n|---|---|---|---|---|",
             "iteration": "| model | iteration | deployed step ms | predicted ms | measured / predicted |\n|---|---|---|---|---|"}
    for phase in ("prefill", "decode", "iteration"):
        print(f"\n{heads[phase]}")
        print("\n".join(tables[phase]))
    print()
    for phase, v in ratios.items():
        if v:
            print(f"{phase}: {len(v)} points, within 10%: {sum(abs(x - 1) <= 0.10 for x in v)}, within 15%: "
                  f"{sum(abs(x - 1) <= 0.15 for x in v)}, measured / predicted {min(v):.2f}-{max(v):.2f}")
    if torch_ratios:
        print(f"deployed prefill / PyTorch: {min(torch_ratios):.2f}-{max(torch_ratios):.2f} over {len(torch_ratios)} points")


if __name__ == "__main__":
    sys.exit(main())
