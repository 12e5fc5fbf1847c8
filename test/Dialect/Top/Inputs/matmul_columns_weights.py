"""Writes the weight file of matmul-columns.mlir."""
import sys

import numpy as np

np.savez(sys.argv[1],
         w=np.arange(4 * 12, dtype=np.float32).reshape(4, 12),
         b=np.arange(12, dtype=np.float32))
