#ifndef TPUC_DIALECT_TPU_TRANSFORMS_PASSES_H
#define TPUC_DIALECT_TPU_TRANSFORMS_PASSES_H
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuUtils.h"
#include <string>

namespace tpu {
#define GEN_PASS_DECL
#include "tpuc/Dialect/Tpu/Transforms/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "tpuc/Dialect/Tpu/Transforms/Passes.h.inc"
} // namespace tpu
#endif
