"""Real model definitions for tests: torchvision and transformers with
random weights (nothing from model hubs)."""
from __future__ import annotations

import importlib.util
import sys
import types

import pytest
import torch


def torchvision_models():
    """torchvision.models without running torchvision/__init__: the PyPI
    wheel's C extension needs a CUDA torch, and the package's import fails
    without it, while the model definitions are pure Python."""
    try:
        import torchvision.models as models
        return models
    except (ImportError, RuntimeError, OSError):
        pass
    spec = importlib.util.find_spec("torchvision")
    if spec is None:
        pytest.skip("torchvision is not installed (scripts/bootstrap.sh installs it)")
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]
    pkg = types.ModuleType("torchvision")
    pkg.__path__ = list(spec.submodule_search_locations)
    pkg.__spec__ = spec
    sys.modules["torchvision"] = pkg
    import torchvision.models as models
    return models


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


def tiny_bert(hidden: int = 32, layers: int = 2, heads: int = 2, vocab: int = 100):
    """A transformers BERT encoder of the given size (random weights)."""
    torchvision_models()  # transformers imports torchvision when it is installed
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(vocab_size=vocab, hidden_size=hidden,
                                     num_hidden_layers=layers, num_attention_heads=heads,
                                     intermediate_size=2 * hidden, max_position_embeddings=64)
    return transformers.BertModel(config)


def export_onnx(model: torch.nn.Module, args: tuple, path, input_names, output_names,
                opset: int = 17):
    """`model` (eval mode) to an ONNX file with the TorchScript exporter."""
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        with torch.no_grad():
            torch.onnx.export(model, args, str(path), dynamo=False, opset_version=opset,
                              input_names=list(input_names), output_names=list(output_names))
    return path
