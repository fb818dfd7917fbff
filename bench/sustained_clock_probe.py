#!/usr/bin/env python3
"""Do kernels that do not load the GPU's power (an attention, an elementwise product) run slower
between heavy matrix products than alone? (PyTorch's kernels; bench/cuda/attention_load measures
modelcost's attention the way `modelcost calibrate` does.) Times each one with CUDA events alone (back to back,
after an idle second) and interleaved with fp16 products of 2048x14336x4096 (the products' time
left out), and reads the SM clock and power with nvidia-smi in both states.
Usage: python3 bench/sustained_clock_probe.py"""
import subprocess, time

import torch
import torch.nn.functional as F


def smi():
    return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader"],
                          capture_output=True, text=True).stdout.strip()


def median_us(pairs):
    ms = sorted(s.elapsed_time(e) for s, e in pairs)
    return ms[len(ms) // 2] * 1e3


def timed(fn, count, between=None):
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(count)]
    for s, e in pairs:
        if between:
            between()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return median_us(pairs)


def main():
    a = torch.randn(2048, 4096, device="cuda", dtype=torch.float16)
    w = torch.randn(4096, 14336, device="cuda", dtype=torch.float16)
    q = torch.randn(1, 32, 2048, 128, device="cuda", dtype=torch.float16)
    k = torch.randn(1, 32, 2048, 128, device="cuda", dtype=torch.float16)
    v = torch.randn(1, 32, 2048, 128, device="cuda", dtype=torch.float16)
    g = torch.randn(2048, 14336, device="cuda", dtype=torch.float16)
    u = torch.randn(2048, 14336, device="cuda", dtype=torch.float16)
    kernels = {
        "causal attention 1x32x2048x128": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        "silu(gate) x up 2048x14336": lambda: F.silu(g) * u,
    }
    product = lambda: torch.mm(a, w)
    for fn in list(kernels.values()) + [product]:
        fn()
    torch.cuda.synchronize()
    for name, fn in kernels.items():
        time.sleep(1.0)
        alone = timed(fn, 200)
        idle_clock = smi()
        time.sleep(1.0)
        mixed = timed(fn, 200, between=lambda: [product() for _ in range(3)])
        hot_clock = smi()
        print(f"{name}: alone {alone:.1f} us [{idle_clock}], between products {mixed:.1f} us [{hot_clock}], ratio {mixed / alone:.2f}")


if __name__ == "__main__":
    main()
