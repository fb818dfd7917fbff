#!/bin/bash
# One device call of the LLM validation: unpacks the carried build (.carry/pack.tar.xz, as
# zoo_call.sh does), then for each config of the LLM set the deployed prefill (batches 1 and 8,
# prompts 128 and 2048) and decode steps with `modelcost llm --measure`, the serving iterations of
# ITERATIONS (PxCHUNK@PAST+D@CONTEXT, space-separated) on the configs of ITERATE, and PyTorch's
# prefill with SDPA in a CUDA graph (bench/llm_prefill_reference.py) in the same call. Reports come
# back in $OUT/results.tar (llm-NAME-pPROMPT.json and .txt, torch-prefill.json, the logs), updated
# after each step so that a call cut short keeps what it measured.
#   scripts/gpu/llm_call.sh GPU_ENTRY CONFIG.json...   (GPU_TESTS=1: the CUDA module's tests first;
#   CALIBRATE=1: `modelcost calibrate` next, its grid and entry in $OUT; NO_TORCH=1; TORCH_CONFIGS:
#   the configs PyTorch runs, when not all of them fit the GPU whole)
set -o pipefail
GPU=$1; shift
source scripts/gpu/unpack.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
MC=/tmp/c/pack/bin/modelcost
R=/tmp/results; mkdir -p $R
keep() { tar cf $OUT/results.tar -C $R .; }
if [ -n "$GPU_TESTS" ]; then
  /tmp/c/pack/bin/measure_cuda_tests --gtest_brief=1 > $R/gpu-tests.log 2>&1; echo "GPU tests rc=$? (${SECONDS} s)"
  grep -E "FAILED|PASSED" $R/gpu-tests.log | tail -8; keep
fi
if [ -n "$CALIBRATE" ]; then
  $MC calibrate --gpu $GPU --kernels-csv $R/grid-$GPU.csv --out $R/calibrated-$GPU.toml > $R/calibrate-$GPU.log 2>&1
  echo "calibrate rc=$? (${SECONDS} s)"; grep -E "^ *(decode|prefill)" $R/calibrate-$GPU.log; keep
fi
for cfg in "$@"; do
  name=$(basename "$cfg" .json)
  iterate=""
  if [[ " $ITERATE " == *" $name "* ]]; then for mix in $ITERATIONS; do iterate="$iterate --iteration $mix"; done; fi
  $MC llm "$cfg" --gpu $GPU --dtype fp16 --prompt 128 --batch 1,8 --context 128,2048 $iterate --measure \
    --json $R/llm-$name-p128.json > $R/llm-$name-p128.txt 2>&1; echo "$name p128 rc=$? (${SECONDS} s)"
  $MC llm "$cfg" --gpu $GPU --dtype fp16 --prompt 2048 --batch 1,8 --context 2048 --measure \
    --json $R/llm-$name-p2048.json > $R/llm-$name-p2048.txt 2>&1; echo "$name p2048 rc=$? (${SECONDS} s)"
  grep -E "^  (prefill|decode|iteration)" $R/llm-$name-p128.txt $R/llm-$name-p2048.txt | grep -v "graph as exported" | cut -c1-200
  keep
done
if [ -z "$NO_TORCH" ]; then
  timeout ${TORCH_TIMEOUT:-300} python3 bench/llm_prefill_reference.py ${TORCH_CONFIGS:-"$@"} --batch 1,8 --prompt 128,2048 > $R/torch-prefill.json 2> $R/torch-prefill.log
  echo "torch rc=$? (${SECONDS} s)"; cat $R/torch-prefill.json; tail -3 $R/torch-prefill.log; keep
fi
