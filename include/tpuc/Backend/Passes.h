//===- Passes.h - Backend passes --------------------------------*- C++ -*-===//
#ifndef TPUC_BACKEND_PASSES_H
#define TPUC_BACKEND_PASSES_H
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include <string>

namespace tpuc {
namespace backend {
#define GEN_PASS_DECL
#include "tpuc/Backend/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc
#endif
