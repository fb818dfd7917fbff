#!/usr/bin/env python3
"""Conv groups the deployed runtime ran slower than twice their prediction, from kept `--measure`
reports (scripts/gpu/zoo_call.sh with KEEP_JSON=1: one MODEL-bBATCH.json per point): how many, how
many the report names a reason for (`slow_conv_reason`, docs/reports.md), the reasons by kind, and
every one left without a reason. Reports written before the field existed are counted apart.
Usage: bench/zoo_slow_convs.py REPORTS_DIR [REPORTS_DIR ...]"""
import collections, glob, json, os, sys


def main():
    dirs = sys.argv[1:]
    if not dirs:
        sys.exit(__doc__)
    latest = {}  # point -> report path; a later directory's report of a point wins
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*-b*.json"))):
            latest[os.path.basename(path)] = path
    slow = named = 0
    kinds = collections.Counter()
    unexplained, without_field = [], 0
    for name, path in sorted(latest.items()):
        groups = (json.load(open(path)).get("deployed_measurement") or {}).get("groups", [])
        if not any("slow_conv_reason" in g for g in groups):
            # Either no slow conv, or a report older than the field: tell them apart by the ratio.
            if any(g.get("predicted_us") and g.get("measured_us", 0) > 2 * g["predicted_us"] and "conv" in g.get("label", "")
                   for g in groups):
                without_field += 1
            continue
        for g in groups:
            if "slow_conv_reason" not in g:
                continue
            slow += 1
            reason = g["slow_conv_reason"]
            if reason:
                named += 1
                kinds[reason.split(":")[0].split(" of ")[0]] += 1
            else:
                unexplained.append(f"{name[:-5]} group {g['id']} ({g['label']}): {g['measured_us']:.1f} us against "
                                   f"{g['predicted_us']:.1f} us, {g['runner'][:90]}")
    print(f"{len(latest)} reports; {slow} conv groups slower than twice their prediction, {named} with a named reason")
    for kind, n in kinds.most_common():
        print(f"  {n:4d}  {kind}")
    for line in unexplained:
        print("  no reason:", line)
    if without_field:
        print(f"{without_field} reports predate slow_conv_reason and hold slow convs: measure them again to count them")


if __name__ == "__main__":
    main()
