"""torchvision's model definitions without its C extension.

The PyPI wheel of torchvision is built for a CUDA torch; with the CPU torch
its C extension does not load and ``import torchvision`` fails, while the
model definitions are pure Python. :func:`models` imports
``torchvision.models`` from a package stub that skips the extension.
"""
from __future__ import annotations

import importlib.util
import sys
import types


def models():
    """``torchvision.models``; ImportError when torchvision is not installed."""
    try:
        import torchvision.models as tv_models
        return tv_models
    except (ImportError, RuntimeError, OSError):
        pass
    spec = importlib.util.find_spec("torchvision")
    if spec is None:
        raise ImportError("torchvision is not installed (scripts/bootstrap.sh installs it)")
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]
    pkg = types.ModuleType("torchvision")
    pkg.__path__ = list(spec.submodule_search_locations)
    pkg.__spec__ = spec
    sys.modules["torchvision"] = pkg
    import torchvision.models as tv_models
    return tv_models


def randomize(model, seed: int = 0, var_decades: float = 0.0):
    """Random weights everywhere (torchvision zero-initializes some heads and
    biases, which would make outputs trivially equal), BN statistics
    included; eval mode. BN variances are uniform in [0.5, 1.5), or with
    `var_decades` > 0 log-uniform over that many decades around 1, so that
    channels of one tensor differ in range as trained networks' do."""
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.is_floating_point():
                continue
            if name.endswith("running_var") and var_decades > 0:
                u = torch.rand(t.shape, generator=g) - 0.5
                t.copy_(10.0 ** (u * var_decades))
            elif name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            elif t.dim() >= 2:
                fan_in = t[0].numel()
                t.copy_(torch.randn(t.shape, generator=g) / fan_in ** 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=g) * 0.2 + (1.0 if "weight" in name else 0))
    return model.eval()
