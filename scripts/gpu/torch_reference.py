# PyTorch + cuDNN end-to-end reference latencies (issue 4's "done when"): eval mode, BatchNorm
# folded into the convolutions, fp16, the faster of NCHW and channels-last, CUDA graph replay,
# median of CUDA event times.
import statistics, sys, torch, torchvision
from torch.fx.experimental.optimization import fuse

def time_graph(model, x, reps=100):
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
        t = time_graph(lambda x: model(input_ids=x, attention_mask=mask).last_hidden_state, ids)
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
            t = time_graph(m, x)
            print(f"torch {name} fp16 batch {batch} {'channels_last' if cl else 'NCHW'}: {t:.3f} ms", flush=True)
            best = t if best is None else min(best, t)
        print(f"TORCH {name} fp16 batch {batch}: {best:.3f} ms (faster layout)", flush=True)
