//===- Registration.cpp - CodegenInterface on the Tpu ops -----------------===//
#include "Ops/Common.h"
#include "tpuc/Backend/LayerGroup.h"
#include "mlir/IR/DialectRegistry.h"

#include "tpuc/Backend/CodegenInterface.cpp.inc"

namespace tpuc {
namespace backend {

namespace {
/// Lets the tpu.Group verifier ask which ops have a local codegen.
struct GroupMembers : public tpu::GroupMemberInterface {
  using GroupMemberInterface::GroupMemberInterface;
  bool canRunInGroup(mlir::Operation *op) const override {
    return canJoinLayerGroup(op);
  }
};
} // namespace

void registerCodegenExternalModels(mlir::DialectRegistry &registry) {
  registry.addExtension(+[](mlir::MLIRContext *ctx, tpu::TpuDialect *d) {
    d->addInterfaces<GroupMembers>();
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
