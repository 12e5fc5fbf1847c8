"""Writes the weight file of channel-shuffle.mlir."""
import sys

import numpy as np

np.savez(sys.argv[1],
         w=np.arange(4 * 2, dtype=np.float32).reshape(4, 2, 1, 1),
         b=np.arange(4, dtype=np.float32))
