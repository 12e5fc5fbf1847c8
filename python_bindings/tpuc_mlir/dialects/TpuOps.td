#ifndef TPUC_PYTHON_TPU_OPS
#define TPUC_PYTHON_TPU_OPS
include "tpuc/Dialect/Tpu/IR/TpuOps.td"
#endif
