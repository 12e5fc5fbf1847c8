"""What each layer costs in INT8, measured cheaply, and the work items of a search.

* **Float references** (:func:`cache_references`): the Top interpreter's
  tensors on each search sample, computed once and cached beside the
  calibration cache (``<model>_<key>.float_cache/``), the key hashing the
  model, its weights and the samples as the calibration cache does.
* **Local error** (:func:`local_scores`): one pass of the bit-exact Tpu
  interpreter per sample in local mode (``compiler.interpret(...,
  references=...)``): every op reads the float references of its inputs,
  cast to their INT8 types, so each tensor's error is its own op's alone
  (input and output quantization, weight rounding, requantization) and not
  the sum of everything before it.
* **Cause** (:func:`quantization_error`): the squared error of an INT8
  tensor split into clipping (values beyond the threshold) and rounding
  (inside it), from the calibration histograms when their cache is found,
  else from the float references.
* **End to end** (:func:`evaluate`) and **cycles** (:func:`measure_cycles`):
  a candidate quantize table lowered and run on the Tpu interpreter (the
  network outputs against the float references), or compiled and run on
  the cmodel.

The functions taking a :class:`Setup` are the work items the search fans
out (:mod:`.fanout`): module-level, picklable arguments, results of plain
Python types.
"""
from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import compiler
from ..calibration.histogram import AbsHistogram
from ..compare import cosine
from ..deploy import deploy, dequantize, lowering_options, quant_params
from ..preprocess import Preprocess, module_inputs
from ..transform import load_inputs
from .qtable import write_qtable

log = logging.getLogger(__name__)

REF_CACHE_VERSION = "tpuc-float-cache-1"


@dataclass(frozen=True)
class Setup:
    """Everything a worker needs to lower and run the model (picklable)."""
    mlir: str
    calibration_table: str
    chip: str
    asymmetric: bool
    samples: tuple[str, ...]  # cached sample directories (inputs.npz, reference.npz)


@dataclass
class Sample:
    inputs: dict[str, np.ndarray]
    reference: dict[str, np.ndarray]


def load_sample(path: str) -> Sample:
    with np.load(Path(path) / "inputs.npz") as i, np.load(Path(path) / "reference.npz") as r:
        return Sample(dict(i), dict(r))


def cache_references(module, mlir: Path, files: list[Path], cache_dir: Path,
                     model: str, key: str) -> list[str]:
    """The float references of `files` in ``cache_dir``, computed once."""
    root = cache_dir / f"{model}_{key}.float_cache"
    dirs = [root / f"{k:04d}" for k in range(len(files))]
    if all((d / "reference.npz").is_file() for d in dirs):
        log.info("float references of %d samples from %s", len(files), root)
        return [str(d) for d in dirs]
    names = [n for n, _ in module_inputs(module)]
    preprocess = Preprocess.from_module(module)
    for path, d in zip(files, dirs):
        inputs = load_inputs(path, names, preprocess)
        with module.context:
            ref = compiler.interpret(module, inputs, all_tensors=True)
        d.mkdir(parents=True, exist_ok=True)
        np.savez(d / "inputs.npz", **inputs)
        tmp = d / "reference.tmp.npz"  # complete files only: another run may read them
        np.savez(tmp, **ref)
        os.replace(tmp, d / "reference.npz")
    log.info("float references of %d samples cached in %s", len(files), root)
    return [str(d) for d in dirs]


# ----------------------------------------------------------- work items

_LOWERED: dict[tuple, tuple] = {}  # per process: (context, module) by setup and table


def lower(setup: Setup, modes: dict[str, str]):
    """(module, INT8 params) of the Tpu module for quantize table `modes`."""
    key = (setup, tuple(sorted(modes.items())))
    if key in _LOWERED:
        return _LOWERED[key][1:]
    ctx = compiler.make_context()
    module = compiler.load_module(setup.mlir, ctx)
    with tempfile.TemporaryDirectory() as tmp:
        table = write_qtable(Path(tmp) / "qtable", modes) if modes else None
        options = lowering_options("INT8", setup.chip, setup.calibration_table,
                                   setup.asymmetric, table)
        with ctx:
            compiler.run_pipeline(module, f"top-to-tpu-pipeline{{{options}}}")
    if len(_LOWERED) > 8:  # candidate tables are tried once or twice each
        _LOWERED.clear()
    entry = (ctx, module, quant_params(module))
    _LOWERED[key] = entry
    return entry[1:]


def local_scores(setup: Setup, samples: list[int]) -> dict[str, list[float]]:
    """Per INT8 tensor, its local cosine on each of `samples` (all-INT8)."""
    module, qparams = lower(setup, {})
    out: dict[str, list[float]] = {}
    for k in samples:
        s = load_sample(setup.samples[k])
        with module.context:
            local = compiler.interpret(module, s.inputs, all_tensors=True,
                                       references=s.reference)
        local = dequantize({n: v for n, v in local.items() if n in qparams}, qparams)
        for name, v in local.items():
            # A network output's INT8 producer is renamed `<output>_i8`.
            ref = name if name in s.reference else name.removesuffix("_i8")
            if ref in s.reference:
                out.setdefault(ref, []).append(cosine(v, s.reference[ref]))
    return out


def evaluate(setup: Setup, modes: dict[str, str], samples: list[int]) -> list[float]:
    """Per sample, the lowest cosine of the network outputs against float."""
    module, _ = lower(setup, modes)
    cos = []
    for k in samples:
        s = load_sample(setup.samples[k])
        with module.context:
            outputs = compiler.interpret(module, s.inputs)
        cos.append(min(cosine(v, s.reference[n]) for n, v in outputs.items()))
    return cos


def measure_cycles(setup: Setup, modes: dict[str, str], quantize: str = "INT8") -> int:
    """Simulated cycles of the bmodel for `modes` (or all-`quantize`)."""
    with tempfile.TemporaryDirectory() as tmp:
        table = write_qtable(Path(tmp) / "qtable", modes) if modes else None
        int8 = quantize == "INT8"
        r = deploy(setup.mlir, quantize=quantize, chip=setup.chip,
                   model_path=Path(tmp) / "m.bmodel",
                   calibration_table=setup.calibration_table if int8 else None,
                   asymmetric=setup.asymmetric and int8, quantize_table=table)
        return int(r.cycles)


# ----------------------------------------------------------- causes

@dataclass
class QuantError:
    clip: float  # squared error from values beyond the threshold
    round: float  # squared error inside it
    signal: float  # sum of x^2

    def __add__(self, o: "QuantError") -> "QuantError":
        return QuantError(self.clip + o.clip, self.round + o.round, self.signal + o.signal)

    @property
    def clip_share(self) -> float:
        total = self.clip + self.round
        return self.clip / total if total > 0 else 0.0

    @property
    def cause(self) -> str:
        return "clipping" if self.clip > self.round else "rounding"


def histogram_error(h: AbsHistogram, threshold: float) -> QuantError:
    """Clip and rounding error of symmetric INT8 at `threshold`, from |x|."""
    centers = (np.arange(h.bins) + 0.5) * h.width
    n = h.counts.astype(np.float64)
    out = centers > threshold
    step = threshold / 127.0
    return QuantError(float(np.sum(n[out] * (centers[out] - threshold) ** 2)),
                      float(np.sum(n[~out]) * step * step / 12.0),
                      float(np.sum(n * centers * centers)))


def quantization_error(x: np.ndarray, scale: float, zp: int) -> QuantError:
    """Clip and rounding error of `x` quantized with (scale, zero point)."""
    x = np.asarray(x, np.float64).ravel()
    q = np.sign(x / scale) * np.floor(np.abs(x / scale) + 0.5) + zp  # half away
    inside = (q >= -128) & (q <= 127)
    err = (np.clip(q, -128, 127) - zp) * scale - x
    return QuantError(float(np.sum(err[~inside] ** 2)), float(np.sum(err[inside] ** 2)),
                      float(np.sum(x * x)))
