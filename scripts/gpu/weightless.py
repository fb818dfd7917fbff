# Weightless copies of ONNX exports for carrying to the GPU machine: every initializer over 4 KB
# becomes external data whose file is not written, so a 100 MB export shrinks to a few hundred KB.
# modelcost reads shapes from the initializers' dims and measurement fills weights with random
# values, so the shapes, costs and timings are those of the full file.
# Usage: python3 weightless.py OUT_DIR MODEL.onnx...
import os, sys
import onnx
from onnx.external_data_helper import set_external_data

out_dir = sys.argv[1]
for path in sys.argv[2:]:
    model = onnx.load(path)
    name = os.path.basename(path)
    for t in model.graph.initializer:
        if t.HasField("raw_data") and len(t.raw_data) > 4096:
            set_external_data(t, location=name + ".weights")  # never written
            t.ClearField("raw_data")
            t.data_location = onnx.TensorProto.EXTERNAL
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(model.SerializeToString())
    print(f"{name}: {os.path.getsize(path) / 1e6:.1f} MB -> {os.path.getsize(os.path.join(out_dir, name)) / 1e3:.0f} KB")
