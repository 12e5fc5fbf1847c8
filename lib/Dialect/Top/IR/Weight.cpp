#include "tpuc/Dialect/Top/IR/TopDialect.h"
#include "tpuc/Dialect/Top/Utils.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

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

FailureOr<WeightData> WeightOp::read() {
  auto file = getWeightFile(*this);
  if (failed(file))
    return failure();
  auto data = readWeight(*file, getOpName(*this));
  if (!data)
    return emitOpError() << llvm::toString(data.takeError());
  int64_t expect = numElements(getShape(getOutput()));
  if (int64_t((*data)->size()) != expect)
    return emitOpError() << "weight '" << getOpName(*this) << "' has "
                         << (*data)->size() << " elements, type needs "
                         << expect;
  return *data;
}

WeightOp WeightOp::createWithData(OpBuilder &b, Operation *insertPoint,
                                  StringRef name, RankedTensorType type,
                                  std::vector<float> data) {
  StringRef file = *getWeightFile(insertPoint);
  addWeight(file, name,
            std::make_shared<std::vector<float>>(std::move(data)));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(insertPoint);
  auto loc = NameLoc::get(b.getStringAttr(name));
  return WeightOp::create(b, loc, type);
}

LogicalResult WeightOp::inference(InferenceParam &p) {
  auto data = read();
  if (failed(data))
    return failure();
  std::copy((*data)->begin(), (*data)->end(), p.outputs[0]);
  return success();
}

} // namespace top
