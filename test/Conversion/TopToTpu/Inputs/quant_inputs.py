"""Writes the weights and the calibration table of lower-quant.mlir."""
import sys

import numpy as np

weights, table = sys.argv[1], sys.argv[2]
# Per-channel absmax 1.27 and 0.127: filter scales 0.01 and 0.001.
w = np.zeros((2, 2, 1, 1), np.float32)
w[0, 0, 0, 0], w[0, 1, 0, 0] = 1.27, -0.5
w[1, 0, 0, 0], w[1, 1, 0, 0] = 0.127, 0.05
np.savez(weights, w=w, b=np.array([0.5, -0.25], np.float32),
         fc=np.full((2, 3), 0.5, np.float32), g=np.ones(3, np.float32))
rows = {"x": 1.27, "conv": 2.54, "conv_s": 2.54, "add": 2.54, "sig": 1.0, "pool": 1.27,
        "flat": 1.27, "fc": 5.08, "ln": 2.0}
with open(table, "w") as f:
    f.write("# tpuc calibration table\n# op_name threshold min max\n")
    for name, th in rows.items():
        f.write(f"{name} {th} {-th / 2} {th}\n")
