"""Inspect a compiled bmodel.

    model_tool.py --info net.bmodel
    model_tool.py --weight net.bmodel [--output weights.npz]

--info prints the chip, format/ISA versions, each network's inputs and
outputs (shape, dtype, scale, zero point), weight and activation memory,
instruction counts per engine and opcode, and the compute modes used.
--weight lists the weight blob's pieces as the GDMA engine loads them
(offset, shape, dtype); with --output, each is saved as an array
(`w<offset>_gdma<id>`) together with the whole blob (`weight_blob`, uint8).
"""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional

import numpy as np


def print_weights(path: str, output: Optional[str]) -> None:
    from tpuc import runtime as rt
    from tpuc.bmodel_info import weight_reads

    bm = rt.read_bmodel(path)
    reads = weight_reads(bm)
    print(f"weight blob: {bm.plan.weight_size} bytes @ {bm.plan.weight_addr:#x}, "
          f"{len(reads)} GDMA loads")
    print(f"{'network':<12} {'gdma':>6} {'offset':>10}  {'dtype':<6} shape")
    for r in reads:
        print(f"{r.network:<12} {r.instruction:>6} {r.offset:>#10x}  {r.dtype:<6} "
              f"{list(r.shape)}")
    if output:
        blob = bm.weights
        arrays = {"weight_blob": np.frombuffer(blob, dtype=np.uint8)}
        for r in reads:
            a = r.array(blob)
            arrays[f"w{r.offset:#x}_gdma{r.instruction}"] = (
                a.astype(np.float32) if a.dtype.name == "bfloat16" else a)
        np.savez(output, **arrays)
        print(f"weights written to {output}")


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="model_tool", description=__doc__.split("\n\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--info", metavar="BMODEL", help="print what the bmodel holds")
    g.add_argument("--weight", metavar="BMODEL", help="list (and dump) its weights")
    p.add_argument("--output", "-o", help="with --weight: .npz to write the weights to")
    args = p.parse_args(argv)
    try:
        from tpuc.runtime import ChipError
        from tpuc.bmodel_info import describe, format_info
    except ImportError as e:  # broken installation
        print(f"model_tool: error: cannot import tpuc.runtime: {e}", file=sys.stderr)
        return 2
    try:
        if args.info:
            print(format_info(describe(args.info)))
        else:
            print_weights(args.weight, args.output)
    except (ChipError, ValueError, OSError) as e:
        msg = str(e).strip().replace("\n", " ")
        print(f"model_tool: error: {msg}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
