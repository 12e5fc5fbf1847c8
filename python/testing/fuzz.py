"""Mutation fuzzing of the file readers: bmodel loader (and cmodel run),
npz reader (C++ and Python) and ONNX importer.

    python -m tpuc.testing.fuzz --target bmodel --runs 2000 --seed 1 [--workdir DIR]

Every case runs in its own process, forked from a parent that has already
imported tpuc (so a case costs milliseconds, not an interpreter start). A
case ends as one of
  accepted   the reader took the file (exit 0),
  rejected   a one-line error of an expected kind (ValueError, OSError,
             CompileError, ChipError),
  traceback  any other Python exception,
  crash      a signal (segfault, abort, ...),
  hang       no result within --timeout seconds.
Files of the last three kinds are kept in the work directory; the exit code
is 1 when there is any.

Mutations: bit flips, interesting 1/2/4/8-byte values (0, -1, 2^31, 2^63,
...) over random offsets, truncation, deleted/duplicated/inserted chunks;
bmodels are resealed (payload size and checksum recomputed) nine times in
ten so the checks behind the checksum are reached, npz members are mutated
inside the archive with their CRCs recomputed half of the time, and ONNX
models get structural mutations (attributes, dims, op types, edges) as well
as byte-level ones.
"""
from __future__ import annotations

import argparse
import io
import logging
import os
import random
import signal
import struct
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path
from typing import Callable

import numpy as np

log = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
OUTCOMES = ("accepted", "rejected", "traceback", "crash", "hang")
_EXIT = {0: "accepted", 1: "rejected", 3: "traceback"}

_INTERESTING = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000,
                0xFFFFFFFF, 0xFFFFFFFE, 1 << 32, 1 << 62, (1 << 63) - 1, 1 << 63,
                (1 << 64) - 1, 4096, 65536]


# --- mutations ----------------------------------------------------------------

def mutate_bytes(data: bytes, rng: random.Random, start: int = 0) -> bytes:
    """One to four random edits of `data` at offsets >= start."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if len(b) <= start:
            b += bytes(rng.randrange(256) for _ in range(8))
        k = rng.randrange(7)
        pos = rng.randrange(start, len(b))
        if k == 0:
            b[pos] ^= 1 << rng.randrange(8)
        elif k == 1:
            b[pos] = rng.randrange(256)
        elif k in (2, 3):
            width = rng.choice([1, 2, 4, 8])
            v = rng.choice(_INTERESTING) & ((1 << (8 * width)) - 1)
            b[pos:pos + width] = v.to_bytes(width, "little")
        elif k == 4:
            del b[rng.randrange(start, len(b)):]
        elif k == 5:
            n = rng.randint(1, 64)
            del b[pos:pos + n]
        else:
            n = rng.randint(1, 64)
            chunk = bytes(b[pos:pos + n]) if rng.random() < 0.5 else \
                bytes(rng.randrange(256) for _ in range(n))
            b[pos:pos] = chunk
    return bytes(b)


def _mutate_bmodel(seed: bytes, rng: random.Random) -> bytes:
    from . import bmodel_bytes as bb

    out = mutate_bytes(seed, rng, start=bb.HEADER_BYTES if rng.random() < 0.8 else 0)
    if rng.random() < 0.9 and len(out) >= bb.HEADER_BYTES:
        out = bb.reseal(out)
    return out


def _mutate_npz(seed: bytes, rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        return mutate_bytes(seed, rng)
    # Mutate one member's .npy bytes and rebuild the archive (CRCs right).
    src = zipfile.ZipFile(io.BytesIO(seed))
    names = src.namelist()
    victim = rng.choice(names)
    buf = io.BytesIO()
    method = src.getinfo(victim).compress_type
    with zipfile.ZipFile(buf, "w", method) as dst:
        for n in names:
            data = src.read(n)
            dst.writestr(n, mutate_bytes(data, rng) if n == victim else data)
    return buf.getvalue()


def _mutate_onnx(seed: bytes, rng: random.Random) -> bytes:
    import onnx
    from onnx import helper

    if rng.random() < 0.3:
        return mutate_bytes(seed, rng)
    m = onnx.load_from_string(seed)
    g = m.graph
    for _ in range(rng.randint(1, 3)):
        if not g.node:
            break
        k = rng.randrange(6)
        node = rng.choice(list(g.node))
        if k == 0 and node.attribute:  # revalue (mostly keeping the type) an attribute
            a = rng.choice(list(node.attribute))
            small = [-(1 << 40), -2, -1, 0, 1, 2, 3, 7, 4096, 1 << 31, 1 << 40]
            if a.type == onnx.AttributeProto.INT and rng.random() < 0.8:
                value = rng.choice(small)
            elif a.type == onnx.AttributeProto.INTS and rng.random() < 0.8:
                n = max(0, len(a.ints) + rng.choice([-1, 0, 0, 0, 1]))
                value = [rng.choice(small) if rng.random() < 0.5 else rng.randint(0, 4)
                         for _ in range(n)]
            elif a.type == onnx.AttributeProto.FLOAT and rng.random() < 0.8:
                value = rng.choice([float("nan"), float("inf"), -1.0, 0.0, 1e30])
            else:
                value = rng.choice([rng.choice(small), 1.5, "x", [1, 2]])
            node.attribute.remove(a)
            node.attribute.append(helper.make_attribute(a.name, value))
        elif k == 1:  # an input dim
            vi = rng.choice(list(g.input))
            dims = vi.type.tensor_type.shape.dim
            if dims:
                rng.choice(list(dims)).dim_value = rng.choice([0, 1, 3, 1 << 31, 1 << 62])
        elif k == 2:  # another op type
            node.op_type = rng.choice(["Conv", "Relu", "Add", "Gather", "Reshape", "Concat",
                                       "MaxPool", "Gemm", "Transpose", "Softmax", "Nope"])
        elif k == 3 and len(node.input):  # rewire an edge
            others = [o for n in g.node for o in n.output] + [i.name for i in g.initializer]
            node.input[rng.randrange(len(node.input))] = rng.choice(others + [""])
        elif k == 4 and g.initializer:  # a weight's dims
            t = rng.choice(list(g.initializer))
            if t.dims:
                t.dims[rng.randrange(len(t.dims))] = rng.choice([0, 1, 2, 1 << 40])
        else:
            g.node.remove(node)
    return m.SerializeToString()


# --- targets (run in the forked child) ------------------------------------------

def _run_bmodel(path: Path, ctx: dict) -> None:
    from tpuc import runtime as rt

    m = rt.Model(path)
    m.run({s.name: np.zeros(s.shape, s.numpy_dtype) for s in m.inputs})


def _run_npz(path: Path, ctx: dict) -> None:
    from tpuc import compiler
    from tpuc.compare import load_npz

    load_npz(path)
    c = compiler.make_context()
    module = compiler.parse_module(ctx["module"].replace("WEIGHTS", str(path)), c)
    with c:
        compiler.interpret(module, {"x": np.ones((1, 1, 4, 4), np.float32)})


def _run_onnx(path: Path, ctx: dict) -> None:
    from tpuc.transform import transform

    transform("fuzz", path, path.with_suffix(".mlir"))


# --- seeds --------------------------------------------------------------------

def _seed_bmodel(work: Path) -> tuple[bytes, dict]:
    from tpuc.deploy import deploy
    from tpuc.transform import transform

    t = transform("seed", REPO / "models" / "mobilenetv2_tiny.onnx", work / "seed.mlir")
    deploy(t.mlir, "F32", "tpu_edge", work / "seed.bmodel")
    return (work / "seed.bmodel").read_bytes(), {}


def _seed_npz(work: Path) -> tuple[bytes, dict]:
    from .bad_inputs import BN_MODULE, BN_WEIGHTS, npz_bytes

    return npz_bytes(BN_WEIGHTS, compressed=False), {"module": BN_MODULE}


def _seed_onnx(work: Path) -> tuple[bytes, dict]:
    return (REPO / "models" / "mobilenetv2_tiny.onnx").read_bytes(), {}


TARGETS: dict[str, tuple[Callable, Callable, Callable, str]] = {
    "bmodel": (_seed_bmodel, _mutate_bmodel, _run_bmodel, ".bmodel"),
    "npz": (_seed_npz, _mutate_npz, _run_npz, ".npz"),
    "onnx": (_seed_onnx, _mutate_onnx, _run_onnx, ".onnx"),
}


# --- driver -------------------------------------------------------------------

def expected_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a reader raises for bad input (one line each)."""
    from tpuc.compiler import CompileError
    from tpuc.runtime import ChipError

    return (ValueError, OSError, CompileError, ChipError)


def _child(run: Callable, path: Path, ctx: dict) -> None:
    """Runs one case and leaves through os._exit with its outcome's code."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    err = os.open(str(path) + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(devnull, 1)
    os.dup2(err, 2)
    code = 0
    try:
        run(path, ctx)
    except expected_errors() as e:
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        code = 1
    except BaseException:  # noqa: BLE001 - classifying is the point
        import traceback

        traceback.print_exc()
        code = 3
    sys.stderr.flush()
    os._exit(code)


def run_case(run: Callable, path: Path, ctx: dict, timeout: float) -> str:
    pid = os.fork()
    if pid == 0:
        _child(run, path, ctx)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "hang"
        time.sleep(0.002)
    if os.WIFSIGNALED(status):
        return "crash"
    return _EXIT.get(os.WEXITSTATUS(status), "crash")


def fuzz(target: str, runs: int, seed: int = 0, workdir: Path | None = None,
         timeout: float = 20.0, seed_file: Path | None = None) -> Counter:
    """Runs `runs` mutated cases of `target`; returns the outcome counts.
    Cases that crashed, hung or raised an unexpected exception stay in
    `workdir` as <target>-<n>.<ext> (with the stderr as .err). `seed_file`
    replaces the built-in seed (e.g. a bmodel compiled elsewhere, so that a
    sanitizer build needs only its runtime module)."""
    make_seed, mutate, run, ext = TARGETS[target]
    work = Path(workdir or tempfile.mkdtemp(prefix=f"tpuc-fuzz-{target}-"))
    work.mkdir(parents=True, exist_ok=True)
    if seed_file is None:
        base, ctx = make_seed(work)
    else:  # the npz target's context (its module text) costs nothing to make
        base, ctx = Path(seed_file).read_bytes(), make_seed(work)[1] if target == "npz" else {}
    # The unmutated seed must pass; running it here also imports everything
    # the target needs, so each forked case starts warm.
    seed_path = work / f"seed{ext}"
    seed_path.write_bytes(base)
    run(seed_path, ctx)
    expected_errors()  # warm imports for _child
    rng = random.Random(seed)
    counts: Counter = Counter()
    for n in range(runs):
        data = mutate(base, rng)
        path = work / f"{target}-{n}{ext}"
        path.write_bytes(data)
        outcome = run_case(run, path, ctx, timeout)
        counts[outcome] += 1
        if outcome in ("accepted", "rejected"):
            path.unlink()
            Path(str(path) + ".err").unlink(missing_ok=True)
        else:
            log.warning("%s: %s", outcome, path)
    return counts


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tpuc.testing.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--target", choices=sorted(TARGETS), required=True)
    p.add_argument("--runs", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    p.add_argument("--workdir", type=Path, help="keeps the failing cases (default: a temp dir)")
    p.add_argument("--seed_file", type=Path,
                   help="mutate this file instead of the built-in seed")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    counts = fuzz(args.target, args.runs, args.seed, args.workdir, args.timeout, args.seed_file)
    print(f"{args.target}: {args.runs} runs: " +
          ", ".join(f"{k} {counts.get(k, 0)}" for k in OUTCOMES))
    return 1 if any(counts.get(k) for k in ("traceback", "crash", "hang")) else 0


if __name__ == "__main__":
    sys.exit(main())
