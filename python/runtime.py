"""Run compiled tpuc bmodels on the chip simulator (cmodel).

This module is the Python face of the chip library (``tpuc._runtime``):

* :func:`load_target` reads a target description (``chips/*.json``).
* :class:`Model` loads a ``.bmodel``, lists its inputs/outputs and runs it
  with numpy arrays, returning outputs, optionally every named intermediate
  tensor, and cycle statistics from the timing model.
* :func:`run_bmodel` is the one-call API used by ``model_runner.py``.
* The instruction-assembly API (``make_conv``, ``make_dma_move``,
  :class:`StreamBuilder`, ...) and :func:`build_bmodel` let tests and tools
  assemble bmodels by hand.

All chip-side failures raise :class:`ChipError` (a ``RuntimeError``) with the
library's message; bad Python arguments raise ``ValueError``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _runtime as _rt
from .progress import bar

__all__ = [
    "ChipError", "DType", "Engine", "Space", "Opcode", "BinaryOp", "PoolMode",
    "ReduceMode", "ActOp", "RoundMode", "Target", "Operand", "Instruction",
    "StreamBuilder", "TensorInfo", "NamedTensor", "DdrPlan", "Network",
    "BModel", "Simulator", "RunStats", "ddr_tensor", "lmem_tensor",
    "make_conv", "make_matmul", "make_binary", "make_binary_scalar",
    "make_pool", "make_reduce", "make_active", "make_lut", "make_cast",
    "make_requant", "make_requant_per_channel", "make_dma_move",
    "make_dma_fill", "make_dma_gather", "load_target", "chip_path", "read_bmodel",
    "write_bmodel", "serialize_bmodel", "parse_bmodel", "build_bmodel",
    "numpy_dtype", "chip_dtype", "parse_target", "dtype_name", "TensorSpec", "CycleStats", "RunResult",
    "Model", "run_bmodel", "tensor_spec",
]

log = logging.getLogger("tpuc.runtime")

ChipError = _rt.ChipError
DType = _rt.DType
Engine = _rt.Engine
Space = _rt.Space
Opcode = _rt.Opcode
BinaryOp = _rt.BinaryOp
PoolMode = _rt.PoolMode
ReduceMode = _rt.ReduceMode
ActOp = _rt.ActOp
RoundMode = _rt.RoundMode
Target = _rt.Target
Operand = _rt.Operand
Instruction = _rt.Instruction
StreamBuilder = _rt.StreamBuilder
TensorInfo = _rt.TensorInfo
NamedTensor = _rt.NamedTensor
DdrPlan = _rt.DdrPlan
Network = _rt.Network
BModel = _rt.BModel
Simulator = _rt.Simulator
RunStats = _rt.RunStats
ddr_tensor = _rt.ddr_tensor
lmem_tensor = _rt.lmem_tensor
make_conv = _rt.make_conv
make_matmul = _rt.make_matmul
make_binary = _rt.make_binary
make_binary_scalar = _rt.make_binary_scalar
make_pool = _rt.make_pool
make_reduce = _rt.make_reduce
make_active = _rt.make_active
make_lut = _rt.make_lut
make_cast = _rt.make_cast
make_requant = _rt.make_requant
make_requant_per_channel = _rt.make_requant_per_channel
make_dma_move = _rt.make_dma_move
make_dma_fill = _rt.make_dma_fill
make_dma_gather = _rt.make_dma_gather
read_bmodel = _rt.read_bmodel
write_bmodel = _rt.write_bmodel
serialize_bmodel = _rt.serialize_bmodel
parse_bmodel = _rt.parse_bmodel
parse_target = _rt.parse_target
BMODEL_VERSION = _rt.BMODEL_VERSION
ISA_VERSION = _rt.ISA_VERSION


# --- dtypes -------------------------------------------------------------------

def _bf16():
    import ml_dtypes  # optional dependency, only needed for bf16 tensors

    return np.dtype(ml_dtypes.bfloat16)


def numpy_dtype(t: "DType") -> np.dtype:
    """numpy dtype holding one element of chip dtype ``t`` (bf16 via ml_dtypes)."""
    if t == DType.BF16:
        return _bf16()
    return np.dtype({DType.F32: np.float32, DType.F16: np.float16, DType.INT8: np.int8,
                     DType.UINT8: np.uint8, DType.INT32: np.int32}[t])


def chip_dtype(dt) -> "DType":
    """Chip dtype for a numpy dtype (or a name such as ``"f32"``/``"bf16"``)."""
    if isinstance(dt, DType):
        return dt
    if isinstance(dt, str):
        names = {"f32": DType.F32, "float32": DType.F32, "f16": DType.F16,
                 "float16": DType.F16, "bf16": DType.BF16, "bfloat16": DType.BF16,
                 "int8": DType.INT8, "i8": DType.INT8, "uint8": DType.UINT8,
                 "u8": DType.UINT8, "int32": DType.INT32, "i32": DType.INT32}
        if dt.lower() not in names:
            raise ValueError(f"unknown dtype name {dt!r}")
        return names[dt.lower()]
    dt = np.dtype(dt)
    if dt.name == "bfloat16":
        return DType.BF16
    table = {np.dtype(np.float32): DType.F32, np.dtype(np.float16): DType.F16,
             np.dtype(np.int8): DType.INT8, np.dtype(np.uint8): DType.UINT8,
             np.dtype(np.int32): DType.INT32}
    if dt not in table:
        raise ValueError(f"numpy dtype {dt} has no chip equivalent")
    return table[dt]


def dtype_name(t: "DType") -> str:
    return {DType.F32: "f32", DType.F16: "f16", DType.BF16: "bf16", DType.INT8: "int8",
            DType.UINT8: "uint8", DType.INT32: "int32"}[t]


# --- targets ------------------------------------------------------------------

def chip_path(name: str) -> Path:
    """Path of the description of chip ``name`` (e.g. ``"tpu_edge"``).

    Searched in ``$TPUC_CHIP_DIR``, then in the package data of an installed
    wheel (``tpuc/chips``), then in the source tree's ``chips/`` (editable
    installs), then in ``./chips``.
    """
    dirs = []
    if os.environ.get("TPUC_CHIP_DIR"):
        dirs.append(Path(os.environ["TPUC_CHIP_DIR"]))
    here = Path(__file__).resolve().parent
    dirs += [here / "chips", here.parent / "chips", Path.cwd() / "chips"]
    for d in dirs:
        p = d / f"{name}.json"
        if p.is_file():
            return p
    raise FileNotFoundError(f"no target description for chip {name!r} in "
                            + ", ".join(str(d) for d in dirs))


def load_target(path_or_name: Union[str, os.PathLike]) -> "Target":
    """Load a target description from a JSON path or a chip name in ``chips/``."""
    p = Path(path_or_name)
    if not p.suffix and not p.exists():
        p = chip_path(str(path_or_name))
    return _rt.load_target(str(p))


# --- bmodel assembly ----------------------------------------------------------

def build_bmodel(target: "Target", tiu: Sequence["Instruction"], gdma: Sequence["Instruction"],
                 inputs: Sequence["TensorInfo"], outputs: Sequence["TensorInfo"], *,
                 weights: bytes = b"", weight_addr: int = 0,
                 activation_addr: Optional[int] = None, activation_size: Optional[int] = None,
                 tensors: Sequence["NamedTensor"] = (), name: str = "main",
                 producer: str = "tpuc.runtime.build_bmodel") -> "BModel":
    """Assemble a single-network bmodel.

    The weight region is ``[weight_addr, weight_addr + len(weights))``. When
    not given, the activation region starts right after it (aligned to 4 KiB)
    and extends to cover every input, output and named tensor.
    """
    weights = bytes(weights)
    if activation_addr is None:
        activation_addr = (weight_addr + len(weights) + 4095) // 4096 * 4096
    if activation_size is None:
        ends = [t.ddr_addr + t.byte_size for t in list(inputs) + list(outputs)]
        ends += [t.info.ddr_addr + t.info.byte_size for t in tensors]
        activation_size = max(ends + [activation_addr + 1]) - activation_addr
    plan = DdrPlan(weight_addr, len(weights), activation_addr, activation_size)
    net = Network(name, list(inputs), list(outputs), list(tiu), list(gdma), list(tensors))
    return BModel(target, plan, weights, [net], producer)


# --- running ------------------------------------------------------------------

@dataclass
class TensorSpec:
    """An input or output of a network."""
    name: str
    shape: tuple
    dtype: str  # "f32", "f16", "bf16", "int8", "uint8", "int32"
    scale: float
    zero_point: int
    ddr_addr: int

    @property
    def numpy_dtype(self) -> np.dtype:
        return numpy_dtype(chip_dtype(self.dtype))


@dataclass
class CycleStats:
    """Timing-model statistics of one run."""
    total_cycles: int
    tiu_cycles: int
    gdma_cycles: int
    tiu_instructions: int
    gdma_instructions: int
    tiu_utilization: float
    gdma_utilization: float
    microseconds: float
    macs: int
    gdma_bytes: int
    raw: "RunStats" = field(repr=False)

    @classmethod
    def from_raw(cls, s: "RunStats") -> "CycleStats":
        return cls(s.total_cycles, s.tiu_busy_cycles, s.gdma_busy_cycles, s.tiu_instructions,
                   s.gdma_instructions, s.tiu_utilization, s.gdma_utilization, s.microseconds,
                   s.macs, s.gdma_bytes, s)

    def write_trace(self, path: Union[str, os.PathLike], title: str = "tpuc cmodel") -> None:
        """Write a Chrome/Perfetto trace JSON (one track per engine)."""
        self.raw.write_trace(str(path), title)

    def summary(self) -> str:
        return (f"cycles: total {self.total_cycles} ({self.microseconds:.2f} us), "
                f"TIU {self.tiu_cycles} ({100 * self.tiu_utilization:.1f}% busy, "
                f"{self.tiu_instructions} inst), GDMA {self.gdma_cycles} "
                f"({100 * self.gdma_utilization:.1f}% busy, {self.gdma_instructions} inst)")


@dataclass
class RunResult:
    outputs: Dict[str, np.ndarray]
    tensors: Dict[str, np.ndarray]
    stats: CycleStats


def tensor_spec(t: "TensorInfo") -> TensorSpec:
    """The TensorSpec of a chip TensorInfo."""
    return TensorSpec(t.name, tuple(t.shape), dtype_name(t.dtype), float(t.scale),
                      int(t.zero_point), int(t.ddr_addr))


def _to_chip_array(spec: TensorSpec, value) -> np.ndarray:
    arr = np.asarray(value)
    want = spec.numpy_dtype
    if tuple(arr.shape) != spec.shape:
        # Only dims of 1 may differ (e.g. a squeezed batch dim): a same-sized
        # array in another layout (NHWC for NCHW) must not be silently reshaped.
        if [d for d in arr.shape if d != 1] == [d for d in spec.shape if d != 1]:
            log.debug("input %r: reshaping %s to %s", spec.name, arr.shape, spec.shape)
            arr = arr.reshape(spec.shape)
        else:
            raise ValueError(f"input {spec.name!r}: shape {tuple(arr.shape)} does not match "
                             f"expected {spec.shape}")
    if arr.dtype == want:
        return np.ascontiguousarray(arr)
    if spec.dtype in ("int8", "uint8") and np.issubdtype(arr.dtype, np.floating):
        # Quantize real values with the input's scale / zero point (half away from zero).
        info = np.iinfo(want)
        q = arr.astype(np.float64) / spec.scale
        q = np.sign(q) * np.floor(np.abs(q) + 0.5) + spec.zero_point
        return np.ascontiguousarray(np.clip(q, info.min, info.max).astype(want))
    if spec.dtype in ("int8", "uint8", "int32"):
        if not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"input {spec.name!r}: expected {spec.dtype} data, got {arr.dtype}")
        info = np.iinfo(want)
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            raise ValueError(f"input {spec.name!r}: values do not fit {spec.dtype}")
        return np.ascontiguousarray(arr.astype(want))
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
            or arr.dtype.name == "bfloat16"):
        raise ValueError(f"input {spec.name!r}: cannot convert {arr.dtype} to {spec.dtype}")
    return np.ascontiguousarray(arr.astype(want))


def _from_bytes(spec: TensorSpec, data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=spec.numpy_dtype).reshape(spec.shape).copy()


class Model:
    """A loaded bmodel.

    >>> m = Model("net.bmodel")
    >>> m.inputs            # [TensorSpec(name='x', shape=(1, 3, 8, 8), dtype='f32', ...)]
    >>> r = m.run({"x": x}, dump_all_tensors=True)
    >>> r.outputs["y"], r.stats.total_cycles
    """

    def __init__(self, source: Union[str, os.PathLike, bytes, "BModel"]):
        if isinstance(source, BModel):
            self._rt = _rt.Runtime.from_model(source)
        elif isinstance(source, (bytes, bytearray, memoryview)):
            self._rt = _rt.Runtime.from_bytes(bytes(source))
        else:
            if not Path(source).is_file():
                raise FileNotFoundError(f"bmodel not found: {source}")
            self._rt = _rt.Runtime(str(source))
        self._model = self._rt.model
        self.last_stats: Optional[CycleStats] = None
        self._last_net = 0

    @property
    def target(self) -> "Target":
        return self._model.target

    @property
    def bmodel(self) -> "BModel":
        return self._model

    @property
    def networks(self) -> List[str]:
        return [n.name for n in self._model.networks]

    def _net_index(self, net: Union[int, str]) -> int:
        names = self.networks
        if isinstance(net, str):
            if net not in names:
                raise ValueError(f"no network named {net!r} (have {names})")
            return names.index(net)
        if not 0 <= net < len(names):
            raise ValueError(f"network index {net} out of range ({len(names)} networks)")
        return net

    def input_specs(self, net: Union[int, str] = 0) -> List[TensorSpec]:
        return [tensor_spec(t) for t in self._model.networks[self._net_index(net)].inputs]

    def output_specs(self, net: Union[int, str] = 0) -> List[TensorSpec]:
        return [tensor_spec(t) for t in self._model.networks[self._net_index(net)].outputs]

    def tensor_specs(self, net: Union[int, str] = 0) -> List[TensorSpec]:
        return [tensor_spec(t.info) for t in self._model.networks[self._net_index(net)].tensors]

    @property
    def inputs(self) -> List[TensorSpec]:
        return self.input_specs(0)

    @property
    def outputs(self) -> List[TensorSpec]:
        return self.output_specs(0)

    def run(self, inputs: Mapping[str, np.ndarray], net: Union[int, str] = 0,
            dump_all_tensors: bool = False, progress: bool = True) -> RunResult:
        """Run one network.

        ``inputs`` maps every input name to an array of the declared shape.
        Arrays are converted to the declared dtype; float data given for an
        int8/uint8 input is quantized with its scale and zero point.
        ``progress`` shows a bar of committed instructions on a terminal
        when the run takes more than a second (see :mod:`tpuc.progress`).
        """
        idx = self._net_index(net)
        specs = self.input_specs(idx)
        names = {s.name for s in specs}
        unknown = set(inputs) - names
        if unknown:
            raise ValueError(f"unknown input(s) {sorted(unknown)}; network inputs are {sorted(names)}")
        raw = {}
        for s in specs:
            if s.name not in inputs:
                raise ValueError(f"missing input {s.name!r}")
            raw[s.name] = _to_chip_array(s, inputs[s.name]).tobytes()
        with bar(desc=f"cmodel {self.networks[idx]}", unit="inst", enable=progress) as b:
            def advance(done: int, total: int) -> None:
                b.total = total
                b.update(done - b.n)

            outs, tensors, stats = self._rt.run(raw, idx, dump_all_tensors,
                                                advance if not b.disable else None)
        out_specs = {s.name: s for s in self.output_specs(idx)}
        t_specs = {s.name: s for s in self.tensor_specs(idx)}
        result = RunResult(
            outputs={n: _from_bytes(out_specs[n], b) for n, b in outs.items()},
            tensors={n: _from_bytes(t_specs[n], b) for n, b in tensors.items()},
            stats=CycleStats.from_raw(stats))
        self.last_stats = result.stats
        self._last_net = idx
        log.info("ran %s: %s", self.networks[idx], result.stats.summary())
        return result

    def write_trace(self, path: Union[str, os.PathLike]) -> None:
        """Write the trace of the most recent :meth:`run`."""
        if self.last_stats is None:
            raise ValueError("no run to trace yet")
        self.last_stats.write_trace(path, f"{self.target.name}: {self.networks[self._last_net]}")


def run_bmodel(model: Union[str, os.PathLike], inputs: Mapping[str, np.ndarray], *,
               net: Union[int, str] = 0, dump_all_tensors: bool = False,
               trace: Optional[Union[str, os.PathLike]] = None) -> RunResult:
    """Load ``model`` and run it once; optionally write a trace."""
    m = Model(model)
    r = m.run(inputs, net=net, dump_all_tensors=dump_all_tensors)
    if trace is not None:
        m.write_trace(trace)
    return r
