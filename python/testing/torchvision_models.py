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
