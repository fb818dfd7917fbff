#!/usr/bin/env python3
"""Writes the [achievable.kernels] of the Hopper entries we have no GPU for, derived from the H100 SXM's measured curves
(docs/hwdb.md, "Achievable ceilings"): the fixed cost is the same launch path; the K loop runs at
the SM clock; the FLOP rate scales with the datasheet tensor fp16 peak (SMs x clock); the byte rate
with the datasheet memory bandwidth. Usage: scripts/derive_kernel_curves.py [HWDB_DIR]"""
import re, sys, tomllib
from pathlib import Path

hwdb = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "hwdb")
TARGETS = ["h100-pcie", "gh200-96gb"]  # the H200 has its own calibration

def load(name):
    return tomllib.loads((hwdb / f"{name}.toml").read_text())

def fmt(v):
    return f"{v:.4g}"

base = load("h100-sxm")
curves = base["achievable"]["kernels"]
for name in TARGETS:
    path = hwdb / f"{name}.toml"
    text = path.read_text()
    e = load(name)
    clock = base["boost_clock_mhz"] / e["boost_clock_mhz"]
    flops = e["peak"]["tensor"]["fp16"] / base["peak"]["tensor"]["fp16"]
    bw = e["memory_bandwidth_gbps"] / base["memory_bandwidth_gbps"]
    lines, sources = [], []
    for cls, c in curves.items():
        terms = [f"fixed_us = {fmt(c['fixed_us'])}"]
        if "k_us_per_1000" in c: terms.append(f"k_us_per_1000 = {fmt(c['k_us_per_1000'] * clock)}")
        if "tflops" in c: terms.append(f"tflops = {fmt(c['tflops'] * flops)}")
        terms.append(f"gbps = {fmt(c['gbps'] * bw)}")
        lines.append(f"{cls} = {{ {', '.join(terms)} }}")
        note = (f"the H100 SXM's measured curve: fixed cost as measured, K loop x {clock:.3f} (clock), "
                f"FLOP rate x {flops:.3f} (tensor fp16 peak), byte rate x {bw:.3f} (memory bandwidth)")
        sources.append(f'"achievable.kernels.{cls}" = {{ doc = "kernel_grid_h100", derived = true, note = "{note}" }}')
    block = ("[achievable.kernels]  # library kernels in a CUDA graph (us): derived from the H100 SXM's (scripts/derive_kernel_curves.py)\n"
             + "\n".join(lines) + "\n\n")
    text = re.sub(r"\[achievable\.kernels\][^\[]*", "", text)
    # After the last [achievable...] table: before the table that follows it.
    anchor = "[interconnect]" if "\n[interconnect]" in text else "[documents]"
    text = text.replace("\n" + anchor, "\n" + block + anchor, 1)
    text = re.sub(r'^"achievable\.kernels\.[^\n]*\n', "", text, flags=re.M)
    doc = base["documents"]["kernel_grid_h100"]
    if "kernel_grid_h100 =" not in text:  # the document, beside the calibrate run it comes from
        title, url = doc["title"], doc["url"]
        docline = f'kernel_grid_h100 = {{ title = "{title}", url = "{url}" }}\n'
        text = re.sub(r"^(calibrate_h100 = [^\n]*\n)", lambda m: m.group(1) + docline, text, count=1, flags=re.M)
    text = text.rstrip("\n") + "\n" + "\n".join(sources) + "\n"
    path.write_text(text)
    print(f"{name}: {len(lines)} curves")
