"""Shared fixtures of the PyTorch frontend tests."""
import logging

import pytest
import torch

from tpuc.dynamo import cache
from tpuc.testing import real_models


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
        return real_models.torchvision_models()
    except ImportError as e:
        pytest.skip(str(e))


randomize = real_models.randomize


def cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    return torch.nn.functional.cosine_similarity(a.flatten().double(), b.flatten().double(),
                                                 dim=0).item()
