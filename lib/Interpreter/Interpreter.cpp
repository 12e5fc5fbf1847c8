#include "tpuc/Interpreter/Interpreter.h"
#include "tpuc/Chip/Float16.h"
#include "tpuc/Dialect/Tpu/IR/QuantParams.h"
#include "mlir/IR/TypeUtilities.h"
#include "tpuc/Interfaces/InferenceInterface.h"
#include "tpuc/Support/Module.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include <functional>

using namespace mlir;

namespace tpuc {
namespace {

llvm::Error err(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Rounds f32 values to what a tensor of element type `elem` holds: the
/// nearest f16/bf16 (even), or the integer of a quantized type.
void toElementType(Type elem, std::vector<float> &data) {
  if (elem.isF16() || elem.isBF16()) {
    for (float &v : data)
      v = elem.isF16() ? chip::f16ToF32(chip::f32ToF16(v))
                       : chip::bf16ToF32(chip::f32ToBF16(v));
  } else if (tpu::uniformType(elem)) {
    tpu::QParams q = tpu::qparams(elem);
    for (float &v : data)
      v = float(tpu::quantizeF32(v, q));
  }
}

/// The body of a region op without reference semantics of its own whose
/// results are what its body's terminator yields (tpu.Group), else null.
/// Kept generic so the interpreter does not depend on the Tpu dialect.
Block *groupBody(Operation *op) {
  if (!op || op->getNumRegions() != 1 || isa<InferenceInterface>(op) ||
      !op->getRegion(0).hasOneBlock())
    return nullptr;
  Block &b = op->getRegion(0).front();
  if (b.empty() || !b.back().hasTrait<OpTrait::IsTerminator>() ||
      b.getTerminator()->getNumOperands() != op->getNumResults())
    return nullptr;
  return &b;
}

} // namespace

llvm::Expected<TensorList> interpret(ModuleOp module, const TensorList &inputs,
                                     bool allTensors,
                                     const TensorList &references) {
  func::FuncOp func = getEntryFunction(module);
  if (!func)
    return err("module has no 'main' function");
  // Diagnostics from ops become the returned error's text.
  std::string diag;
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    llvm::raw_string_ostream os(diag);
    if (!diag.empty())
      os << "\n";
    os << d.getLocation() << ": " << d;
    return success();
  });

  llvm::DenseMap<Value, std::shared_ptr<std::vector<float>>> buffers;
  llvm::StringMap<const HostTensor *> byName, refs;
  for (auto &[name, t] : inputs)
    byName[name] = &t;
  for (auto &[name, t] : references)
    refs[name] = &t;

  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    // An argument is named by the input op that consumes it.
    const HostTensor *t = nullptr;
    std::string name;
    for (Operation *user : arg.getUsers()) {
      name = getOpName(user);
      auto it = byName.find(name);
      if (it != byName.end()) {
        t = it->second;
        break;
      }
    }
    if (!t)
      return err("no input given for '" + name + "' (argument #" +
                 llvm::Twine(arg.getArgNumber()) + ")");
    auto expect = getShape(arg);
    if (llvm::ArrayRef<int64_t>(t->shape) != expect)
      return err("input '" + name + "' has shape " + shapeToString(t->shape) +
                 " but the model expects " + shapeToString(expect));
    buffers[arg] = std::make_shared<std::vector<float>>(t->data);
  }

  TensorList out;
  auto record = [&](Value v, const std::string &name) {
    out.push_back({name, HostTensor{std::vector<int64_t>(getShape(v).begin(),
                                                         getShape(v).end()),
                                    *buffers[v]}});
  };
  // A layer group (tpu.Group) runs its body op by op, so every member's
  // tensor is seen; its results are the values its terminator yields.
  std::function<llvm::Error(Block &)> run = [&](Block &block) -> llvm::Error {
    for (Operation &op : block.without_terminator()) {
      if (Block *inner = groupBody(&op)) {
        if (auto e = run(*inner))
          return e;
        // (A copy first: inserting the result may rehash the map.)
        for (OpResult r : op.getResults()) {
          auto yielded =
              buffers[inner->getTerminator()->getOperand(r.getResultNumber())];
          buffers[r] = std::move(yielded);
        }
        continue;
      }
      if (op.getNumResults() == 1 && isa<NoneType>(op.getResult(0).getType()))
        continue;
      auto iface = dyn_cast<InferenceInterface>(op);
      if (!iface)
        return err(getOpName(&op) + " (" + op.getName().getStringRef() +
                   "): op has no reference semantics (InferenceInterface)");
      InferenceParam param;
      for (Value v : op.getOperands())
        param.inputs.push_back(isNone(v) ? nullptr : buffers[v]->data());
      for (Value r : op.getResults()) {
        if (!isRanked(r))
          return err(getOpName(&op) + " (" + op.getName().getStringRef() +
                     "): result shape unknown; run shape inference first");
        auto buf = std::make_shared<std::vector<float>>(
            numElements(getShape(r)), 0.0f);
        param.outputs.push_back(buf->data());
        buffers[r] = std::move(buf);
      }
      if (failed(iface.inference(param)))
        return err(diag.empty() ? getOpName(&op) + ": inference failed"
                                : diag);
      // A result of a narrower float type holds the op's f32 value rounded
      // once to it (nearest even), as the chip stores it.
      for (Value r : op.getResults()) {
        Type elem = getElementTypeOrSelf(r.getType());
        if (elem.isF16() || elem.isBF16())
          toElementType(elem, *buffers[r]);
      }
      // Constants (no operands) are not layer outputs.
      if (op.getNumResults() != 1 || op.getNumOperands() == 0)
        continue;
      std::string name = getOpName(&op);
      if (allTensors && !name.empty())
        record(op.getResult(0), name);
      auto ref = refs.find(name);
      if (name.empty() || ref == refs.end())
        continue;
      Value r = op.getResult(0);
      if (llvm::ArrayRef<int64_t>(ref->second->shape) != getShape(r))
        return err("reference '" + name + "' has shape " +
                   shapeToString(ref->second->shape) + " but the tensor has " +
                   shapeToString(getShape(r)));
      // Users read the reference, not this op's value (a fresh buffer: the
      // recorded one was copied already).
      auto buf = std::make_shared<std::vector<float>>(ref->second->data);
      toElementType(getElementTypeOrSelf(r.getType()), *buf);
      buffers[r] = std::move(buf);
    }
    return llvm::Error::success();
  };
  if (auto e = run(body))
    return std::move(e);
  if (!allTensors)
    for (Value v : body.getTerminator()->getOperands()) {
      Value inner = v;
      if (Block *b = groupBody(v.getDefiningOp()))
        inner = b->getTerminator()->getOperand(
            cast<OpResult>(v).getResultNumber());
      record(v, inner.getDefiningOp() ? getOpName(inner.getDefiningOp()) : "");
    }
  return out;
}

} // namespace tpuc
