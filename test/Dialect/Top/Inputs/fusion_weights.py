"""Writes the weight file of fusion.mlir (bias rows and GELU constants)."""
import sys

import numpy as np

np.savez(sys.argv[1],
         w=np.ones((4, 3), np.float32),
         b=np.array([1.0, 2.0, 3.0], np.float32),
         b2=np.ones((1, 3), np.float32),
         col=np.ones((2, 1), np.float32),
         sqrt2=np.array(np.sqrt(2.0), np.float32),
         rsqrt2=np.array(1 / np.sqrt(2.0), np.float32),
         one=np.array(1.0, np.float32),
         half=np.array(0.5, np.float32),
         third=np.array(1 / 3, np.float32),
         sqrt2pi=np.array(np.sqrt(2 / np.pi), np.float32),
         cubic=np.array(0.044715, np.float32))
