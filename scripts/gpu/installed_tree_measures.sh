#!/usr/bin/env bash
# Checks that an installed modelcost tree still measures on a GPU machine.
#
#   scripts/gpu/installed_tree_measures.sh pack DIR   # here: cmake --install build into DIR/prefix, and copy
#                                                     # the non-CUDA shared libraries it needs into DIR/libs
#   scripts/gpu/installed_tree_measures.sh run DIR    # on the GPU machine, from the repository root
#
# `pack` needs a build with the CUDA module (build/libmodelcost_cuda.so, sm_90 by default); the GPU
# machine provides the CUDA, cuDNN and CUPTI libraries and the driver.
set -euo pipefail
mode=${1:?pack or run} dir=${2:?directory}
repo=$(cd "$(dirname "$0")/../.." && pwd)

if [ "$mode" = pack ]; then
  rm -rf "$dir/prefix" "$dir/libs"
  mkdir -p "$dir/libs"
  cmake --install "$repo/build" --prefix "$dir/prefix" >/dev/null
  module=$(find "$dir/prefix" -name libmodelcost_cuda.so)
  [ -n "$module" ] || { echo "pack: the build has no CUDA module" >&2; exit 1; }
  # Every library outside glibc, libstdc++ and CUDA that the binary or the module loads.
  ldd "$dir/prefix/bin/modelcost" "$module" | awk '/=> \// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libgcc_s|libstdc\+\+|libpthread|libdl|librt|libutil|ld-linux[^/]*)\.so' |
    grep -Eiv 'cuda|cudnn|cublas|cupti' | xargs -r cp -L -t "$dir/libs"
  du -sh "$dir"
  exit 0
fi

[ "$mode" = run ] || { echo "usage: $0 pack|run DIR" >&2; exit 2; }
dir=$(cd "$dir" && pwd)
bin="$dir/prefix/bin/modelcost"
export LD_LIBRARY_PATH="$dir/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$(mktemp -d)"  # not the source tree: the installed tree must find its own files
echo "== ldd (CUDA libraries the analyzer links; none expected)"
ldd "$bin" | grep -Ei 'cuda|cudnn|cublas|cupti' || echo "none"
echo "== --version"
"$bin" --version
echo "== --list-gpus: $("$bin" --list-gpus | tail -n +2 | wc -l) devices"
echo "== --gpu auto --measure"
"$bin" "$repo/samples/resnet50.onnx" --gpu auto --measure --batch 1 --dtype fp16 --top 5
echo "== calibrate"
"$bin" calibrate --gpu auto | head -12
echo "installed_tree_measures: ok"
