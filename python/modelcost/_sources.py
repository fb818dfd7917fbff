"""What ``analyze`` and ``diff`` accept as a model: a path, the bytes of an ONNX file, an
``onnx.ModelProto``, or a ``torch.nn.Module`` with example inputs (exported in-process). The
engine reads files, so the last three are written to a private temporary folder, kept as long as
the result that needs it."""

from __future__ import annotations

import io
import os
import tempfile
from typing import Any, Optional, Sequence, Tuple


class ModelFile:
    """A model as a file path, and the temporary folder holding it when there is one."""

    def __init__(self, path: str, folder: Optional[tempfile.TemporaryDirectory] = None):
        self.path = path
        self.folder = folder


def _write(data: bytes, name: str) -> ModelFile:
    folder = tempfile.TemporaryDirectory(prefix="modelcost-")
    path = os.path.join(folder.name, name)
    with open(path, "wb") as f:
        f.write(data)
    return ModelFile(path, folder)


def _is_torch_module(model: Any) -> bool:
    try:
        import torch
    except ImportError:
        return False
    return isinstance(model, torch.nn.Module)


def _torch_onnx(module: Any, example_inputs: Sequence[Any]) -> bytes:
    """The module exported by torch.onnx.export (its node names carry the module path, which
    ``by_module`` groups by)."""
    import torch

    if not example_inputs:
        raise TypeError("a torch.nn.Module needs example inputs: analyze(module, torch.randn(1, 3, 224, 224))")
    names = ["input"] if len(example_inputs) == 1 else ["input_{}".format(i) for i in range(len(example_inputs))]
    buffer = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, tuple(example_inputs), buffer, input_names=names, opset_version=17,
                          do_constant_folding=False)
    return buffer.getvalue()


def model_file(model: Any, example_inputs: Tuple[Any, ...] = (), argument: str = "model") -> ModelFile:
    """``model`` as a file the engine reads."""
    if isinstance(model, (str, os.PathLike)):
        if example_inputs:
            raise TypeError("example inputs go with a torch.nn.Module, not a file path")
        return ModelFile(os.fspath(model))
    if isinstance(model, (bytes, bytearray, memoryview)):
        return _write(bytes(model), "model.onnx")
    if hasattr(model, "SerializeToString") and hasattr(model, "graph"):  # onnx.ModelProto
        name = (model.graph.name or "model").replace(os.sep, "_")
        return _write(model.SerializeToString(), name + ".onnx")
    if _is_torch_module(model):
        return _write(_torch_onnx(model, example_inputs), type(model).__name__ + ".onnx")
    raise TypeError("{} must be a path, the bytes of an ONNX file, an onnx.ModelProto or a torch.nn.Module "
                    "(with example inputs), not {}".format(argument, type(model).__name__))
