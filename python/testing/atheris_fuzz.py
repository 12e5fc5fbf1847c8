"""Coverage-guided fuzzing with atheris (libFuzzer) of the bmodel loader,
the npz readers and the ONNX importer.

    python -m tpuc.testing.atheris_fuzz --target npz CORPUS_DIR [libFuzzer flags]
    python -m tpuc.testing.atheris_fuzz --write_seeds DIR

Runs in-process: libFuzzer calls the target on each input and keeps the ones
that reach new Python code of `tpuc` (instrumented at import; the C++ side
is not, so its inputs are guided by the mutators below). An input ends
  accepted  the reader took it,
  rejected  an expected one-line error (`fuzz.expected_errors`),
and anything else stops the run with a reproducer file: another Python
exception (a traceback), a signal in the C++ code (a crash), or an input
slower than `-timeout` seconds (a hang). The exit code is then non-zero.

The mutators are structure-aware half of the time (`tpuc.testing.fuzz`:
resealed bmodels, npz members with their CRCs recomputed, ONNX graph edits)
and libFuzzer's byte mutations otherwise. `--write_seeds` regenerates the
checked-in corpus (test/python/reliability/corpus/atheris/<target>/).
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "test" / "python" / "reliability" / "corpus" / "atheris"
MAX_LEN = 1 << 20


def _bmodel_seed() -> bytes:
    """A small model covering every engine: loads, a fill, a conv, an
    activation, stores; each request ordered by a wait."""
    import numpy as np

    from tpuc import runtime as rt

    t = rt.load_target("tpu_edge")
    F = rt.DType.F32
    w = np.linspace(-1, 1, 8 * 4 * 3 * 3, dtype=np.float32).reshape(4, 8, 3, 3)
    bank = t.lmem_bytes_per_lane // t.lmem_banks
    xl, wl = rt.lmem_tensor(0, [1, 4, 6, 6], F), rt.lmem_tensor(bank, [4, 8, 3, 3], F)
    cl, yl = rt.lmem_tensor(2 * bank, [1, 8, 6, 6], F), rt.lmem_tensor(3 * bank, [1, 8, 6, 6], F)
    act = 4096
    sb = rt.StreamBuilder()
    sb.gdma(rt.make_dma_move(xl, rt.ddr_tensor(act, [1, 4, 6, 6], F)))
    g = sb.gdma(rt.make_dma_move(wl, rt.ddr_tensor(0, [4, 8, 3, 3], F)))
    conv = sb.tiu(rt.make_conv(cl, xl, wl, None, pads=(1, 1, 1, 1)), g)
    relu = sb.tiu(rt.make_active(rt.ActOp.RELU, yl, cl))
    sb.gdma(rt.make_dma_move(rt.ddr_tensor(act + 4096, [1, 8, 6, 6], F), yl), relu)
    m = rt.build_bmodel(t, sb.tiu_stream, sb.gdma_stream,
                        [rt.TensorInfo("x", F, [1, 4, 6, 6], ddr_addr=act)],
                        [rt.TensorInfo("y", F, [1, 8, 6, 6], ddr_addr=act + 4096)],
                        weights=w.tobytes(), name="conv_relu")
    assert conv
    return bytes(rt.serialize_bmodel(m))


def write_seeds(directory: Path) -> None:
    """The checked-in corpus: one valid input per target and reader mode."""
    from . import bad_inputs as bad

    for target in ("bmodel", "npz", "onnx"):
        (directory / target).mkdir(parents=True, exist_ok=True)
    (directory / "bmodel" / "conv_relu.bmodel").write_bytes(_bmodel_seed())
    (directory / "npz" / "bn_stored.npz").write_bytes(bad.npz_bytes(bad.BN_WEIGHTS, False))
    (directory / "npz" / "bn_deflated.npz").write_bytes(bad.npz_bytes(bad.BN_WEIGHTS, True))
    with tempfile.TemporaryDirectory() as d:
        bad.valid_conv(Path(d) / "conv.onnx")
        (directory / "onnx" / "conv.onnx").write_bytes((Path(d) / "conv.onnx").read_bytes())


class Harness:
    """One target: its structure-aware mutator and its test of one input."""

    def __init__(self, target: str, work: Path):
        from . import fuzz

        make_seed, self.mutate, self.run, self.ext = fuzz.TARGETS[target]
        self.ctx = make_seed(work)[1] if target == "npz" else {}
        self.expected = fuzz.expected_errors()
        self.work = work
        self.count = 0

    def mutator(self, data: bytes, max_size: int, seed: int) -> bytes:
        import atheris

        rng = random.Random(seed)
        if rng.random() < 0.5:
            try:
                out = self.mutate(data, rng)
            except Exception:  # noqa: BLE001 - the input may not even parse
                out = atheris.Mutate(data, max_size)
        else:
            out = atheris.Mutate(data, max_size)
        return out[:max_size]

    def test_one(self, data: bytes) -> None:
        # A fresh name each time: readers may cache by path.
        self.count += 1
        path = self.work / f"case{self.count % 2}-{self.count}{self.ext}"
        path.write_bytes(data)
        try:
            self.run(path, self.ctx)
        except self.expected:
            pass
        finally:
            path.unlink(missing_ok=True)
            for extra in self.work.glob(f"case{self.count % 2}-{self.count}*"):
                extra.unlink()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m tpuc.testing.atheris_fuzz",
                                description=__doc__.split("\n\n")[0],
                                epilog="Other arguments go to libFuzzer (corpus "
                                       "directories, -runs=N, -max_total_time=S, -seed=N ...).")
    p.add_argument("--target", choices=("bmodel", "npz", "onnx"))
    p.add_argument("--write_seeds", type=Path, metavar="DIR",
                   help="write the seed corpus into DIR/<target>/ and exit")
    args, rest = p.parse_known_args(argv[1:])
    if args.write_seeds:
        write_seeds(args.write_seeds)
        return 0
    if not args.target:
        p.error("--target is required")

    import atheris

    work = Path(tempfile.mkdtemp(prefix=f"tpuc-atheris-{args.target}-"))
    with atheris.instrument_imports(include=["tpuc"]):
        harness = Harness(args.target, work)
        # Running a seed imports (and so instruments) what the target uses.
        seeds = sorted((CORPUS / args.target).glob("*"))
        for s in seeds[:1]:
            harness.test_one(s.read_bytes())
    flags = [f"-max_len={MAX_LEN}", "-timeout=30", "-rss_limit_mb=8192"]
    atheris.Setup([argv[0]] + flags + rest, harness.test_one,
                  custom_mutator=harness.mutator)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
