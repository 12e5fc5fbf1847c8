"""Shared fixtures of the PyTorch frontend tests."""
import logging

import pytest
import torch

from tpuc.dynamo import cache
from tpuc.testing import torchvision_models as tv


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
    """torchvision.models (tpuc.testing.torchvision_models); skips without it."""
    try:
        return tv.models()
    except ImportError as e:
        pytest.skip(str(e))


def randomize(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """tpuc.testing.torchvision_models.randomize."""
    return tv.randomize(model, seed)


def cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    return torch.nn.functional.cosine_similarity(a.flatten().double(), b.flatten().double(),
                                                 dim=0).item()
