"""Writes the weight file of channels-last.mlir."""
import sys

import numpy as np

rng = np.random.default_rng(0)
np.savez(sys.argv[1],
         gamma=rng.standard_normal(4).astype(np.float32),
         beta=rng.standard_normal(4).astype(np.float32),
         w1=rng.standard_normal((4, 8)).astype(np.float32),
         b1=rng.standard_normal(8).astype(np.float32),
         w2=rng.standard_normal((8, 4)).astype(np.float32))
