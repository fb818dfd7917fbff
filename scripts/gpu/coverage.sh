#!/bin/bash
# Usage (on the GPU machine, from the repo root, binaries and libraries carried in
# .carry/measure/{bin,lib}, reference models in .carry/measure/models): scripts/gpu/coverage.sh
# Runs the measure tests, then --measure on every carried model and on fresh torchvision
# exports, at batch 1 and 32 (fp16), and the PyTorch CUDA-graph references of the same networks.
# Each model's line: nodes measured / not, the reasons, sum of node medians, whole model, wall.
set -o pipefail
shopt -s nullglob  # an empty /tmp/exports adds no model
C=.carry/measure
# The binaries' compiled-in paths: the source dir (any /work/<checkout>) and ../shared/models.
mkdir -p /work/shared; for d in /work/main /work/wt-measure; do [ -e $d ] || ln -s "$PWD" $d; done
[ -e /work/shared/models ] || ln -s "$PWD/$C/models" /work/shared/models
mkdir -p build && cp $C/bin/modelcost $C/bin/libmodelcost_cuda.so build/
CUDNN=$(dirname "$(find / -name 'libcudnn.so.9' -not -path '/proc/*' 2>/dev/null | head -1)")
LT=$(dirname "$(find / -name 'libcublasLt.so.13' -not -path '/proc/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$PWD/$C/lib:$CUDNN:$LT:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export MODELCOST_CUDA_MODULE=$PWD/$C/bin/libmodelcost_cuda.so
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
R=$OUT/r; mkdir -p $R /tmp/exports
echo "== tests"
for t in measure_tests measure_cuda_tests; do
  $C/bin/$t --gtest_brief=1 > $R/$t.log 2>&1; echo "$t rc=$?"
  grep -E "PASSED|FAILED|SKIPPED \]|Failure" -A3 $R/$t.log | head -30
done
echo "== exports"
PYTHONUNBUFFERED=1 timeout 100 python3 scripts/gpu/export_torchvision.py /tmp/exports ${EXPORTS:-convnext_tiny swin_t} 2>&1 | grep -E "EXPORT|Error" | tee $R/exports.log
summary() {  # json, wall, name
  python3 - "$@" <<'PY'
import json, sys, collections
path, wall, name = sys.argv[1:4]
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
PY
}
measure() {  # model, batch, extra options
  local model=$1 batch=$2; shift 2
  local name=$(basename $model .onnx)_b$batch
  local t0=$(date +%s.%N)
  timeout ${MODEL_TIMEOUT:-60} $C/bin/modelcost $model --gpu auto --measure --batch $batch --dtype fp16 -q "$@" --json $R/$name.json > $R/$name.txt 2>&1
  local rc=$? wall=$(python3 -c "import time; print(round(time.time() - $t0, 1))")
  [ $rc -ne 0 ] && echo "$name rc=$rc $(tail -1 $R/$name.txt)"
  summary $R/$name.json $wall $name
}
echo "== coverage"
for m in ${MODELS:-$C/models/*.onnx} /tmp/exports/*.onnx; do
  case $m in
    *bert*) measure $m 1 --dim batch=1 --dim seq=128 ;;
    *gpt2*|*tinyllama*) measure $m 1 --dim seq=128 ;;
    *) measure $m 1 ;;
  esac
done
for m in $C/models/resnet50_op13.onnx $C/models/mobilenet_v2_op13.onnx /tmp/exports/convnext*dyn*.onnx; do
  [ -e $m ] && measure $m 32
done
echo "== torch"
PYTHONUNBUFFERED=1 timeout 120 python3 scripts/gpu/torch_reference.py ${TORCH_MODELS:-resnet50 mobilenet_v2 efficientnet_b0 convnext_tiny} 2>&1 | grep -E "TORCH|Error" | tee $R/torch.log
tar czf $OUT/results.tgz -C $OUT r
