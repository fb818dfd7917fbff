#!/bin/bash
# One device call on the wall time of `--measure`: the CUDA module's tests first (GPU_TESTS=1), then
# for each NET-bBATCH of the zoo bench/measure_wall: the measure stage as `modelcost NET --measure`
# runs it, its wall time by phase, with nothing else on the GPU or the CPUs (zoo_call.sh's wall
# times include the wait for the GPU lock and share the CPUs with torch.compile).
# Logs come back in $OUT (wall-NET-bBATCH.txt). REPORT=1: the CLI's --measure report of each point
# instead (NET-bBATCH.json, every node's timed candidates; GPU: the hwdb entry, h100 by default).
#   scripts/gpu/wall_call.sh NET-bBATCH...     e.g. wall_call.sh fcn_resnet50-b32
set -o pipefail

source scripts/gpu/unpack.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
BIN=/tmp/c/pack/bin
if [ -n "$GPU_TESTS" ]; then
  $BIN/measure_cuda_tests --gtest_brief=1 > $OUT/gpu-tests.log 2>&1; echo "GPU tests rc=$? (${SECONDS} s)"
  grep -E "FAILED|PASSED" $OUT/gpu-tests.log | tail -8
fi
for point in "$@"; do
  net=${point%-b*}; batch=${point##*-b}
  text=(); case $net in bert_base|distilbert|roberta_base|albert_base|electra_small|mpnet_base) text=(--dim seq=128);; esac
  if [ -n "$REPORT" ]; then  # the CLI's report instead: every node's candidates and their times
    start=$SECONDS
    timeout ${TIMEOUT:-300} $BIN/modelcost tests/models/zoo/$net.onnx --gpu ${GPU:-h100} --measure --dtype fp16 \
      --batch $batch "${text[@]}" -q --json $OUT/$point.json > /dev/null 2> $OUT/$point.err
    echo "rc=$? $point: $((SECONDS - start)) s (modelcost --measure)"
    continue
  fi
  timeout ${TIMEOUT:-300} $BIN/measure_wall tests/models/zoo/$net.onnx --batch $batch --dtype fp16 "${text[@]}" \
    > $OUT/wall-$point.txt 2>&1; echo "rc=$? $(head -1 $OUT/wall-$point.txt)"
done
