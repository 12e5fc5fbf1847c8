#ifndef TPUC_PYTHON_TOP_OPS
#define TPUC_PYTHON_TOP_OPS
include "tpuc/Dialect/Top/IR/TopOps.td"
#endif
