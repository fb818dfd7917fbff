#!/usr/bin/env python3
"""Runs modelcost on every reference model and compares MACs and params with the reference figures.

Usage: scripts/check_references.py BUILD/modelcost  (reads ../shared/models/README.md and
tests/models/unseen/references.json). Prints one line per model; exits 1 on any miss."""
import json, os, re, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "modelcost")
models = []
shared = os.path.join(root, "..", "shared", "models")
readme = os.path.join(shared, "README.md")
if os.path.exists(readme):
    for line in open(readme):
        m = re.match(r"\|\s*(\S+\.onnx)\s*\|[^|]*\|[^|]*\|\s*([0-9]+|n/a)\s*\|\s*([0-9]+)\s*\|", line)
        if m:
            models.append((os.path.join(shared, m.group(1)), None if m.group(2) == "n/a" else int(m.group(2)), int(m.group(3))))
unseen = os.path.join(root, "tests", "models", "unseen")
for name, ref in sorted(json.load(open(os.path.join(unseen, "references.json"))).items()):
    models.append((os.path.join(unseen, name), ref["reference_macs"], ref["float_initializer_elements"]))
WANTED_DIMS = {"batch": 1, "seq": 128}  # the reference figures' sizes of the symbolic dims a model has


def run_with_dims(path, out):
    """modelcost on `path` with the wanted sizes of the symbolic dims it has (naming a dim it lacks is an error)."""
    dims = dict(WANTED_DIMS)
    while True:
        args = [binary, path, "--json", out, "--quiet"]
        for name, size in dims.items():
            args += ["--dim", f"{name}={size}"]
        p = subprocess.run(args, capture_output=True, text=True)
        missing = re.search(r"--dim (\w+)=\d+: the model's inputs have no dim named", p.stderr)
        if p.returncode == 0 or not missing or missing.group(1) not in dims:
            return p
        del dims[missing.group(1)]


bad = 0
for path, macs, params in models:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        p = run_with_dims(path, out.name)
        if p.returncode != 0:
            print(f"FAIL {os.path.basename(path)}: rc={p.returncode} {p.stderr.strip()}"); bad += 1; continue
        t = json.load(open(out.name))["totals"]
    ok = t["unshaped_nodes"] == 0 and abs(t["params"] - params) <= 0.001 * params
    mac_err = None if macs is None else (t["macs"] - macs) / macs
    ok = ok and (mac_err is None or abs(mac_err) <= 0.01)
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(path):45s} macs {t['macs']:>16.0f} ref {macs or 0:>14} "
          f"err {0 if mac_err is None else mac_err*100:+7.3f}% params {t['params']:>11.0f}/{params:<11} "
          f"unshaped {t['unshaped_nodes']} uncosted {t['uncosted_nodes']} est {t['estimated_nodes']}")
sys.exit(1 if bad else 0)
