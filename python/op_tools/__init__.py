"""Op tools for graphs compiled by tpuc's torch.compile backend: capture,
auto-compare, fallback and time measurement of the ATen ops inside forward
and backward graphs. Each is a context manager (`with OpCapture(): ...`)
or started and stopped by hand; the `OP_<TOOL>_LIST` /
`OP_<TOOL>_DISABLE_LIST` environment lists select ops (see `selection`)."""
from .capture import OpCapture
from .compare import OpAutoCompare
from .fallback import OpFallback
from .timing import OpTimeMeasure
from .instrument import instrument
from .tool import OpCall, OpTool, active, device_run, signature

__all__ = ["OpAutoCompare", "OpCall", "OpCapture", "OpFallback", "OpTimeMeasure", "OpTool",
           "active", "device_run",
           "instrument", "signature"]
