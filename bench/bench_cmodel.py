"""Benchmark of the tpuc cmodel.

Prints, from one run:
  * simulator throughput in instructions per second (many small instructions),
  * functional speed in simulated GFLOP/s for a large F32 matmul,
  * the timing model's cycles for matmuls against the analytic roofline
    max(MACs / peak MACs-per-cycle, DDR bytes / DDR bytes-per-cycle),
  * whole models (torchvision ResNet-18, ResNet-50, MobileNetV2 at 224x224
    with random weights, the BERT-base encoder layer) in F32 and INT8: cmodel
    wall time against onnxruntime's on the same ONNX model, both on one
    thread and both on all threads (TPUC_CMODEL_THREADS), run in turn so that
    both meet the same load, with the simulated cycles, and the median ratio
    on one thread (of wall times, and of the running thread's CPU times,
    which a machine shared with other work disturbs less).

Usage: python bench/bench_cmodel.py [--chip tpu_pro] [--quick] [--models resnet18,bert]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numpy as np

from tpuc import runtime as rt

from _timing import interleaved_best
from bench_models import MODELS, ort_runner, prepare_model

F32 = rt.DType.F32


def throughput(t, count: int) -> float:
    """Instructions per second for a stream of small elementwise ops and moves."""
    bank = t.lmem_bytes_per_lane // t.lmem_banks
    shape = [1, t.lanes, 4, 4]
    a = rt.lmem_tensor(0, shape, F32)
    b = rt.lmem_tensor(bank, shape, F32)
    o = rt.lmem_tensor(2 * bank, shape, F32)
    sb = rt.StreamBuilder()
    for k in range(count):
        g = sb.gdma(rt.make_dma_move(a, rt.ddr_tensor(0, shape, F32)), sb.last_tiu_id)
        sb.tiu(rt.make_binary(rt.BinaryOp.ADD, o, a, b), g)
    sim = rt.Simulator(t, 1 << 20)
    tiu, gdma = sb.tiu_stream, sb.gdma_stream
    t0 = time.perf_counter()
    sim.run(tiu, gdma)
    dt = time.perf_counter() - t0
    return 2 * count / dt


def matmul_program(t, m: int, k: int, n: int):
    """Load L [1,M,1,K] and R [1,K,1,N], matmul, store: a single LMEM tile."""
    bank = t.lmem_bytes_per_lane // t.lmem_banks
    per_lane = lambda c, w: math.ceil(c / t.lanes) * w * 4
    la = 0
    ra = (la + per_lane(m, k) + bank - 1) // bank * bank
    oa = (ra + per_lane(k, n) + bank - 1) // bank * bank
    if oa + per_lane(m, n) > t.lmem_bytes_per_lane:
        raise ValueError(f"matmul {m}x{k}x{n} does not fit one LMEM tile of {t.name}")
    L = rt.lmem_tensor(la, [1, m, 1, k], F32)
    R = rt.lmem_tensor(ra, [1, k, 1, n], F32)
    O = rt.lmem_tensor(oa, [1, m, 1, n], F32)
    lbytes, rbytes, obytes = m * k * 4, k * n * 4, m * n * 4
    sb = rt.StreamBuilder()
    sb.gdma(rt.make_dma_move(L, rt.ddr_tensor(0, [1, m, 1, k], F32)))
    g = sb.gdma(rt.make_dma_move(R, rt.ddr_tensor(lbytes, [1, k, 1, n], F32)))
    c = sb.tiu(rt.make_matmul(O, L, R), g)
    sb.gdma(rt.make_dma_move(rt.ddr_tensor(lbytes + rbytes, [1, m, 1, n], F32), O), c)
    return sb, lbytes + rbytes + obytes


def functional_gflops(t, m, k, n, rng):
    sb, total = matmul_program(t, m, k, n)
    sim = rt.Simulator(t, total)
    sim.write_ddr(0, rng.standard_normal(m * k + k * n).astype(np.float32).tobytes())
    t0 = time.perf_counter()
    stats = sim.run(sb.tiu_stream, sb.gdma_stream)
    dt = time.perf_counter() - t0
    # spot-check the result so the figure is for real arithmetic
    lr = np.frombuffer(sim.read_ddr(0, (m * k + k * n) * 4), np.float32)
    L, R = lr[:m * k].reshape(m, k), lr[m * k:].reshape(k, n)
    out = np.frombuffer(sim.read_ddr((m * k + k * n) * 4, m * n * 4), np.float32).reshape(m, n)
    np.testing.assert_allclose(out[:4], L[:4].astype(np.float64) @ R, rtol=1e-4, atol=1e-3)
    return 2.0 * m * k * n / dt / 1e9, dt, stats


def roofline(t, m, k, n, extra_cycles=0):
    macs = m * k * n
    peak = t.lanes * t.eu_f32
    nbytes = (m * k + k * n + m * n) * 4
    return max(macs / peak, nbytes / t.ddr_bytes_per_cycle), macs / peak, nbytes / t.ddr_bytes_per_cycle


def model_rows(chip: str, names, repeat: int, work_dir) -> dict:
    """Prints one row per model and mode; returns the one-thread wall and
    CPU ratios, {(mode, "wall" | "cpu"): [ratio per model]}.

    onnxruntime and the cmodel (F32, INT8) run in turn, `repeat` rounds, so
    that all meet the same load on a shared machine; the best of each is
    kept. On one thread the CPU time of the running thread is printed too:
    it hardly depends on the load."""
    from tpuc.deploy import deploy

    cores = os.cpu_count() or 1
    print(f"whole models on {chip} (best of {repeat} interleaved runs; 1 thread, then {cores} threads):")
    print(f"  {'model':<16} {'mode':<5} {'ort1 ms':>8} {'cm1 ms':>9} {'ratio1':>7} {'cpu1':>7} "
          f"{'ortN ms':>8} {'cmN ms':>9} {'ratioN':>7} {'cycles':>10} {'tiu':>10} {'gdma':>10}")
    ratios = {(mode, kind): [] for mode in ("F32", "INT8") for kind in ("wall", "cpu")}
    for name in names:
        m = prepare_model(name, work_dir)
        models = {}
        for mode in ("F32", "INT8"):
            bm = m.dir / f"{name}_{chip}_{mode}.bmodel"
            deploy(m.mlir, quantize=mode, chip=chip, model_path=bm,
                   calibration_table=m.table if mode == "INT8" else None)
            models[mode] = rt.Model(bm)
        best = {}
        for threads in (1, cores):
            os.environ["TPUC_CMODEL_THREADS"] = str(threads)  # default: every core
            fns = {"ort": ort_runner(m, 1 if threads == 1 else 0)}
            for mode, model in models.items():
                feeds = {s.name: m.inputs[s.name] for s in model.inputs}
                model.run(feeds)  # warm up
                fns[mode] = (lambda mdl, f: lambda: mdl.run(f))(model, feeds)
            best[threads] = interleaved_best(fns, repeat)
        os.environ.pop("TPUC_CMODEL_THREADS")
        b1, bn = best[1], best[cores]
        for mode, model in models.items():
            s = model.last_stats
            r1, rn = b1[mode][0] / b1["ort"][0], bn[mode][0] / bn["ort"][0]
            c1 = b1[mode][1] / b1["ort"][1]
            ratios[(mode, "wall")].append(r1)
            ratios[(mode, "cpu")].append(c1)
            print(f"  {name:<16} {mode:<5} {b1['ort'][0] * 1e3:8.2f} {b1[mode][0] * 1e3:9.1f} "
                  f"{r1:6.2f}x {c1:6.2f}x {bn['ort'][0] * 1e3:8.2f} {bn[mode][0] * 1e3:9.1f} {rn:6.2f}x "
                  f"{s.total_cycles:10d} {s.tiu_cycles:10d} {s.gdma_cycles:10d}")
    return ratios


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chip", default="tpu_pro")
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--models", default=",".join(MODELS),
                    help=f"comma-separated subset of {','.join(MODELS)}; empty for none")
    ap.add_argument("--repeat", type=int, default=5, help="runs per model (best is kept)")
    ap.add_argument("--work-dir", default=None, help="keep exported models here (default: a temp dir)")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    t = rt.load_target(args.chip)
    print(f"target {t.name}: {t.lanes} lanes, {t.lmem_bytes_per_lane // 1024} KiB LMEM/lane, "
          f"F32 peak {t.lanes * t.eu_f32} MAC/cycle, DDR {t.ddr_bytes_per_cycle:g} B/cycle")

    ips = throughput(t, 2000 if args.quick else 20000)
    print(f"simulator throughput: {ips:,.0f} instructions/s (small add + move pairs)")

    m = k = n = 256 if args.quick else 512
    gf, dt, _ = functional_gflops(t, m, k, n, rng)
    print(f"functional F32 matmul {m}x{k}x{n}: {dt * 1e3:.1f} ms wall, {gf:.2f} GFLOP/s simulated")

    print("timing model vs roofline max(MACs/peak, bytes/BW) (single tile: load, matmul, store):")
    print(f"  {'M x K x N':>16} {'sim cycles':>11} {'roofline':>10} {'compute':>9} {'memory':>9} {'roof/sim':>8}")
    sizes = [(64, 64, 64), (128, 256, 128), (256, 256, 256), (512, 512, 256)]
    if args.quick:
        sizes = sizes[:3]
    for (mm, kk, nn) in sizes:
        try:
            sb, _ = matmul_program(t, mm, kk, nn)
        except ValueError as e:
            print(f"  {mm}x{kk}x{nn}: skipped ({e})")
            continue
        s = rt.Simulator(t, (mm * kk + kk * nn + mm * nn) * 4).run(sb.tiu_stream, sb.gdma_stream)
        roof, comp, mem = roofline(t, mm, kk, nn)
        print(f"  {f'{mm}x{kk}x{nn}':>16} {s.total_cycles:>11} {roof:>10.0f} {comp:>9.0f} {mem:>9.0f} "
              f"{roof / s.total_cycles:>8.3f}")
        # TIU alone against the compute roof (issue overhead only)
        tiu_cycles = next(r["cycles"] for r in s.records if r["engine"] == "TIU")
    print(f"  last matmul TIU instruction alone: {tiu_cycles} cycles vs compute roof {comp:.0f} "
          f"(ratio {comp / tiu_cycles:.3f})")

    names = [n for n in args.models.split(",") if n]
    if names:
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            ratios = model_rows(args.chip, names, args.repeat, args.work_dir or tmp)
        for mode in ("F32", "INT8"):
            print(f"median cmodel/onnxruntime ratio on one thread ({mode}): "
                  f"{statistics.median(ratios[(mode, 'wall')]):.2f}x wall, "
                  f"{statistics.median(ratios[(mode, 'cpu')]):.2f}x CPU")


if __name__ == "__main__":
    main()
