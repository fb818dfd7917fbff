#!/usr/bin/env bash
# Fuzzes the analysis (load, shapes, costs, reports) with libFuzzer under ASan + UBSan.
#   fuzz/run.sh [SECONDS] [extra libFuzzer flags...]     (default 600 s, one job)
# Builds build-fuzz/ (clang), seeds fuzz/corpus/ with the small test models and the hostile
# graphs of the tests, and writes crashing inputs to fuzz/findings/. A crash found belongs in
# fuzz/regressions/ once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g" \
  -DMODELCOST_FUZZ=ON >/dev/null
cmake --build build-fuzz --target modelcost_fuzz

mkdir -p fuzz/corpus fuzz/findings
if [ -z "$(ls -A fuzz/corpus)" ]; then
  find tests/models/unseen -name '*.onnx' -size -100k -exec cp {} fuzz/corpus/ \;
  cp fuzz/regressions/*.onnx fuzz/corpus/ 2>/dev/null || true
  if [ -x build/tests/cli/cli_tests ]; then
    MODELCOST_HOSTILE_OUT=$PWD/fuzz/corpus build/tests/cli/cli_tests --gtest_filter='Generated/HostileModels.*' >/dev/null || true
  fi
fi

export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TMPDIR=${TMPDIR:-/dev/shm}  # the target writes each input and its reports there
# The limits are the release build's (10 s, 1 GB: tests/cli/hostile_models_test.cpp checks them on
# the hostile graphs and on regressions/) scaled for this build: -O1 with ASan + UBSan runs the
# largest legal model (300,000 nodes expanded from a few KB of nested functions) about 5x slower,
# and ASan's redzones and quarantine about triple its memory.
exec build-fuzz/fuzz/modelcost_fuzz fuzz/corpus -dict=fuzz/model.dict -artifact_prefix=fuzz/findings/ \
  -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -malloc_limit_mb=1024 -max_len=200000 \
  -print_final_stats=1 "$@"
