//===- PropertyCheck.h - Reject unknown `<{...}>` property entries --------===//
//
// MLIR's parser drops an entry of a generic-form op's `<{...}>` properties
// that the op does not define. Both tpuc-opt and the Python tools refuse such
// entries with this one check.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_SUPPORT_PROPERTYCHECK_H
#define TPUC_SUPPORT_PROPERTYCHECK_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/SourceMgr.h"

namespace tpuc {

/// Parses the main buffer of `sm` once more in `context`, recording where each
/// op is, and emits an error on the first op whose `<{...}>` holds an entry
/// that did not become one of its attributes. Syntax errors are left to the
/// real parse to report (this check then succeeds).
mlir::LogicalResult checkPropertyNames(llvm::SourceMgr &sm,
                                       mlir::MLIRContext *context);

} // namespace tpuc

#endif // TPUC_SUPPORT_PROPERTYCHECK_H
