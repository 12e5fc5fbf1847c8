"""search_qtable: the fewest float layers that bring INT8 to a cosine target.

1. **References**: the float tensors of the search samples (the first
   ``input_num`` dataset files), cached (:func:`.sensitivity.cache_references`).
2. **Score**: each INT8 layer's local cosine loss from one local-mode pass of
   the Tpu interpreter per sample (:func:`.sensitivity.local_scores`), and
   whether clipping or rounding causes it (calibration histograms).
3. **Choose**: candidates by loss, largest first; the shortest prefix that
   reaches the target end to end is found by a (workers+1)-ary search over
   the prefix length (each probe: lower with that quantize table, run the
   Tpu interpreter on the samples); then chosen layers whose removal keeps
   the target are dropped, block by block (:func:`_prune`).
4. **Confirm**: the table's cycles on the chip (cmodel), against all-INT8,
   and the cycle cost of each chosen layer alone (the first CYCLE_LIMIT).

The end-to-end cosine of a table is the mean over samples of the lowest
output cosine against the float model. Probes and per-layer work fan out
over local processes or Ray (:mod:`.fanout`).
"""
from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import compiler
from .. import runtime as rt
from ..calibration.driver import CalibrationError, _weight_file, cache_key, dataset_files
from ..calibration.histogram import HistogramSet
from ..calibration.table import CalibrationTable
from .fanout import FanOut
from .qtable import FLOAT_MODES, write_qtable
from .sensitivity import (QuantError, Setup, cache_references, evaluate, histogram_error,
                          load_sample, local_scores, measure_cycles, quantization_error)

log = logging.getLogger(__name__)

_NAME_LOC = re.compile(r'^loc\("([^"]+)"')
_SKIP = ("top.Input", "top.Weight", "top.None")


class SearchError(ValueError):
    """Bad search input; the message names the file and the reason."""


@dataclass
class Layer:
    name: str
    op: str  # Top op type
    loss: float  # 1 - local cosine, mean over samples
    error: QuantError  # of its input and output tensors
    chosen: bool = False
    cycles: int | None = None  # cycles added when this layer alone is float


@dataclass
class SearchResult:
    qtable: Path
    report: Path
    modes: dict[str, str]
    target: float
    cosine: float  # end to end with the table
    int8_cosine: float  # end to end, all INT8
    layers: list[Layer]  # scored INT8 layers, largest loss first
    evaluations: int  # end-to-end probes
    seconds: float
    int8_cycles: int | None = None
    mixed_cycles: int | None = None
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def reached(self) -> bool:
        return self.cosine >= self.target


def _top_layers(module) -> dict[str, tuple[str, list[str]]]:
    """Name -> (op type, input tensor names) of the Top module's layers."""
    func = module.body.operations[0]
    names, layers = {}, {}
    for op in func.regions[0].blocks[0].operations:
        m = _NAME_LOC.match(str(op.location))
        if not m or len(op.results) != 1:
            continue
        names[op.results[0]] = m.group(1)
        if op.operation.name not in _SKIP:
            layers[m.group(1)] = (op.operation.name, [
                names[v] for v in op.operands if v in names
                and v.owner.name not in ("top.Weight", "top.None")])
    return layers


def _histograms(cache_dir: Path, model: str, mlir: Path, module,
                table: CalibrationTable) -> HistogramSet | None:
    """The calibration's histogram cache, when the table's header finds it."""
    dataset, inputs = table.header_value("dataset"), table.header_value("input number")
    bins = table.header_value("histogram number")
    if not (dataset and inputs and bins):
        return None
    try:
        files = dataset_files(dataset, int(inputs))
        key = cache_key(mlir, _weight_file(module, mlir), files, int(bins))
    except (CalibrationError, ValueError, OSError):
        return None
    path = cache_dir / f"{model}_{key}.calib_cache.npz"
    if not path.is_file():
        return None
    log.info("clipping and rounding from the calibration histograms in %s", path)
    return HistogramSet.load(path)[0]


class _Probe:
    """End-to-end cosine of candidate tables, memoized, fanned out."""

    def __init__(self, fan: FanOut, setup: Setup, samples: int):
        self.fan, self.setup, self.samples = fan, setup, list(range(samples))
        self.seen: dict[frozenset, float] = {}

    def __call__(self, tables: list[dict[str, str]]) -> list[float]:
        todo = [t for t in tables if frozenset(t) not in self.seen]
        todo = list({frozenset(t): t for t in todo}.values())
        for t, cos in zip(todo, self.fan.map(evaluate, [(self.setup, t, self.samples)
                                                        for t in todo])):
            self.seen[frozenset(t)] = sum(cos) / len(cos)
        return [self.seen[frozenset(t)] for t in tables]


def _shortest_prefix(probe: _Probe, order: list[str], fp: str, target: float,
                     width: int) -> tuple[int | None, float]:
    """Smallest k with cos(first k of `order`) >= target (assumed monotone),
    probing `width` prefix lengths at once; (None, best cos) if none."""
    lo, hi, best = 0, None, -math.inf  # lo: known short of the target
    n = len(order)
    if n == 0:
        return None, best
    while hi is None or hi - lo > 1:
        if hi is None:  # gallop: 1, 2, 4, ... up to every candidate
            ks = sorted({min(n, lo * 2 ** (i + 1) if lo else 2 ** i) for i in range(width)})
        else:
            step = (hi - lo) / (width + 1)
            ks = sorted({lo + max(1, round(step * (i + 1))) for i in range(width)} - {hi})
            ks = [k for k in ks if lo < k < hi] or [lo + 1]
        cos = probe([{name: fp for name in order[:k]} for k in ks])
        best = max(best, *cos)
        passing = [k for k, c in zip(ks, cos) if c >= target]
        if passing:
            hi = min(passing)
        lo = max([lo] + [k for k, c in zip(ks, cos) if c < target and (hi is None or k < hi)])
        if hi is None and lo >= n:
            return None, best
    return hi, best


PRUNE_LIMIT = 12  # removal probes a prune round may spend
PRUNE_ROUNDS = 4
CYCLE_LIMIT = 16  # chosen layers (largest loss first) whose own cycles are measured


def _prune(probe: _Probe, chosen: list[str], fp: str, target: float) -> list[str]:
    """Drops layers whose removal keeps the target. Each round splits the
    table into at most PRUNE_LIMIT blocks of consecutive layers, tries every
    block's removal at once, then drops the passing blocks together (else
    only the best one); rounds go on, with smaller blocks, while they drop
    something. With single-layer blocks this leaves no removable layer."""
    for _ in range(PRUNE_ROUNDS):
        if len(chosen) < 2:
            break
        size = math.ceil(len(chosen) / PRUNE_LIMIT)
        blocks = [chosen[i:i + size] for i in range(0, len(chosen), size)]
        without = [[c for c in chosen if c not in b] for b in blocks]
        cos = probe([{n: fp for n in w} for w in without])
        passing = sorted(((c, i) for i, c in enumerate(cos) if c >= target), reverse=True)
        if not passing:
            break
        drop = {n for _, i in passing for n in blocks[i]}
        rest = [c for c in chosen if c not in drop]
        if len(passing) > 1 and rest and probe([{n: fp for n in rest}])[0] >= target:
            chosen = rest
        else:
            chosen = without[passing[0][1]]
        if size == 1 and len(passing) == 1:
            break  # the one removable layer is gone
    return chosen


def search_qtable(mlir: str | Path, dataset: str | Path, calibration_table: str | Path,
                  output: str | Path, chip: str = "tpu_edge", expected_cos: float = 0.99,
                  max_float_layers: int | None = None, input_num: int = 4,
                  fp_type: str = "F16", asymmetric: bool = False, workers: int = 1,
                  ray_address: str | None = None, cache_dir: str | Path | None = None,
                  cycles: bool = True) -> SearchResult:
    """Writes the quantize table `output` and its report; see the module doc."""
    start = time.perf_counter()
    timings: dict[str, float] = {}
    fp = fp_type.upper()
    if fp not in FLOAT_MODES:
        raise SearchError(f"--fp_type must be one of {', '.join(FLOAT_MODES)}, got {fp_type!r}")
    if not 0 < expected_cos <= 1:
        raise SearchError(f"--expected_cos must be in (0, 1], got {expected_cos}")
    if max_float_layers is not None and max_float_layers < 1:
        raise SearchError(f"--max_float_layers must be >= 1, got {max_float_layers}")
    if input_num < 1:
        raise SearchError(f"--input_num must be >= 1, got {input_num}")
    mlir, output = Path(mlir), Path(output)
    rt.load_target(chip)  # an unknown chip fails before any work
    table = CalibrationTable.load(calibration_table)  # TableError is a ValueError
    files = dataset_files(dataset, input_num)
    ctx = compiler.make_context()
    module = compiler.load_module(mlir, ctx)
    attrs = module.operation.attributes
    model = attrs["module.name"].value if "module.name" in attrs else mlir.stem
    layers_info = _top_layers(module)
    if not any(n in table for n in layers_info):
        raise SearchError(f"{calibration_table}: names none of {mlir}'s tensors "
                          "(is it another model's?)")
    cache_dir = Path(cache_dir) if cache_dir is not None else Path(calibration_table).parent
    key = cache_key(mlir, _weight_file(module, mlir), files, 0)
    t0 = time.perf_counter()
    samples = cache_references(module, mlir, files, cache_dir, model, key)
    timings["references"] = time.perf_counter() - t0
    hists = _histograms(cache_dir, model, mlir, module, table)
    setup = Setup(str(mlir), str(calibration_table), chip, asymmetric, tuple(samples))

    with FanOut(workers, ray_address) as fan:
        probe = _Probe(fan, setup, len(samples))
        # Scores and the all-INT8 cosine, fanned out together.
        t0 = time.perf_counter()
        chunks = [list(range(len(samples)))[i::fan.parallel] for i in range(fan.parallel)]
        chunks = [c for c in chunks if c]
        results = fan.map(local_scores, [(setup, c) for c in chunks])
        timings["scores"] = time.perf_counter() - t0
        int8_cos = probe([{}])[0]
        local: dict[str, list[float]] = {}
        for r in results:
            for name, cos in r.items():
                local.setdefault(name, []).extend(cos)
        layers = _score(local, layers_info, table, hists, asymmetric, samples)
        log.info("all INT8: cos %.6f; %d INT8 layers scored", int8_cos, len(layers))

        t0 = time.perf_counter()
        chosen: list[str] = []
        cos = int8_cos
        if int8_cos < expected_cos:
            order = [l.name for l in layers][:max_float_layers or None]
            k, best = _shortest_prefix(probe, order, fp, expected_cos, fan.parallel)
            if k is None:
                cos = max(best, int8_cos)
            else:
                chosen = _prune(probe, order[:k], fp, expected_cos)
                cos = probe([{n: fp for n in chosen}])[0]
        timings["search"] = time.perf_counter() - t0
        modes = {n: fp for n in chosen}
        for layer in layers:
            layer.chosen = layer.name in modes
        result = SearchResult(output, output.with_name(output.name + ".report.txt"), modes,
                              expected_cos, cos, int8_cos, layers, len(probe.seen), 0.0,
                              timings=timings)
        if cycles:
            t0 = time.perf_counter()
            # All-INT8, the table, and each chosen layer alone.
            tables = [{}, modes] + [{n: fp} for n in chosen[:CYCLE_LIMIT]]
            counts = fan.map(measure_cycles, [(setup, t) for t in tables])
            result.int8_cycles, result.mixed_cycles = counts[0], counts[1]
            by_name = {l.name: l for l in layers}
            for n, c in zip(chosen, counts[2:]):
                by_name[n].cycles = c - counts[0]
            timings["cycles"] = time.perf_counter() - t0

    result.seconds = time.perf_counter() - start
    if result.reached:
        write_qtable(output, modes, header=[
            "tpuc quantize table (search_qtable)", f"model: {model}", f"chip: {chip}",
            f"expected cos: {expected_cos}", f"reached cos: {cos:.6f} (all INT8: {int8_cos:.6f})",
            f"float layers: {len(modes)} in {fp}"])
    write_report(result, model, fp)
    return result


def _score(local: dict[str, list[float]], layers_info, table: CalibrationTable,
           hists: HistogramSet | None, asymmetric: bool, samples: list[str]) -> list[Layer]:
    """The INT8 Top layers with their local loss and cause, largest loss first."""
    first = load_sample(samples[0]).reference if hists is None else {}

    def error(name: str) -> QuantError:
        if name not in table:
            return QuantError(0.0, 0.0, 0.0)
        if hists is not None and name in hists and not asymmetric:
            return histogram_error(hists[name], table.threshold(name))
        if name in first:
            return quantization_error(first[name], *table.qparams(name, asymmetric))
        return QuantError(0.0, 0.0, 0.0)

    layers = []
    for name, cos in local.items():
        if name not in layers_info:
            continue  # a helper tensor of the lowering
        op, inputs = layers_info[name]
        e = error(name)
        for i in inputs:
            e = e + error(i)
        layers.append(Layer(name, op.removeprefix("top."), 1.0 - sum(cos) / len(cos), e))
    layers.sort(key=lambda l: -l.loss)
    return layers


def write_report(r: SearchResult, model: str, fp: str) -> Path:
    """Accuracy against speed, one line a layer, beside the table."""
    lines = [f"# search_qtable report: {model}",
             f"# target cos {r.target}: {'reached' if r.reached else 'NOT reached'}, "
             f"cos {r.cosine:.6f} with {len(r.modes)} {fp} layers (all INT8: {r.int8_cosine:.6f})",
             f"# {r.evaluations} end-to-end evaluations, {r.seconds:.2f} s"]
    if r.int8_cycles is not None:
        lines.append(f"# cycles: all INT8 {r.int8_cycles}, with the table {r.mixed_cycles} "
                     f"({(r.mixed_cycles - r.int8_cycles) / max(r.int8_cycles, 1):+.1%})")
    lines.append("# loss = 1 - cos of the layer alone in INT8 (on float inputs); clip = "
                 "share of its tensors' INT8 error from clipping; +cycles = cost of "
                 f"running it alone in {fp}")
    w = max([len(l.name) for l in r.layers] + [5])
    lines.append(f"{'rank':>4}  {'layer':<{w}}  {'op':<12} {'loss':>10}  {'cause':<8} "
                 f"{'clip':>6}  {'mode':<5} {'+cycles':>8}")
    for i, l in enumerate(r.layers, 1):
        cyc = "-" if l.cycles is None else str(l.cycles)
        lines.append(f"{i:>4}  {l.name:<{w}}  {l.op:<12} {l.loss:>10.3e}  {l.error.cause:<8} "
                     f"{l.error.clip_share:>6.1%}  {fp if l.chosen else 'INT8':<5} {cyc:>8}")
    r.report.write_text("\n".join(lines) + "\n")
    return r.report
