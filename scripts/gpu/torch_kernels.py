#!/usr/bin/env python3
"""The kernels torch.compile launches for zoo networks, with their device times: what the deployed
runtime is compared with kernel by kernel, where zoo_torch.py gives only the whole-graph figure.
Each network is built as scripts/gpu/zoo.py builds it (random weights, fp16, eval), compiled as
zoo_torch.py compiles it (inductor, freezing), warmed up, then REPS forward passes are profiled
with torch.profiler (CUPTI kernel records; no CUDA graph, so each kernel is its own record).
Writes one CSV row per (network, batch, kernel name): launches and device microseconds per pass.
Usage: python3 scripts/gpu/torch_kernels.py OUT.csv NET[,NET...] [--batches 1,32] [--reps 20] [--top 25]"""
import argparse, csv, os, sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from zoo_torch import batch_input, eval_network  # noqa: E402 - the networks as zoo_torch.py times them


def kernel_times(fn, xb, reps):
    """(kernel name -> [launches, device us]) per forward pass."""
    import torch
    from torch.profiler import profile, ProfilerActivity
    for _ in range(5):
        fn(xb)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn(xb)
        torch.cuda.synchronize()
    totals = defaultdict(lambda: [0, 0.0])
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA and "memcpy" not in event.name.lower():
            totals[event.name][0] += 1
            totals[event.name][1] += event.device_time if hasattr(event, "device_time") else event.cuda_time
    return {k: [v[0] / reps, v[1] / reps] for k, v in totals.items()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("nets")
    p.add_argument("--batches", default="1,32")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--top", type=int, default=25)
    a = p.parse_args()
    import torch
    with open(a.out, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["model", "batch", "kernel", "launches_per_pass", "us_per_pass"])
        for name in a.nets.split(","):
            try:
                model, source, x = eval_network(name)
                fn = torch.compile(model, dynamic=False)
                for batch in (int(b) for b in a.batches.split(",")):
                    xb = batch_input(source, x, batch)
                    with torch.no_grad():
                        times = kernel_times(fn, xb, a.reps)
                    ranked = sorted(times.items(), key=lambda kv: -kv[1][1])
                    total = sum(v[1] for v in times.values())
                    launches = sum(v[0] for v in times.values())
                    print(f"== {name} b{batch}: {launches:.0f} kernels, {total / 1000:.3f} ms of kernel time")
                    for kernel, (count, us) in ranked[:a.top]:
                        print(f"  {us:8.1f} us {count:5.1f}x  {kernel[:150]}")
                    for kernel, (count, us) in ranked:
                        out.writerow([name, batch, kernel[:300], f"{count:.2f}", f"{us:.2f}"])
                    f.flush()
            except Exception as e:  # noqa: BLE001 - the next network still runs
                print(f"== {name}: {type(e).__name__}: {str(e)[:200]}")


if __name__ == "__main__":
    main()
