"""Helpers for chip tests: assemble small GDMA/TIU programs and run them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tpuc import runtime as rt

REPO = Path(__file__).resolve().parents[3]
CHIPS = REPO / "chips"


def target(name: str = "tpu_edge"):
    return rt.load_target(str(CHIPS / f"{name}.json"))


def as4d(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    while a.ndim < 4:
        a = a[None]
    return a


class Prog:
    """Bump-allocates DDR and LMEM, loads inputs with GDMA, runs TIU ops
    that wait for the loads, and stores results with GDMA that waits for
    the compute: the minimal correct synchronisation."""

    def __init__(self, tgt, ddr_bytes: int = 1 << 22):
        self.t = tgt
        self.ddr_bytes = ddr_bytes
        self.b = rt.StreamBuilder()
        self.inits = []
        self._ddr = 0
        self._lmem = 0

    def alloc_ddr(self, nbytes: int) -> int:
        a = self._ddr
        self._ddr = (a + nbytes + 63) // 64 * 64
        assert self._ddr <= self.ddr_bytes
        return a

    def alloc_lmem(self, shape, dtype, start_lane=0) -> int:
        n = rt._rt.lmem_bytes_per_lane(list(shape), dtype, start_lane, self.t.lanes)
        a = self._lmem
        self._lmem = (a + n + 63) // 64 * 64
        assert self._lmem <= self.t.lmem_bytes_per_lane, "test tile does not fit LMEM"
        return a

    def ddr_in(self, arr: np.ndarray):
        arr = np.ascontiguousarray(as4d(arr))
        dt = rt.chip_dtype(arr.dtype)
        addr = self.alloc_ddr(arr.nbytes)
        self.inits.append((addr, arr.tobytes()))
        return rt.ddr_tensor(addr, list(arr.shape), dt)

    def ddr_out(self, shape, dtype):
        dtype = rt.chip_dtype(dtype)
        shape = list(as4d(np.zeros(shape, np.int8)).shape)
        addr = self.alloc_ddr(int(np.prod(shape)) * rt._rt.dtype_size(dtype))
        return rt.ddr_tensor(addr, shape, dtype)

    def lmem(self, shape, dtype, start_lane=0):
        dtype = rt.chip_dtype(dtype)
        return rt.lmem_tensor(self.alloc_lmem(shape, dtype, start_lane), list(shape), dtype, start_lane)

    def load(self, arr: np.ndarray, start_lane=0):
        src = self.ddr_in(arr)
        dst = self.lmem(list(src.shape), src.dtype, start_lane)
        self.b.gdma(rt.make_dma_move(dst, src), self.b.last_tiu_id)
        return dst

    def tiu(self, inst) -> int:
        return self.b.tiu(inst, self.b.last_gdma_id)

    def store(self, lm, dtype=None):
        out = self.ddr_out(list(lm.shape), dtype or lm.dtype)
        self.b.gdma(rt.make_dma_move(out, lm), self.b.last_tiu_id)
        return out

    def run(self):
        self.sim = rt.Simulator(self.t, self.ddr_bytes)
        for addr, data in self.inits:
            self.sim.write_ddr(addr, data)
        self.stats = self.sim.run(self.b.tiu_stream, self.b.gdma_stream)
        return self.stats

    def read(self, op) -> np.ndarray:
        dt = rt.numpy_dtype(op.dtype)
        n = int(np.prod(op.shape))
        data = self.sim.read_ddr(op.addr, n * dt.itemsize)
        return np.frombuffer(data, dtype=dt).reshape(op.shape).copy()


def run_unary(tgt, x: np.ndarray, make, out_shape, out_dtype, start_lane=0):
    """Load x, run one TIU instruction make(out_lmem, in_lmem), store."""
    p = Prog(tgt)
    a = p.load(x, start_lane)
    o = p.lmem(out_shape, out_dtype, start_lane)
    p.tiu(make(o, a))
    out = p.store(o)
    p.run()
    return p.read(out)


def f64(a):
    return np.asarray(a).astype(np.float64)


def conv_ref(x, w, b, stride, dil, pads, groups, pad_value=0):
    x, w = f64(x), f64(w)
    n, ic, h, wd = x.shape
    icg, oc, kh, kw = w.shape
    pt, pb, pl, pr = pads
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=pad_value)
    oh = (h + pt + pb - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pl + pr - dil[1] * (kw - 1) - 1) // stride[1] + 1
    ocg = oc // groups
    out = np.zeros((n, oc, oh, ow))
    for g in range(groups):
        xs = xp[:, g * icg:(g + 1) * icg]
        ws = w[:, g * ocg:(g + 1) * ocg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dil[0]: i * dil[0] + stride[0] * (oh - 1) + 1: stride[0],
                           j * dil[1]: j * dil[1] + stride[1] * (ow - 1) + 1: stride[1]]
                out[:, g * ocg:(g + 1) * ocg] += np.einsum("nchw,co->nohw", patch, ws[:, :, i, j])
    if b is not None:
        out += f64(b).reshape(1, -1, 1, 1)
    return out
