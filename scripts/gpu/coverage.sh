#!/bin/bash
# Usage (on the GPU machine, from the repo root, binaries and libraries carried in $CARRY/{bin,lib},
# reference models in $CARRY/models; CARRY defaults to .carry/measure): scripts/gpu/coverage.sh
# Runs the measure tests, exports torchvision models (classification, segmentation, detection)
# at each opset of OPSETS in the background, then --measure (fp16) on every carried model and
# every export at batch 1, the batch-dim models of B32 also at 32 (coverage in the as-written
# view), the wall times of the three goal models with the default (deployed) view first, and the
# PyTorch CUDA-graph references.
# Each model's line: nodes measured / not, the reasons, sum of node medians, whole model, wall;
# one markdown table of them all, written as they finish ($OUT/coverage.md).
# Environment: EXPORTS, OPSETS (default "13 18"), MODELS (set empty: none), B32, VIEW (as-written), MODEL_TIMEOUT,
# GTEST (a gtest filter for the GPU tests), SKIP (any of: tests exports models wall torch).
set -o pipefail
shopt -s nullglob  # an empty /tmp/exports adds no model
C=${CARRY:-.carry/measure}
S=$(dirname "$0")  # the scripts beside this one
# The binaries' compiled-in paths: the source dir (any /work/<checkout>) and ../shared/models.
mkdir -p /work/shared; for d in /work/main /work/wt-measure; do [ -e $d ] || ln -s "$PWD" $d; done
[ -e /work/shared/models ] || ln -s "$PWD/$C/models" /work/shared/models
mkdir -p build && cp $C/bin/modelcost $C/bin/libmodelcost_cuda.so build/
CUDNN=$(dirname "$(find / -name 'libcudnn.so.9' -not -path '/proc/*' 2>/dev/null | head -1)")
LT=$(dirname "$(find / -name 'libcublasLt.so.13' -not -path '/proc/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$PWD/$C/lib:$CUDNN:$LT:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export MODELCOST_CUDA_MODULE=$PWD/$C/bin/libmodelcost_cuda.so MODELCOST_HWDB=$PWD/hwdb
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
R=/tmp/r; mkdir -p $R /tmp/exports  # $OUT gets the table, the test logs and results.tgz
skip() { [[ " $SKIP " == *" $1 "* ]]; }
EXPORTS=${EXPORTS:-"resnet50 mobilenet_v3_large densenet121 inception_v3 regnet_y_400mf shufflenet_v2_x1_0 swin_t
  segmentation.fcn_resnet50 segmentation.deeplabv3_mobilenet_v3_large segmentation.lraspp_mobilenet_v3_large
  detection.ssdlite320_mobilenet_v3_large detection.fasterrcnn_mobilenet_v3_large_320_fpn detection.retinanet_resnet50_fpn"}
if ! skip tests; then
  echo "== tests"
  for t in measure_tests measure_cuda_tests; do
    [ -e $C/bin/$t ] || continue
    timeout 200 $C/bin/$t --gtest_brief=1 ${GTEST:+--gtest_filter=$GTEST} > $R/$t.log 2>&1; echo "$t rc=$?"
    grep -E "PASSED|FAILED|SKIPPED \]|Failure" -A3 $R/$t.log | head -30
    cp $R/$t.log $OUT/
  done
fi
ln -sf $OUT/coverage.md $R/coverage.md  # the table comes back even when the run is cut short
echo "model|batch|nodes|measured|not measured: reasons|node sum ms|whole ms|wall s" > $R/coverage.md
summary() {  # json, wall, name, batch
  python3 - "$@" <<'PY'
import json, sys, collections
path, wall, name, batch = sys.argv[1:5]
try:
    d = json.load(open(path))
except Exception as e:
    print(f"{name}: no report ({e})"); sys.exit()
m = d.get('measurement', {})
reasons = collections.Counter()
for n in d.get('nodes', []):
    k = n.get('kernels') or ''
    if isinstance(k, str) and k.startswith('not measured: '): reasons[k[14:]] += 1
print(f"{name}: measured {m.get('nodes_measured')} not {m.get('nodes_not_measured')} reused {m.get('nodes_reusing_an_identical_nodes_figure')} "
      f"sum {m.get('sum_of_node_medians_ms', 0):.4f} ms whole {m.get('model_latency_ms')} ms kernels {m.get('model_kernels')} "
      f"busy {m.get('model_kernel_busy_ms')} idle {m.get('model_idle_ms')} wall {wall} s; {m.get('model_reason') or ''}")
for r, c in reasons.most_common(6): print(f"    {c} x {r}")
why = "; ".join(f"{c} x {r[:70]}" for r, c in reasons.most_common(3)) or "-"
whole = m.get('model_latency_ms')
with open(path.rsplit('/', 1)[0] + '/coverage.md', 'a') as t:
    t.write(f"{name.rsplit('_b', 1)[0]}|{batch}|{len(d.get('nodes', []))}|{m.get('nodes_measured')}|{m.get('nodes_not_measured')}: {why}|"
            f"{m.get('sum_of_node_medians_ms', 0):.3f}|{whole if whole is None else round(whole, 3)}|{wall}\n")
PY
}
measure() {  # model, batch, extra options
  local model=$1 batch=$2; shift 2
  local name=$(basename $model .onnx)_b$batch$TAG
  local t0=$(date +%s.%N)
  timeout ${MODEL_TIMEOUT:-60} $C/bin/modelcost $model --gpu auto --measure --batch $batch --dtype fp16 -q "$@" --json $R/$name.json > $R/$name.txt 2>&1
  local rc=$? wall=$(python3 -c "import time; print(round(time.time() - $t0, 1))")
  [ $rc -ne 0 ] && echo "$name rc=$rc $(tail -1 $R/$name.txt)"
  summary $R/$name.json $wall $name $batch
}
measure_model() {  # model, batch
  case $1 in
    *bert*) measure $1 $2 --view ${VIEW:-as-written} --dim batch=$2 --dim seq=128 ;;
    *gpt2*|*tinyllama*) measure $1 $2 --view ${VIEW:-as-written} --dim seq=128 ;;
    *) measure $1 $2 --view ${VIEW:-as-written} ;;
  esac
}
if ! skip wall; then
  echo "== wall (default view)"
  measure $C/models/resnet50_op13.onnx 32
  TAG=_as_written measure $C/models/resnet50_op13.onnx 32 --view as-written
  measure $C/models/vit_b_16_op17.onnx 32
  measure $C/models/tinyllama_1b_op18.onnx 1 --dim seq=128
fi
if ! skip exports; then  # after the timed runs, four exporters (2 threads each)
  for o in ${OPSETS:-13 18}; do for e in $EXPORTS; do echo "$o $e"; done; done |
    OMP_NUM_THREADS=2 PYTHONUNBUFFERED=1 xargs -P 4 -L 1 sh -c "timeout 200 python3 $S/export_torchvision.py --opset \$0 /tmp/exports \$1" \
    > $R/exports.log 2>&1 &
  EXPORTER=$!
fi
if ! skip models; then
  echo "== coverage: carried models"
  for m in ${MODELS-$C/models/*.onnx}; do
    case $m in *tinyllama*) continue ;; esac  # its wall time below
    measure_model $m 1
  done
  [ -n "$EXPORTER" ] && wait $EXPORTER
  echo "== exports"; grep -E "EXPORT" $R/exports.log
  echo "== coverage: exports"
  for m in /tmp/exports/*.onnx; do
    measure_model $m 1
    case $m in *_dyn.onnx) [[ " ${B32:-resnet50 fcn_resnet50 swin_t} " == *" $(basename $m | sed 's/_op[0-9]*_dyn.onnx//') "* ]] && measure_model $m 32 ;; esac
  done
fi
if ! skip torch; then
  echo "== torch"
  PYTHONUNBUFFERED=1 timeout 120 python3 $S/torch_reference.py ${TORCH_MODELS:-resnet50 mobilenet_v2 efficientnet_b0 convnext_tiny} 2>&1 | grep -E "TORCH|Error" | tee $R/torch.log
fi
cat $R/coverage.md
tar czhf $OUT/results.tgz --exclude=r/coverage.md -C /tmp r
