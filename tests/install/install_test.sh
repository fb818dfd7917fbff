#!/usr/bin/env bash
# `cmake --install` into a fresh prefix, then the installed binary run from another directory:
# it finds its device database and CUDA module relative to itself and links no CUDA library.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
prefix=$(mktemp -d) elsewhere=$(mktemp -d)
trap 'rm -rf "$prefix" "$elsewhere"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
bin=$(find "$prefix" -path '*/bin/modelcost' -type f)
fail() { echo "install_test: $*" >&2; exit 1; }
[ -x "$bin" ] || fail "no bin/modelcost under $prefix"
cd "$elsewhere"

# Every shipped device is listed (the header line, then one line per device file).
expected=$(ls "$source"/hwdb/*.toml | wc -l)
listed=$(( $("$bin" --list-gpus | wc -l) - 1 ))
[ "$listed" -eq "$expected" ] || fail "--list-gpus lists $listed devices, the source tree has $expected"
"$bin" --gpu a100 "$source/samples/resnet50.onnx" >/dev/null || fail "--gpu a100 failed from the installed tree"

# The analyzer links no CUDA library; the module, when built, is installed beside it and found.
if ldd "$bin" | grep -Ei 'cuda|cudnn|cublas|cupti'; then fail "the installed analyzer links CUDA libraries"; fi
version=$("$bin" --version)
module=$(find "$prefix" -name libmodelcost_cuda.so)
if [ -n "$module" ]; then
  grep -q "CUDA module: $(dirname "$bin")/.*libmodelcost_cuda.so" <<<"$version" || fail "--version does not name the installed module: $version"
else
  grep -q "CUDA module: none" <<<"$version" || fail "--version: $version"
fi

# An empty database is an error naming where it looked, not an empty table.
rm -f "$prefix"/share/modelcost/hwdb/*.toml
if out=$("$bin" --list-gpus 2>&1); then fail "--list-gpus with no device files succeeded: $out"; fi
grep -q "no hardware database.*share/modelcost/hwdb" <<<"$out" || fail "unexpected error: $out"
echo "install_test: ok ($listed devices, module: ${module:-none})"
