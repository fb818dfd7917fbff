#!/usr/bin/env bash
# The whole test suite and the fuzz regression corpus under AddressSanitizer + UndefinedBehavior-
# Sanitizer (clang, CPU only, no CUDA), aborting at the first report. Builds into build-asan/.
# Needs what `scripts/setup.sh --with-sanitizers` installs.
set -euo pipefail
cd "$(dirname "$0")/.."

# -O1 keeps the instrumented build and its tests fast enough for CI; -g names lines in reports.
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g" \
  -DMODELCOST_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$(nproc)"

# Leak checking is off: ONNX's schema registry and protobuf keep process-lifetime allocations.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" --timeout 600
