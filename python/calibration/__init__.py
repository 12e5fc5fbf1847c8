"""Calibration for INT8: |x| histograms over a dataset, thresholds, tables.

    from tpuc.calibration import calibrate, CalibrationTable
    calibrate("net.mlir", "dataset/", "net_cali_table", input_num=16, method="kl")
    scale, zp = CalibrationTable.load("net_cali_table").qparams("conv1", asymmetric=True)

Modules: :mod:`.histogram` (streaming histograms and their cache file),
:mod:`.thresholds` (kl, percentile, minmax, mse), :mod:`.table` (the table
format and the INT8 parameter formulas), :mod:`.driver` (dataset, cache, the `calibrate` call).
"""
from .histogram import DEFAULT_BINS, AbsHistogram, HistogramSet
from .table import CalibrationTable, TableError, TensorRange
from .thresholds import DEFAULT_PERCENTILE, METHODS, threshold

__all__ = ["AbsHistogram", "CalibrationError", "CalibrationResult", "CalibrationTable",
           "DEFAULT_BINS", "DEFAULT_PERCENTILE", "HistogramSet", "METHODS", "TableError",
           "TensorRange", "calibrate", "dataset_files", "threshold"]

_DRIVER = ("CalibrationError", "CalibrationResult", "calibrate", "dataset_files")


def __getattr__(name: str):
    # The driver needs the compiler (native MLIR); tables and thresholds do
    # not, so npz_tool can read a table without loading it.
    if name in _DRIVER:
        from . import driver
        return getattr(driver, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
