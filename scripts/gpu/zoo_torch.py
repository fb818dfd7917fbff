#!/usr/bin/env python3
"""PyTorch's figures for the validation zoo, the baseline `--measure` is held to: each network built
as scripts/gpu/zoo.py builds it (random weights, fp16, eval, no grad), timed two ways at each batch,
each captured in one CUDA graph and replayed (median of per-replay CUDA event times after warm-up):
  eager_ms    PyTorch eager
  compile_ms  torch.compile (inductor, freezing on), its generated code captured in the CUDA graph
Networks compile in parallel processes (compilation is mostly CPU work, but cudnn.benchmark and
freezing run kernels on the GPU): every GPU timing, here and in zoo_measure.py, holds the lock file
named by --lock exclusively and every compilation holds it shared, so no timing shares the GPU with
another timing or a compilation.
The networks are those with a file in tests/models/zoo, split by --part as zoo_measure.py splits them.
Usage: python3 scripts/gpu/zoo_torch.py OUT.csv [--jobs N] [--part K/N] [--skip-done DONE.csv] [--deadline S] [--lock FILE]"""
import argparse, csv, fcntl, os, statistics, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor, as_completed

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def time_graph(fn, x, reps=100):
    """Median milliseconds of one replay of `fn(x)` captured in a CUDA graph, and the spread. A
    network whose forward cannot be captured (it copies from host memory) is timed call by call."""
    import torch
    try:
        return replay_times(fn, x, reps)
    except RuntimeError as e:
        if "graph capture" not in str(e):
            raise
        torch.cuda.synchronize()
        times = []
        for _ in range(reps + 10):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn(x)
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        times = times[10:]
        return statistics.median(times), (max(times) - min(times)) / statistics.median(times)


def replay_times(fn, x, reps):
    import torch
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn(x)
    for _ in range(10):
        g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times), (max(times) - min(times)) / statistics.median(times)


class GpuLock:
    """Holds the GPU for one timing (an exclusive lock on a file every GPU process shares) or, shared,
    for one compilation: compilations run side by side, never beside a timing."""
    def __init__(self, path, shared=False):
        self.path, self.mode = path, fcntl.LOCK_SH if shared else fcntl.LOCK_EX

    def __enter__(self):
        self.f = open(self.path, "a")
        fcntl.flock(self.f, self.mode)

    def __exit__(self, *exc):
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def eval_network(name):
    """Zoo network `name` as zoo.py builds it (random weights, fp16, eval, on the GPU), with its
    source and example input; cudnn.benchmark and inductor's freezing on, as it is compiled."""
    import torch, zoo
    _, source, ctor, _, _ = next(e for e in zoo.ZOO if e[0] == name)
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    torch._inductor.config.freezing = True
    model, x = zoo.build(source, ctor)
    if source == "tvseg":
        model = zoo.SegOut(model)
    elif source == "hf":
        model = zoo.HiddenOut(model)
    return model.eval().half().cuda(), source, x


def batch_input(source, x, batch):
    """A random input like `x` at `batch` on the GPU: token ids for a text encoder, fp16 images otherwise."""
    import torch
    shape = (batch,) + tuple(x.shape[1:])
    if source == "hf":
        return torch.randint(0, 1000, shape).cuda()
    return torch.randn(shape).cuda().half()


def one(name, batches, lock):
    """Times one network (run in a child process); prints one CSV row per batch."""
    import torch
    model, source, x = eval_network(name)
    compiled = torch.compile(model, dynamic=False)  # one specialised graph per batch
    for batch in batches:
        xb = batch_input(source, x, batch)
        row = [name, batch, "", "", "", "", "", ""]
        try:
            with torch.no_grad():
                with GpuLock(lock):
                    row[2:4] = [f"{v:.4f}" for v in time_graph(model, xb)]
                with GpuLock(lock, shared=True):
                    t0 = time.time()
                    compiled(xb)  # compiles for this shape
                    torch.cuda.synchronize()
                    row[6] = f"{time.time() - t0:.1f}"
                with GpuLock(lock):
                    row[4:6] = [f"{v:.4f}" for v in time_graph(compiled, xb)]
        except Exception as e:  # noqa: BLE001 - the row records the failure
            row[7] = f"{type(e).__name__}: {str(e)[:160]}".replace(",", ";").replace("\n", " ")
        print(",".join(str(v) for v in row), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--batches", default="1,32")
    p.add_argument("--part", default="1/1")
    p.add_argument("--deadline", type=float, default=0, help="start no network after this many seconds")
    p.add_argument("--timeout", type=int, default=240, help="seconds one network may take, both batches")
    p.add_argument("--lock", default="/tmp/gpu.lock")
    p.add_argument("--skip-done", default="", help="a CSV whose networks with a compile time are not run again")
    p.add_argument("--only", default="", help="comma-separated networks: these alone, run again even if done")
    p.add_argument("--one", default="", help=argparse.SUPPRESS)
    a = p.parse_args()
    batches = [int(b) for b in a.batches.split(",")]
    if a.one:
        return one(a.one, batches, a.lock)
    import zoo
    k, n = (int(v) for v in a.part.split("/"))
    exported = {f[:-5] for f in os.listdir(os.path.join(HERE, "../../tests/models/zoo")) if f.endswith(".onnx")}
    names = sorted(e[0] for e in zoo.ZOO if e[0] in exported)[k - 1::n]
    if a.only:
        names = [name for name in names if name in a.only.split(",")]
    elif a.skip_done and os.path.exists(a.skip_done):
        done = {r["model"] for r in csv.DictReader(open(a.skip_done)) if r["compile_ms"]}
        names = [name for name in names if name not in done]
    start = time.time()
    new = not os.path.exists(a.out)
    out = open(a.out, "a")
    if new:
        out.write("model,batch,eager_ms,eager_rel_spread,compile_ms,compile_rel_spread,compile_s,error\n")

    def run(name):
        if a.deadline and time.time() - start > a.deadline:
            return f"{name},,,,,,,deadline\n"
        env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS=str(max(1, os.cpu_count() // a.jobs)))
        cmd = [sys.executable, os.path.abspath(__file__), a.out, "--one", name, "--batches", a.batches, "--lock", a.lock]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
            rows = [l for l in r.stdout.splitlines() if l.startswith(name + ",")]
            if not rows:
                tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
                return f"{name},,,,,,,{tail[:160].replace(',', ';')}\n"
            return "\n".join(rows) + "\n"
        except subprocess.TimeoutExpired:
            return f"{name},,,,,,,timeout {a.timeout} s\n"

    with ThreadPoolExecutor(a.jobs) as pool:
        for done in as_completed([pool.submit(run, name) for name in names]):  # rows kept as they come
            text = done.result()
            out.write(text)
            out.flush()
            print(text, end="", flush=True)


if __name__ == "__main__":
    main()
