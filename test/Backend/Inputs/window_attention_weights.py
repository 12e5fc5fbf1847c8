"""Weights of masked-window-attention.mlir: eight tokens in two windows of
four (rows 0 4 1 5 and 2 6 3 7), the gather P [2, 4, 8], its inverse, and
a wrong one (P itself: the order is not its own inverse)."""
import sys

import numpy as np

rng = np.random.default_rng(0)
windows = [[0, 4, 1, 5], [2, 6, 3, 7]]
p = np.zeros((2, 4, 8), np.float32)
for b, rows in enumerate(windows):
    for n, r in enumerate(rows):
        p[b, n, r] = 1.0
pinv = p.reshape(8, 8).T.copy()
pbad = p.reshape(8, 8).copy()
w = {name: rng.standard_normal(shape).astype(np.float32)
     for name, shape in [("wq", (4, 4)), ("bq", (4,)), ("wk", (4, 4)),
                         ("bk", (4,)), ("wv", (4, 4)), ("bv", (4,)),
                         ("wo", (4, 4)), ("bo", (4,)), ("rb", (1, 2, 4, 4))]}
w["mask"] = np.where(rng.random((2, 1, 4, 4)) < 0.3, -100.0, 0.0).astype(np.float32)
np.savez(sys.argv[1], p=p, pinv=pinv, pbad=pbad, **w)
