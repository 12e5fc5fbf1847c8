#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include "tpuc/Dialect/Top/IR/TopOpsDialect.cpp.inc"

using namespace mlir;

void top::TopDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tpuc/Dialect/Top/IR/TopOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "tpuc/Dialect/Top/IR/TopOps.cpp.inc"
