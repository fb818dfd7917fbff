#!/usr/bin/env python3
"""Gaps between the kernels of one CUDA-graph replay: modelcost's against PyTorch's.

Usage: replay_gaps.py [--ours TIMELINE.tsv] [--torch KERNEL_DUMP.tsv] [--top 8]

--ours: the timeline bench/measure_wall writes (--timeline FILE: view, index, kernel, start_us,
duration_us, gap_before_us). --torch: torch_reference.py's KERNEL_DUMP file (label, kernel, us,
start us). For each replay: kernels, busy and span time, the idle inside the span per kernel
(gap percentiles), and the kernels that the longest summed gaps precede.
"""
import argparse
import collections
import statistics


def replays_from_ours(path):
    replays = collections.defaultdict(list)
    with open(path) as f:
        next(f)
        for line in f:
            view, _, name, start, duration, _ = line.rstrip("\n").split("\t")
            replays[f"modelcost {view}"].append((float(start), float(duration), name))
    return replays


def replays_from_torch(path):
    replays = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            cells = line.rstrip("\n").split("\t")
            if len(cells) < 4:
                continue
            label, name, duration, start = cells[:4]
            replays[f"torch {label}"].append((float(start), float(duration), name))
    return replays


def summarize(label, kernels, top):
    kernels.sort()
    first = kernels[0][0]
    end, gaps, before = first, [], collections.Counter()
    for start, duration, name in kernels:
        gap = max(0.0, start - end) if gaps or start > first else 0.0
        if start > first:
            gaps.append(gap)
            before[name[:60]] += gap
        end = max(end, start + duration)
    busy = sum(k[1] for k in kernels)
    span = end - first
    idle = span - busy
    q = statistics.quantiles(gaps, n=10) if len(gaps) > 1 else [0] * 9
    print(f"{label}: {len(kernels)} kernels, busy {busy:.1f} us, span {span:.1f} us, idle in span {idle:.1f} us = "
          f"{idle / len(kernels):.3f} us per kernel; gap p10 {q[0]:.2f} p50 {statistics.median(gaps) if gaps else 0:.2f} "
          f"p90 {q[8]:.2f} max {max(gaps) if gaps else 0:.2f} us")
    for name, gap in before.most_common(top):
        print(f"    {gap:8.1f} us of gaps before {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours", action="append", default=[])
    parser.add_argument("--torch", action="append", default=[])
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    for path in args.ours:
        for label, kernels in replays_from_ours(path).items():
            summarize(f"{label} ({path})", kernels, args.top)
    for path in args.torch:
        for label, kernels in replays_from_torch(path).items():
            summarize(label, kernels, args.top)


if __name__ == "__main__":
    main()
