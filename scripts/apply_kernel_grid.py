#!/usr/bin/env python3
"""Installs a calibration measured on a GPU we have (the H100 SXM or the H200) into its hwdb entry.

`modelcost calibrate --gpu ID --out CAL.toml --kernels-csv GRID` on the GPU writes both files. This
copies GRID to docs/calibration/ENTRY-grid.csv, refits it (`modelcost calibrate --from-grid`),
writes the curves into hwdb/ENTRY.toml's [achievable.kernels] (each sourced to the grid) and, with
--ceilings CAL.toml, the measured [achievable] ceilings too (DRAM, vector and tensor rates, kernel
overhead and gap). Entries without a calibration take theirs from it when the database loads
(docs/hwdb.md, "Derived entries").
Usage: scripts/apply_kernel_grid.py GRID_CSV MODELCOST_BINARY [--entry h100-sxm|h200] [--ceilings CAL.toml]"""
import argparse, re, shutil, subprocess, sys, tomllib
from pathlib import Path

root = Path(__file__).resolve().parent.parent
GRID_DOC = {"h100-sxm": "kernel_grid_h100", "h200": "kernel_grid_h200"}
CALIBRATE_DOC = {"h100-sxm": "calibrate_h100", "h200": "calibrate_h200"}
GPU_NAME = {"h100-sxm": "H100 SXM", "h200": "H200 SXM"}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("grid", type=Path)
    p.add_argument("binary")
    p.add_argument("--entry", default="h100-sxm", choices=sorted(GRID_DOC))
    p.add_argument("--ceilings", type=Path, help="the hwdb entry calibrate wrote (--out)")
    return p.parse_args()


def fitted_curves(binary, grid):
    fit = subprocess.run([binary, "calibrate", "--from-grid", str(grid)],
                         capture_output=True, text=True, check=True).stdout
    print(fit)
    return [l for l in fit[fit.index("[achievable.kernels]"):].splitlines()[1:] if " = {" in l]


def ensure_document(text, key, title, url):
    """Adds a [documents] row unless the entry has it already."""
    if re.search(rf"^{key} = ", text, flags=re.M):
        return text
    row = f'{key} = {{ title = "{title}", url = "{url}" }}\n'
    return re.sub(r"^(\[documents\]\n)", lambda m: m.group(1) + row, text, count=1, flags=re.M)


def set_source(text, key, doc):
    """One measured (not derived) source row per figure, replacing any older one."""
    text = re.sub(rf'^"{re.escape(key)}" = [^\n]*\n', "", text, flags=re.M)
    return text.rstrip("\n") + f'\n"{key}" = "{doc}"\n'


def install_curves(text, entry, curves, grid_name):
    doc = GRID_DOC[entry]
    body = "\n".join(curves)
    header = ("[achievable.kernels]  # library kernels in a CUDA graph (us): fixed_us + k_us_per_1000 * K / 1000"
              " + max(FLOPs / tflops, bytes / gbps), their p-norm where knee = p\n")
    if "[achievable.kernels]" in text:
        text = re.sub(r"\[achievable\.kernels\][^\n]*\n.*?\n\n", lambda m: header + body + "\n\n", text, count=1, flags=re.S)
    text = re.sub(r'^"achievable\.kernels\.[^\n]*\n', "", text, flags=re.M)
    text = ensure_document(text, doc, f"modelcost calibrate's grid of cuBLASLt GEMMs, cuDNN convolutions, attention, decode "
                           f"and elementwise kernels on the {GPU_NAME[entry]}, fitted with calibrate --from-grid",
                           f"docs/calibration/{grid_name}")
    for line in curves:
        text = set_source(text, f"achievable.kernels.{line.split('=')[0].strip()}", doc)
    return text


def install_ceilings(text, entry, calibrated):
    cal = tomllib.loads(calibrated.read_text())
    doc = CALIBRATE_DOC[entry]
    figures = {"memory_bandwidth_gbps": cal["achievable"]["memory_bandwidth_gbps"],
               "kernel_overhead_us": cal["achievable"]["kernel_overhead_us"],
               "kernel_gap_us": cal["achievable"]["kernel_gap_us"]}
    figures.update({f"vector.{k}": v for k, v in cal["peak"]["vector"].items()})
    figures.update({f"tensor.{k}": v for k, v in cal["peak"]["tensor"].items()})
    for key, value in figures.items():
        table, _, name = key.rpartition(".")
        section = "[achievable." + table + "]" if table else "[achievable]"
        block = re.search(rf"^{re.escape(section)}[^\n]*\n(.*?)\n\n", text, flags=re.S | re.M)
        if not block or not re.search(rf"^{name} = ", block.group(1), flags=re.M):
            continue  # the entry's schema decides which ceilings it carries
        new_block = re.sub(rf"^{name} = [^\n]*", f"{name} = {value:.4g}", block.group(1), flags=re.M)
        text = text[:block.start(1)] + new_block + text[block.end(1):]
        text = set_source(text, f"achievable.{key}", doc)
    text = re.sub(r"^(\[achievable\])[^\n]*", r"\1  # what kernels reach: measured by modelcost calibrate on this GPU",
                  text, count=1, flags=re.M)
    return ensure_document(text, doc, f"modelcost calibrate on the {GPU_NAME[entry]} (docs/validation.md, Calibrate)",
                           "docs/validation.md")


def main():
    args = parse_args()
    grid_name = f"{args.entry}-grid.csv"
    target = root / "docs/calibration" / grid_name
    if args.grid.resolve() != target.resolve():
        shutil.copy(args.grid, target)
    path = root / "hwdb" / f"{args.entry}.toml"
    text = install_curves(path.read_text(), args.entry, fitted_curves(args.binary, target), grid_name)
    if args.ceilings:
        text = install_ceilings(text, args.entry, args.ceilings)
    path.write_text(text)


if __name__ == "__main__":
    main()
