"""torch.compile backend for tpuc: `torch.compile(m, backend="tpuc")` or
`backend=tpuc.dynamo.aot_backend` (see `backend`)."""
from .backend import aot_backend, decompositions

__all__ = ["aot_backend", "decompositions"]
