# ViT-B/16 in PyTorch op for op as it stands in vit_b_16_op17.onnx (no fused attention, GELU as
# Div/Erf/Add/Mul/Mul, LayerNorm, explicit Q K^T / softmax / P V), fp16, CUDA graph replay, median of CUDA events.
import math, statistics, torch
import torch.nn.functional as F
torch.manual_seed(0)
dev, dt = "cuda", torch.half
D, H, L, MLP = 768, 12, 12, 3072
def w(*s): return (torch.randn(*s, device=dev, dtype=dt) * 0.02)
conv_w, conv_b, cls, pos = w(D, 3, 16, 16), w(D), w(1, 1, D), w(1, 197, D)
layers = [dict(ln1=(1 + w(D), w(D)), wqkv=w(3 * D, D), bqkv=w(3 * D), wo=w(D, D), bo=w(D), ln2=(1 + w(D), w(D)),
               w1=w(MLP, D), b1=w(MLP), w2=w(D, MLP), b2=w(D)) for _ in range(L)]
head_ln, head_w, head_b = (1 + w(D), w(D)), w(1000, D), w(1000)
def forward(x):
    b = x.shape[0]
    x = F.conv2d(x, conv_w, conv_b, stride=16).reshape(b, D, 196).permute(0, 2, 1)
    x = torch.cat([cls.expand(b, -1, -1), x], 1) + pos
    for p in layers:
        h = F.layer_norm(x, (D,), *p["ln1"])
        qkv = torch.matmul(h, p["wqkv"].t()) + p["bqkv"]
        q, k, v = qkv.split(D, -1)
        q = q.reshape(b, 197, H, 64).transpose(1, 2); k = k.reshape(b, 197, H, 64).transpose(1, 2); v = v.reshape(b, 197, H, 64).transpose(1, 2)
        a = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / 8.0, -1)
        o = torch.matmul(a, v).transpose(1, 2).reshape(b, 197, D)
        x = x + (torch.matmul(o, p["wo"].t()) + p["bo"])
        h = F.layer_norm(x, (D,), *p["ln2"])
        h = torch.matmul(h, p["w1"].t()) + p["b1"]
        h = h * 0.5 * (1 + torch.erf(h / math.sqrt(2)))
        x = x + (torch.matmul(h, p["w2"].t()) + p["b2"])
    return F.linear(F.layer_norm(x[:, 0], (D,), *head_ln), head_w, head_b)
def time_graph(x, reps=100):
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3): forward(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), torch.no_grad(): forward(x)
    for _ in range(10): g.replay()
    torch.cuda.synchronize(); t = []
    for _ in range(reps):
        a, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); e.record(); e.synchronize(); t.append(a.elapsed_time(e))
    return statistics.median(t)
for batch in (1, 32):
    print(f"TORCH-AS-ONNX vit_b_16 fp16 batch {batch}: {time_graph(torch.randn(batch, 3, 224, 224, device=dev, dtype=dt)):.3f} ms", flush=True)
