"""Writes the weight file of canonicalize.mlir's BatchNorm-folding test."""
import sys

import numpy as np

np.savez(sys.argv[1],
         w=np.full((2, 1, 1, 1), 2.0, np.float32),
         gamma=np.array([1.0, 3.0], np.float32),
         beta=np.array([0.5, -1.0], np.float32),
         mean=np.array([1.0, 0.0], np.float32),
         var=np.array([3.0, 8.0], np.float32))
