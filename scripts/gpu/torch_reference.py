# PyTorch + cuDNN end-to-end reference latencies: eval mode, BatchNorm
# folded into the convolutions, fp16, the faster of NCHW and channels-last, CUDA graph replay,
# median of CUDA event times. Each reference also prints the kernels one graph replay runs
# (torch.profiler): how many, their summed durations, and the share of matrix kernels (cuDNN
# convolutions, cuBLAS/CUTLASS GEMMs, flash attention) among them.
# With KERNEL_DUMP=FILE set, every profiled kernel is appended to FILE (label, name, us, start us):
# scripts/gpu/replay_gaps.py compares its gaps between kernels with modelcost's replay.
import os, statistics, sys, torch, torchvision
from torch.fx.experimental.optimization import fuse

MATRIX_WORDS = ("conv", "gemm", "xmma", "cutlass", "sm90", "sm80", "cudnn", "fmha", "flash", "attention", "dgrad", "implicit")

def kernel_profile(g, label):
    try:
        from torch.profiler import profile, ProfilerActivity
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            g.replay()
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type.name == "CUDA" and "memcpy" not in e.name.lower()
                   and "memset" not in e.name.lower()]
        busy = sum(e.device_time for e in kernels) / 1e3
        matrix = [e for e in kernels if any(w in e.name.lower() for w in MATRIX_WORDS)]
        mbusy = sum(e.device_time for e in matrix) / 1e3
        if os.environ.get("KERNEL_DUMP"):
            with open(os.environ["KERNEL_DUMP"], "a") as f:
                for e in sorted(kernels, key=lambda e: e.time_range.start):
                    f.write(f"{label}\t{e.name[:160]}\t{e.device_time:.3f}\t{e.time_range.start:.3f}\n")
        print(f"KERNELS {label}: {len(kernels)} kernels, {busy:.3f} ms busy; matrix {len(matrix)} kernels "
              f"{mbusy:.3f} ms; other {len(kernels) - len(matrix)} kernels {busy - mbusy:.3f} ms", flush=True)
    except Exception as e:  # the profiler is a side figure: never lose the timing for it
        print(f"KERNELS {label}: profiler failed ({type(e).__name__}: {e})", flush=True)

def time_graph(model, x, reps=100, label=None):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3): model(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), torch.no_grad():
        model(x)
    for _ in range(10): g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize()
        times.append(a.elapsed_time(b))
    if label: kernel_profile(g, label)
    return statistics.median(times)

def bert_base(seq=128):
    # BERT-base as Hugging Face runs it deployed: fp16, SDPA attention, padding mask of ones.
    from transformers import BertConfig, BertModel
    try:
        model = BertModel(BertConfig(), attn_implementation="sdpa")
    except TypeError:  # older transformers: SDPA is the default where it is supported
        model = BertModel(BertConfig())
    model = model.eval().half().cuda()
    for batch in (1, 32):
        ids = torch.randint(0, 30000, (batch, seq), device='cuda')
        mask = torch.ones(batch, seq, dtype=torch.long, device='cuda')
        t = time_graph(lambda x: model(input_ids=x, attention_mask=mask).last_hidden_state, ids,
                       label=f"bert_base seq {seq} batch {batch}")
        print(f"TORCH bert_base fp16 seq {seq} batch {batch}: {t:.3f} ms", flush=True)

torch.backends.cudnn.benchmark = True
for name in sys.argv[1:]:
    if name == 'bert_base':
        bert_base()
        continue
    base = getattr(torchvision.models, name)().eval()
    try:
        base = fuse(base)  # BatchNorm folded into the convs (ConvNeXt has none; fx may refuse a model)
    except Exception as e:
        print(f"torch {name}: not fused ({type(e).__name__})", flush=True)
    for batch in (1, 32):
        best = None
        for cl in (False, True):
            m = base.half().cuda()
            x = torch.randn(batch, 3, 224, 224, device='cuda', dtype=torch.half)
            if cl: m = m.to(memory_format=torch.channels_last); x = x.to(memory_format=torch.channels_last)
            t = time_graph(m, x, label=f"{name} batch {batch} {'channels_last' if cl else 'NCHW'}")
            print(f"torch {name} fp16 batch {batch} {'channels_last' if cl else 'NCHW'}: {t:.3f} ms", flush=True)
            best = t if best is None else min(best, t)
        print(f"TORCH {name} fp16 batch {batch}: {best:.3f} ms (faster layout)", flush=True)
