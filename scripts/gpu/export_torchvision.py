# Exports torchvision classification models to ONNX for measurement coverage runs: opset 18 with
# a symbolic batch dim (file NAME_op18_dyn.onnx), TorchScript-based exporter.
# Usage: python3 export_torchvision.py OUT_DIR NAME...
import os, sys, torch, torchvision

out_dir = sys.argv[1]
for name in sys.argv[2:]:
    try:
        model = getattr(torchvision.models, name)().eval()
        x = torch.randn(1, 3, 224, 224)
        path = os.path.join(out_dir, f"{name}_op18_dyn.onnx")
        kwargs = dict(opset_version=18, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        try:
            torch.onnx.export(model, (x,), path, dynamo=False, **kwargs)
        except TypeError:  # a torch without the dynamo switch
            torch.onnx.export(model, (x,), path, **kwargs)
        print(f"EXPORT {name}: {path} {os.path.getsize(path) / 1e6:.1f} MB", flush=True)
    except Exception as e:
        print(f"EXPORT {name} Error: {e}", flush=True)
