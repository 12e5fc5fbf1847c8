"""Writes the weights and the calibration table of layer-group-asym.mlir."""
import sys

import numpy as np

weights, table = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
np.savez(weights,
         dw1=rng.uniform(-1, 1, (16, 1, 3, 3)).astype(np.float32),
         pw=rng.uniform(-1, 1, (16, 16, 1, 1)).astype(np.float32),
         dw2=rng.uniform(-1, 1, (16, 1, 3, 3)).astype(np.float32),
         b=rng.uniform(-1, 1, 16).astype(np.float32))
with open(table, "w") as f:
    f.write("# tpuc calibration table\n# op_name threshold min max\n")
    # Ranges off centre: every tensor gets a zero point.
    for name, lo, hi in (("x", -1.0, 3.0), ("dw1", 0.0, 4.0), ("pw", -6.0, 2.0),
                         ("dw2", -3.0, 5.0)):
        f.write(f"{name} {max(-lo, hi)} {lo} {hi}\n")
