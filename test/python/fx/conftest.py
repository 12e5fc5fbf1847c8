"""Shared fixtures of the PyTorch frontend tests."""
import logging

import pytest
import torch

from tpuc.dynamo import cache
from tpuc.examples.models import torchvision_models as _torchvision_models


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    """Every test starts with an empty compile cache of its own."""
    monkeypatch.setenv("TPUC_CACHE_DIR", str(tmp_path / "cache"))
    cache.clear_memory()
    torch._dynamo.reset()
    yield tmp_path / "cache"
    cache.clear_memory()


@pytest.fixture
def tpuc_log(caplog):
    caplog.set_level(logging.INFO, logger="tpuc.dynamo")
    return caplog


def torchvision_models():
    try:
        return _torchvision_models()
    except ImportError:
        pytest.skip("torchvision is not installed (scripts/bootstrap.sh installs it)")


def randomize(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Random weights everywhere (torchvision zero-initializes some heads and
    biases, which would make outputs trivially equal), BN statistics
    included; eval mode."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.is_floating_point():
                continue
            if name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            elif t.dim() >= 2:
                fan_in = t[0].numel()
                t.copy_(torch.randn(t.shape, generator=g) / fan_in ** 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=g) * 0.2 + (1.0 if "weight" in name else 0))
    return model.eval()


def cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    return torch.nn.functional.cosine_similarity(a.flatten().double(), b.flatten().double(),
                                                 dim=0).item()
