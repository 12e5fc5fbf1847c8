"""What a compiled bmodel holds, read through the chip library (``tpuc.runtime``).

:func:`describe` summarises a bmodel: chip, format and ISA versions, each
network's inputs/outputs (shape, dtype, scale, zero point), the DDR plan
(weight and activation memory), instruction counts per engine and opcode,
and the compute dtypes (modes) its TIU instructions use.
:func:`weight_reads` lists the pieces of the weight blob the GDMA engine
loads (weights carry no names in the format; they are identified by offset).
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Union

import numpy as np

from . import runtime as rt


@dataclass
class NetworkInfo:
    name: str
    inputs: List[rt.TensorSpec]
    outputs: List[rt.TensorSpec]
    tiu_instructions: int
    gdma_instructions: int
    opcodes: Dict[str, Counter]  # engine -> opcode name -> count
    compute_dtypes: Counter      # dtype a TIU instruction computes in -> count
    named_tensors: int

    @property
    def modes(self) -> List[str]:
        """The quantize modes the TIU stream computes in, most used first
        (e.g. ``["INT8", "F16"]`` for INT8 with float islands)."""
        return [d.upper() for d, _ in self.compute_dtypes.most_common()]


@dataclass
class BModelInfo:
    path: str
    file_bytes: int
    chip: str
    format_version: int
    isa_version: int
    producer: str
    weight_addr: int
    weight_bytes: int
    activation_addr: int
    activation_bytes: int
    ddr_bytes: int
    networks: List[NetworkInfo] = field(default_factory=list)


_CONVERSIONS = (rt.Opcode.CAST, rt.Opcode.REQUANT)


def _network_info(net) -> NetworkInfo:
    opcodes = {"TIU": Counter(i.op.name for i in net.tiu),
               "GDMA": Counter(i.op.name for i in net.gdma)}
    # An instruction computes in the dtype of its first source; casts and
    # requantizations only convert between modes (INT32 is INT8's accumulator).
    dtypes = Counter(rt.dtype_name(i.src[0].dtype) for i in net.tiu
                     if i.op not in _CONVERSIONS and i.src[0].dtype != rt.DType.INT32)
    spec = rt.tensor_spec
    return NetworkInfo(net.name, [spec(t) for t in net.inputs], [spec(t) for t in net.outputs],
                       len(net.tiu), len(net.gdma), opcodes, dtypes, len(net.tensors))


def describe(path: Union[str, os.PathLike]) -> BModelInfo:
    """Summary of the bmodel at ``path`` (raises ChipError on a bad file)."""
    bm = rt.read_bmodel(str(path))
    p = bm.plan
    return BModelInfo(str(path), os.path.getsize(path), bm.target.name, rt.BMODEL_VERSION,
                      rt.ISA_VERSION, bm.producer, p.weight_addr, p.weight_size,
                      p.activation_addr, p.activation_size, bm.target.ddr_bytes,
                      [_network_info(n) for n in bm.networks])


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def _tensor_line(t: rt.TensorSpec) -> str:
    quant = f" scale={t.scale:.6g} zero_point={t.zero_point}" if t.dtype in ("int8", "uint8") \
        else ""
    return f"    {t.name}: {list(t.shape)} {t.dtype}{quant} @ {t.ddr_addr:#x}"


def format_info(info: BModelInfo) -> str:
    lines = [f"bmodel: {info.path} ({_size(info.file_bytes)})",
             f"chip: {info.chip}",
             f"format version: {info.format_version}, ISA version: {info.isa_version}",
             f"producer: {info.producer}",
             f"weight memory: {_size(info.weight_bytes)} ({info.weight_bytes} bytes "
             f"@ {info.weight_addr:#x})",
             f"activation memory: {_size(info.activation_bytes)} ({info.activation_bytes} "
             f"bytes @ {info.activation_addr:#x})",
             f"DDR used: {_size(info.weight_bytes + info.activation_bytes)} of "
             f"{_size(info.ddr_bytes)}"]
    for n in info.networks:
        lines.append(f"network {n.name}:")
        lines.append("  inputs:")
        lines += [_tensor_line(t) for t in n.inputs]
        lines.append("  outputs:")
        lines += [_tensor_line(t) for t in n.outputs]
        lines.append(f"  modes: {', '.join(n.modes) or '-'} ("
                     + ", ".join(f"{d} {c}" for d, c in n.compute_dtypes.most_common())
                     + " compute instructions)")
        for engine, total in (("TIU", n.tiu_instructions), ("GDMA", n.gdma_instructions)):
            ops = ", ".join(f"{op} {c}" for op, c in n.opcodes[engine].most_common())
            lines.append(f"  {engine} instructions: {total}" + (f" ({ops})" if ops else ""))
        lines.append(f"  named tensors (dumpable): {n.named_tensors}")
    return "\n".join(lines)


@dataclass
class WeightRead:
    """One GDMA load from the weight blob."""
    network: str
    instruction: int  # GDMA id
    offset: int       # byte offset in the weight blob
    shape: tuple
    stride: tuple     # elements
    dtype: str

    def array(self, blob: bytes) -> np.ndarray:
        """The elements this load reads, as an array of its shape."""
        dt = rt.numpy_dtype(rt.chip_dtype(self.dtype))
        extent = sum((d - 1) * s for d, s in zip(self.shape, self.stride)) + 1
        flat = np.frombuffer(blob, dtype=dt, count=extent, offset=self.offset)
        return np.lib.stride_tricks.as_strided(
            flat, self.shape, [s * dt.itemsize for s in self.stride]).copy()


def weight_reads(bm: "rt.BModel") -> List[WeightRead]:
    """Every GDMA instruction whose source lies in the weight region."""
    p = bm.plan
    reads = []
    for net in bm.networks:
        for inst in net.gdma:
            for src in inst.src:
                if (src.space == rt.Space.DDR
                        and p.weight_addr <= src.addr < p.weight_addr + p.weight_size):
                    reads.append(WeightRead(net.name, inst.id, src.addr - p.weight_addr,
                                            tuple(src.shape), tuple(src.stride),
                                            rt.dtype_name(src.dtype)))
    return reads
