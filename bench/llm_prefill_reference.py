# PyTorch reference for the deployed prefill of `modelcost llm --measure`: each config.json's model
# built by transformers with random fp16 weights, SDPA attention (flash on the GPU), no cache, the
# logits of the last position only, one forward pass captured in a CUDA graph and timed as the
# median of CUDA-event replays (eagerly where the model cannot be captured: "eager" lists those).
# Prints one JSON object: prefill ms per config, batch and prompt.
#   python3 bench/llm_prefill_reference.py CONFIG.json... [--batch 1,8] [--prompt 128,2048]
#   python3 bench/llm_prefill_reference.py CONFIG.json --tiny   (2 small layers on the CPU: checks the script)
import argparse, json, os, sys, time

import torch
from transformers import AutoConfig, AutoModelForCausalLM


EAGER = set()  # models timed without a CUDA graph


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("configs", nargs="+")
    p.add_argument("--batch", default="1,8")
    p.add_argument("--prompt", default="128,2048")
    p.add_argument("--tiny", action="store_true")
    return p.parse_args()


def build(path, tiny, dev, dtype):
    cfg = AutoConfig.from_pretrained(os.path.dirname(os.path.abspath(path))) if os.path.basename(path) == "config.json" \
        else AutoConfig.for_model(**json.load(open(path)))
    if tiny:
        cfg.num_hidden_layers, cfg.hidden_size, cfg.intermediate_size, cfg.vocab_size = 2, 128, 256, 512
        cfg.num_attention_heads, cfg.num_key_value_heads = 4, 2
        if hasattr(cfg, "head_dim"): cfg.head_dim = 32
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    with torch.device(dev):
        model = AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype)
    return cfg, model.to(dev, dtype).eval()


def timed(fn, reps, cpu):
    ts = []
    for _ in range(reps):
        if cpu:
            t = time.perf_counter(); fn(); ts.append((time.perf_counter() - t) * 1e3); continue
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


def prefill_ms(model, cfg, batch, prompt, cpu):
    ids = torch.randint(0, cfg.vocab_size, (batch, prompt), device=model.device)
    step = lambda: model(ids, use_cache=False, logits_to_keep=1)
    with torch.inference_mode():
        if cpu:
            return timed(step, 2, True)
        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3): step()
        torch.cuda.current_stream().wait_stream(s)
        try:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g): step()
        except RuntimeError as e:
            # transformers' mixtures of experts pick each expert's tokens with data-dependent shapes,
            # which a CUDA graph cannot hold: those run eagerly, and say so.
            print(f"no CUDA graph ({str(e).splitlines()[0][:120]}): timed eagerly", file=sys.stderr)
            torch.cuda.synchronize()
            EAGER.add(id(model))
            return timed(step, 10, False)
        for _ in range(3): g.replay()
        return timed(g.replay, 20, False)


def main():
    a = parse()
    cpu = a.tiny or not torch.cuda.is_available()
    dev, dtype = ("cpu", torch.float32) if cpu else ("cuda", torch.float16)
    out = {"device": "cpu" if cpu else torch.cuda.get_device_name(), "torch": torch.__version__, "prefill_ms": {}}
    for path in a.configs:
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            cfg, model = build(path, a.tiny, dev, dtype)
        except torch.OutOfMemoryError:
            out.setdefault("failed", []).append(f"{name}: does not fit the GPU")
            torch.cuda.empty_cache()
            continue
        for b in map(int, a.batch.split(",")):
            for p in map(int, a.prompt.split(",")):
                key = f"{name}_b{b}_s{p}"
                try:
                    out["prefill_ms"][key] = round(prefill_ms(model, cfg, b, p if not a.tiny else min(p, 64), cpu), 4)
                except torch.OutOfMemoryError:
                    out.setdefault("failed", []).append(f"{key}: out of memory")
                    if not cpu: torch.cuda.empty_cache()
                    continue
                if id(model) in EAGER: out.setdefault("eager", []).append(key)
        del model
        if not cpu: torch.cuda.empty_cache()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
