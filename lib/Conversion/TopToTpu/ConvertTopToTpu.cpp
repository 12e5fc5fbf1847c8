// convert-top-to-tpu: lowers a Top module to Tpu ops for one quantization
// mode, with the dialect conversion framework so that any Top op left over is
// reported by name.
#include "tpuc/Conversion/TopToTpu/TopToTpu.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuUtils.h"
#include "tpuc/Conversion/Passes.h"
#include "tpuc/Conversion/TopToTpu/Quantize.h"
#include "tpuc/Support/WeightStore.h"
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

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerQuantizeExternalModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
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

    // The types first: bad tables fail before anything changes.
    llvm::StringSet<> topNames;
    module.walk([&](Operation *op) {
      if (isa<top::TopDialect>(op->getDialect()) && !isa<top::WeightOp>(op))
        if (std::string name = tpuc::getOpName(op); !name.empty())
          topNames.insert(name);
    });
    LoweringTypes::Options options;
    options.mode = mode;
    options.fallback = fallback;
    options.calibrationTable = calibrationTable;
    options.quantizeTable = quantizeTable;
    options.asymmetric = asymmetric;
    auto types = LoweringTypes::create(module, options, topNames);
    if (failed(types))
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

    if (failed(quantizeModule(module, *types)))
      return signalPassFailure();
    // Float weights replaced by typed ones are gone from the graph.
    module.walk([](top::WeightOp w) {
      if (w->use_empty())
        w->erase();
    });

    module->setAttr(tpu::kModeAttr, tpu::LoweringModeAttr::get(ctx, mode));
    module->setAttr(tpu::kChipAttr, StringAttr::get(ctx, chip));
  }
};

} // namespace
} // namespace tpuc
