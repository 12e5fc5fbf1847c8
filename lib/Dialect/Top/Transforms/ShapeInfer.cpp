#include "tpuc/Dialect/Top/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace top {
#define GEN_PASS_DEF_TOPSHAPEINFER
#include "tpuc/Dialect/Top/Transforms/Passes.h.inc"

namespace {
struct TopShapeInferPass : impl::TopShapeInferBase<TopShapeInferPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<mlir::func::FuncOp>()) {
      // Ops are visited in order, so operands are ranked before their users.
      auto result = func.walk([&](tpuc::ShapeInterface op) {
        return mlir::succeeded(op.inferShapes()) ? mlir::WalkResult::advance()
                                                 : mlir::WalkResult::interrupt();
      });
      if (result.wasInterrupted())
        return signalPassFailure();
      // Keep the signature in step with what is returned.
      auto ret = func.getBody().back().getTerminator();
      func.setType(mlir::FunctionType::get(
          func.getContext(), func.getArgumentTypes(), ret->getOperandTypes()));
    }
  }
};
} // namespace
} // namespace top
