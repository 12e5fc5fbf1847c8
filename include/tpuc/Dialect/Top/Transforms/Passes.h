#ifndef TPUC_DIALECT_TOP_TRANSFORMS_PASSES_H
#define TPUC_DIALECT_TOP_TRANSFORMS_PASSES_H
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"

namespace top {
#define GEN_PASS_DECL
#include "tpuc/Dialect/Top/Transforms/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "tpuc/Dialect/Top/Transforms/Passes.h.inc"
} // namespace top
#endif
