# Exports torchvision models to ONNX for measurement coverage runs (TorchScript-based exporter).
# Classification and segmentation models get a symbolic batch dim (NAME_opN_dyn.onnx); detection
# models take a list of images and export at one 320x320 image (NAME_opN.onnx).
# Usage: python3 export_torchvision.py [--half] [--opset N] OUT_DIR NAME...
# NAME: a classification model (resnet50), or segmentation.NAME / detection.NAME.
# --half: fp16 weights, exported on the GPU (half the file size; the graph is the same).
import os, sys, torch, torchvision

args = sys.argv[1:]
half = "--half" in args
args = [a for a in args if a != "--half"]
opset = 18
if "--opset" in args:
    i = args.index("--opset")
    opset = int(args[i + 1])
    del args[i:i + 2]
out_dir = args[0]


def build(name):
    family, _, short = name.rpartition(".")
    module = getattr(torchvision.models, family) if family else torchvision.models
    kwargs = {"weights_backbone": None} if family in ("segmentation", "detection") else {}
    if family == "segmentation" and not short.startswith("lraspp"):
        kwargs["aux_loss"] = False
    return short, family, getattr(module, short)(**kwargs).eval()


for name in args[1:]:
    try:
        short, family, model = build(name)
        detection = family == "detection"
        x = torch.randn(3, 320, 320) if detection else torch.randn(1, 3, 224, 224)
        if half: model, x = model.half().cuda(), x.half().cuda()
        inputs = ([x],) if detection else (x,)
        suffix = "" if detection else "_dyn"
        path = os.path.join(out_dir, f"{short}_op{opset}{suffix}{'_fp16' if half else ''}.onnx")
        kwargs = dict(opset_version=opset, input_names=["x"])
        if not detection:
            outputs = ["out"] if family == "segmentation" else ["y"]
            kwargs.update(output_names=outputs, dynamic_axes={"x": {0: "batch"}, outputs[0]: {0: "batch"}})
        try:
            torch.onnx.export(model, inputs, path, dynamo=False, **kwargs)
        except TypeError:  # a torch without the dynamo switch
            torch.onnx.export(model, inputs, path, **kwargs)
        print(f"EXPORT {name} op{opset}: {path} {os.path.getsize(path) / 1e6:.1f} MB", flush=True)
    except Exception as e:
        print(f"EXPORT {name} op{opset} Error: {str(e)[:300]}", flush=True)
