"""Mixed precision: quantize tables and the search for the layers to keep in float.

    from tpuc.quant import search_qtable
    r = search_qtable("net.mlir", "dataset/", "net_cali_table", "net_qtable",
                      chip="tpu_edge", expected_cos=0.99, workers=2)

Modules: :mod:`.qtable` (the table format), :mod:`.sensitivity` (float
references, local errors, clipping against rounding, work items),
:mod:`.fanout` (local processes or Ray), :mod:`.search` (the search and
its report).
"""
from .qtable import FLOAT_MODES, MODES, read_qtable, write_qtable

__all__ = ["FLOAT_MODES", "MODES", "SearchError", "SearchResult", "read_qtable",
           "search_qtable", "write_qtable"]


def __getattr__(name: str):
    # The search needs the compiler (native MLIR); the table format does not.
    if name in ("SearchError", "SearchResult", "search_qtable"):
        from . import search
        return getattr(search, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
