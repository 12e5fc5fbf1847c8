"""model_deploy: top.mlir → tpu.mlir → bmodel, validated stage by stage.

Lowers a Top module for a quantization mode and chip (the
``top-to-tpu-pipeline``), writes ``<name>_tpu.mlir``, then runs the
``tpu-codegen-pipeline``: groups consecutive ops whose tensors stay in local
memory (unless ``layer_group=False``), assigns DDR addresses and generates the
chip's instructions into a ``.bmodel``, and writes ``<name>_final.mlir`` (the Tpu module with
its addresses). With a test input, the Tpu interpreter's tensors are
compared with the reference (the Top / ONNX dump), and the bmodel is run on
the cmodel with every tensor dumped and compared with the Tpu interpreter.
Tensors kept in a layer group's local memory never reach DDR and cannot be
dumped: only stored tensors (group outputs, ungrouped ops' results, network
outputs) are compared; ``layer_group=False`` stores and compares every one.
The result also carries the simulated cycles and the chip's roofline bound:
``max(MACs / peak MACs per cycle, (weights + inputs + outputs) bytes / DDR
bytes per cycle)``, and the latency bound of small models: that plus the DDR
latency and GDMA issue of the first load and of the last store, which no
schedule overlaps with anything.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import compiler
from . import runtime as rt
from .compare import CompareResult, Tolerance, compare, load_npz
from .mlir import ir
from .preprocess import Preprocess
from .progress import Stages
from .transform import load_inputs

log = logging.getLogger(__name__)

MODES = ("F32", "F16", "BF16", "INT8")
# Layer groups stay off by default until every test expecting all tensors
# dumped under compare_all is adapted; flip here (the CLI follows).
LAYER_GROUP_DEFAULT = True


@dataclass
class Roofline:
    macs: int
    ddr_bytes: int
    compute_cycles: float
    memory_cycles: float
    # DDR latency no schedule can hide: the first load's issue and latency
    # before any compute, the last store's after it.
    latency_cycles: float = 0.0

    @property
    def cycles(self) -> float:
        return max(self.compute_cycles, self.memory_cycles, 1.0)

    @property
    def latency_bound(self) -> float:
        """The bound of a latency-bound (small) model: the roofline plus the
        DDR latency on the critical path."""
        return self.cycles + self.latency_cycles

    @property
    def bound(self) -> str:
        return "compute" if self.compute_cycles >= self.memory_cycles else "memory"


@dataclass
class DeployResult:
    tpu_mlir: Path
    final_mlir: Path
    bmodel: Path
    chip: str
    compile_seconds: float
    cycles: int
    microseconds: float
    tiu_utilization: float
    gdma_utilization: float
    tiu_instructions: int
    gdma_instructions: int
    roofline: Roofline
    cmodel_seconds: float = 0.0
    weight_bytes: int = 0  # the bmodel's weight region
    f32_weight_bytes: int = 0  # the same weights as float32 (the Top module's)
    tpu_outputs: Path | None = None
    model_outputs: Path | None = None
    tpu_comparison: CompareResult | None = None
    model_comparison: CompareResult | None = None
    # INT8 tensors where the cmodel differs from the Tpu interpreter.
    int_mismatches: list[str] = field(default_factory=list)
    # Under compare_all, tensors the Tpu interpreter has and the cmodel did
    # not dump: layer groups keep them in local memory.
    not_dumped: list[str] = field(default_factory=list)

    @property
    def roofline_ratio(self) -> float:
        """Simulated cycles over the roofline bound (1.0 is the bound)."""
        return self.cycles / self.roofline.cycles

    @property
    def latency_ratio(self) -> float:
        """Simulated cycles over the latency bound (Roofline.latency_bound)."""
        return self.cycles / self.roofline.latency_bound

    @property
    def passed(self) -> bool:
        return not self.int_mismatches and all(
            c is None or c.passed for c in (self.tpu_comparison, self.model_comparison))

    def summary(self) -> str:
        r = self.roofline
        return (f"{self.chip}: {self.cycles} cycles ({self.microseconds:.1f} us), "
                f"TIU {100 * self.tiu_utilization:.1f}% busy, GDMA "
                f"{100 * self.gdma_utilization:.1f}% busy; roofline "
                f"{r.cycles:.0f} cycles ({r.bound}-bound: {r.macs} MACs, "
                f"{r.ddr_bytes} DDR bytes) -> {self.roofline_ratio:.2f}x the bound, "
                f"{self.latency_ratio:.2f}x the latency bound ({r.latency_bound:.0f} cycles)")


def _tolerance(tol) -> Tolerance:
    if isinstance(tol, Tolerance):
        return tol
    if isinstance(tol, str):
        return Tolerance.parse(tol)
    cos, euclid = tol
    return Tolerance(float(cos), float(euclid))


def _int_attr(module, name: str) -> int:
    attrs = module.operation.attributes
    return int(attrs[name].value) if name in attrs else 0


def _walk(op):
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child
                yield from _walk(child)


def _tensor_bytes(value) -> tuple[list[int], int]:
    """(shape, bytes per element) of a ranked tensor value."""
    t = ir.RankedTensorType(value.type)
    bits = getattr(t.element_type, "width", None)
    if bits is None:  # a quantized storage type names its integer type
        bits = 8 if "i8" in str(t.element_type) else 32
    return list(t.shape), max(1, bits // 8)


def _f32_weight_bytes(module) -> int:
    """Bytes of the Top module's weights as float32."""
    return sum(4 * int(np.prod(_tensor_bytes(op.results[0])[0]))
               for op in _walk(module.operation) if op.name == "top.Weight")


def gathered_weight_bytes(module) -> tuple[int, int]:
    """(bytes of the weights read only through Gather, bytes those Gathers
    read): an embedding lookup reads its rows, not its table."""
    tables: dict = {}  # weight op -> (table bytes, rows read bytes, used elsewhere)
    for op in _walk(module.operation):
        for i, v in enumerate(op.operands):
            owner = v.owner
            if not hasattr(owner, "name") or owner.name != "top.Weight":
                continue
            key = owner
            shape, esize = _tensor_bytes(v)
            table = int(np.prod(shape)) * esize
            entry = tables.setdefault(key, [table, 0, False])
            if op.name == "tpu.Gather" and i == 0:
                axis = op.attributes["axis"].value % len(shape)
                indices, _ = _tensor_bytes(op.operands[1])
                entry[1] += int(np.prod(indices)) * table // max(1, shape[axis])
            else:
                entry[2] = True
    only = [(t, r) for t, r, elsewhere in tables.values() if not elsewhere and r]
    return sum(t for t, _ in only), sum(min(t, r) for t, r in only)


def data_movement_weight_bytes(module) -> int:
    """Bytes of the constants the backend made to move data on the matmul
    unit (identity and 0/1 matrices, `tpu.data_movement`) and placed in the
    weight blob: the schedule's, not the model's."""
    total = 0
    for op in _walk(module.operation):
        if (op.name == "top.Weight" and "tpu.data_movement" in op.attributes
                and "ddr.addr" in op.attributes):
            shape, esize = _tensor_bytes(op.results[0])
            total += int(np.prod(shape)) * esize
    return total


def _roofline(module, model: rt.Model, mode: str = "F32") -> Roofline:
    """The bound at the mode's peak (the chip's MACs per lane for its dtype),
    of the model's work: MACs and weights the backend adds to move data
    (tpu.macs leaves out their MACs) are not counted."""
    t = model.target
    macs = _int_attr(module, "tpu.macs")
    plan = model.bmodel.plan
    io = sum(int(np.prod(s.shape)) * np.dtype(s.numpy_dtype).itemsize
             for s in model.inputs + model.outputs)
    tables, rows = gathered_weight_bytes(module)
    ddr = (int(plan.weight_size) - tables + rows + io
           - data_movement_weight_bytes(module))
    peak = t.lanes * getattr(t, "eu_" + mode.lower(), t.eu_f32)
    latency = 2 * (t.ddr_latency_cycles + t.gdma_issue_cycles)
    return Roofline(macs, ddr, macs / peak, ddr / t.ddr_bytes_per_cycle, latency)


def deploy(mlir_path, quantize: str = "F32", chip: str = "tpu_edge",
           model_path=None, test_input=None, test_reference=None,
           compare_all: bool = False, tolerance=(0.99, 0.99),
           excepts=(), layer_group: bool = LAYER_GROUP_DEFAULT,
           calibration_table=None, asymmetric: bool = False,
           quantize_table=None, run: bool = True) -> DeployResult:
    """Compile `mlir_path` (a Top module file, or an `ir.Module` already in
    memory, which is lowered in place) to a bmodel for `chip`; see module
    doc. `run=False` only compiles: the bmodel is not run on the cmodel, so
    the result has no cycles (0) and no comparison."""
    start = time.perf_counter()
    in_memory = isinstance(mlir_path, ir.Module)
    if in_memory and model_path is None:
        raise ValueError("deploying a module in memory needs model_path")
    if not in_memory:
        mlir_path = Path(mlir_path)
        if not mlir_path.is_file():
            raise FileNotFoundError(f"{mlir_path}: no such top.mlir")
    if not run and test_input is not None:
        raise ValueError("test_input needs run=True")
    if quantize.upper() not in MODES:
        raise ValueError(f"quantize mode {quantize!r} is not supported "
                         f"(supported: {', '.join(MODES)})")
    quantize = quantize.upper()
    lowering = lowering_options(quantize, chip, calibration_table, asymmetric,
                                 quantize_table)
    tolerance = _tolerance(tolerance)
    target = rt.load_target(chip)  # fails early on an unknown chip
    model_path = Path(model_path) if model_path else mlir_path.with_suffix(".bmodel")
    out_dir = model_path.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    name = model_path.stem

    with Stages(f"deploy {name}", 2 + run + (test_input is not None)) as stages:
        return _deploy(stages, mlir_path, quantize, chip, target, model_path, name,
                       lowering, test_input, test_reference, compare_all, tolerance,
                       excepts, layer_group, start, run)


def _deploy(stages: Stages, mlir_path, quantize: str, chip: str, target,
            model_path: Path, name: str, lowering: str, test_input, test_reference,
            compare_all: bool, tolerance: Tolerance, excepts, layer_group: bool,
            start: float, run: bool) -> DeployResult:
    out_dir = model_path.parent
    in_memory = isinstance(mlir_path, ir.Module)
    ctx = mlir_path.context if in_memory else compiler.make_context()
    with ctx, stages.step("lower"):
        module = mlir_path if in_memory else compiler.load_module(mlir_path, ctx)
        preprocess = Preprocess.from_module(module)  # for an image test_input
        f32_weights = _f32_weight_bytes(module)
        compiler.run_pipeline(module, f"top-to-tpu-pipeline{{{lowering}}}")
        fallbacks = module.operation.attributes["tpu.fallback_ops"] \
            if "tpu.fallback_ops" in module.operation.attributes else []
        if len(fallbacks):
            log.info("%s: %d ops have no INT8 form and run in the fallback float mode: %s",
                     quantize, len(fallbacks), ", ".join(str(a).strip('"') for a in fallbacks))
        qparams = quant_params(module)
        tpu_mlir = out_dir / f"{name}_tpu.mlir"
        compiler.save_module(module, tpu_mlir)
    with ctx, stages.step("codegen"):
        chip_opt = compiler.pass_option_path(chip) if Path(chip).suffix else chip
        bmodel_opt = compiler.pass_option_path(model_path)
        compiler.run_pipeline(module, f"tpu-codegen-pipeline{{chip={chip_opt} bmodel={bmodel_opt} "
                                      f"layer-group={str(layer_group).lower()}}}")
        final_mlir = out_dir / f"{name}_final.mlir"
        compiler.save_module(module, final_mlir)
    compile_seconds = time.perf_counter() - start
    log.info("wrote %s, %s and %s (%.2f s)", tpu_mlir, final_mlir, model_path, compile_seconds)

    model = rt.Model(model_path)
    if not run:
        return DeployResult(
            tpu_mlir=tpu_mlir, final_mlir=final_mlir, bmodel=model_path, chip=target.name,
            compile_seconds=compile_seconds, cycles=0, microseconds=0.0,
            tiu_utilization=0.0, gdma_utilization=0.0, tiu_instructions=0,
            gdma_instructions=0, roofline=_roofline(module, model, quantize))
    names = [s.name for s in model.inputs]
    inputs = (load_inputs(test_input, names, preprocess,
                          shapes={s.name: s.shape for s in model.inputs})
              if test_input is not None else
              {s.name: np.zeros(s.shape, s.numpy_dtype) for s in model.inputs})
    t0 = time.perf_counter()
    with stages.step("cmodel"):
        run = model.run(inputs, dump_all_tensors=test_input is not None)
    cmodel_seconds = time.perf_counter() - t0
    st = run.stats
    result = DeployResult(
        tpu_mlir=tpu_mlir, final_mlir=final_mlir, bmodel=model_path, chip=target.name,
        compile_seconds=compile_seconds, cycles=st.total_cycles,
        microseconds=st.microseconds, tiu_utilization=st.tiu_utilization,
        gdma_utilization=st.gdma_utilization, tiu_instructions=st.tiu_instructions,
        gdma_instructions=st.gdma_instructions, roofline=_roofline(module, model, quantize),
        cmodel_seconds=cmodel_seconds, weight_bytes=int(model.bmodel.plan.weight_size),
        f32_weight_bytes=f32_weights)

    if test_input is None:
        if test_reference is not None:
            raise ValueError("test_reference needs test_input")
        return result
    with ctx, stages.step("Tpu interpreter"):
        tpu = compiler.interpret(module, inputs, all_tensors=True)
    # Quantized tensors are dumped as the integers they are.
    tpu = {k: (v.astype(np.int8) if k in qparams else v) for k, v in tpu.items()}
    result.tpu_outputs = out_dir / f"{name}_tpu_outputs.npz"
    np.savez(result.tpu_outputs, **tpu)
    if test_reference is not None:
        result.tpu_comparison = compare(dequantize(tpu, qparams), load_npz(test_reference),
                                        tolerance=tolerance, excepts=excepts)
    cmodel = {**run.tensors, **run.outputs}
    result.model_outputs = out_dir / f"{name}_model_outputs.npz"
    np.savez(result.model_outputs, **cmodel)
    # Without compare_all only the network outputs are checked.
    wanted = set(cmodel) if compare_all else set(run.outputs)
    if compare_all:
        result.not_dumped = sorted(set(tpu) - wanted - set(names))
    reference = {k: v for k, v in tpu.items() if k in wanted}
    # Integer tensors must equal the Tpu interpreter's bit for bit.
    result.int_mismatches = sorted(
        k for k in reference if k in qparams and k in cmodel
        and not np.array_equal(np.asarray(cmodel[k]).astype(np.int64).ravel(),
                               reference[k].astype(np.int64).ravel()))
    result.model_comparison = compare(dequantize(cmodel, qparams),
                                      dequantize(reference, qparams),
                                      tolerance=tolerance, excepts=excepts)
    return result


def lowering_options(mode: str, chip: str, calibration_table, asymmetric: bool,
                      quantize_table) -> str:
    """top-to-tpu-pipeline's options; bad combinations fail here, in one line."""
    chip = compiler.pass_option_path(chip) if Path(chip).suffix else chip
    opts = [f"mode={mode}", f"chip={chip}"]
    if calibration_table is not None:
        if mode != "INT8":
            raise ValueError(f"--calibration_table is only used by --quantize INT8, not {mode}")
        if not Path(calibration_table).is_file():
            raise FileNotFoundError(f"{calibration_table}: no such calibration table")
        opts.append(f"calibration-table={compiler.pass_option_path(calibration_table)}")
    elif mode == "INT8":
        raise ValueError("--quantize INT8 needs --calibration_table (made by run_calibration.py)")
    if asymmetric:
        if mode != "INT8":
            raise ValueError(f"--asymmetric is only used by --quantize INT8, not {mode}")
        opts.append("asymmetric=true")
    if quantize_table is not None:
        if not Path(quantize_table).is_file():
            raise FileNotFoundError(f"{quantize_table}: no such quantize table")
        opts.append(f"quantize-table={compiler.pass_option_path(quantize_table)}")
    return " ".join(opts)


_QUANT_TYPE = re.compile(r"!quant\.uniform<i8:f32, ([-+0-9.eE]+)(?::(-?\d+))?>")
_NAME_LOC = re.compile(r'^loc\("([^"]+)"')


def quant_params(module) -> dict[str, tuple[float, int]]:
    """(scale, zero point) of every named INT8 tensor of a Tpu module."""
    out = {}
    for func in module.body.operations:
        for block in func.regions[0].blocks:
            for op in block.operations:
                if len(op.results) != 1:
                    continue
                m = _QUANT_TYPE.search(str(op.results[0].type))
                n = _NAME_LOC.match(str(op.location))
                if m and n:
                    out[n.group(1)] = (float(m.group(1)), int(m.group(2) or 0))
    return out


def dequantize(tensors: dict, qparams: dict) -> dict:
    """Integer tensors as the real values their types stand for."""
    return {k: ((np.asarray(v, np.float32) - qparams[k][1]) * np.float32(qparams[k][0])
                if k in qparams else v) for k, v in tensors.items()}
