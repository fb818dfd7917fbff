#!/bin/bash
# Usage (on the GPU machine, from the repo root, with the binaries and their libraries carried in
# .carry/final/{bin,lib} and the models in .carry/final/models): scripts/gpu/validate.sh all|tests,measure,autotune,counters,torch,calibrate,bench
# Final GPU validation of the measurement pass on the device machine. Writes logs and JSON reports to $OUT.
set -o pipefail
F=.carry/final
mkdir -p /work; [ -e /work/main ] || ln -s "$PWD" /work/main   # the binaries' compiled-in source dir
CUDNN=$(dirname "$(find / -name 'libcudnn.so.9' -not -path '/proc/*' 2>/dev/null | head -1)")
LT=$(dirname "$(find / -name 'libcublasLt.so.13' -not -path '/proc/*' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$PWD/$F/lib:$CUDNN:$LT:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
mkdir -p $OUT/r build && cp $F/bin/modelcost build/modelcost   # the CLI tests run build/modelcost
what=${1:-all}
if [[ $what == *tests* || $what == all ]]; then
  echo "== tests"; $F/bin/modelcost_tests --gtest_brief=1 > $OUT/r/tests.log 2>&1; echo "tests rc=$?"; grep -E "PASSED|FAILED|SKIPPED \]" $OUT/r/tests.log | head -12
fi
if [[ $what == *calibrate* || $what == all ]]; then
  echo "== calibrate"; $F/bin/modelcost calibrate --gpu auto --out $OUT/r/h100-calibrated.toml 2>&1 | tee $OUT/r/calibrate.log
fi
if [[ $what == *measure* || $what == all ]]; then
  echo "== done-when command"
  /usr/bin/time -f "wall %e s" $F/bin/modelcost samples/resnet50.onnx --gpu auto --measure --batch 32 --dtype fp16 --json $OUT/r/resnet50_b32.json --csv $OUT/r/resnet50_b32.csv > $OUT/r/resnet50_b32.txt 2>&1
  echo "rc=$?"; tail -1 $OUT/r/resnet50_b32.txt; sed -n '/^Measured on/,/roofline prediction/p' $OUT/r/resnet50_b32.txt; grep -E "auto|batch 32:" $OUT/r/resnet50_b32.txt
  for spec in "samples/resnet50.onnx 1" "$F/models/mobilenet_v2_op13.onnx 1" "$F/models/mobilenet_v2_op13.onnx 32" "$F/models/vit_b_16_op17.onnx 1" "$F/models/vit_b_16_op17.onnx 32"; do
    set -- $spec; name=$(basename $1 .onnx)_b$2
    /usr/bin/time -f "wall %e s" $F/bin/modelcost $1 --gpu auto --measure --batch $2 --dtype fp16 -q --json $OUT/r/$name.json > $OUT/r/$name.txt 2>&1
    echo "$name rc=$? $(tail -1 $OUT/r/$name.txt)"
    python3 -c "import json,sys; m=json.load(open('$OUT/r/$name.json'))['measurement']; print('  sum %.4f ms  whole %s ms (rsd %s)  in it %s kernels busy %s ms  predicted %.4f ms  measured %d, not %d' % (m['sum_of_node_medians_ms'], m['model_latency_ms'], m['model_rel_stddev'], m['model_kernels'], m['model_kernel_busy_ms'], m.get('predicted_latency_ms', 0), m['nodes_measured'], m['nodes_not_measured']))"
  done
fi
if [[ $what == *autotune* || $what == all ]]; then
  echo "== autotune"
  /usr/bin/time -f "wall %e s" $F/bin/modelcost $F/models/vit_b_16_op17.onnx --gpu auto --measure --autotune --batch 32 --dtype fp16 -q --json $OUT/r/vit_b32_autotune.json > $OUT/r/vit_b32_autotune.txt 2>&1
  echo "rc=$? $(tail -1 $OUT/r/vit_b32_autotune.txt)"; sed -n '/^Measured on/,/roofline prediction/p' $OUT/r/vit_b32_autotune.txt
fi
if [[ $what == *counters* || $what == all ]]; then
  echo "== counters"
  /usr/bin/time -f "wall %e s" $F/bin/modelcost samples/resnet50.onnx --gpu auto --measure --counters --batch 32 --dtype fp16 --csv $OUT/r/resnet50_b32_counters.csv > $OUT/r/resnet50_b32_counters.txt 2>&1
  echo "rc=$?"; tail -1 $OUT/r/resnet50_b32_counters.txt; grep "counters:" $OUT/r/resnet50_b32_counters.txt
fi
if [[ $what == *torch* || $what == all ]]; then
  echo "== torch"; PYTHONUNBUFFERED=1 python3 scripts/gpu/torch_reference.py resnet50 mobilenet_v2 vit_b_16 2>&1 | grep TORCH | tee $OUT/r/torch.log
  PYTHONUNBUFFERED=1 python3 scripts/gpu/torch_vit_as_onnx.py 2>&1 | grep -E "TORCH|Error" | tee -a $OUT/r/torch.log
fi
if [[ $what == *bench* || $what == all ]]; then
  echo "== bench"; $F/bin/analysis_speed --repeat 5 --model $F/models/tinyllama_1b_op18.onnx 2>&1 | tee $OUT/r/bench.log
fi
tar czf $OUT/results.tgz -C $OUT r
