#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Top/Utils.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "tpuc/Chip/Float16.h"
#include "llvm/ADT/StringSet.h"
#include <cstring>

using namespace mlir;
using namespace tpuc;

namespace top {

FailureOr<StringRef> getWeightFile(Operation *op) {
  auto module = isa<ModuleOp>(op) ? cast<ModuleOp>(op)
                                  : op->getParentOfType<ModuleOp>();
  auto file = module ? module->getAttrOfType<StringAttr>(kWeightFileAttr)
                     : StringAttr();
  if (!file)
    return op->emitOpError() << "enclosing module has no '" << kWeightFileAttr
                             << "' attribute";
  return file.getValue();
}

LogicalResult saveWeights(ModuleOp module, StringRef path) {
  auto file = getWeightFile(module);
  if (failed(file))
    return failure();
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
  llvm::StringSet<> seen;
  module.walk([&](WeightOp w) {
    std::string name = getOpName(w);
    if (seen.insert(name).second) {
      names.push_back(name);
      auto shape = getShape(w.getOutput());
      shapes.emplace_back(shape.begin(), shape.end());
    }
  });
  if (llvm::Error err = writeWeights(*file, names, shapes, path))
    return module.emitError() << llvm::toString(std::move(err));
  module->setAttr(kWeightFileAttr, StringAttr::get(module.getContext(), path));
  return success();
}

LogicalResult WeightOp::verify() {
  if (getOpName(*this).empty())
    return emitOpError() << "needs a name location (the key in the weight file)";
  return success();
}

FailureOr<WeightData> WeightOp::readTyped() {
  auto file = getWeightFile(*this);
  if (failed(file))
    return failure();
  auto data = readWeight(*file, getOpName(*this));
  if (!data)
    return emitOpError() << llvm::toString(data.takeError());
  int64_t expect = numElements(getShape(getOutput()));
  if ((*data)->numElements() != expect)
    return emitOpError() << "weight '" << getOpName(*this) << "' has "
                         << (*data)->numElements() << " elements, type needs "
                         << expect;
  // Same size is not enough: a transposed array would be read in the wrong
  // order. Only dims of 1 may differ (a bias stored as [C] for [1,C,1,1]).
  auto nonUnit = [](ArrayRef<int64_t> dims) {
    SmallVector<int64_t> out;
    llvm::copy_if(dims, std::back_inserter(out), [](int64_t d) { return d != 1; });
    return out;
  };
  ArrayRef<int64_t> want = getShape(getOutput());
  if (nonUnit((*data)->shape) != nonUnit(want)) {
    auto str = [](ArrayRef<int64_t> dims) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "[";
      llvm::interleave(dims, os, ", ");
      os << "]";
      return s;
    };
    return emitOpError() << "weight '" << getOpName(*this) << "' has shape "
                         << str((*data)->shape) << " in '" << *file
                         << "', its type needs " << str(want);
  }
  return *data;
}

FailureOr<std::shared_ptr<std::vector<float>>> WeightOp::read() {
  auto data = readTyped();
  if (failed(data))
    return failure();
  const NpyArray &arr = **data;
  Type elem = getElementTypeOrSelf(getOutput().getType());
  // bf16 has no numpy dtype: its bits are stored as uint16.
  if (elem.isBF16() && arr.descr == "<u2") {
    auto out = std::make_shared<std::vector<float>>(arr.numElements());
    for (int64_t i = 0; i < arr.numElements(); ++i) {
      uint16_t bits;
      std::memcpy(&bits, arr.data.data() + 2 * i, 2);
      (*out)[i] = tpuc::chip::bf16ToF32(bits);
    }
    return out;
  }
  auto values = arr.toFloat();
  if (!values)
    return emitOpError() << "weight '" << getOpName(*this)
                         << "': " << llvm::toString(values.takeError());
  return std::make_shared<std::vector<float>>(std::move(*values));
}

WeightOp WeightOp::createTyped(OpBuilder &b, Operation *insertPoint,
                               StringRef name, RankedTensorType type,
                               NpyArray data) {
  StringRef file = *getWeightFile(insertPoint);
  data.shape.assign(type.getShape().begin(), type.getShape().end());
  addWeight(file, name, std::move(data));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(insertPoint);
  auto loc = NameLoc::get(b.getStringAttr(name));
  return WeightOp::create(b, loc, type);
}

WeightOp WeightOp::createWithData(OpBuilder &b, Operation *insertPoint,
                                  StringRef name, RankedTensorType type,
                                  std::vector<float> data) {
  return createTyped(b, insertPoint, name, type,
                     NpyArray::fromFloat(data, type.getShape()));
}

LogicalResult WeightOp::inference(InferenceParam &p) {
  auto data = read();
  if (failed(data))
    return failure();
  std::copy((*data)->begin(), (*data)->end(), p.outputs[0]);
  return success();
}

} // namespace top
