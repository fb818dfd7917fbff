#!/bin/bash
# One device call of the zoo validation: unpacks the carried build (.carry/pack.tar.xz: bin/ with
# modelcost and its CUDA module, lib/ with the libraries the GPU machine lacks), exports the zoo
# if asked, and measures what it can before the deadline. Usage: scripts/gpu/zoo_call.sh GPU_ENTRY DEADLINE_S [export|compare]
# compare: `--measure`, then PyTorch eager and torch.compile (scripts/gpu/zoo_torch.py, compiling in
# parallel, each GPU timing alone); the zoo's deployed-GPU.csv and torch-GPU.csv, with
# the networks they lacked added, come back in $OUT (FRESH=1: all measured again; NO_TORCH=1: modelcost alone;
# KEEP_JSON=1: every report too, per-kernel figures included, as reports-GPU.tar.xz; ONLY=NET,NET: those
# networks alone, measured again; TORCH_TIMEOUT=S: seconds per torch.compile network (150); CALIBRATE=1: `modelcost calibrate` first, its grid and entry in $OUT).
set -o pipefail
GPU=$1; DEADLINE=$2
source scripts/gpu/unpack.sh
mkdir -p /work; ln -sfn "$PWD" /work/main   # where the binary's compiled-in paths point
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
/tmp/c/pack/bin/modelcost --version | head -3
ZOO=tests/models/zoo; [ -d /tmp/zoo ] && ZOO=/tmp/zoo
if [ -n "$GPU_TESTS" ] && [ -x /tmp/c/pack/bin/measure_cuda_tests ]; then  # the CUDA module's own tests first
  /tmp/c/pack/bin/measure_cuda_tests --gtest_brief=1 > $OUT/gpu-tests.log 2>&1; echo "GPU tests rc=$?"; tail -4 $OUT/gpu-tests.log
fi
if [ -n "$CALIBRATE" ]; then  # the kernel grid and the calibrated entry of this GPU
  /tmp/c/pack/bin/modelcost calibrate --gpu $GPU --kernels-csv $OUT/grid-$GPU.csv --out $OUT/calibrated-$GPU.toml \
    > $OUT/calibrate-$GPU.log 2>&1; echo "calibrate rc=$? (${SECONDS} s)"; grep -A24 "^kernel class" $OUT/calibrate-$GPU.log
fi
if [ "$3" = export ]; then
  mkdir -p /tmp/zoo; PYTHONUNBUFFERED=1 timeout 300 python3 scripts/gpu/zoo.py /tmp/zoo --jobs 14 2>&1 | grep -E "^(OK|FAIL)" | tee $OUT/export.log
  tar cJf $OUT/zoo.tar.xz -C /tmp zoo; ZOO=/tmp/zoo
fi
if [ "$3" = compare ]; then  # adds to the zoo's deployed-GPU.csv and torch-GPU.csv what they lack
  if [ -z "$FRESH" ]; then  # FRESH=1: measure every network again
    cp tests/models/zoo/deployed-$GPU.csv $OUT/deployed-$GPU.csv 2>/dev/null
    cp tests/models/zoo/torch-$GPU.csv $OUT/torch-$GPU.csv 2>/dev/null
  fi
  # modelcost first, alone on the GPU (a compilation beside it slowed every kernel of a graph by a
  # third); then PyTorch, its compilations side by side and each timing alone (zoo_torch.py's lock).
  LEFT=$((DEADLINE - SECONDS - 60)); MEASURE=$LEFT; [ -n "$NO_TORCH" ] || MEASURE=$((LEFT * 2 / 5))
  echo "comparing for ${LEFT} s, modelcost starting networks for ${MEASURE} s"
  PYTHONUNBUFFERED=1 python3 scripts/gpu/zoo_measure.py /tmp/c/pack/bin/modelcost $ZOO $OUT/deployed-$GPU.csv --gpu $GPU \
    ${ONLY:+--only $ONLY} --skip-done $OUT/deployed-$GPU.csv --deadline $MEASURE --timeout ${TIMEOUT:-60} --lock /tmp/gpu.lock \
    ${KEEP_JSON:+--keep-json /tmp/reports} 2>&1 | tail -5
  [ -z "$KEEP_JSON" ] || tar cJf $OUT/reports-$GPU.tar.xz -C /tmp reports
  [ -n "$NO_TORCH" ] && exit 0
  LEFT=$((DEADLINE - SECONDS - 30))
  PYTHONUNBUFFERED=1 timeout $LEFT python3 scripts/gpu/zoo_torch.py $OUT/torch-$GPU.csv --jobs ${JOBS:-4} \
    ${ONLY:+--only $ONLY} --skip-done $OUT/torch-$GPU.csv --deadline $((LEFT - ${TORCH_TIMEOUT:-150})) --timeout ${TORCH_TIMEOUT:-150} > $OUT/torch.log 2>&1
  tail -60 $OUT/torch.log; exit 0
fi
cp tests/models/zoo/measured-$GPU.csv $OUT/measured-$GPU.csv 2>/dev/null
LEFT=$((DEADLINE - SECONDS)); echo "measuring for ${LEFT} s"
PYTHONUNBUFFERED=1 python3 scripts/gpu/zoo_measure.py /tmp/c/pack/bin/modelcost $ZOO $OUT/measured-$GPU.csv --gpu $GPU \
  --skip-done $OUT/measured-$GPU.csv --deadline $LEFT --timeout 60 ${PART:+--part $PART} 2>&1 | tail -80
