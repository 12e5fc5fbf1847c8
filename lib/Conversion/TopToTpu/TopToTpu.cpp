#include "tpuc/Conversion/TopToTpu/TopToTpu.h"

void tpuc::populateTopToTpuPatterns(mlir::RewritePatternSet &patterns) {
  populateTopToTpuConvPatterns(patterns);
  populateTopToTpuMatMulPatterns(patterns);
  populateTopToTpuElementwisePatterns(patterns);
  populateTopToTpuActivationPatterns(patterns);
  populateTopToTpuNormPatterns(patterns);
  populateTopToTpuPoolPatterns(patterns);
  populateTopToTpuReducePatterns(patterns);
  populateTopToTpuDataMovementPatterns(patterns);
  populateTopToTpuResamplePatterns(patterns);
}
