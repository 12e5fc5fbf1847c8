#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include "tpuc/Dialect/Tpu/IR/TpuOpsDialect.cpp.inc"

void tpu::TpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tpuc/Dialect/Tpu/IR/TpuOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "tpuc/Dialect/Tpu/IR/TpuOps.cpp.inc"
