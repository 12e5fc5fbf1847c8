#ifndef TPUC_CONVERSION_PASSES_H
#define TPUC_CONVERSION_PASSES_H
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include <string>

namespace tpuc {
#define GEN_PASS_DECL
#include "tpuc/Conversion/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "tpuc/Conversion/Passes.h.inc"
} // namespace tpuc
#endif
