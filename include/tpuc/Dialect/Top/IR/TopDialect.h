#ifndef TPUC_DIALECT_TOP_IR_TOPDIALECT_H
#define TPUC_DIALECT_TOP_IR_TOPDIALECT_H
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "tpuc/Interfaces/InferenceInterface.h"
#include "tpuc/Interfaces/ShapeInterface.h"
#include "tpuc/Interfaces/Traits.h"
#include "tpuc/Dialect/Top/IR/TopTraits.h"
#include "tpuc/Support/WeightStore.h"
#include <memory>
#include <vector>

#include "tpuc/Dialect/Top/IR/TopOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "tpuc/Dialect/Top/IR/TopOps.h.inc"
#endif
