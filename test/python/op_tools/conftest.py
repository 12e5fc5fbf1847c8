"""Shared fixtures of the op tools tests."""
import pytest
import torch

from tpuc.dynamo import cache


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch):
    """An empty compile cache, no op list from the environment, files in tmp."""
    monkeypatch.setenv("TPUC_CACHE_DIR", str(tmp_path / "cache"))
    for tool in ("CAPTURE", "AUTOCOMPARE", "FALLBACK", "TIME_MEASURE"):
        monkeypatch.delenv(f"OP_{tool}_LIST", raising=False)
        monkeypatch.delenv(f"OP_{tool}_DISABLE_LIST", raising=False)
    monkeypatch.chdir(tmp_path)
    cache.clear_memory()
    torch._dynamo.reset()
    yield
    cache.clear_memory()
