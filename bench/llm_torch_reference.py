# PyTorch reference for `modelcost llm`: a TinyLlama-shaped decoder (22 layers, hidden 2048, 32 query /
# 4 KV heads, vocab 32000; random weights) in fp16 with transformers (SDPA attention, a static KV
# cache sized to the context, one decode step captured in a CUDA graph). Prints JSON: TPOT per
# batch and context, and the prefill time without a cache. Run on a machine with an NVIDIA GPU:
#   python3 bench/llm_torch_reference.py [--tiny]     (--tiny: 2 layers on the CPU, to check the script)
import json, sys, time
import torch
from transformers import LlamaConfig, LlamaForCausalLM, StaticCache

tiny = "--tiny" in sys.argv
dev = torch.device("cpu" if tiny else "cuda")
dtype = torch.float32 if tiny else torch.float16
cfg = LlamaConfig(hidden_size=2048 if not tiny else 64, intermediate_size=5632 if not tiny else 128,
                  num_hidden_layers=22 if not tiny else 2, num_attention_heads=32 if not tiny else 4,
                  num_key_value_heads=4 if not tiny else 2, vocab_size=32000 if not tiny else 256,
                  max_position_embeddings=4096)
cfg._attn_implementation = "sdpa"
torch.manual_seed(0)
model = LlamaForCausalLM(cfg).to(dev, dtype).eval()


def timed(fn, reps):
    if tiny:
        t = time.perf_counter(); [fn() for _ in range(reps)]; return (time.perf_counter() - t) / reps * 1e3
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts) // 2]


def decode_tpot(batch, context):
    # The static cache holds the context and room for the steps timed (each replay of the graph
    # appends a position): every step attends over the whole buffer, context + 48.
    cache = StaticCache(config=cfg, max_cache_len=context + 48)
    with torch.inference_mode():
        prompt = torch.randint(0, cfg.vocab_size, (batch, context - 1), device=dev)
        model(prompt, past_key_values=cache, use_cache=True)
        ids = torch.randint(0, cfg.vocab_size, (batch, 1), device=dev)
        step = lambda: model(ids, past_key_values=cache, use_cache=True)
        if tiny:
            return timed(step, 2)
        s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3): step()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g): step()
        for _ in range(5): g.replay()
        return timed(g.replay, 30)  # 4 + 5 + 30 positions appended, under the 48 of room


def prefill_ms(batch, seq):
    with torch.inference_mode():
        ids = torch.randint(0, cfg.vocab_size, (batch, seq), device=dev)
        f = lambda: model(ids, use_cache=False)
        for _ in range(2): f()
        return timed(f, 3 if tiny else 10)


out = {"device": "cpu" if tiny else torch.cuda.get_device_name(), "torch": torch.__version__, "tpot_ms": {}, "prefill_ms": {}}
for b in (1, 32):
    for c in (128, 2048):
        if tiny and c > 128: continue
        out["tpot_ms"][f"b{b}_c{c}"] = round(decode_tpot(b, c), 4)
        if not tiny: torch.cuda.empty_cache()
for b, s in ((1, 128), (32, 128), (1, 2048)):
    if tiny and s > 128: continue
    out["prefill_ms"][f"b{b}_s{s}"] = round(prefill_ms(b, s), 4)
print(json.dumps(out))
