// LoweringTypes (the lowering's type decisions) and QuantizeContext (how ops
// retype themselves), plus the driver of convert-top-to-tpu's typing step.
#include "tpuc/Conversion/TopToTpu/Quantize.h"
#include "tpuc/Chip/Float16.h"
#include "tpuc/Dialect/Tpu/IR/QuantParams.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include <cmath>

using namespace mlir;

namespace tpuc {

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

/// Calls `row(lineNo, fields)` for every non-comment line of `path`.
static LogicalResult
readTable(ModuleOp module, StringRef what, StringRef path,
          llvm::function_ref<LogicalResult(int, ArrayRef<StringRef>)> row) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return module.emitError() << what << " '" << path
                              << "': " << buf.getError().message();
  SmallVector<StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (auto [i, line] : llvm::enumerate(lines)) {
    line = line.trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    SmallVector<StringRef> fields;
    llvm::SplitString(line, fields, " \t\r");
    if (failed(row(int(i) + 1, fields)))
      return failure();
  }
  return success();
}

/// tpu-mlir's quantize table: `op_name MODE` per line, `#` comments. Every
/// name must be an op of this model: a misspelt name or another model's
/// table would otherwise change nothing, silently.
static LogicalResult
readQuantizeTable(ModuleOp module, StringRef path,
                  const llvm::StringSet<> &names,
                  llvm::StringMap<tpu::LoweringMode> &overrides) {
  SmallVector<std::pair<int, std::string>> unknown;
  if (failed(readTable(
          module, "quantize table", path,
          [&](int line, ArrayRef<StringRef> f) -> LogicalResult {
            if (f.size() != 2)
              return module.emitError()
                     << path << ":" << line
                     << ": expected 'op_name MODE' (MODE one of F32, F16, "
                        "BF16, INT8)";
            auto mode = tpu::symbolizeLoweringMode(f[1].upper());
            if (!mode)
              return module.emitError()
                     << path << ":" << line << ": unknown mode '" << f[1]
                     << "' for op '" << f[0]
                     << "' (one of F32, F16, BF16, INT8)";
            if (!names.contains(f[0]))
              unknown.push_back({line, f[0].str()});
            overrides[f[0]] = *mode;
            return success();
          })))
    return failure();
  if (unknown.empty())
    return success();
  if (unknown.size() == overrides.size())
    return module.emitError()
           << "quantize table '" << path
           << "' names none of this model's ops (is it another model's?)";
  return module.emitError() << path << ":" << unknown.front().first
                            << ": no op named '" << unknown.front().second
                            << "' in the model";
}

FailureOr<LoweringTypes> LoweringTypes::create(ModuleOp module,
                                               const Options &options,
                                               const llvm::StringSet<> &names) {
  LoweringTypes t;
  t.opts = options;
  t.topNames = names;
  bool int8 = options.mode == tpu::LoweringMode::INT8;
  if (!options.calibrationTable.empty() && !int8)
    return module.emitError()
           << "convert-top-to-tpu: a calibration table is only used by mode "
              "INT8, not "
           << tpu::stringifyLoweringMode(options.mode);
  if (!options.quantizeTable.empty() &&
      failed(readQuantizeTable(module, options.quantizeTable, names,
                               t.overrides)))
    return failure();
  bool needsTable = int8;
  for (auto &o : t.overrides)
    needsTable |= o.second == tpu::LoweringMode::INT8;
  if (!needsTable)
    return t;
  if (options.calibrationTable.empty())
    return module.emitError()
           << "convert-top-to-tpu: mode INT8 needs a calibration table "
              "(calibration-table=FILE, made by run_calibration.py)";
  if (failed(readTable(
          module, "calibration table", options.calibrationTable,
          [&](int line, ArrayRef<StringRef> f) -> LogicalResult {
            Calibration c;
            if (f.size() != 4 || !llvm::to_float(f[1], c.threshold) ||
                !llvm::to_float(f[2], c.min) || !llvm::to_float(f[3], c.max) ||
                !(c.threshold >= 0) || !(c.min <= c.max))
              return module.emitError()
                     << options.calibrationTable << ":" << line
                     << ": expected 'name threshold min max' with threshold "
                        ">= 0 and min <= max";
            t.table[f[0]] = c;
            return success();
          })))
    return failure();
  // A table of another model names none of this one's tensors.
  size_t found = 0;
  for (auto &n : names)
    found += t.table.count(n.getKey());
  if (found == 0 && !names.empty())
    return module.emitError()
           << "convert-top-to-tpu: calibration table '"
           << options.calibrationTable
           << "' names none of this model's tensors (is it another model's?)";
  return t;
}

bool LoweringTypes::hasExtremeRange(StringRef name) const {
  constexpr double kF16Max = 65504.0;
  auto it = table.find(name);
  if (it == table.end())
    return false;
  const Calibration &c = it->second;
  return std::max({std::abs(c.threshold), std::abs(c.min), std::abs(c.max)}) >
         kF16Max;
}

tpu::LoweringMode LoweringTypes::requestedMode(StringRef opName) const {
  auto it = overrides.find(opName);
  return it == overrides.end() ? opts.mode : it->second;
}

Type LoweringTypes::floatType(MLIRContext *ctx, tpu::LoweringMode mode) const {
  switch (mode) {
  case tpu::LoweringMode::F16:
    return Float16Type::get(ctx);
  case tpu::LoweringMode::BF16:
    return BFloat16Type::get(ctx);
  default:
    return Float32Type::get(ctx);
  }
}

quant::UniformQuantizedType
LoweringTypes::int8Type(MLIRContext *ctx, StringRef name, double limit) const {
  auto it = table.find(name);
  if (it == table.end())
    return {};
  Calibration c = it->second;
  double scale;
  int64_t zp = 0;
  if (!opts.asymmetric) {
    double th = limit > 0 ? std::min(c.threshold, limit) : c.threshold;
    scale = th / 127.0;
  } else {
    double lo = std::min(c.min, 0.0), hi = std::max(c.max, 0.0);
    if (limit > 0)
      hi = std::min(hi, limit);
    scale = (hi - lo) / 255.0;
    if (scale > 0)
      zp = std::clamp<int64_t>(
          chip::roundToInt(-128.0 - lo / scale, tpu::kQuantRound,
                           chip::DType::INT32),
          -128, 127);
  }
  if (!(scale > 0)) // a tensor that is all zeros: any scale represents it
    scale = 1e-8;
  auto i8 = IntegerType::get(ctx, 8);
  return quant::UniformQuantizedType::get(quant::QuantizationFlags::Signed, i8,
                                          Float32Type::get(ctx), scale, zp,
                                          -128, 127);
}

//===----------------------------------------------------------------------===//
// QuantizeContext
//===----------------------------------------------------------------------===//

static StringRef typeSuffix(Type elem) {
  if (tpu::isQuantized(elem))
    return "i8";
  if (elem.isF16())
    return "f16";
  if (elem.isBF16())
    return "bf16";
  return "f32";
}

static RankedTensorType withElement(Value v, Type elem) {
  return RankedTensorType::get(getShape(v), elem);
}

void QuantizeContext::setElementType(Operation *op, Type elem, unsigned i) {
  Value r = op->getResult(i);
  r.setType(withElement(r, elem));
}

Value QuantizeContext::cast(Value v, Type elem) {
  if (getElementTypeOrSelf(v.getType()) == elem)
    return v;
  auto key = std::make_pair(v, elem);
  if (Value c = casts.lookup(key))
    return c;
  OpBuilder::InsertionGuard guard(b);
  std::string name;
  if (Operation *def = v.getDefiningOp()) {
    b.setInsertionPointAfter(def);
    name = getOpName(def);
  } else {
    b.setInsertionPointToStart(llvm::cast<BlockArgument>(v).getOwner());
  }
  auto loc = NameLoc::get(b.getStringAttr(name + "_" + typeSuffix(elem).str()));
  Value c = tpu::QuantCastOp::create(b, loc, withElement(v, elem), v);
  casts[key] = c;
  return c;
}

FailureOr<quant::UniformQuantizedType> QuantizeContext::int8TypeOf(Value v) {
  if (auto q = tpu::uniformType(v.getType()))
    return q;
  Operation *def = v.getDefiningOp();
  if (!def)
    return failure();
  return int8ResultType(def);
}

FailureOr<quant::UniformQuantizedType>
QuantizeContext::int8ResultType(Operation *op, double limit) {
  std::string name = getOpName(op);
  if (auto t = types.int8Type(context(), name, limit))
    return t;
  // A helper op of the structural lowering (a 1-D conv's 2-D form) is
  // calibrated as the tensor it is reshaped into.
  if (!types.isTopName(name) && op->getNumResults() == 1 &&
      op->getResult(0).hasOneUse())
    if (auto user = dyn_cast<tpu::ReshapeOp>(*op->getResult(0).user_begin()))
      if (auto t = types.int8Type(context(), getOpName(user), limit))
        return t;
  // The row means of a two-step global average pool stay in its input's
  // range, and a data movement a rewrite made (the 2-D view of a 1-D conv's
  // input) holds its operand's values: both take the operand's type.
  if (!types.isTopName(name)) {
    auto iface = dyn_cast<QuantizeInterface>(op);
    if (isa<tpu::AvgPoolOp>(op) || (iface && iface.movesOperandValues()))
      return int8TypeOf(op->getOperand(0));
  }
  return op->emitOpError() << "calibration table '"
                           << types.options().calibrationTable
                           << "' has no tensor '" << name << "'";
}

FailureOr<Value> QuantizeContext::int8Operand(Value v) {
  if (tpu::isQuantized(v.getType()))
    return v;
  auto t = int8TypeOf(v);
  if (failed(t))
    return failure();
  return cast(v, *t);
}

Value QuantizeContext::newWeight(Operation *anchor, StringRef name,
                                 RankedTensorType type, NpyArray data) {
  // Weights go before their first user, like the importer's.
  return top::WeightOp::createTyped(b, anchor, name, type, std::move(data))
      .getOutput();
}

FailureOr<Value> QuantizeContext::floatWeight(Value w, Type elem) {
  if (getElementTypeOrSelf(w.getType()) == elem)
    return w;
  auto key = std::make_pair(w, elem);
  if (Value c = casts.lookup(key))
    return c;
  auto weight = w.getDefiningOp<top::WeightOp>();
  auto data = weight.read();
  if (failed(data))
    return failure();
  SmallVector<uint16_t> bits;
  bits.reserve((*data)->size());
  // A finite weight stays finite: one beyond the type's range (the -FLT_MAX
  // of an additive attention mask) saturates to its largest value rather
  // than becoming an infinity that 0 * inf would turn into NaN.
  const uint16_t inf = elem.isF16() ? 0x7c00u : 0x7f80u;
  for (float v : **data) {
    uint16_t b = elem.isF16() ? chip::f32ToF16(v) : chip::f32ToBF16(v);
    if (std::isfinite(v) && (b & 0x7fffu) == inf)
      b = static_cast<uint16_t>((b & 0x8000u) | (inf - 1u));
    bits.push_back(b);
  }
  auto type = withElement(w, elem);
  NpyArray arr = elem.isF16()
                     ? NpyArray::of<uint16_t>("<f2", bits, type.getShape())
                     : NpyArray::of<uint16_t>("<u2", bits, type.getShape());
  Value c = newWeight(weight, getOpName(weight) + "_" + typeSuffix(elem).str(),
                      type, std::move(arr));
  casts[key] = c;
  return c;
}

static bool isFloatOrQuant(Type t) {
  Type e = getElementTypeOrSelf(t);
  return isa<FloatType>(e) || tpu::isQuantized(e);
}

LogicalResult QuantizeContext::quantizeFloat(Operation *op,
                                             tpu::LoweringMode mode,
                                             ArrayRef<unsigned> keep) {
  return quantizeFloat(op, floatType(mode), keep);
}

LogicalResult QuantizeContext::quantizeFloat(Operation *op, Type ft,
                                             ArrayRef<unsigned> keep) {
  for (OpOperand &use : op->getOpOperands()) {
    Value v = use.get();
    if (llvm::is_contained(keep, use.getOperandNumber()) || isNone(v) ||
        !isFloatOrQuant(v.getType()))
      continue;
    if (v.getDefiningOp<top::WeightOp>() && !tpu::isQuantized(v.getType())) {
      auto w = floatWeight(v, ft);
      if (failed(w))
        return failure();
      use.set(*w);
    } else {
      use.set(cast(v, ft));
    }
  }
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    if (isFloatOrQuant(op->getResult(i).getType()))
      setElementType(op, ft, i);
  return success();
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

/// Types one function (a module may hold several, e.g. in lit tests).
static LogicalResult quantizeFunction(func::FuncOp func, QuantizeContext &ctx) {
  const LoweringTypes &types = ctx.types;
  ModuleOp module = ctx.module;
  const tpu::LoweringMode fallback = types.options().fallback;
  Block &body = func.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    if (isa<tpu::TpuDialect>(op.getDialect()))
      ops.push_back(&op);
  for (Operation *op : ops) {
    auto iface = dyn_cast<QuantizeInterface>(op);
    if (!iface)
      return op->emitOpError() << "has no lowering modes (QuantizeInterface)";
    tpu::LoweringMode mode = types.requestedMode(getOpName(op));
    // Ops without an integer form, and ops whose result spans an extreme
    // range (the sum with an attention mask), compute in the fallback mode.
    if (mode == tpu::LoweringMode::INT8 &&
        (!iface.hasInt8Form(ctx) || types.hasExtremeRange(getOpName(op)))) {
      ctx.fallbacks.push_back(getOpName(op) + " (" +
                              op->getName().getStringRef().str() + ")");
      mode = fallback;
    }
    if (failed(iface.quantize(ctx, mode)))
      return failure();
  }
  // The network's outputs stay f32 and keep their names: the cast takes
  // the name, the producer gets a typed one.
  Operation *ret = body.getTerminator();
  Type f32 = Float32Type::get(module.getContext());
  for (OpOperand &use : ret->getOpOperands()) {
    Value v = use.get();
    if (!isFloatOrQuant(v.getType()) || getElementTypeOrSelf(v.getType()) == f32)
      continue;
    Value c = ctx.cast(v, f32);
    if (Operation *def = v.getDefiningOp()) {
      std::string name = getOpName(def);
      auto typed = StringAttr::get(
          module.getContext(),
          name + "_" + typeSuffix(getElementTypeOrSelf(v.getType())).str());
      def->setLoc(NameLoc::get(typed, def->getLoc()));
      c.getDefiningOp()->setLoc(
          NameLoc::get(StringAttr::get(module.getContext(), name)));
    }
    use.set(c);
  }
  func.setType(FunctionType::get(module.getContext(),
                                 func.getFunctionType().getInputs(),
                                 ret->getOperandTypes()));
  return success();
}

LogicalResult quantizeModule(ModuleOp module, const LoweringTypes &types) {
  QuantizeContext ctx(types, module);
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (!func.isExternal() && failed(quantizeFunction(func, ctx)))
      return failure();
  if (!ctx.fallbacks.empty()) {
    SmallVector<Attribute> names;
    for (auto &n : ctx.fallbacks)
      names.push_back(StringAttr::get(module.getContext(), n));
    module->setAttr("tpu.fallback_ops", ArrayAttr::get(module.getContext(), names));
  }
  return success();
}

} // namespace tpuc
