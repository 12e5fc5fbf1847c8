"""Writes the weight file of gather-range.mlir: constant gather indices."""
import sys

import numpy as np

np.savez(sys.argv[1],
         arange=np.arange(8, dtype=np.float32).reshape(1, 1, 1, 8),
         one=np.array(2.0, np.float32),
         last=np.array([-1.0], np.float32),
         gaps=np.array([0.0, 2.0], np.float32))
