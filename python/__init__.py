"""tpuc: an MLIR-based ahead-of-time compiler toolchain for a TPU."""
__version__ = "0.1.0"
