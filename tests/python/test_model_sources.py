"""analyze() of a path, bytes, an onnx.ModelProto and a torch.nn.Module give the same analysis."""

import pytest

import modelcost


def test_bytes_and_path_agree(sample):
    with open(sample, "rb") as f:
        data = f.read()
    assert modelcost.analyze(data).totals == modelcost.analyze(sample).totals
    assert modelcost.analyze(bytearray(data)).totals["macs"] == 4089184256


def test_model_proto(sample):
    onnx = pytest.importorskip("onnx")
    proto = onnx.load(sample, load_external_data=False)
    assert modelcost.analyze(proto).totals["macs"] == 4089184256


def test_not_a_model_is_a_type_error():
    with pytest.raises(TypeError, match="must be a path, the bytes of an ONNX file"):
        modelcost.analyze(42)


class _SmallConvNet:
    """conv 3->8 3x3 pad 1, relu, conv 8->16 3x3 stride 2 pad 1, global mean, linear 16->10."""

    @staticmethod
    def build(torch):
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.features = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                                                    torch.nn.Conv2d(8, 16, 3, stride=2, padding=1))
                self.head = torch.nn.Linear(16, 10)

            def forward(self, x):
                return self.head(self.features(x).mean((2, 3)))

        return Net()


def test_torch_module_gives_the_exact_macs():
    torch = pytest.importorskip("torch")
    net = _SmallConvNet.build(torch)
    r = modelcost.analyze(net, torch.randn(1, 3, 32, 32))
    first = 8 * 3 * 3 * 3 * 32 * 32       # out channels x in channels x kernel x output pixels
    second = 16 * 8 * 3 * 3 * 16 * 16     # stride 2: 16 x 16 outputs
    head = 16 * 10
    assert r.totals["macs"] == first + second + head == 516256
    assert r.totals["params"] == (8 * 27 + 8) + (16 * 72 + 16) + (160 + 10)
    # The batch of the example input is the model's.
    assert modelcost.analyze(net, torch.randn(4, 3, 32, 32)).totals["macs"] == 4 * 516256


def test_torch_module_by_module_groups_by_module_names():
    torch = pytest.importorskip("torch")
    r = modelcost.analyze(_SmallConvNet.build(torch), torch.randn(1, 3, 32, 32), by_module=2)
    macs = {row["module"]: row["macs"] for row in r.by_module}
    assert macs["/features/features.0"] == 8 * 27 * 32 * 32
    assert macs["/features/features.2"] == 16 * 72 * 16 * 16
    assert macs["/head"] == 160


def test_torch_module_needs_example_inputs():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="needs example inputs"):
        modelcost.analyze(_SmallConvNet.build(torch))
