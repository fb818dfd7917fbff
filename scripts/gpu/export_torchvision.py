# Exports torchvision classification models to ONNX for measurement coverage runs: opset 18 with
# a symbolic batch dim (file NAME_op18_dyn.onnx), TorchScript-based exporter.
# Usage: python3 export_torchvision.py [--half] OUT_DIR NAME...
# --half: fp16 weights, exported on the GPU (half the file size; the graph is the same).
import os, sys, torch, torchvision

args = sys.argv[1:]
half = "--half" in args
args = [a for a in args if a != "--half"]
out_dir = args[0]
for name in args[1:]:
    try:
        model = getattr(torchvision.models, name)().eval()
        x = torch.randn(1, 3, 224, 224)
        if half: model, x = model.half().cuda(), x.half().cuda()
        path = os.path.join(out_dir, f"{name}_op18_dyn{'_fp16' if half else ''}.onnx")
        kwargs = dict(opset_version=18, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        try:
            torch.onnx.export(model, (x,), path, dynamo=False, **kwargs)
        except TypeError:  # a torch without the dynamo switch
            torch.onnx.export(model, (x,), path, **kwargs)
        print(f"EXPORT {name}: {path} {os.path.getsize(path) / 1e6:.1f} MB", flush=True)
    except Exception as e:
        print(f"EXPORT {name} Error: {e}", flush=True)
