"""Re-runs one captured op call on the chip and on the CPU.

    python -m tpuc.op_tools.replay op_capture_result/<graph>/<op>/<n> [--acc_check] [--run_times N]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from .compare import compare_tensors, reference
from .instrument import compile_op, runtime_tensors


def resolve(op: str):
    """`aten.convolution.default` -> torch.ops.aten.convolution.default."""
    ns, name, overload = op.split(".")
    return getattr(getattr(getattr(torch.ops, ns), name), overload)


def replay(directory: str | Path, chip: str | None = None, acc_check: bool = False,
           run_times: int = 1, atol: float = 1e-4, rtol: float = 1e-4) -> list[str]:
    d = Path(directory)
    if not (d / "call.pt").is_file():
        raise FileNotFoundError(f"{d}: no captured op call (call.pt) here")
    meta = json.loads((d / "meta.json").read_text())
    saved = torch.load(d / "call.pt", weights_only=False)
    target = resolve(saved["op"])
    args, kwargs = saved["inputs"], saved.get("kwargs", {})
    chip = chip or meta.get("chip") or "tpu_edge"
    val = target(*args, **kwargs)
    multi = isinstance(val, (tuple, list))
    used = [i for i, o in enumerate(saved["outputs"]) if o is not None] if multi else []
    program = compile_op(target, args, kwargs, val, saved.get("constant_leaves", []), used, chip)
    tensors = runtime_tensors(args, kwargs, set(saved.get("constant_leaves", [])))
    lines = [f"{saved['op']} from {meta['graph']} (call {meta['index']}) on {chip}"]
    chip_s = cpu_s = 0.0
    for _ in range(max(1, run_times)):
        t0 = time.perf_counter()
        outs = program(*tensors)
        chip_s += time.perf_counter() - t0
        t0 = time.perf_counter()
        target(*args, **kwargs)
        cpu_s += time.perf_counter() - t0
    n = max(1, run_times)
    stats = program.last_stats
    if stats is not None:
        lines.append(f"chip: {stats.total_cycles} cycles ({stats.microseconds:.2f} us simulated), "
                     f"cmodel {1e3 * chip_s / n:.2f} ms per run; CPU {1e3 * cpu_s / n:.3f} ms "
                     f"per run ({n} run(s))")
    if acc_check:
        ref = reference(target, args, kwargs, saved["op"])
        refs = [ref[i] for i in used] if multi else [ref]
        for i, (got, want) in enumerate(zip(outs, refs)):
            ok, max_abs, max_rel, cos = compare_tensors(got, want, atol, rtol)
            lines.append(f"output {used[i] if multi else 0}: allclose {ok} (atol {atol}, rtol "
                         f"{rtol}), max abs {max_abs:.3e}, max rel {max_rel:.3e}, cosine {cos:.6f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tpuc.op_tools.replay", description=__doc__.splitlines()[0])
    p.add_argument("directory", help="a captured call: op_capture_result/<graph>/<op>/<n>")
    p.add_argument("--acc_check", action="store_true", help="compare the chip with the CPU")
    p.add_argument("--run_times", type=int, default=1, help="runs to time")
    p.add_argument("--chip", default=None, help="chip (default: the one captured on)")
    args = p.parse_args(argv)
    try:
        for line in replay(args.directory, args.chip, args.acc_check, args.run_times):
            print(line)
    except (FileNotFoundError, ValueError, RuntimeError) as e:
        print(f"replay: error: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
