#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include "tpuc/Dialect/Tpu/IR/TpuOpsDialect.cpp.inc"
#include "tpuc/Dialect/Tpu/IR/TpuEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "tpuc/Dialect/Tpu/IR/TpuAttrs.cpp.inc"

void tpu::TpuDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tpuc/Dialect/Tpu/IR/TpuAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tpuc/Dialect/Tpu/IR/TpuOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "tpuc/Dialect/Tpu/IR/TpuOps.cpp.inc"
