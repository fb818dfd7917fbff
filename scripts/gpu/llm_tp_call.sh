#!/bin/bash
# One device call of the LLM step under tensor parallelism, on a machine of several GPUs: for each
# TP in TPS (default "2 4"), `modelcost llm CONFIG --tp TP --measure` with the prefill, a decode
# step and the serving iterations of ITERATIONS; then `modelcost calibrate` (its NCCL all-reduce over
# every GPU) unless NO_CALIBRATE=1. Reports come back in $OUT/results.tar.
#   scripts/gpu/llm_tp_call.sh GPU_ENTRY CONFIG.json
set -o pipefail
GPU=$1; CFG=$2
source scripts/gpu/unpack.sh
NCCL=$(dirname "$(find / -name 'libnccl.so.2' -not -path '/proc/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$NCCL:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c; nvidia-smi topo -m | head -6
MC=/tmp/c/pack/bin/modelcost
R=/tmp/results; mkdir -p $R
keep() { tar cf $OUT/results.tar -C $R .; }
name=$(basename "$CFG" .json)
for tp in ${TPS:-2 4}; do
  iterate=""; for mix in $ITERATIONS; do iterate="$iterate --iteration $mix"; done
  timeout ${RUN_TIMEOUT:-600} $MC llm "$CFG" --gpu $GPU --dtype fp16 --prompt ${PROMPT:-512} --batch 1,8 --context 2048 --tp $tp $iterate --measure \
    --json $R/llm-$name-tp$tp.json > $R/llm-$name-tp$tp.txt 2>&1; echo "$name tp $tp rc=$? (${SECONDS} s)"
  grep -E "^  (prefill|decode|iteration)" $R/llm-$name-tp$tp.txt | grep -v "graph as exported" | cut -c1-220
  grep -E "all-reduce" $R/llm-$name-tp$tp.txt | head -4
  keep
done
if [ -z "$NO_CALIBRATE" ]; then
  timeout ${CALIBRATE_TIMEOUT:-200} $MC calibrate --gpu $GPU --out $R/calibrated-$GPU-x.toml > $R/calibrate-x.log 2>&1
  echo "calibrate rc=$? (${SECONDS} s)"; grep -iE "all-reduce|allreduce" $R/calibrate-x.log | head -5; keep
fi
