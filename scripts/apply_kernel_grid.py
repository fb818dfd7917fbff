#!/usr/bin/env python3
"""Installs a kernel grid measured on the H100 SXM (`modelcost calibrate --gpu h100 --kernels-csv
GRID`): copies it to docs/calibration/h100-sxm-grid.csv, refits it (`modelcost calibrate
--from-grid`), writes the curves into hwdb/h100-sxm.toml's [achievable.kernels] (each sourced to the
grid) and derives the other Hopper entries (scripts/derive_kernel_curves.py).
Usage: scripts/apply_kernel_grid.py GRID_CSV MODELCOST_BINARY"""
import re, shutil, subprocess, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
grid, binary = Path(sys.argv[1]), sys.argv[2]
target = root / "docs/calibration/h100-sxm-grid.csv"
if grid.resolve() != target.resolve():
    shutil.copy(grid, target)
fit = subprocess.run([binary, "calibrate", "--from-grid", str(target)], capture_output=True, text=True, check=True).stdout
print(fit)
curves = [l for l in fit[fit.index("[achievable.kernels]"):].splitlines()[1:] if " = {" in l]
entry = root / "hwdb/h100-sxm.toml"
text = entry.read_text()
table = re.search(r"(\[achievable\.kernels\][^\n]*\n)(.*?)(\n\n)", text, re.S)
text = text[:table.start(2)] + "\n".join(curves) + text[table.end(2):]
text = re.sub(r'^"achievable\.kernels\.[^\n]*\n', "", text, flags=re.M)
sources = "".join(f'"achievable.kernels.{l.split("=")[0].strip()}" = "kernel_grid_h100"\n' for l in curves)
text = re.sub(r'^("achievable\.kernel_gap_us" = [^\n]*\n)', lambda m: m.group(1) + sources, text, count=1, flags=re.M)
entry.write_text(text)
subprocess.run([sys.executable, str(root / "scripts/derive_kernel_curves.py"), str(root / "hwdb")], check=True)
