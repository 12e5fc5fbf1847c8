#include "tpuc/Dialect/Top/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"

namespace top {
#define GEN_PASS_DEF_TOPSHAPEINFER
#include "tpuc/Dialect/Top/Transforms/Passes.h.inc"

namespace {
struct TopShapeInferPass : impl::TopShapeInferBase<TopShapeInferPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<mlir::func::FuncOp>()) {
      // Ops are visited in order, so operands are ranked before their users.
      // Each op is verified again first: checks that need operand shapes
      // were skipped while they were unknown, and inferShapes relies on them.
      auto result = func.walk([&](tpuc::ShapeInterface op) {
        if (mlir::failed(mlir::verify(op, /*verifyRecursively=*/false)) ||
            mlir::failed(op.inferShapes()))
          return mlir::WalkResult::interrupt();
        return mlir::WalkResult::advance();
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
