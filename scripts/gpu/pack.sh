#!/bin/bash
# Packs this machine's build for the GPU machine's calls (zoo_call.sh, llm_call.sh, llm_tp_call.sh):
# .carry/pack.tar.xz with bin/ (modelcost, its CUDA module, the CUDA module's test binary and
# kernel benchmarks, stripped) and lib/ (the shared libraries the GPU machine lacks: ONNX, protobuf, fmt, toml++, CUPTI).
# Usage: scripts/gpu/pack.sh [BUILD_DIR]   (then pass carry [".carry/pack.tar.xz"] to the call)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
rm -rf .carry/pack && mkdir -p .carry/pack/bin .carry/pack/lib
cp "$BUILD/modelcost" "$BUILD/libmodelcost_cuda.so" .carry/pack/bin/
[ -x "$BUILD/tests/measure/measure_cuda_tests" ] && cp "$BUILD/tests/measure/measure_cuda_tests" .carry/pack/bin/
for b in depthwise_kernels attention_load measure_wall latent_decoding; do [ -x "$BUILD/bench/$b" ] && cp "$BUILD/bench/$b" .carry/pack/bin/; done
strip .carry/pack/bin/*
for lib in libonnx.so.1 libonnx_proto.so.1 libprotobuf.so.32 libfmt.so.9 libtomlplusplus.so.3; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" .carry/pack/lib/
done
cp -L "$(find /usr/local/cuda/ -name 'libcupti.so.13' | head -1)" .carry/pack/lib/
# -9e: its 64 MiB window finds the kernels the CUDA module and its test binary share (38 -> 22 MB)
(cd .carry && rm -f pack.tar.xz && XZ_OPT="-9e -T2" tar cJf pack.tar.xz pack)
ls -la .carry/pack.tar.xz
