#ifndef TPUC_CONVERSION_TOPTOTPU_TOPTOTPU_H
#define TPUC_CONVERSION_TOPTOTPU_TOPTOTPU_H
// Patterns lowering Top ops to Tpu ops (dialect conversion). Each family of
// Top ops has its own populate function, next to its patterns.
#include "mlir/IR/PatternMatch.h"

namespace tpuc {
void populateTopToTpuConvPatterns(mlir::RewritePatternSet &patterns);
void populateTopToTpuMatMulPatterns(mlir::RewritePatternSet &patterns);
void populateTopToTpuElementwisePatterns(mlir::RewritePatternSet &patterns);
void populateTopToTpuActivationPatterns(mlir::RewritePatternSet &patterns);
void populateTopToTpuNormPatterns(mlir::RewritePatternSet &patterns);
void populateTopToTpuPoolPatterns(mlir::RewritePatternSet &patterns);
void populateTopToTpuReducePatterns(mlir::RewritePatternSet &patterns);
void populateTopToTpuDataMovementPatterns(mlir::RewritePatternSet &patterns);
void populateTopToTpuResamplePatterns(mlir::RewritePatternSet &patterns);

/// Every Top compute op's lowering (F32: types are kept).
void populateTopToTpuPatterns(mlir::RewritePatternSet &patterns);
} // namespace tpuc
#endif
