//===- Quantize.h - Types of a lowering: modes, calibration, casts -*- C++ -*-//
//
// convert-top-to-tpu's second step. LoweringTypes is the type converter of
// the lowering: from the module mode, the calibration table, the quantize
// table (per-op overrides) and the fallback mode it decides each op's mode
// and the element type of each tensor. QuantizeContext is what an op's
// QuantizeInterface::quantize uses to retype itself: calibrated INT8 types,
// memoized tpu.QuantCast between types, converted and quantized weights.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_CONVERSION_TOPTOTPU_QUANTIZE_H
#define TPUC_CONVERSION_TOPTOTPU_QUANTIZE_H
#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Tpu/IR/TpuDialect.h"
#include "tpuc/Support/Npz.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include <optional>

namespace tpuc {

/// One calibration table row.
struct Calibration {
  double threshold = 0, min = 0, max = 0;
};

class LoweringTypes {
public:
  struct Options {
    tpu::LoweringMode mode = tpu::LoweringMode::F32;
    tpu::LoweringMode fallback = tpu::LoweringMode::F16;
    std::string calibrationTable, quantizeTable;
    bool asymmetric = false;
  };
  /// Reads the tables; errors (as diagnostics on `module`) name the file,
  /// line and reason. `topNames` are the Top module's tensor names.
  static mlir::FailureOr<LoweringTypes> create(mlir::ModuleOp module,
                                               const Options &options,
                                               const llvm::StringSet<> &topNames);

  const Options &options() const { return opts; }
  /// The mode an op is asked to compute in (quantize table, else module).
  tpu::LoweringMode requestedMode(llvm::StringRef opName) const;
  /// f32, f16 or bf16.
  mlir::Type floatType(mlir::MLIRContext *ctx, tpu::LoweringMode mode) const;
  /// The calibrated INT8 type of tensor `name`; `limit` (when positive)
  /// caps the range (a fused relu6). Null when the table has no such row.
  mlir::quant::UniformQuantizedType int8Type(mlir::MLIRContext *ctx,
                                             llvm::StringRef name,
                                             double limit = -1) const;
  bool isTopName(llvm::StringRef name) const { return topNames.contains(name); }
  /// Whether tensor `name` is calibrated to a range beyond the float16
  /// limit (an additive mask's -FLT_MAX): no INT8 step could resolve the
  /// values beside such extremes.
  bool hasExtremeRange(llvm::StringRef name) const;

private:
  Options opts;
  llvm::StringMap<Calibration> table;
  llvm::StringMap<tpu::LoweringMode> overrides;
  llvm::StringSet<> topNames;
};

class QuantizeContext {
public:
  QuantizeContext(const LoweringTypes &types, mlir::ModuleOp module)
      : types(types), module(module), b(module.getContext()) {}

  const LoweringTypes &types;
  mlir::ModuleOp module;
  mlir::OpBuilder b;

  mlir::MLIRContext *context() { return module.getContext(); }
  mlir::Type floatType(tpu::LoweringMode mode) {
    return types.floatType(context(), mode);
  }
  /// `v` as element type `elem`: itself, or one tpu.QuantCast after its
  /// producer shared by every consumer asking for that type.
  mlir::Value cast(mlir::Value v, mlir::Type elem);
  /// The calibrated INT8 type of the tensor `v` (by its producer's name);
  /// an error naming the op when the table has no row for it.
  mlir::FailureOr<mlir::quant::UniformQuantizedType> int8TypeOf(mlir::Value v);
  /// The calibrated INT8 type of `op`'s result; for a helper op the lowering
  /// made (not a Top tensor), the type of the tensor it is reshaped into,
  /// or, when it only moves its operand's values, the operand's type.
  mlir::FailureOr<mlir::quant::UniformQuantizedType>
  int8ResultType(mlir::Operation *op, double limit = -1);
  /// `v` as INT8: itself when quantized, else cast to its calibrated type.
  mlir::FailureOr<mlir::Value> int8Operand(mlir::Value v);
  /// A float weight converted to `elem` (f16/bf16 data, memoized).
  mlir::FailureOr<mlir::Value> floatWeight(mlir::Value w, mlir::Type elem);
  /// A new weight next to `anchor`'s operands holding typed `data`.
  mlir::Value newWeight(mlir::Operation *anchor, llvm::StringRef name,
                        mlir::RankedTensorType type, NpyArray data);
  /// Float form of `op` in `mode`: float operands (except `keep`) cast or
  /// converted to the mode's type, float results retyped.
  mlir::LogicalResult quantizeFloat(mlir::Operation *op, tpu::LoweringMode mode,
                                    llvm::ArrayRef<unsigned> keep = {});
  mlir::LogicalResult quantizeFloat(mlir::Operation *op, mlir::Type elem,
                                    llvm::ArrayRef<unsigned> keep = {});
  /// Sets the element type of `op`'s result `i`.
  static void setElementType(mlir::Operation *op, mlir::Type elem,
                             unsigned i = 0);
  /// Ops that fell back from INT8, in order (for the log).
  llvm::SmallVector<std::string> fallbacks;

private:
  llvm::DenseMap<std::pair<mlir::Value, mlir::Type>, mlir::Value> casts;
};

/// Retypes every op of the entry function (after the structural lowering).
mlir::LogicalResult quantizeModule(mlir::ModuleOp module,
                                   const LoweringTypes &types);

/// Attaches QuantizeInterface to the Tpu ops.
void registerQuantizeExternalModels(mlir::DialectRegistry &registry);

} // namespace tpuc

#include "tpuc/Conversion/TopToTpu/QuantizeInterface.h.inc"

#endif
