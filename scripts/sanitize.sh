#!/usr/bin/env bash
# The whole test suite and the fuzz regression corpus under AddressSanitizer + UndefinedBehavior-
# Sanitizer (clang, CPU only, no CUDA), aborting at the first report, then a short run of each
# libFuzzer target (MODELCOST_FUZZ_SECONDS each, default 60; 0 skips them). Builds into build-asan/.
# Needs what `scripts/setup.sh --with-sanitizers` installs.
set -euo pipefail
cd "$(dirname "$0")/.."

# -O1 keeps the instrumented build and its tests fast enough for CI; -g names lines in reports.
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g" \
  -DMODELCOST_FUZZ=ON >/dev/null
cmake --build build-asan -j"$(nproc)"

# Leak checking is off: ONNX's schema registry and protobuf keep process-lifetime allocations.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" --timeout 600

# The fuzz targets (model, user_rules, llm) from this build, each seeded from its regressions.
fuzz_seconds=${MODELCOST_FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" -gt 0 ]; then
  for target in model user_rules llm; do MODELCOST_FUZZ_BUILD=build-asan fuzz/run.sh "$target" "$fuzz_seconds"; done
fi
