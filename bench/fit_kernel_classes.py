#!/usr/bin/env python3
"""Per-class kernel curves fitted to the zoo's measured kernels (tests/models/zoo/kernels-GPU.csv,
written by bench/zoo_kernels.py), with each class's error on the held-out families reported apart.

Each kernel class's curve (docs/roofline.md) prices one kernel replayed alone as
    t = F + k_us_per_1000 x K / 1000 + max(FLOPs / tflops, bytes / gbps)
and is fitted, per class, to the single-kernel groups of the tuned families only, minimising the
squared log error weighted by each kernel's time (a grid over tflops and gbps, a linear fit of F and the K term at each point).
A whole graph then takes a x (the sum of its kernels) + g x (its kernel count): a and g are fitted
to the tuned families' graphs (tests/models/zoo/graphs-GPU.csv). In the form the roofline prices a
kernel (fixed_us + s x (K term + max(...)) + library_gap_us: the gap the roofline adds after a
curve-priced kernel), s = a and fixed_us = a F + g - the entry's library_gap_us. Prints the error table against the entry's calibrated curves and the fitted
curves as [achievable.kernels] lines: candidates to study, not what the shipped entries carry.
Usage: bench/fit_kernel_classes.py --gpu h100 [--markdown]"""
import argparse, csv, math, os, sys, tomllib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_validation import ROOT, ZOO  # noqa: E402

MATRIX = {"gemm", "conv", "conv1x1", "grouped_conv", "depthwise", "attention"}
# Classes priced by another class's curve where they have too few kernels of their own.
MIN_KERNELS = 30


def load(path):
    return list(csv.DictReader(open(path)))


def curve_time(c, k, flops, nbytes):
    compute = flops / (c["tflops"] * 1e6) if c.get("tflops") else 0.0
    return c["fixed"] + c.get("k_us", 0.0) * k / 1000 + np.maximum(compute, nbytes / (c["gbps"] * 1e3))


def fit_linear(x_max, k, m, with_k):
    """F (and the K term) minimising sum(m ((F + kk K + X) / m - 1)^2), both at least 0: relative
    errors weighted by the kernel's time, so that the time a graph spends is what is fitted."""
    w = np.sqrt(m)
    cols = [w / m] + ([w * k / 1000 / m] if with_k else [])
    a = np.stack(cols, axis=1)
    b = w * (1 - x_max / m)
    sol = np.linalg.lstsq(a, b, rcond=None)[0]
    if with_k and sol[1] < 0:
        sol = np.array([np.linalg.lstsq(a[:, :1], b, rcond=None)[0][0], 0.0])
    sol = np.maximum(sol, 0)
    return sol[0], (sol[1] if with_k else 0.0)


def fit_class(rows, matrix):
    k = np.array([float(r["k"]) for r in rows])
    fl = np.array([float(r["flops"]) for r in rows])
    by = np.array([float(r["bytes"]) for r in rows])
    m = np.array([float(r["measured_us"]) for r in rows])
    best = None
    tflops_grid = np.geomspace(2, 1200, 60) if matrix else [None]
    for t in tflops_grid:
        for g in np.geomspace(100, 8000, 70):
            compute = fl / (t * 1e6) if t else 0.0
            x = np.maximum(compute, by / (g * 1e3))
            f, kk = fit_linear(x, k, m, matrix)
            err = np.log((f + kk * k / 1000 + x) / m)
            score = float(np.sum(m * err ** 2))
            if best is None or score < best[0]:
                best = (score, dict(fixed=f, k_us=kk, tflops=t, gbps=g))
    return best[1]


def errors(c, rows):
    if not rows:
        return np.array([])
    k = np.array([float(r["k"]) for r in rows])
    fl = np.array([float(r["flops"]) for r in rows])
    by = np.array([float(r["bytes"]) for r in rows])
    m = np.array([float(r["measured_us"]) for r in rows])
    return curve_time(c, k, fl, by) / m - 1


def weighted_error(c, rows):
    """Sum of |predicted - measured| over the sum measured: the share of the kernels' time missed."""
    if not rows:
        return float("nan")
    m = np.array([float(r["measured_us"]) for r in rows])
    return float(np.sum(np.abs(errors(c, rows) * m)) / np.sum(m))


def describe(e):
    if len(e) == 0:
        return "0 | | |"
    return f"{len(e)} | {100 * np.median(np.abs(e)):.0f}% | {100 * np.mean(np.abs(e) <= 0.1):.0f}% | {100 * np.mean(np.abs(e) <= 0.25):.0f}%"


def entry_path(gpu):
    return os.path.join(ROOT, "hwdb", {"h100": "h100-sxm", "h200": "h200"}.get(gpu, gpu) + ".toml")


def shipped_curves(gpu):
    """The entry's own curves as a kernel replayed alone takes them: fixed_us + kernel_gap_us + ...,
    and the gap the roofline adds after a curve-priced kernel (library_gap_us)."""
    achievable = tomllib.load(open(entry_path(gpu), "rb"))["achievable"]
    gap = achievable.get("kernel_gap_us", 0.0)
    library_gap = achievable.get("library_gap_us", gap)
    curves = {name: dict(fixed=c["fixed_us"] + gap, k_us=c.get("k_us_per_1000", 0.0), tflops=c.get("tflops"),
                         gbps=c["gbps"]) for name, c in achievable.get("kernels", {}).items()}
    return curves, library_gap


FALLBACK = {"layout_copy": "pointwise", "gather_scatter": "pointwise", "grouped_conv": "conv"}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gpu", default="h100")
    a = p.parse_args()
    kernels = [r for r in load(os.path.join(ZOO, f"kernels-{a.gpu}.csv")) if r["launches"] == "1"]
    graphs = load(os.path.join(ZOO, f"graphs-{a.gpu}.csv"))
    shipped, entry_gap_us = shipped_curves(a.gpu)
    print(f"### Kernel classes against the zoo's kernels replayed alone ({a.gpu}, fp16)\n")
    print("Share of the kernels' time missed (sum of |predicted - measured| over the sum measured), by the "
          "entry's calibrated curve and by the curve fitted to the tuned families' kernels.\n")
    print("| class | tuned kernels | calibrated | fitted | held-out kernels | calibrated | fitted | fewer misses on the tuned |")
    print("|---|---|---|---|---|---|---|---|")
    kept = {}
    for cls in sorted({r["kernel_class"] for r in kernels}):
        tuned = [r for r in kernels if r["kernel_class"] == cls and r["held_out"] == "0"]
        held = [r for r in kernels if r["kernel_class"] == cls and r["held_out"] == "1"]
        own = shipped.get(cls) or shipped.get(FALLBACK.get(cls, "pointwise"))
        if len(tuned) < MIN_KERNELS or cls in ("none", "other") or not own:
            continue
        fitted = fit_class(tuned, cls in MATRIX)
        cal_t, fit_t = weighted_error(own, tuned), weighted_error(fitted, tuned)
        cal_h, fit_h = weighted_error(own, held), weighted_error(fitted, held)
        if fit_t < cal_t:
            kept[cls] = fitted
        pct = lambda x: "" if math.isnan(x) else f"{100 * x:.0f}%"
        print(f"| {cls} | {len(tuned)} | {pct(cal_t)} | {pct(fit_t)} | {len(held)} | {pct(cal_h)} | {pct(fit_h)} | "
              f"{'fitted' if cls in kept else 'calibrated'} |")
    # The whole graph against its kernels replayed alone: a x sum + g x kernels (tuned graphs).
    tuned_graphs = [g for g in graphs if g["held_out"] == "0"]
    x = np.array([[float(g["sum_of_kernels_us"]), float(g["kernels"])] for g in tuned_graphs])
    w = np.array([float(g["whole_us"]) for g in tuned_graphs])
    scale, gap = np.linalg.lstsq(x / w[:, None], np.ones(len(w)), rcond=None)[0]
    print(f"\nWhole graph = {scale:.3f} x the sum of its kernels alone + {gap:.2f} us x its kernels "
          f"({len(tuned_graphs)} tuned graphs)")
    for label, sel in (("tuned", "0"), ("held-out", "1")):
        gs = [g for g in graphs if g["held_out"] == sel]
        e = np.array([(scale * float(g["sum_of_kernels_us"]) + gap * float(g["kernels"])) / float(g["whole_us"]) - 1 for g in gs])
        print(f"  {label} graphs from their measured kernels: {describe(e)} (n, median error, within 10%, within 25%)")
    # Candidates, not installed: an entry's curves come from calibrate's grid (docs/hwdb.md).
    print(f"\n[achievable.kernels] lines of the better fits  # at this entry's in_graph_work_scale and library_gap_us = {entry_gap_us}")
    for cls, c in kept.items():
        # fixed_us + s (K + max) + gap in the graph = a (F + K + max) + g: the entry keeps its s.
        fixed = max(0.05, scale * c["fixed"] + gap - entry_gap_us)
        parts = [f"fixed_us = {fixed:.3g}"]
        if cls in MATRIX:
            parts += [f"k_us_per_1000 = {c['k_us']:.3g}", f"tflops = {c['tflops']:.4g}"]
        parts.append(f"gbps = {c['gbps']:.4g}")
        print(f"{cls} = {{ {', '.join(parts)} }}")


if __name__ == "__main__":
    main()
