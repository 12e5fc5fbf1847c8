"""Settings for the whole test suite."""
import os

# The suite runs on several workers (pytest -n); cmodel GEMMs on every core
# in each of them would oversubscribe the machine. Tests of the thread count
# set it themselves.
os.environ.setdefault("TPUC_CMODEL_THREADS", "1")
