"""Builds tests/models/corpus: small real exports in the forms users meet (ORT transformer-optimizer
output, ORT graph-optimized saves, ORT dynamic/static quantization in QDQ and QOperator form, an
fp16 conversion, a KV-cache decoder with int4 MatMulNBits, LSTM/GRU, scikit-learn pipelines, a
torch dynamo export at opset 23, local functions), weights stripped, and references.json with
reference MACs from torch.utils.flop_counter (FLOPs / 2) or closed forms, and parameters from
torch's parameter count (plus the float scales a quantizer adds).

Needs torch, transformers, onnxruntime, skl2onnx, scikit-learn; CI does not run it (the files and
references are committed). Run from the repository root: python3 tests/models/corpus/make_corpus.py
"""
import json
import os
import sys
import tempfile

import numpy as np
import onnx
import torch
from torch.utils.flop_counter import FlopCounterMode

OUT = os.path.dirname(os.path.abspath(__file__))
TMP = tempfile.mkdtemp()
refs = {}
torch.manual_seed(0)


def strip(path_in, name):
    """Every large initializer becomes a reference to a weight file that is not shipped."""
    m = onnx.load(path_in)
    graphs = [m.graph]
    while graphs:
        g = graphs.pop()
        for t in g.initializer:
            if t.HasField("raw_data") and len(t.raw_data) > 1024 and t.data_type not in (6, 7):
                n = len(t.raw_data)
                t.ClearField("raw_data")
                t.data_location = onnx.TensorProto.EXTERNAL
                del t.external_data[:]
                for k, v in (("location", "weights.bin"), ("offset", "0"), ("length", str(n))):
                    e = t.external_data.add()
                    e.key, e.value = k, v
        for n in g.node:
            for a in n.attribute:
                if a.HasField("g"):
                    graphs.append(a.g)
                graphs.extend(a.graphs)
    onnx.save(m, os.path.join(OUT, name))


def randomize(model):
    """Random values everywhere: exporters merge equal initializers (fresh norms are all ones)."""
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.02)
    return model


def torch_macs(model, args):
    with FlopCounterMode(display=False) as fc:
        with torch.no_grad():
            model(*args)
    return fc.get_total_flops() / 2


def torch_params(model):
    return sum(p.numel() for p in model.parameters())


def float_scale_elements(path, base):
    """Elements of float initializers a quantizer added (scales), by name absent from `base`."""
    before = {t.name for t in onnx.load(base, load_external_data=False).graph.initializer}
    m = onnx.load(path, load_external_data=False)
    return sum(int(np.prod(t.dims)) for t in m.graph.initializer if t.data_type in (1, 10) and t.name not in before)


def gather_first(path):
    """Moves each embedding table's per-tensor DequantizeLinear after its Gather: the int8 table
    is gathered, then only the selected rows are dequantized (the form of int8-embedding exports)."""
    m = onnx.load(path)
    g = m.graph
    inits = {t.name for t in g.initializer}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    nodes = list(g.node)
    after = {}  # id(gather) -> the DequantizeLinear that now follows it
    for dq in [n for n in nodes if n.op_type == "DequantizeLinear" and n.input[0] in inits]:
        users = consumers.get(dq.output[0], [])
        if len(users) != 1 or users[0].op_type != "Gather" or users[0].input[0] != dq.output[0]:
            continue
        gather = users[0]
        gathered = gather.output[0]
        gather.input[0] = dq.input[0]
        gather.output[0] = gathered + "_int8"
        dq.input[0] = gather.output[0]
        dq.output[0] = gathered
        after[id(gather)] = dq
    moved = {id(dq) for dq in after.values()}
    order = []
    for n in nodes:
        if id(n) in moved:
            continue
        order.append(n)
        if id(n) in after:
            order.append(after[id(n)])
    order = [onnx.NodeProto.FromString(n.SerializeToString()) for n in order]
    del g.node[:]
    g.node.extend(order)
    onnx.save(m, path)


def add(name, macs, params, dims, source):
    refs[name] = {"reference_macs": macs, "params": params, "dims": dims, "source": source}
    print(f"{name}: macs {macs:.0f} params {params}", flush=True)


def ort_save(src, dst, level):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.optimized_model_filepath = dst
    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"])


# ---------------------------------------------------------------- BERT (transformers, tiny config)
def bert():
    import transformers
    from onnxruntime.quantization import quantize_dynamic
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.float16 import convert_float_to_float16

    cfg = transformers.BertConfig(attn_implementation="eager", hidden_size=64, num_hidden_layers=2,
                                  num_attention_heads=4, intermediate_size=256, vocab_size=1000,
                                  max_position_embeddings=64)
    base = transformers.BertModel(cfg, add_pooling_layer=False).eval()

    class Wrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = base

        def forward(self, ids, mask, tt):
            return self.m(input_ids=ids, attention_mask=mask, token_type_ids=tt).last_hidden_state

    m = randomize(Wrapper().eval())
    seq = 16
    args = (torch.randint(0, 1000, (1, seq)), torch.ones(1, seq, dtype=torch.long), torch.zeros(1, seq, dtype=torch.long))
    macs, params = torch_macs(m, args), torch_params(m)
    raw = f"{TMP}/bert.onnx"
    names = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(m, args, raw, input_names=names, output_names=["last_hidden_state"],
                      dynamic_axes={k: {0: "batch", 1: "seq"} for k in names}, opset_version=17, dynamo=False)
    dims = {"batch": 1, "seq": seq}
    src = "transformers BertModel (hidden 64, 2 layers, 4 heads), torch.utils.flop_counter"
    strip(raw, "bert_tiny_op17.onnx")
    add("bert_tiny_op17.onnx", macs, params, dims, src)

    fused = f"{TMP}/bert_fused.onnx"
    optimizer.optimize_model(raw, model_type="bert", num_heads=4, hidden_size=64).save_model_to_file(fused)
    strip(fused, "bert_tiny_ort_transformer_optimized.onnx")
    add("bert_tiny_ort_transformer_optimized.onnx", macs, params, dims, src + "; onnxruntime.transformers.optimizer")

    qop = f"{TMP}/bert_dyn.onnx"
    quantize_dynamic(fused, qop, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    strip(qop, "bert_tiny_ort_dynamic_qoperator.onnx")
    add("bert_tiny_ort_dynamic_qoperator.onnx", macs, params + float_scale_elements(qop, fused), dims,
        src + "; onnxruntime.quantization.quantize_dynamic (QOperator), + the float scales it adds")

    # QDQ with the embedding tables quantized: int8 tables read by Gather, then DequantizeLinear.
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{n: a.numpy() for n, a in zip(names, args)} for _ in range(2)])

        def get_next(self):
            return next(self.data, None)

    qdq = f"{TMP}/bert_qdq.onnx"
    quantize_static(raw, qdq, Reader(), quant_format=QuantFormat.QDQ, op_types_to_quantize=["MatMul", "Gather"],
                    extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    gather_first(qdq)
    strip(qdq, "bert_tiny_ort_static_qdq.onnx")
    add("bert_tiny_ort_static_qdq.onnx", macs, params + float_scale_elements(qdq, raw), dims,
        src + "; quantize_static (QDQ, MatMul and Gather: int8 embedding tables, each Gather moved before its "
        "DequantizeLinear), + the float scales it adds")

    f16 = f"{TMP}/bert_f16.onnx"
    onnx.save(convert_float_to_float16(onnx.load(raw), keep_io_types=True), f16)
    strip(f16, "bert_tiny_fp16.onnx")
    add("bert_tiny_fp16.onnx", macs, params, dims, src + "; onnxruntime.transformers.float16")


# ---------------------------------------------------------------- a small CNN, ORT levels, static quantization
class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        c = torch.nn
        self.stem = c.Sequential(c.Conv2d(3, 16, 3, padding=1), c.BatchNorm2d(16), c.ReLU())
        self.block = c.Sequential(c.Conv2d(16, 32, 3, stride=2, padding=1), c.ReLU(), c.Conv2d(32, 32, 3, padding=1, groups=2), c.ReLU())
        self.head = c.Linear(32, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(self.stem(x), 2)
        x = self.block(x)
        return self.head(torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


def cnn():
    import onnxruntime as ort
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    m = randomize(SmallCnn().eval())
    x = torch.randn(1, 3, 32, 32)
    macs, params = torch_macs(m, (x,)), torch_params(m)
    raw = f"{TMP}/cnn.onnx"
    torch.onnx.export(m, (x,), raw, input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}},
                      opset_version=17, dynamo=False)
    dims = {"batch": 1}
    src = "small CNN (conv, BN, grouped conv, linear), torch.utils.flop_counter"
    # The exporter (and ORT) fold BatchNorm into the conv: its weight and bias (2x16) leave the
    # parameters. Channel counts are multiples of 16 so ORT's NCHWc save (ORT_ENABLE_ALL) pads
    # nothing on AVX2 or AVX-512 machines.
    folded = params - 2 * 16
    strip(raw, "cnn_small_op17.onnx")
    add("cnn_small_op17.onnx", macs, folded, dims, src + "; BatchNorm folded by the exporter")
    for level, tag in ((ort.GraphOptimizationLevel.ORT_ENABLE_BASIC, "basic"),
                       (ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, "extended"),
                       (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, "all")):
        p = f"{TMP}/cnn_{tag}.onnx"
        ort_save(raw, p, level)
        name = f"cnn_small_ort_{tag}.onnx"
        strip(p, name)
        add(name, macs, folded, dims, src + f"; onnxruntime ORT_ENABLE_{tag.upper()} save")

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": np.random.randn(1, 3, 32, 32).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.data, None)

    prep = f"{TMP}/cnn_basic.onnx"
    for fmt, tag in ((QuantFormat.QDQ, "qdq"), (QuantFormat.QOperator, "qoperator")):
        p = f"{TMP}/cnn_{tag}.onnx"
        quantize_static(prep, p, Reader(), quant_format=fmt)
        name = f"cnn_small_ort_static_{tag}.onnx"
        strip(p, name)
        add(name, macs, folded + float_scale_elements(p, prep), dims,
            src + f"; onnxruntime.quantization.quantize_static ({tag}), + the float scales it adds")


# ---------------------------------------------------------------- recurrent layers
class Recurrent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(32, 48, bidirectional=True)
        self.gru = torch.nn.GRU(96, 40)

    def forward(self, x):
        y, _ = self.lstm(x)
        z, _ = self.gru(y)
        return z


def recurrent():
    from onnxruntime.quantization import quantize_dynamic

    m = randomize(Recurrent().eval())
    seq, batch = 20, 2
    x = torch.randn(seq, batch, 32)
    # Closed form: per step, direction and batch row, gates x hidden x (input + hidden).
    macs = seq * batch * (2 * 4 * 48 * (32 + 48) + 3 * 40 * (96 + 40))
    raw = f"{TMP}/rnn.onnx"
    torch.onnx.export(m, (x,), raw, input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "seq", 1: "batch"}},
                      opset_version=17, dynamo=False)
    dims = {"seq": seq, "batch": batch}
    src = "torch LSTM(32, 48, bidirectional) + GRU(96, 40); closed form seq*batch*gates*hidden*(input+hidden)"
    strip(raw, "lstm_gru_op17.onnx")
    add("lstm_gru_op17.onnx", macs, torch_params(m), dims, src)
    q = f"{TMP}/rnn_q.onnx"
    quantize_dynamic(raw, q, op_types_to_quantize=["LSTM"])
    strip(q, "lstm_gru_ort_dynamic_quantized.onnx")
    add("lstm_gru_ort_dynamic_quantized.onnx", macs, torch_params(m) + float_scale_elements(q, raw), dims,
        src + "; quantize_dynamic: com.microsoft.DynamicQuantizeLSTM")


# ---------------------------------------------------------------- KV-cache decoder, int4 MatMulNBits
class Decoder(torch.nn.Module):
    """Two pre-norm decoder layers reading and returning a KV cache."""

    def __init__(self, hidden=64, heads=4, layers=2, vocab=256):
        super().__init__()
        self.h, self.heads, self.layers = hidden, heads, layers
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.qkv = torch.nn.ModuleList(torch.nn.Linear(hidden, 3 * hidden, bias=False) for _ in range(layers))
        self.out = torch.nn.ModuleList(torch.nn.Linear(hidden, hidden, bias=False) for _ in range(layers))
        self.up = torch.nn.ModuleList(torch.nn.Linear(hidden, 4 * hidden, bias=False) for _ in range(layers))
        self.down = torch.nn.ModuleList(torch.nn.Linear(4 * hidden, hidden, bias=False) for _ in range(layers))
        self.norm = torch.nn.ModuleList(torch.nn.LayerNorm(hidden) for _ in range(2 * layers))
        self.lm_head = torch.nn.Linear(hidden, vocab, bias=False)

    def forward(self, ids, past_k, past_v):
        b, s = ids.shape
        d = self.h // self.heads
        x = self.embed(ids)
        presents_k, presents_v = [], []
        for i in range(self.layers):
            q, k, v = self.qkv[i](self.norm[2 * i](x)).split(self.h, dim=-1)
            q, k, v = (t.view(b, s, self.heads, d).transpose(1, 2) for t in (q, k, v))
            k = torch.cat([past_k[i], k], dim=2)
            v = torch.cat([past_v[i], v], dim=2)
            presents_k.append(k)
            presents_v.append(v)
            a = torch.softmax(q @ k.transpose(-1, -2) / d ** 0.5, dim=-1) @ v
            x = x + self.out[i](a.transpose(1, 2).reshape(b, s, self.h))
            x = x + self.down[i](torch.relu(self.up[i](self.norm[2 * i + 1](x))))
        return self.lm_head(x), torch.stack(presents_k), torch.stack(presents_v)


def decoder():
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    m = randomize(Decoder().eval())
    h, heads, layers, vocab = 64, 4, 2, 256
    ids = torch.randint(0, vocab, (1, 4))
    past = torch.zeros(layers, 1, heads, 3, h // heads)
    raw = f"{TMP}/decoder.onnx"
    torch.onnx.export(m, (ids, past, past), raw, input_names=["input_ids", "past_k", "past_v"],
                      output_names=["logits", "present_k", "present_v"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "past_k": {1: "batch", 3: "past_seq"},
                                    "past_v": {1: "batch", 3: "past_seq"}},
                      opset_version=17, dynamo=False)
    quant = f"{TMP}/decoder_q4.onnx"
    q = MatMulNBitsQuantizer(onnx.load(raw), block_size=32, is_symmetric=True)
    q.process()
    q.model.save_model_to_file(quant)
    strip(quant, "decoder_kv_matmulnbits.onnx")

    def closed_form(seq, past):
        total = seq + past
        per_layer = seq * h * 3 * h + 2 * seq * total * h + seq * h * h + 2 * seq * h * 4 * h
        return layers * per_layer + seq * h * vocab

    # Logical weights: the int4 matmul weights count by elements, plus one fp32 scale per block.
    scales = sum(k // 32 * n for k, n in [(h, 3 * h), (h, h), (h, 4 * h), (4 * h, h)] * layers + [(h, vocab)])
    params = torch_params(m) + scales
    src = "2-layer decoder with a KV cache, MatMulNBitsQuantizer (4 bits, block 32); closed form"
    for tag, seq, past in (("prefill", 16, 0), ("decode", 1, 15)):
        refs.setdefault("decoder_kv_matmulnbits.onnx", {"runs": []})["runs"].append(
            {"reference_macs": closed_form(seq, past), "params": params, "dims": {"batch": 1, "seq": seq, "past_seq": past},
             "source": src + f" ({tag})"})
        print(f"decoder {tag}: macs {closed_form(seq, past)} params {params}")


# ---------------------------------------------------------------- scikit-learn (skl2onnx)
def sklearn_pipelines():
    from skl2onnx import to_onnx
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.RandomState(0)
    x = rng.randn(200, 8).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1)
    lr = make_pipeline(StandardScaler(), LogisticRegression(max_iter=200)).fit(x, y)
    onnx.save(to_onnx(lr, x[:1], target_opset={"": 17, "ai.onnx.ml": 3}), os.path.join(OUT, "sklearn_scaler_logreg.onnx"))
    # Closed form: one row of coefficients per class (3) over 8 features, per sample (N = 1).
    add("sklearn_scaler_logreg.onnx", 3 * 8, 0, {"N": 1},
        "skl2onnx StandardScaler + LogisticRegression; closed form classes*features; coefficients are attributes, not initializers")
    rf = RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(x, y)
    onnx.save(to_onnx(rf, x[:1], target_opset={"": 17, "ai.onnx.ml": 3}), os.path.join(OUT, "sklearn_random_forest.onnx"))
    add("sklearn_random_forest.onnx", 0, 0, {"N": 1}, "skl2onnx RandomForestClassifier (3 trees, depth 4): no MACs")


# ---------------------------------------------------------------- dynamo export at opset 23
class RmsBlock(torch.nn.Module):
    def __init__(self, hidden=64, heads=4):
        super().__init__()
        self.heads = heads
        self.norm = torch.nn.RMSNorm(hidden)
        self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
        self.o = torch.nn.Linear(hidden, hidden, bias=False)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(hidden, 4 * hidden), torch.nn.SiLU(), torch.nn.Linear(4 * hidden, hidden))
        self.norm2 = torch.nn.RMSNorm(hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, h))
        return x + self.mlp(self.norm2(x))


def dynamo23():
    m = randomize(RmsBlock().eval())
    x = torch.randn(1, 16, 64)
    macs = torch_macs(m, (x,))
    p = f"{TMP}/dyn23.onnx"
    torch.onnx.export(m, (x,), p, dynamo=True, opset_version=23, external_data=False)
    strip(p, "rms_block_dynamo_op23.onnx")
    add("rms_block_dynamo_op23.onnx", macs, torch_params(m), {}, "torch.onnx dynamo export, opset 23 (RMSNorm, SDPA); torch.utils.flop_counter")


# ---------------------------------------------------------------- local functions
def local_functions():
    m = randomize(SmallCnn().eval())
    x = torch.randn(1, 3, 32, 32)
    p = f"{TMP}/cnn_functions.onnx"
    torch.onnx.export(m, (x,), p, input_names=["x"], output_names=["y"], opset_version=17, dynamo=False,
                      export_modules_as_functions={torch.nn.Conv2d, torch.nn.Sequential, torch.nn.Linear})
    strip(p, "cnn_small_local_functions.onnx")
    add("cnn_small_local_functions.onnx", torch_macs(m, (x,)), torch_params(m) - 2 * 16, {},
        "BatchNorm folded by the exporter; small CNN exported with export_modules_as_functions (Conv2d, Sequential, Linear); torch.utils.flop_counter")


if __name__ == "__main__":
    steps = sys.argv[1:] or ["bert", "cnn", "recurrent", "decoder", "sklearn_pipelines", "dynamo23", "local_functions"]
    ref_path = os.path.join(OUT, "references.json")
    if os.path.exists(ref_path):
        refs.update(json.load(open(ref_path)))
    for step in steps:
        if step == "decoder":
            refs.pop("decoder_kv_matmulnbits.onnx", None)
        globals()[step]()
    with open(ref_path, "w") as f:
        json.dump(refs, f, indent=1, sort_keys=True)
        f.write("\n")
