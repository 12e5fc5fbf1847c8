// A MatMul of one row per batch by a shared [K, N] matrix (PyTorch's
// MultiheadAttention runs its sequence-first input projection as
// [L, 1, K] x [K, N]) is one matmul of all the rows: the batch dims fold
// into M. The chip then fills its lanes with rows instead of issuing one
// single-row matmul per batch, and the result is a [.., rows, N] matrix
// that layer groups hold like any other.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

struct FoldBatchIntoRows : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto in = dyn_cast<RankedTensorType>(op.getInput().getType());
    auto out = dyn_cast<RankedTensorType>(op.getOutput().getType());
    if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape() ||
        in.getRank() < 3 || getShape(op.getRight()).size() != 2)
      return failure();
    auto s = in.getShape();
    const int64_t r = s.size(), rows = numElements(s.drop_back());
    // Matrices of several rows stay as they are (a channels-last island
    // reads them as images); so does a single batch.
    if (s[r - 2] != 1 || rows == 1)
      return rewriter.notifyMatchFailure(op, "not one row per batch");
    // An Add of a row vector is still to fuse into the bias.
    if (isNone(op.getBias()) &&
        llvm::any_of(op->getUsers(), [](Operation *u) { return isa<AddOp>(u); }))
      return rewriter.notifyMatchFailure(op, "bias add not fused yet");
    SmallVector<int64_t> inShape(r, 1), outShape(r, 1);
    inShape[r - 2] = outShape[r - 2] = rows;
    inShape[r - 1] = s[r - 1];
    outShape[r - 1] = out.getShape().back();
    std::string name = getOpName(op);
    auto loc = [&](StringRef suffix) {
      return NameLoc::get(rewriter.getStringAttr(name + suffix.str()));
    };
    Value left = rewriter.create<ReshapeOp>(loc("_rows_in"), in.clone(inShape),
                                            op.getInput(),
                                            rewriter.getI64ArrayAttr(inShape));
    Value mm = rewriter.create<MatMulOp>(loc("_rows"), out.clone(outShape),
                                         left, op.getRight(), op.getBias(),
                                         op.getDoRelu());
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, out, mm,
                                           rewriter.getI64ArrayAttr(out.getShape()));
    return success();
  }
};

} // namespace

void MatMulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<FoldBatchIntoRows>(context);
}

} // namespace top
