// convert-top-to-tpu: lowers a Top module to Tpu ops for one quantization
// mode, with the dialect conversion framework so that any Top op left over is
// reported by name.
#include "tpuc/Conversion/TopToTpu/TopToTpu.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuUtils.h"
#include "tpuc/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace tpuc {
#define GEN_PASS_DEF_CONVERTTOPTOTPU
#include "tpuc/Conversion/Passes.h.inc"

namespace {

struct ConvertTopToTpuPass
    : impl::ConvertTopToTpuBase<ConvertTopToTpuPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (mode != tpu::LoweringMode::F32) {
      module.emitError() << "convert-top-to-tpu: mode "
                         << tpu::stringifyLoweringMode(mode)
                         << " is not implemented yet (supported: F32)";
      return signalPassFailure();
    }
    if (chip.empty()) {
      module.emitError() << "convert-top-to-tpu: chip must not be empty";
      return signalPassFailure();
    }
    // Lowering resolves shapes (2-D windows, slice bounds), so it needs them.
    WalkResult shapes = module.walk([](Operation *op) {
      if (!isa<top::TopDialect>(op->getDialect()))
        return WalkResult::advance();
      for (Type t : op->getResultTypes())
        if (!isa<RankedTensorType, NoneType>(t)) {
          op->emitOpError() << "result type " << t
                            << " has no shape; run top-shape-infer before "
                            << "convert-top-to-tpu";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (shapes.wasInterrupted())
      return signalPassFailure();

    ConversionTarget target(*ctx);
    target.addLegalDialect<tpu::TpuDialect, func::FuncDialect>();
    target.addIllegalDialect<top::TopDialect>();
    target.addLegalOp<top::InputOp, top::WeightOp, top::NoneOp>();
    RewritePatternSet patterns(ctx);
    tpuc::populateTopToTpuPatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    // A reshaped constant (a 1-D conv's filter) becomes the constant with the
    // new type. Other reshapes stay: they carry tensor names the accuracy
    // tools compare, and canonicalize may fold them later.
    IRRewriter rewriter(ctx);
    module.walk([&](tpu::ReshapeOp op) {
      auto weight = op.getInput().getDefiningOp<top::WeightOp>();
      if (!weight || !weight->hasOneUse())
        return;
      rewriter.setInsertionPoint(weight);
      auto retyped = top::WeightOp::create(rewriter, weight.getLoc(),
                                           op.getOutput().getType());
      rewriter.replaceOp(op, retyped.getOutput());
      rewriter.eraseOp(weight);
    });

    module->setAttr(tpu::kModeAttr, tpu::LoweringModeAttr::get(ctx, mode));
    module->setAttr(tpu::kChipAttr, StringAttr::get(ctx, chip));
  }
};

} // namespace
} // namespace tpuc
