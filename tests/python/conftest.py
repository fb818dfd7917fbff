import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(REPO, "samples", "resnet50.onnx")


@pytest.fixture
def sample():
    return SAMPLE


@pytest.fixture
def repo():
    return REPO
