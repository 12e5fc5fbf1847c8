"""torchvision's model definitions without its C extension: the PyPI wheel's
extension needs a CUDA torch and makes ``import torchvision`` fail beside
the CPU build, while the model definitions are pure Python."""
from __future__ import annotations

import importlib.util
import sys
import types


def torchvision_models():
    """The ``torchvision.models`` module; ImportError when torchvision is
    not installed (scripts/bootstrap.sh installs it)."""
    try:
        import torchvision.models as models
        return models
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
    import torchvision.models as models
    return models
