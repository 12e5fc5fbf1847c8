"""Calibration: dataset → Top interpreter → cached histograms → table.

:func:`calibrate` runs the Top interpreter on each dataset sample (with a
tqdm progress bar) and folds every tensor it names into a streaming |x|
histogram (:mod:`.histogram`); no activation outlives its sample. The
histograms are cached in ``<cache_dir>/<model>_<key>.calib_cache.npz``, the
key hashing the top.mlir, its weight file, the histogram size and the used
dataset files' names and bytes, so another method or a re-run reads the cache
and never runs the model again. The table then holds every tensor's
threshold by the chosen method (:mod:`.thresholds`) and its min and max.

Dataset: the files of a directory, sorted by name: ``.npz`` (keyed by input
name), ``.npy`` (single-input models) and images (single-input models,
through the module's recorded preprocessing, :mod:`tpuc.preprocess`); other
files are skipped. ``input_num`` larger than the number of samples is a
warning, and every sample is used (as tpu-mlir does).
"""
from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from .. import compiler
from ..preprocess import Preprocess, is_image, module_inputs
from ..progress import bar
from ..transform import load_inputs
from .histogram import DEFAULT_BINS, HistogramSet
from .table import CalibrationTable, TensorRange
from .thresholds import DEFAULT_PERCENTILE, METHODS, describe, threshold

log = logging.getLogger(__name__)

CACHE_VERSION = "tpuc-calibration-cache-1"  # bump when the histogram changes meaning


class CalibrationError(ValueError):
    """Bad calibration input; the message names the file and the reason."""


@dataclass
class CalibrationResult:
    table: CalibrationTable
    path: Path
    cache: Path
    from_cache: bool
    samples: int
    seconds: float  # the whole call
    collect_seconds: float = 0.0  # running the model and building histograms


def dataset_files(dataset: str | Path, input_num: int | None = None) -> list[Path]:
    """The first `input_num` (all when None or 0) sample files, by name."""
    dataset = Path(dataset)
    if not dataset.is_dir():
        raise CalibrationError(f"{dataset}: no such dataset directory")
    files = sorted(p for p in dataset.iterdir()
                   if p.is_file() and (p.suffix.lower() in (".npz", ".npy") or is_image(p)))
    if not files:
        raise CalibrationError(f"{dataset}: no .npz, .npy or image files in the dataset directory")
    if input_num is not None and input_num < 0:
        raise CalibrationError(f"--input_num must be >= 0, got {input_num}")
    if input_num and input_num > len(files):
        log.warning("%s: --input_num %d but the dataset has %d samples; using all of them",
                    dataset, input_num, len(files))
    return files[:input_num or None]


def _weight_file(module, mlir: Path) -> Path | None:
    attrs = module.operation.attributes
    if compiler.WEIGHT_FILE_ATTR not in attrs:
        return None
    p = Path(attrs[compiler.WEIGHT_FILE_ATTR].value)
    return next((c for c in (p, mlir.parent / p) if c.is_file()), None)


def cache_key(mlir: Path, weights: Path | None, files: list[Path], bins: int) -> str:
    """Hash of what the histograms depend on (model, weights, samples, bins)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{CACHE_VERSION}\0{bins}\0".encode())
    for p in [mlir, *([weights] if weights else []), *files]:
        h.update(f"{p.name}\0".encode())
        with open(p, "rb") as f:
            while chunk := f.read(1 << 22):
                h.update(chunk)
    return h.hexdigest()


def collect_histograms(module, files: list[Path], bins: int = DEFAULT_BINS,
                       progress: bool = True) -> HistogramSet:
    """Runs the Top interpreter on every sample and histograms every tensor."""
    names = [n for n, _ in module_inputs(module)]
    preprocess = Preprocess.from_module(module)
    hists = HistogramSet()
    for path in bar(files, desc="calibration", unit="sample", enable=progress):
        try:
            inputs = load_inputs(path, names, preprocess)
        except (ValueError, FileNotFoundError) as e:
            raise CalibrationError(str(e)) from None
        try:
            with module.context:
                tensors = compiler.interpret(module, inputs, all_tensors=True)
            hists.add(tensors, bins)
        except (compiler.CompileError, ValueError) as e:
            raise CalibrationError(f"{path}: {str(e).splitlines()[0]}") from None
        del tensors  # streaming: only the histograms outlive a sample
    return hists


def build_table(hists: HistogramSet, method: str,
                percentile: float = DEFAULT_PERCENTILE) -> CalibrationTable:
    return CalibrationTable({name: TensorRange(threshold(h, method, percentile), h.min, h.max)
                             for name, h in hists.items()})


def calibrate(mlir: str | Path, dataset: str | Path, output: str | Path,
              input_num: int | None = None, method: str = "kl",
              percentile: float = DEFAULT_PERCENTILE, bins: int = DEFAULT_BINS,
              cache_dir: str | Path | None = None, progress: bool = True) -> CalibrationResult:
    """Writes the calibration table of the Top module `mlir` to `output`."""
    start = time.perf_counter()
    if method not in METHODS:
        raise CalibrationError(f"unknown method {method!r} (one of {', '.join(METHODS)})")
    if not 0 < percentile <= 100:
        raise CalibrationError(f"--percentile must be in (0, 100], got {percentile}")
    if bins < DEFAULT_BINS:
        raise CalibrationError(f"histograms need at least {DEFAULT_BINS} bins, got {bins}")
    mlir, output = Path(mlir), Path(output)
    files = dataset_files(dataset, input_num)
    ctx = compiler.make_context()
    module = compiler.load_module(mlir, ctx)
    model = module.operation.attributes["module.name"].value \
        if "module.name" in module.operation.attributes else mlir.stem
    key = cache_key(mlir, _weight_file(module, mlir), files, bins)
    cache_dir = Path(cache_dir) if cache_dir is not None else output.parent
    cache = cache_dir / f"{model}_{key}.calib_cache.npz"

    collect_seconds = 0.0
    from_cache = cache.is_file()
    if from_cache:
        hists, _ = HistogramSet.load(cache)
        log.info("histograms of %d tensors from %s", len(hists), cache)
    else:
        t0 = time.perf_counter()
        hists = collect_histograms(module, files, bins, progress)
        collect_seconds = time.perf_counter() - t0
        cache_dir.mkdir(parents=True, exist_ok=True)
        hists.save(cache, model=model, samples=len(files), key=key)
        log.info("%d samples in %.2f s; histograms cached in %s", len(files), collect_seconds, cache)

    table = build_table(hists, method, percentile)
    output.parent.mkdir(parents=True, exist_ok=True)
    table.save(output, model=model, method=describe(method, percentile), inputs=len(files),
               extra={"histogram number": bins, "dataset": Path(dataset).resolve()})
    return CalibrationResult(table, output, cache, from_cache, len(files),
                             time.perf_counter() - start, collect_seconds)
