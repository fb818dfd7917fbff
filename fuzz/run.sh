#!/usr/bin/env bash
# Fuzzes modelcost with libFuzzer under ASan + UBSan.
#   fuzz/run.sh [TARGET] [SECONDS] [extra libFuzzer flags...]     (default: model, 600 s, one job)
# TARGET: model (a model file through the CLI: load, shapes, costs, reports), user_rules (an --ops
# rules file: TOML and formulas) or llm (`modelcost llm` on a decoder of fuzzed geometry); `all`
# runs each for SECONDS in turn. Builds build-fuzz/ (clang), seeds fuzz/corpus_TARGET (the model
# target: fuzz/corpus, from the small test models and the hostile graphs of the tests) and writes
# failing inputs to fuzz/findings/. A failure found belongs in fuzz/regressions/ once fixed.
# MODELCOST_FUZZ_BUILD=DIR uses a tree already configured with -DMODELCOST_FUZZ=ON (the sanitizer
# job's build-asan/) instead of configuring build-fuzz/; MODELCOST_FUZZ_BINARIES=DIR runs the targets
# already built in DIR and builds nothing (a machine with more cores, the libraries beside them);
# MODELCOST_FUZZ_BUILD_ONLY=1 builds the target and stops.
set -euo pipefail
cd "$(dirname "$0")/.."
target=model
case "${1:-}" in model|user_rules|llm|all) target=$1; shift ;; esac
seconds=${1:-600}
shift || true

if [ "$target" = all ]; then
  for t in model user_rules llm; do "$0" "$t" "$seconds" "$@"; done
  exit 0
fi

case "$target" in
  model) binary=modelcost_fuzz corpus=fuzz/corpus dict=fuzz/model.dict max_len=200000 ;;
  user_rules) binary=modelcost_fuzz_user_rules corpus=fuzz/corpus_user_rules dict=fuzz/user_rules.dict max_len=4096 ;;
  llm) binary=modelcost_fuzz_llm corpus=fuzz/corpus_llm dict=fuzz/llm.dict max_len=64 ;;
esac

build=${MODELCOST_FUZZ_BUILD:-build-fuzz}
bindir=${MODELCOST_FUZZ_BINARIES:-$build/fuzz}
if [ -z "${MODELCOST_FUZZ_BINARIES:-}" ]; then
  if [ "$build" = build-fuzz ]; then
    CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g" \
      -DMODELCOST_FUZZ=ON >/dev/null
  fi
  cmake --build "$build" --target "$binary"
fi
[ -z "${MODELCOST_FUZZ_BUILD_ONLY:-}" ] || exit 0

mkdir -p "$corpus" fuzz/findings
if [ -z "$(find "$corpus" -maxdepth 1 -type f -print -quit)" ]; then
  case "$target" in
    model)
      find tests/models/unseen -name '*.onnx' -size -100k -exec cp {} "$corpus"/ \;
      cp fuzz/regressions/*.onnx "$corpus"/ 2>/dev/null || true
      if [ -x build/tests/cli/cli_tests ]; then
        MODELCOST_HOSTILE_OUT=$PWD/$corpus build/tests/cli/cli_tests --gtest_filter='Generated/HostileModels.*' >/dev/null || true
      fi ;;
    user_rules)
      cp fuzz/regressions/user_rules/* fuzz/seeds/user_rules/* "$corpus"/ 2>/dev/null || true ;;
    llm)
      cp fuzz/regressions/llm/* fuzz/seeds/llm/* "$corpus"/ 2>/dev/null || true ;;
  esac
fi

export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export TMPDIR=${TMPDIR:-/dev/shm}  # the targets write each input and its reports there
# The limits are the release build's (10 s, 1 GB: tests/cli/hostile_models_test.cpp checks them on
# the hostile graphs and on regressions/) scaled for this build: -O1 with ASan + UBSan runs the
# largest legal model (300,000 nodes expanded from a few KB of nested functions) about 5x slower,
# and ASan's redzones and quarantine about triple its memory.
exec "$bindir/$binary" "$corpus" -dict="$dict" -artifact_prefix="fuzz/findings/$target-" \
  -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 -malloc_limit_mb=1024 -max_len="$max_len" \
  -print_final_stats=1 "$@"
