"""In-process access to tpuc's MLIR: contexts, pass pipelines, interpreter.

Everything goes through tpuc's own MLIR Python package (`tpuc.mlir`), so a
process holds exactly one copy of MLIR.
"""
from __future__ import annotations

import atexit
import logging
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np

from .mlir import ir, passmanager
from .mlir._mlir_libs import _tpucDialects as _native

log = logging.getLogger(__name__)

_native.register_passes()

WEIGHT_FILE_ATTR = "top.weight_file"


class CompileError(RuntimeError):
    """A pass pipeline, verifier or interpreter rejected the module."""


def make_context() -> ir.Context:
    """A context with the func, quant, top and tpu dialects loaded."""
    ctx = ir.Context()
    _native.register_dialects(ctx)
    return ctx


def parse_module(text: str, ctx: ir.Context) -> ir.Module:
    try:
        module = ir.Module.parse(text, ctx)
    except ir.MLIRError as e:
        raise CompileError(_diagnostics(e)) from None
    # MLIR drops unknown entries of a generic op's `<{...}>`; refuse them.
    error = _native.check_property_names(ctx, text)
    if error:
        raise CompileError(error)
    return module


def load_module(path: str | Path, ctx: ir.Context) -> ir.Module:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        module = parse_module(path.read_text(), ctx)
    except CompileError as e:
        raise CompileError(f"{path}: {e}") from None
    # A relative weight file is relative to the module's own file, not to the
    # directory the tool runs in.
    attrs = module.operation.attributes
    if WEIGHT_FILE_ATTR in attrs:
        weights = Path(ir.StringAttr(attrs[WEIGHT_FILE_ATTR]).value)
        if not weights.is_absolute() and (path.parent / weights).is_file():
            with ctx:
                attrs[WEIGHT_FILE_ATTR] = ir.StringAttr.get(str((path.parent / weights).resolve()))
    return module


_SAFE_OPTION = re.compile(r"[\w./+@%~:-]*")
_aliases: list[str] = []


def pass_option_path(path: str | Path) -> str:
    """`path` as a value a textual pass pipeline can carry.

    The pipeline parser ends an option list at the first `}` and splits at
    `,` and spaces, quotes or not; a path holding such characters is passed
    through a symlink with a plain name in a private temporary directory
    (removed at exit). The symlink may dangle: writing through it creates
    the real file."""
    text = str(path)
    if _SAFE_OPTION.fullmatch(text):
        return text
    if not _aliases:
        _aliases.append(tempfile.mkdtemp(prefix="tpuc-paths-"))
        atexit.register(shutil.rmtree, _aliases[0], True)
    link = Path(_aliases[0]) / f"{len(_aliases)}{Path(text).suffix}"
    _aliases.append(text)
    link.symlink_to(Path(text).resolve())
    return str(link)


def run_pipeline(module: ir.Module, pipeline: str) -> None:
    """Runs a textual pass pipeline (e.g. "top-shape-infer,canonicalize")."""
    pm = passmanager.PassManager.parse(f"builtin.module({pipeline})",
                                       context=module.context)
    try:
        pm.run(module.operation)
    except ir.MLIRError as e:
        raise CompileError(_diagnostics(e)) from None


def module_text(module: ir.Module) -> str:
    """Textual IR with locations, so tensor names survive a round trip."""
    return module.operation.get_asm(enable_debug_info=True)


def save_module(module: ir.Module, path: str | Path) -> None:
    Path(path).write_text(module_text(module))


def save_weights(module: ir.Module, path: str | Path) -> None:
    """Writes the module's weights to `path` and points the module at it."""
    _native.save_weights(module, str(path))


def hold_weights(module: ir.Module, weights: dict[str, np.ndarray], key: str) -> str:
    """Hands `weights` to the C++ weight store as typed arrays and points the
    module at them: no file is written or read. `key` names the in-memory
    weight file (unique per module); `release_weights(key)` frees it."""
    file = f"memory:{key}"
    _native.drop_weights(file)
    for name, array in weights.items():
        # np.ascontiguousarray would turn a 0-d array into shape [1].
        a = np.array(array, order="C", copy=None)
        _native.add_weight(file, name, a.dtype.str, a)
    with module.context:
        module.operation.attributes[WEIGHT_FILE_ATTR] = ir.StringAttr.get(file)
    return file


def release_weights(file: str) -> None:
    """Frees the in-memory weights `hold_weights` registered as `file`."""
    _native.drop_weights(file)


def interpret(module: ir.Module, inputs: dict[str, np.ndarray],
              all_tensors: bool = False,
              references: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Runs the module's entry function (Top or Tpu) on `inputs`.

    With `references` (float tensors by name, e.g. the Top interpreter's)
    every op whose result is named there hands its users the reference, in
    its result type, instead of its own value: each recorded tensor then
    carries only its own op's error (local mode).
    """
    # np.ascontiguousarray would turn a 0-d array into shape [1].
    arrays = {k: np.array(v, dtype=np.float32, order="C") for k, v in inputs.items()}
    refs = {k: np.array(v, dtype=np.float32, order="C") for k, v in (references or {}).items()}
    try:
        return _native.interpret(module, arrays, all_tensors, refs)
    except RuntimeError as e:
        raise CompileError(str(e)) from None


def _diagnostics(err: ir.MLIRError) -> str:
    lines = [err.message] + [f"  {d.location}: {d.message}"
                             for d in err.error_diagnostics]
    return "\n".join(lines)
