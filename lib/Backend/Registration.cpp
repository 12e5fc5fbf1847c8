//===- Registration.cpp - CodegenInterface on the Tpu ops -----------------===//
#include "Ops/Common.h"
#include "mlir/IR/DialectRegistry.h"

#include "tpuc/Backend/CodegenInterface.cpp.inc"

namespace tpuc {
namespace backend {

void registerCodegenExternalModels(mlir::DialectRegistry &registry) {
  registry.addExtension(+[](mlir::MLIRContext *ctx, tpu::TpuDialect *) {
    attachElementwiseModels(ctx);
    attachConvModels(ctx);
    attachMatMulModels(ctx);
    attachPoolModels(ctx);
    attachReduceModels(ctx);
    attachNormModels(ctx);
    attachDataMovementModels(ctx);
    attachDeconvModels(ctx);
    attachInterpModels(ctx);
  });
}

} // namespace backend
} // namespace tpuc
