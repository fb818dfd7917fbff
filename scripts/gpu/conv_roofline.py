#!/usr/bin/env python3
"""Measured against predicted time of every Conv node of a `modelcost --measure --json` report.

Usage: conv_roofline.py REPORT.json [--limit 2.0] [--top 15]

Prints the Conv nodes slowest against their roofline prediction (the prediction of the --gpu
entry the report was made with: a calibrated entry's [achievable.kernels] curves where it has
them), the per-node measured sum, and last the worst node. Exits 1 where a Conv node takes more
than --limit times its prediction, 2 where the report has no measured Conv node.
"""
import argparse
import json
import sys


def conv_rows(report):
    rows = []
    for node in report.get("nodes", []):
        if node.get("op_type") != "Conv":
            continue
        measured, predicted = node.get("measured_us") or 0, node.get("predicted_us") or 0
        if measured <= 0 or predicted <= 0:
            continue
        shape = node["outputs"][0]["shape"] if node.get("outputs") else []
        rows.append((measured / predicted, measured, predicted, node["name"], shape, node.get("implementation", "")))
    return sorted(rows, reverse=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--limit", type=float, default=2.0, help="largest measured / predicted ratio allowed")
    parser.add_argument("--top", type=int, default=15, help="rows to print")
    args = parser.parse_args()
    with open(args.report) as f:
        report = json.load(f)
    rows = conv_rows(report)
    if not rows:
        print(f"{args.report}: no measured Conv node with a prediction")
        return 2
    print(f"{'ratio':>6} {'measured us':>12} {'predicted us':>13}  node  output  implementation")
    for ratio, measured, predicted, name, shape, impl in rows[: args.top]:
        print(f"{ratio:6.2f} {measured:12.2f} {predicted:13.2f}  {name}  {'x'.join(map(str, shape))}  {impl[:90]}")
    totals = report.get("totals", {})
    conv_measured = sum(r[1] for r in rows)
    conv_predicted = sum(r[2] for r in rows)
    over = [r for r in rows if r[0] > args.limit]
    print(f"{len(rows)} Conv nodes: measured {conv_measured / 1e3:.3f} ms, predicted {conv_predicted / 1e3:.3f} ms; "
          f"per-node sum of the model {totals.get('measured_sum_ms', 0):.3f} ms; {len(over)} over {args.limit}x")
    ratio, measured, predicted, name, shape, _ = rows[0]
    print(f"WORST {name}: {measured:.2f} us measured, {predicted:.2f} us predicted, {ratio:.2f}x")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
