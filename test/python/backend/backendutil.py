"""Builds small Tpu modules by hand, compiles them to bmodels and checks the
cmodel's tensors against the Tpu interpreter's."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tpuc import compiler
from tpuc import runtime as rt

CHIPS = ("tpu_edge", "tpu_pro")
# Float32 on both sides; only summation order and libm calls differ.
MIN_COSINE = 0.99999
REL_TOL = 1e-4  # max |cmodel - interpreter| <= REL_TOL * max(1, max |ref|)


def ttype(shape, elem="f32") -> str:
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{elem}>" if dims else f"tensor<{elem}>"


class Net:
    """A Tpu function under construction: inputs, weights and ops as text."""

    def __init__(self):
        self.args: list[tuple[str, np.ndarray]] = []
        self.weights: dict[str, np.ndarray] = {}
        self.lines: list[str] = []
        self.types: dict[str, str] = {}
        self._n = 0

    def input(self, name: str, arr: np.ndarray, elem: str = "f32") -> str:
        arr = np.asarray(arr, {"f32": np.float32, "i32": np.int32}[elem])
        i = len(self.args)
        self.args.append((name, arr))
        t = ttype(arr.shape, elem)
        self.lines.append(f'%{name} = "top.Input"(%arg{i}) : ({t}) -> {t} loc("{name}")')
        self.types[f"%{name}"] = t
        return f"%{name}"

    def weight(self, name: str, arr, elem: str = "f32") -> str:
        """A constant; `elem` other than f32 keeps `arr`'s own dtype (int8
        storage of quantized types, i32 biases, f16)."""
        arr = np.asarray(arr, np.float32) if elem == "f32" else np.asarray(arr)
        self.weights[name] = arr
        t = ttype(arr.shape, elem)
        self.lines.append(f'%{name} = "top.Weight"() : () -> {t} loc("{name}")')
        self.types[f"%{name}"] = t
        return f"%{name}"

    def none(self) -> str:
        if "%none" not in self.types:
            self.lines.append('%none = "top.None"() : () -> none')
            self.types["%none"] = "none"
        return "%none"

    def op(self, kind: str, operands, shape, attrs: str = "", name: str | None = None,
           elem: str = "f32") -> str:
        if name is None:
            self._n += 1
            name = f"{kind.split('.')[-1].lower()}{self._n}"
        t = ttype(shape, elem)
        ins = ", ".join(operands)
        in_types = ", ".join(self.types[o] for o in operands)
        attr = f" {{{attrs}}}" if attrs else ""
        self.lines.append(f'%{name} = "{kind}"({ins}){attr} : ({in_types}) -> {t} loc("{name}")')
        self.types[f"%{name}"] = t
        return f"%{name}"

    def text(self, outputs, weight_file: str) -> str:
        args = ", ".join(f"%arg{i}: {self.types['%' + n]}" for i, (n, _) in enumerate(self.args))
        rtypes = ", ".join(self.types[o] for o in outputs)
        body = "\n    ".join(self.lines)
        return (f'module attributes {{top.weight_file = "{weight_file}"}} {{\n'
                f"  func.func @main({args}) -> ({rtypes}) {{\n    {body}\n"
                f"    return {', '.join(outputs)} : {rtypes}\n  }}\n}}\n")


@dataclass
class Outcome:
    ref: dict
    got: dict
    stats: object
    module: object


def compile_and_run(net: Net, outputs, chip: str, tmp: Path, codegen: str = "") -> Outcome:
    """`codegen`: more tpu-codegen options (`weight-prefetch=false`)."""
    tmp = Path(tmp)
    wfile = tmp / "weights.npz"
    np.savez(wfile, **net.weights)
    ctx = compiler.make_context()
    with ctx:
        m = compiler.parse_module(net.text(outputs, str(wfile)), ctx)
        inputs = {n: a for n, a in net.args}
        ref = compiler.interpret(m, inputs, all_tensors=True)
        bm = tmp / f"net_{chip}.bmodel"
        compiler.run_pipeline(m, f"tpu-assign-address{{chip={chip}}},"
                                 f"tpu-codegen{{chip={chip} bmodel={bm} {codegen}}}")
    r = rt.Model(bm).run(inputs, dump_all_tensors=True)
    got = {**r.tensors, **r.outputs}
    return Outcome(ref, got, r.stats, m)


def _run_named(net: Net, outputs, chip: str, tmp: Path, codegen: str = ""):
    """Compiles and runs; the outcome and the tensor names both sides have."""
    o = compile_and_run(net, outputs, chip, tmp, codegen)
    names = [n for n in o.ref if n in o.got]
    assert names, "no tensor to compare"
    for out in outputs:
        assert out[1:] in o.got, f"output {out} missing from the cmodel run"
    return o, names


def check_exact(net: Net, outputs, chip: str, tmp: Path) -> Outcome:
    """Every named tensor of the cmodel equals the Tpu interpreter's bit for
    bit (quantized tensors as their storage integers)."""
    o, names = _run_named(net, outputs, chip, tmp)
    for n in names:
        r, g = o.ref[n].ravel(), o.got[n].ravel()
        assert r.shape == g.shape, n
        bad = np.flatnonzero(r.astype(np.float64) != g.astype(np.float64))
        assert bad.size == 0, (f"{n} on {chip}: {bad.size} of {r.size} differ, first at {bad[0]}: "
                               f"interpreter {r[bad[0]]}, cmodel {g[bad[0]]}")
    return o


def check(net: Net, outputs, chip: str, tmp: Path, rel_tol: float = REL_TOL,
          codegen: str = "") -> Outcome:
    """Every named tensor of the cmodel matches the Tpu interpreter."""
    o, names = _run_named(net, outputs, chip, tmp, codegen)
    for n in names:
        r = o.ref[n].astype(np.float64).ravel()
        g = o.got[n].astype(np.float64).ravel()
        assert r.shape == g.shape, n
        assert np.isfinite(g).all() == np.isfinite(r).all(), n
        diff = np.abs(g - r).max() if r.size else 0.0
        scale = max(1.0, float(np.abs(r).max()) if r.size else 0.0)
        assert diff <= rel_tol * scale, f"{n}: max abs diff {diff} (scale {scale}) on {chip}"
        nr, ng = np.linalg.norm(r), np.linalg.norm(g)
        if nr > 0 and ng > 0:
            cos = float(r @ g / (nr * ng))
            assert cos >= MIN_COSINE, f"{n}: cosine {cos} on {chip}"
    return o
