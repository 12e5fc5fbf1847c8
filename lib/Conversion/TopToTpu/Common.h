#ifndef TPUC_LIB_CONVERSION_TOPTOTPU_COMMON_H
#define TPUC_LIB_CONVERSION_TOPTOTPU_COMMON_H
// Building blocks shared by the Top -> Tpu lowering patterns.
#include "tpuc/Conversion/TopToTpu/TopToTpu.h"
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Transforms/DialectConversion.h"

namespace tpuc::lowering {

/// Location of a helper op a lowering adds around the main one: named
/// "<tensor>_<suffix>" so dumps keep one tensor per name, and wrapping the
/// Top op's location.
inline mlir::Location helperLoc(mlir::Operation *op, llvm::StringRef suffix) {
  return mlir::NameLoc::get(
      mlir::StringAttr::get(op->getContext(), getOpName(op) + "_" + suffix.str()),
      op->getLoc());
}

/// `v`'s tensor type with another shape.
inline mlir::RankedTensorType withShape(mlir::Value v,
                                        llvm::ArrayRef<int64_t> shape) {
  return mlir::RankedTensorType::get(
      shape, llvm::cast<mlir::RankedTensorType>(v.getType()).getElementType());
}

/// tpu.Reshape of `v` to `shape`.
inline mlir::Value reshape(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value v, llvm::ArrayRef<int64_t> shape) {
  return tpu::ReshapeOp::create(b, loc, withShape(v, shape), v).getOutput();
}

/// Fails with a diagnostic naming `op` unless its module has a weight file
/// (new weights are registered in it).
inline mlir::LogicalResult requireWeightFile(mlir::Operation *op) {
  auto module = op->getParentOfType<mlir::ModuleOp>();
  if (!module || !module->getAttrOfType<mlir::StringAttr>(kWeightFileAttr))
    return op->emitOpError()
           << "cannot be lowered: its new weights need the module's '"
           << kWeightFileAttr << "' attribute";
  return mlir::success();
}

/// A convolution-like Top op in the chip's 2-D form. The chip convolves in
/// 2-D, so a 1-D op gets height 1 through reshapes of its input and filter;
/// Top pads (begins then ends) are then [top, left, bottom, right].
struct Window2d {
  mlir::Value input, filter;
  llvm::SmallVector<int64_t> kernel, strides, dilations, pads;
  mlir::RankedTensorType type; // of the 2-D result
  bool is1d;
  mlir::Location loc; // of the 2-D op: the Top op's own unless reshaped

  /// The 2-D op's result as the Top op's (reshaped back when 1-D).
  mlir::Value result(mlir::OpBuilder &b, mlir::Operation *op,
                     mlir::Value v) const {
    if (!is1d)
      return v;
    return tpu::ReshapeOp::create(b, op->getLoc(), op->getResult(0).getType(),
                                  v)
        .getOutput();
  }
};

template <typename TopOp>
Window2d toWindow2d(TopOp op, mlir::Value input, mlir::Value filter,
                    mlir::OpBuilder &b) {
  auto outType = llvm::cast<mlir::RankedTensorType>(op.getOutput().getType());
  Window2d w{input,
             filter,
             getI64s(op.getKernelShape()),
             getI64s(op.getStrides()),
             getI64s(op.getDilations()),
             getI64s(op.getPads()),
             outType,
             op.getKernelShape().size() == 1,
             op.getLoc()};
  if (!w.is1d)
    return w;
  auto in = getShape(input), f = getShape(filter);
  w.input = reshape(b, helperLoc(op, "input_2d"), input, {in[0], in[1], 1, in[2]});
  w.filter = reshape(b, helperLoc(op, "filter_2d"), filter, {f[0], f[1], 1, f[2]});
  w.kernel = {1, w.kernel[0]};
  w.strides = {1, w.strides[0]};
  w.dilations = {1, w.dilations[0]};
  w.pads = {0, w.pads[0], 0, w.pads[1]};
  auto out = outType.getShape();
  w.type = mlir::RankedTensorType::get({out[0], out[1], 1, out[2]},
                                       outType.getElementType());
  w.loc = helperLoc(op, "2d");
  return w;
}

} // namespace tpuc::lowering
#endif
