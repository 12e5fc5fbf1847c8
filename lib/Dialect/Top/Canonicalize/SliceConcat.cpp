// Slices and Concats of a roll along two axes in the fewest copies.
//
// torch.roll along H then W (Swin's shifted windows) is exported as two
// Slices and a Concat per axis: the second axis slices the first one's
// Concat, so each element is copied twice. Three rewrites make it one copy:
// - A Slice that takes all of a Concat's axis is the Concat of the same
//   Slice of each input (when every user of the Concat is such a Slice, so
//   the Concat goes).
// - A Slice of a Slice (positive steps) is one Slice.
// - A Concat along an inner axis of Concats along an outer one is the
//   Concat along the outer axis of Concats along the inner one (the inner
//   Concats' inputs pairing up by position and size), so that the outer
//   Concat holds the inner ones as contiguous ranges and each inner one its
//   inputs in strided blocks: all of them in place, the four Slices of the
//   roll then write the result directly.
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Support/OpHelpers.h"

using namespace mlir;
using namespace tpuc;

namespace top {
namespace {

struct Bounds {
  SmallVector<int64_t> starts, steps, sizes;
};

std::optional<Bounds> positiveBounds(SliceOp s) {
  if (!isRanked(s.getInput()) || !isRanked(s.getOutput()))
    return std::nullopt;
  Bounds b;
  s.getBounds(b.starts, b.steps, b.sizes);
  if (llvm::any_of(b.steps, [](int64_t st) { return st <= 0; }))
    return std::nullopt;
  return b;
}

/// A Slice of `x` taking `b` (one axis entry per dim).
Value makeSlice(PatternRewriter &rewriter, Location loc, Value x,
                const Bounds &b) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> ends, axes;
  for (size_t d = 0; d < b.starts.size(); ++d) {
    ends.push_back(b.starts[d] + (b.sizes[d] - 1) * b.steps[d] + 1);
    axes.push_back(int64_t(d));
  }
  return rewriter.create<SliceOp>(loc, t.clone(b.sizes), x,
                                  rewriter.getI64ArrayAttr(b.starts),
                                  rewriter.getI64ArrayAttr(ends),
                                  rewriter.getI64ArrayAttr(axes),
                                  rewriter.getI64ArrayAttr(b.steps));
}

Location suffixed(PatternRewriter &rewriter, Operation *op, const Twine &s) {
  return NameLoc::get(rewriter.getStringAttr(getOpName(op) + s.str()));
}

/// Whether Slice `s` takes the whole of `axis`.
bool takesAxis(SliceOp s, int64_t axis) {
  auto b = positiveBounds(s);
  return b && b->starts[axis] == 0 && b->steps[axis] == 1 &&
         b->sizes[axis] == getShape(s.getInput())[axis];
}

struct SliceOfConcat : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto concat = op.getInput().getDefiningOp<ConcatOp>();
    if (!concat || concat.getDoRelu() || !isRanked(concat.getOutput()))
      return rewriter.notifyMatchFailure(op, "not a Slice of a Concat");
    int64_t axis = concat.getAxis();
    if (llvm::any_of(concat->getUsers(), [&](Operation *u) {
          auto s = dyn_cast<SliceOp>(u);
          return !s || !takesAxis(s, axis);
        }))
      return rewriter.notifyMatchFailure(op, "a user cuts the Concat's axis");
    Bounds b = *positiveBounds(op);
    SmallVector<Value> parts;
    for (auto [k, v] : llvm::enumerate(concat.getInputs())) {
      Bounds part = b;
      part.sizes[axis] = getShape(v)[axis];
      parts.push_back(makeSlice(rewriter, suffixed(rewriter, op, "_part" + Twine(k)),
                                v, part));
    }
    rewriter.replaceOpWithNewOp<ConcatOp>(op, op.getOutput().getType(), parts,
                                          axis, false);
    return success();
  }
};

struct SliceOfSlice : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<SliceOp>();
    auto a = inner ? positiveBounds(inner) : std::nullopt;
    auto b = positiveBounds(op);
    if (!a || !b)
      return rewriter.notifyMatchFailure(op, "not a Slice of a Slice");
    Bounds c = *b;
    for (size_t d = 0; d < c.starts.size(); ++d) {
      c.starts[d] = a->starts[d] + b->starts[d] * a->steps[d];
      c.steps[d] = a->steps[d] * b->steps[d];
    }
    Value s = makeSlice(rewriter, op.getLoc(), inner.getInput(), c);
    rewriter.replaceOp(op, s);
    return success();
  }
};

struct ConcatOfConcats : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getDoRelu() || !isRanked(op.getOutput()))
      return failure();
    const int64_t outer = op.getAxis();
    SmallVector<ConcatOp> inner;
    for (Value v : op.getInputs()) {
      auto c = v.getDefiningOp<ConcatOp>();
      if (!c || c.getDoRelu() || !c->hasOneUse() || c.getAxis() >= outer ||
          (!inner.empty() &&
           (c.getAxis() != inner[0].getAxis() ||
            c.getInputs().size() != inner[0].getInputs().size())))
        return rewriter.notifyMatchFailure(op, "not a Concat of Concats");
      inner.push_back(c);
    }
    const int64_t axis = inner[0].getAxis();
    const size_t n = inner[0].getInputs().size();
    for (size_t j = 0; j < n; ++j)
      for (ConcatOp c : inner)
        if (getShape(c.getInputs()[j])[axis] !=
            getShape(inner[0].getInputs()[j])[axis])
          return rewriter.notifyMatchFailure(op, "pieces do not pair up");
    auto t = cast<RankedTensorType>(op.getOutput().getType());
    SmallVector<Value> rows;
    for (size_t j = 0; j < n; ++j) {
      SmallVector<Value> row;
      for (ConcatOp c : inner)
        row.push_back(c.getInputs()[j]);
      SmallVector<int64_t> shape(t.getShape());
      shape[axis] = getShape(row[0])[axis];
      rows.push_back(rewriter.create<ConcatOp>(
          suffixed(rewriter, op, "_row" + Twine(j)), t.clone(shape), row,
          outer, false));
    }
    rewriter.replaceOpWithNewOp<ConcatOp>(op, t, rows, axis, false);
    return success();
  }
};

} // namespace

void populateSliceConcatPatterns(RewritePatternSet &results,
                                 MLIRContext *context) {
  results.add<SliceOfConcat, SliceOfSlice>(context);
}

void populateConcatOfConcatsPatterns(RewritePatternSet &results,
                                     MLIRContext *context) {
  results.add<ConcatOfConcats>(context);
}

} // namespace top
