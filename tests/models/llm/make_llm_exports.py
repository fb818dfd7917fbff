# Makes the small decoder exports the LLM tests pin: a few layers, a small hidden size, KV-cache
# inputs and outputs (past_key_values.N.key/value -> present.N.key/value), weights stripped as in
# ../shared/models. Run: python3 tests/models/llm/make_llm_exports.py (torch, onnx, onnxruntime).
# expected.json holds what the tests compare with: the configuration each graph was made from and
# the stored bytes of its weights, summed here with onnx from the initializers the nodes read.
import json, math, os, sys
import numpy as np
import onnx, torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))


def strip(path_in, path_out):  # as /work/shared/tools/export_refs.py: weights over 4 KiB point at a missing file
    m = onnx.load(path_in)
    for t in m.graph.initializer:
        if t.HasField("raw_data") and len(t.raw_data) > 4096 and t.data_type not in (onnx.TensorProto.INT64, onnx.TensorProto.INT32):
            n = len(t.raw_data)
            t.ClearField("raw_data")
            t.data_location = onnx.TensorProto.EXTERNAL
            del t.external_data[:]
            for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", str(n))):
                e = t.external_data.add(); e.key = k; e.value = v
    onnx.save(m, path_out)


class RMSNorm(nn.Module):
    def __init__(s, h): super().__init__(); s.w = nn.Parameter(torch.ones(h))
    def forward(s, x): return s.w * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Block(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.c = c; h, d = c["hidden"], c["head_dim"]
        if c["gpt"]:
            s.n1, s.n2 = nn.LayerNorm(h), nn.LayerNorm(h)
            s.qkv = nn.Linear(h, (c["heads"] + 2 * c["kv_heads"]) * d)
            s.fc1, s.fc2 = nn.Linear(h, c["inter"]), nn.Linear(c["inter"], h)
        else:
            s.n1, s.n2 = RMSNorm(h), RMSNorm(h)
            s.q = nn.Linear(h, c["heads"] * d, bias=False)
            s.k = nn.Linear(h, c["kv_heads"] * d, bias=False)
            s.v = nn.Linear(h, c["kv_heads"] * d, bias=False)
            s.gate, s.up = nn.Linear(h, c["inter"], bias=False), nn.Linear(h, c["inter"], bias=False)
            s.down = nn.Linear(c["inter"], h, bias=False)
        s.o = nn.Linear(c["heads"] * d, h, bias=c["gpt"])

    def forward(s, x, pk, pv, cos, sin):
        c = s.c; b, n, _ = x.shape; d, H, K = c["head_dim"], c["heads"], c["kv_heads"]
        y = s.n1(x)
        if c["gpt"]:
            q, k, v = s.qkv(y).split([H * d, K * d, K * d], dim=-1)
        else:
            q, k, v = s.q(y), s.k(y), s.v(y)
        q = q.view(b, n, H, d).transpose(1, 2)
        k = k.view(b, n, K, d).transpose(1, 2)
        v = v.view(b, n, K, d).transpose(1, 2)
        if cos is not None:
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        k = torch.cat([pk, k], dim=2); v = torch.cat([pv, v], dim=2)
        present = (k, v)
        t = k.shape[2]
        if K < H:  # repeat_kv
            k = k[:, :, None].expand(b, K, H // K, t, d).reshape(b, H, t, d)
            v = v[:, :, None].expand(b, K, H // K, t, d).reshape(b, H, t, d)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d)
        rows = torch.arange(n).unsqueeze(1) + (t - n)
        mask = torch.arange(t).unsqueeze(0) > rows
        scores = scores.masked_fill(mask, float("-inf"))
        a = torch.softmax(scores, dim=-1) @ v
        x = x + s.o(a.transpose(1, 2).reshape(b, n, H * d))
        y = s.n2(x)
        m = s.fc2(torch.nn.functional.gelu(s.fc1(y))) if c["gpt"] else s.down(torch.nn.functional.silu(s.gate(y)) * s.up(y))
        return x + m, present


class Decoder(nn.Module):
    def __init__(s, c):
        super().__init__()
        s.c = c
        s.embed = nn.Embedding(c["vocab"], c["hidden"])
        if c["gpt"]:
            s.wpe = nn.Embedding(c["positions"], c["hidden"])
        s.blocks = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        s.norm = nn.LayerNorm(c["hidden"]) if c["gpt"] else RMSNorm(c["hidden"])
        s.head = nn.Linear(c["hidden"], c["vocab"], bias=False)
        if c["gpt"]:
            s.head.weight = s.embed.weight  # tied, as GPT-2
        s.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, c["head_dim"], 2).float() / c["head_dim"])))

    def forward(s, ids, *past):
        n = ids.shape[1]; p = past[0].shape[2]
        pos = torch.arange(n) + p
        x = s.embed(ids)
        cos = sin = None
        if s.c["gpt"]:
            x = x + s.wpe(pos)
        else:
            f = pos[:, None].float() * s.inv_freq[None, :]
            e = torch.cat((f, f), dim=-1)
            cos, sin = e.cos(), e.sin()
        presents = []
        for i, blk in enumerate(s.blocks):
            x, pr = blk(x, past[2 * i], past[2 * i + 1], cos, sin)
            presents += list(pr)
        return (s.head(s.norm(x)),) + tuple(presents)


def export(c, name, decode_shaped):
    torch.manual_seed(0)
    m = Decoder(c).eval()
    n = 1 if decode_shaped else 5
    ids = torch.randint(0, c["vocab"], (2, n))
    past = [torch.randn(2, c["kv_heads"], 3, c["head_dim"]) for _ in range(2 * c["layers"])]
    names = []
    for i in range(c["layers"]):
        names += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
    outs = ["logits"] + [x.replace("past_key_values", "present") for x in names]
    axes = {"input_ids": {0: "batch"} if decode_shaped else {0: "batch", 1: "sequence"}}
    axes["logits"] = {0: "batch"} if decode_shaped else {0: "batch", 1: "sequence"}
    for x in names: axes[x] = {0: "batch", 2: "past_sequence"}
    for x in outs[1:]: axes[x] = {0: "batch", 2: "total_sequence"}
    full = f"/tmp/{name}_full.onnx"
    with torch.no_grad():
        torch.onnx.export(m, (ids, *past), full, dynamo=False, opset_version=17, input_names=["input_ids"] + names,
                          output_names=outs, dynamic_axes=axes)
    return full


def stored_weight_bytes(path):
    m = onnx.load(path, load_external_data=False)
    used = {i for nd in m.graph.node for i in nd.input}
    total = 0
    for t in m.graph.initializer:
        if t.name not in used: continue
        if t.data_type in (onnx.TensorProto.INT64, onnx.TensorProto.INT32, onnx.TensorProto.BOOL): continue
        if t.data_type == onnx.TensorProto.UINT8 or t.data_type == onnx.TensorProto.FLOAT or t.data_type == onnx.TensorProto.FLOAT16:
            size = {onnx.TensorProto.UINT8: 1, onnx.TensorProto.FLOAT: 4, onnx.TensorProto.FLOAT16: 2}[t.data_type]
            total += int(np.prod(t.dims)) * size
    return total


def quantize_int4(full, out):
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    q = MatMulNBitsQuantizer(onnx.load(full), block_size=32, is_symmetric=False)
    q.process()
    q.model.save_model_to_file(out, use_external_data_format=False)


def make_fused_gqa(path):
    """Decoder written with onnxruntime's fused GroupQueryAttention (rotary inside the op, cos/sin
    caches of 64 positions), as onnxruntime-genai exports it; no norms, ReLU MLP."""
    from onnx import helper, numpy_helper, TensorProto as T
    c = CONFIGS["gqa_fused"]; L, h, H, K, d, V = c["layers"], c["hidden"], c["heads"], c["kv_heads"], c["head_dim"], c["vocab"]
    rng = np.random.default_rng(0)
    inits, nodes = [], []
    def w(name, *shape):
        inits.append(numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)); return name
    w("embed", V, h); w("cos_cache", c["positions"], d // 2); w("sin_cache", c["positions"], d // 2)
    inputs = [helper.make_tensor_value_info("input_ids", T.INT64, ["batch", "sequence"]),
              helper.make_tensor_value_info("seqlens_k", T.INT32, ["batch"]),
              helper.make_tensor_value_info("total_sequence_length", T.INT32, [])]
    outputs = [helper.make_tensor_value_info("logits", T.FLOAT, ["batch", "sequence", V])]
    nodes.append(helper.make_node("Gather", ["embed", "input_ids"], ["x0"]))
    x = "x0"
    for i in range(L):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kind}", T.FLOAT, ["batch", K, "past_sequence", d]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kind}", T.FLOAT, ["batch", K, "total_sequence", d]))
        for name, n in (("q", H * d), ("k", K * d), ("v", K * d)):
            nodes.append(helper.make_node("MatMul", [x, w(f"w{name}{i}", h, n)], [f"{name}{i}"]))
        nodes.append(helper.make_node("GroupQueryAttention",
                                      [f"q{i}", f"k{i}", f"v{i}", f"past_key_values.{i}.key", f"past_key_values.{i}.value",
                                       "seqlens_k", "total_sequence_length", "cos_cache", "sin_cache"],
                                      [f"a{i}", f"present.{i}.key", f"present.{i}.value"], domain="com.microsoft",
                                      num_heads=H, kv_num_heads=K, do_rotary=1))
        nodes.append(helper.make_node("MatMul", [f"a{i}", w(f"wo{i}", H * d, h)], [f"o{i}"]))
        nodes.append(helper.make_node("Add", [x, f"o{i}"], [f"r{i}"]))
        nodes.append(helper.make_node("MatMul", [f"r{i}", w(f"wup{i}", h, c["inter"])], [f"up{i}"]))
        nodes.append(helper.make_node("Relu", [f"up{i}"], [f"act{i}"]))
        nodes.append(helper.make_node("MatMul", [f"act{i}", w(f"wdown{i}", c["inter"], h)], [f"down{i}"]))
        nodes.append(helper.make_node("Add", [f"r{i}", f"down{i}"], [f"x{i + 1}"]))
        x = f"x{i + 1}"
    nodes.append(helper.make_node("MatMul", [x, w("head", h, V)], ["logits"]))
    graph = helper.make_graph(nodes, "gqa_fused", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    onnx.save(model, path)


CONFIGS = {
    "llama_gqa": dict(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, inter=128, vocab=256, gpt=False),
    "llama_mqa": dict(layers=3, hidden=64, heads=4, kv_heads=1, head_dim=16, inter=96, vocab=320, gpt=False),
    "gqa_fused": dict(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, inter=128, vocab=256, gpt=False, positions=64),
    "gpt_mha": dict(layers=2, hidden=64, heads=4, kv_heads=4, head_dim=16, inter=256, vocab=288, gpt=True, positions=128),
}

if __name__ == "__main__":
    expected = {}
    jobs = [("llama_gqa_kv", "llama_gqa", False), ("llama_gqa_decode", "llama_gqa", True),
            ("llama_mqa_kv", "llama_mqa", False), ("gpt_mha_kv", "gpt_mha", False)]
    for out_name, cfg_name, decode in jobs:
        c = CONFIGS[cfg_name]
        full = export(c, out_name, decode)
        strip(full, f"{HERE}/{out_name}.onnx")
        expected[out_name] = dict(c, decode_shaped=decode, stored_weight_bytes=stored_weight_bytes(full))
        if out_name == "llama_gqa_kv":
            q = f"/tmp/{out_name}_int4_full.onnx"
            quantize_int4(full, q)
            strip(q, f"{HERE}/llama_gqa_int4.onnx")
            expected["llama_gqa_int4"] = dict(c, decode_shaped=False, stored_weight_bytes=stored_weight_bytes(q), int4=True)
    make_fused_gqa("/tmp/gqa_fused_full.onnx")
    strip("/tmp/gqa_fused_full.onnx", f"{HERE}/gqa_fused_kv.onnx")
    expected["gqa_fused_kv"] = dict(CONFIGS["gqa_fused"], decode_shaped=False, stored_weight_bytes=stored_weight_bytes("/tmp/gqa_fused_full.onnx"))
    json.dump(expected, open(f"{HERE}/expected.json", "w"), indent=1, sort_keys=True)
    print(json.dumps(expected, indent=1))
