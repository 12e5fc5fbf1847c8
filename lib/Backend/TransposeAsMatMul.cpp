//===- TransposeAsMatMul.cpp - Small float transposes as identity matmuls -===//
//
// Y = X^T for an F32 X [C, W] (leading dims of 1) with W at most the
// lanes becomes tpu.MatMul(I_W, X, right_transpose): out[w, c] =
// sum_k I[w, k] X[c, k] = X[c, w]. In a layer group X is held with its rows
// on the lanes ([1, C, 1, W]) and the result as [1, W, 1, C], the layouts
// the matmul instruction reads and writes, so the transpose no longer
// leaves the group through DDR. Tokens transposed to channels for a global
// average pool are averaged by a matmul instead (meanAsMatMul).
//
//===----------------------------------------------------------------------===//
#include "tpuc/Backend/Codegen.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Backend/Target.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tpuc {
namespace backend {
#define GEN_PASS_DEF_TRANSPOSEASMATMUL
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;

namespace {

/// [C, W] when `op` transposes the last two dims of an F32 tensor whose
/// other dims are 1, with W at most `lanes` (the identity's data is F32).
std::optional<std::pair<int64_t, int64_t>> smallTranspose(tpu::PermuteOp op,
                                                          int64_t lanes) {
  auto in = getShape(op.getInput()), out = getShape(op.getOutput());
  chip::DType t = chipDType(op.getInput().getType());
  if (in.size() < 2 || in.size() != out.size() || t != chip::DType::F32 ||
      chipDType(op.getOutput().getType()) != t)
    return std::nullopt;
  const size_t r = in.size();
  const int64_t C = in[r - 2], W = in[r - 1];
  if (numElements(in) != C * W || C == 1 || W == 1 || W > lanes ||
      out[r - 2] != W || out[r - 1] != C)
    return std::nullopt;
  auto [shape, perm] = simplifyPermute(in, getI64s(op.getOrder()));
  if (perm.size() != 2 || perm[0] != 1 || perm[1] != 0)
    return std::nullopt;
  return std::make_pair(C, W);
}

/// [C, W] when `op` transposes an F32 tensor read as a matrix [C, W]
/// (its dims merged into two runs that swap, as NCHW to NHWC: [C, H W]),
/// with W at most `lanes` and the identity [W, W] no larger than the
/// round trip it saves (the matrix stored and loaded back): W <= 2 C.
std::optional<std::pair<int64_t, int64_t>> flatTranspose(tpu::PermuteOp op,
                                                         int64_t lanes) {
  auto in = getShape(op.getInput());
  chip::DType t = chipDType(op.getInput().getType());
  if (t != chip::DType::F32 || chipDType(op.getOutput().getType()) != t)
    return std::nullopt;
  auto [shape, perm] = simplifyPermute(in, getI64s(op.getOrder()));
  if (perm.size() != 2 || perm[0] != 1 || perm[1] != 0 || shape[1] > lanes ||
      shape[1] > 2 * shape[0])
    return std::nullopt;
  return std::make_pair(shape[0], shape[1]);
}

/// The only user of `op`'s result when it is a Concat along the rows of
/// that result and constants of its type (a class token put before the
/// patch tokens), else null.
tpu::ConcatOp constantRowsConcat(tpu::PermuteOp op) {
  Value t = op.getOutput();
  if (!t.hasOneUse())
    return {};
  auto concat = dyn_cast<tpu::ConcatOp>(*t.getUsers().begin());
  const int64_t r = int64_t(getShape(t).size());
  if (!concat || concat.getDoRelu() || concat.getAxis() != r - 2)
    return {};
  for (Value v : concat.getInputs())
    if (v != t && (!v.getDefiningOp<top::WeightOp>() ||
                   getElementTypeOrSelf(v.getType()) !=
                       getElementTypeOrSelf(t.getType())))
      return {};
  return concat;
}

/// Replaces `concat` of constants and the transpose `op` of X [C, W] by
/// MatMul(L, X, right_transpose) + K, where L holds I_W in the transpose's
/// rows and K the constants in theirs (zeros elsewhere): each result
/// element is the transposed element or the constant plus exact zeros.
void rowsWithConstants(OpBuilder &b, tpu::PermuteOp op, tpu::ConcatOp concat,
                       int64_t C, int64_t W, Value none) {
  auto type = cast<RankedTensorType>(concat.getOutput().getType());
  const std::string name = tpuc::getOpName(concat.getOperation());
  std::vector<float> constants;
  int64_t at = 0;
  for (Value v : concat.getInputs()) {
    if (v == op.getOutput()) {
      at = int64_t(constants.size()) / C;
      constants.resize(constants.size() + size_t(W * C), 0.0f);
      continue;
    }
    auto data = v.getDefiningOp<top::WeightOp>().read();
    if (failed(data))
      return;
    llvm::append_range(constants, **data);
  }
  b.setInsertionPoint(concat);
  Value rows = identityRows(b, concat, name + "_identity_rows", type, W, at);
  Value k = top::WeightOp::createWithData(b, concat, name + "_constants", type,
                                          std::move(constants));
  // Not the transpose's name: the result has the Concat's rows.
  auto loc = NameLoc::get(b.getStringAttr(name + "_rows"));
  auto mm = b.create<tpu::MatMulOp>(loc, type, rows, op.getInput(),
                                    none, Value(), /*do_relu=*/false,
                                    /*right_transpose=*/true);
  auto add = b.create<tpu::AddOp>(concat.getLoc(), type, mm.getOutput(), k,
                                  /*do_relu=*/false);
  SmallVector<Operation *> weights;
  for (Value v : concat.getInputs())
    if (v != op.getOutput())
      weights.push_back(v.getDefiningOp());
  concat.getOutput().replaceAllUsesWith(add.getOutput());
  concat.erase();
  op.erase();
  for (Operation *w : weights)
    if (w->use_empty())
      w->erase();
}

/// The transpose `op` of a tensor read as the matrix X [C, W] (see
/// flatTranspose) as Reshape(I_W x Reshape(X, [C, W])^T): the Reshapes keep
/// the row-major data, so a group holds them as views where the layouts
/// agree (a conv's [C, H, W] is its matrix [C, H W] lane by lane).
void transposeFlat(tpu::PermuteOp op, int64_t C, int64_t W) {
  OpBuilder b(op);
  const std::string name = tpuc::getOpName(op);
  auto elem = cast<RankedTensorType>(op.getInput().getType()).getElementType();
  auto matrix = [&](int64_t r, int64_t c) {
    return RankedTensorType::get({r, c}, elem);
  };
  Value none = b.create<top::NoneOp>(op.getLoc(), b.getNoneType());
  Value x = b.create<tpu::ReshapeOp>(
      NameLoc::get(b.getStringAttr(name + "_matrix")), matrix(C, W),
      op.getInput());
  Value identity =
      identityRows(b, op, name + "_identity", matrix(W, C), W, 0);
  Value mm = b.create<tpu::MatMulOp>(
      NameLoc::get(b.getStringAttr(name + "_transposed")), matrix(W, C),
      identity, x, none, Value(), /*do_relu=*/false,
      /*right_transpose=*/true);
  Value y = b.create<tpu::ReshapeOp>(op.getLoc(), op.getOutput().getType(), mm);
  op.getOutput().replaceAllUsesWith(y);
  op.erase();
}

/// The global average pool reading `op`, when `op` turns F32 tokens
/// [T, C] (leading dims of 1, as NHWC [1, H, W, C]) into channels [C, H, W]
/// and that pool, its only user, averages each channel over all of H x W
/// with no pads; else null.
tpu::AvgPoolOp tokenMeanPool(tpu::PermuteOp op) {
  auto in = getShape(op.getInput()), out = getShape(op.getOutput());
  if (!op.getOutput().hasOneUse() || out.size() != 4 || out[0] != 1 ||
      chipDType(op.getInput().getType()) != chip::DType::F32 ||
      chipDType(op.getOutput().getType()) != chip::DType::F32)
    return {};
  auto pool = dyn_cast<tpu::AvgPoolOp>(*op.getOutput().getUsers().begin());
  auto [shape, perm] = simplifyPermute(in, getI64s(op.getOrder()));
  if (!pool || perm.size() != 2 || perm[0] != 1 || perm[1] != 0 ||
      shape[1] != out[1] || shape[0] != out[2] * out[3] ||
      getI64s(pool.getKernelShape()) != SmallVector<int64_t>{out[2], out[3]} ||
      llvm::any_of(getI64s(pool.getPads()), [](int64_t p) { return p != 0; }))
    return {};
  return pool;
}

/// Replaces the transpose `op` and the global average pool `pool` of its
/// tokens X [T, C] (see tokenMeanPool) by the matmul of a constant row of
/// 1/T by X: the mean over the tokens, which sit on the lanes in a layer
/// group and which no other local instruction sums across, comes out as
/// one row [1, C], the layout a classifier reading the pooled features as
/// a row wants, instead of leaving the group through DDR transposed.
void meanAsMatMul(tpu::PermuteOp op, tpu::AvgPoolOp pool) {
  OpBuilder b(op);
  const std::string name = tpuc::getOpName(pool.getOperation());
  auto out = getShape(op.getOutput());
  const int64_t C = out[1], T = out[2] * out[3];
  auto elem = cast<RankedTensorType>(op.getInput().getType()).getElementType();
  Value none = b.create<top::NoneOp>(op.getLoc(), b.getNoneType());
  Value x = b.create<tpu::ReshapeOp>(
      NameLoc::get(b.getStringAttr(name + "_tokens")),
      RankedTensorType::get({T, C}, elem), op.getInput());
  Value mean = markDataMovement(top::WeightOp::createWithData(
      b, op, name + "_mean_row", RankedTensorType::get({1, T}, elem),
      std::vector<float>(size_t(T), 1.0f / float(T))));
  Value mm = b.create<tpu::MatMulOp>(
      NameLoc::get(b.getStringAttr(name + "_row")),
      RankedTensorType::get({1, C}, elem), mean, x, none, Value(),
      /*do_relu=*/false, /*right_transpose=*/false);
  b.setInsertionPoint(pool);
  Value y = b.create<tpu::ReshapeOp>(pool.getLoc(), pool.getOutput().getType(),
                                     mm);
  pool.getOutput().replaceAllUsesWith(y);
  pool.erase();
  op.erase();
}

struct TransposeAsMatMulPass
    : public tpuc::backend::impl::TransposeAsMatMulBase<TransposeAsMatMulPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    chip::Target target;
    FailureOr<func::FuncOp> entry = loadChipAndEntry(module, chip, target);
    if (failed(entry))
      return signalPassFailure();
    // The identity is a weight of the module's weight file.
    if (!module->hasAttr(kWeightFileAttr))
      return;
    SmallVector<tpu::PermuteOp> permutes;
    module.walk([&](tpu::PermuteOp op) { permutes.push_back(op); });
    for (tpu::PermuteOp op : permutes) {
      if (auto pool = tokenMeanPool(op)) {
        meanAsMatMul(op, pool);
        continue;
      }
      auto cw = smallTranspose(op, target.lanes);
      if (!cw) {
        if (auto flat = flatTranspose(op, target.lanes))
          transposeFlat(op, flat->first, flat->second);
        continue;
      }
      const int64_t C = cw->first, W = cw->second;
      OpBuilder b(op);
      Value none = b.create<top::NoneOp>(op.getLoc(), b.getNoneType());
      if (auto concat = constantRowsConcat(op)) {
        rowsWithConstants(b, op, concat, C, W, none);
        continue;
      }
      auto outType = cast<RankedTensorType>(op.getOutput().getType());
      Value identity = identityRows(b, op, tpuc::getOpName(op) + "_identity",
                                      outType, W, 0);
      auto mm = b.create<tpu::MatMulOp>(op.getLoc(), outType, identity,
                                        op.getInput(), none, Value(),
                                        /*do_relu=*/false,
                                        /*right_transpose=*/true);
      op.getOutput().replaceAllUsesWith(mm.getOutput());
      op.erase();
    }
  }
};

} // namespace
