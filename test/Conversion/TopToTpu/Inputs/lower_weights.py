"""Writes the weight file of the lowering tests that read constants."""
import sys

import numpy as np

np.savez(sys.argv[1],
         gamma=np.array([1.0, 3.0], np.float32),
         beta=np.array([0.5, -1.0], np.float32),
         mean=np.array([1.0, 0.0], np.float32),
         var=np.array([3.0, 8.0], np.float32),
         idx=np.array([0.0, -1.0, 2.0], np.float32),
         pos=np.array([0.0, 1.0], np.float32),
         bad=np.array([0.0, 7.0], np.float32))
