//===- Codegen.cpp - Tpu module -> bmodel ---------------------------------===//
//
// Builds the weight blob (each weight in the layout its user's
// CodegenInterface::layoutWeight asks for), then walks the entry function in
// order and lets every Tpu op emit its instructions. The network's inputs,
// outputs and one named tensor per op result go into the bmodel.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Support/Module.h"
#include "tpuc/Backend/Codegen.h"
#include "tpuc/Backend/CodegenInterface.h"
#include "tpuc/Backend/LayerGroup.h"
#include "tpuc/Backend/Passes.h"
#include "tpuc/Backend/Target.h"
#include "tpuc/Backend/WeightPrefetch.h"
#include "tpuc/Chip/BModel.h"
#include "tpuc/Chip/Float16.h"
#include "tpuc/Support/OpHelpers.h"
#include "tpuc/Support/WeightStore.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"
#include <cmath>
#include <cstring>
#include <numeric>

namespace tpuc {
namespace backend {
#define GEN_PASS_DEF_CODEGEN
#include "tpuc/Backend/Passes.h.inc"
} // namespace backend
} // namespace tpuc

using namespace mlir;
using namespace tpuc;
using namespace tpuc::backend;
using chip::DType;

namespace {

/// Stores `data` as `t` at `out` (float formats round to nearest even,
/// integers round half away from zero and saturate).
void packWeight(const std::vector<float> &data, DType t, uint8_t *out) {
  for (size_t i = 0; i < data.size(); ++i) {
    float v = data[i];
    switch (t) {
    case DType::F32:
      std::memcpy(out + 4 * i, &v, 4);
      break;
    case DType::F16: {
      uint16_t h = chip::f32ToF16(v);
      std::memcpy(out + 2 * i, &h, 2);
      break;
    }
    case DType::BF16: {
      uint16_t h = chip::f32ToBF16(v);
      std::memcpy(out + 2 * i, &h, 2);
      break;
    }
    case DType::INT32: {
      double r = std::round(double(v));
      int32_t q = int32_t(std::min(std::max(r, -2147483648.0), 2147483647.0));
      std::memcpy(out + 4 * i, &q, 4);
      break;
    }
    case DType::INT8:
      out[i] = uint8_t(int8_t(std::min(std::max(std::round(v), -128.f), 127.f)));
      break;
    case DType::UINT8:
      out[i] = uint8_t(std::min(std::max(std::round(v), 0.f), 255.f));
      break;
    default:
      break;
    }
  }
}

/// A weight's elements (row-major) as chip dtype `t`: the stored bytes when
/// they already are (INT8 weights, INT32 biases and multipliers beyond
/// float precision), else converted from its values.
FailureOr<std::vector<uint8_t>> weightBytes(top::WeightOp w, DType t) {
  auto typed = w.readTyped();
  if (failed(typed))
    return failure();
  const NpyArray &a = **typed;
  static const std::pair<DType, const char *> kDescr[] = {
      {DType::F32, "<f4"},  {DType::F16, "<f2"},  {DType::BF16, "<u2"},
      {DType::INT8, "|i1"}, {DType::UINT8, "|u1"}, {DType::INT32, "<i4"}};
  for (auto [dt, descr] : kDescr)
    if (dt == t && a.descr == descr)
      return std::vector<uint8_t>(a.data.begin(), a.data.end());
  auto data = w.read();
  if (failed(data))
    return failure();
  std::vector<uint8_t> out((*data)->size() * chip::dtypeSize(t));
  packWeight(**data, t, out.data());
  return out;
}

chip::TensorInfo tensorInfo(const std::string &name, Value v, uint64_t addr) {
  chip::TensorInfo info;
  info.name = name;
  info.dtype = chipDType(v.getType());
  for (int64_t d : getShape(v))
    info.shape.push_back(uint32_t(d));
  if (info.shape.empty())
    info.shape.push_back(1); // a scalar is stored as one element
  info.ddr_addr = addr;
  return info;
}

struct CodegenPass : public tpuc::backend::impl::CodegenBase<CodegenPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerCodegenExternalModels(registry);
  }

  void runOnOperation() override {
    if (failed(run()))
      signalPassFailure();
  }

  LogicalResult run() {
    ModuleOp module = getOperation();
    chip::BModel bm;
    if (failed(loadChip(module, chip, bm.target)))
      return failure();
    func::FuncOp func = getEntryFunction(module);
    if (!func)
      return module.emitError() << "module has no 'main' function";
    auto attr = [&](StringRef name) -> std::optional<uint64_t> {
      if (auto a = module->getAttrOfType<IntegerAttr>(name))
        return uint64_t(a.getInt());
      return std::nullopt;
    };
    auto wsize = attr(kWeightSizeAttr), aaddr = attr(kActAddrAttr),
         asize = attr(kActSizeAttr);
    if (!wsize || !aaddr || !asize)
      return module.emitError()
             << "module has no DDR plan; run tpu-assign-address first";
    bm.plan = {0, *wsize, *aaddr, *asize};
    bm.producer = "tpuc tpu-codegen";
    Block &body = func.getBody().front();

    // Weight blob: each weight's elements in the order its users' layouts
    // ask for, stored as the chip dtype of its type.
    bm.weights.assign(*wsize, 0);
    for (auto w : body.getOps<top::WeightOp>()) {
      auto addr = ddrAddr(w.getOutput());
      if (!addr)
        continue;
      DType t = chipDType(w.getOutput().getType());
      auto bytes = weightBytes(w, t);
      if (failed(bytes))
        return failure();
      const size_t es = chip::dtypeSize(t), n = bytes->size() / es;
      std::vector<int64_t> identity(n);
      std::iota(identity.begin(), identity.end(), 0);
      std::optional<std::vector<int64_t>> order;
      Operation *first = nullptr;
      for (OpOperand &use : w.getOutput().getUses()) {
        auto cg = dyn_cast<CodegenInterface>(use.getOwner());
        if (!cg)
          continue;
        std::vector<int64_t> o = identity;
        if (failed(cg.layoutWeight(use.getOperandNumber(), o, bm.target)))
          return failure();
        if (!order) {
          order = std::move(o);
          first = use.getOwner();
        } else if (*order != o) {
          return w.emitOpError()
                 << "is used in two different layouts (by '"
                 << first->getName() << "' and '"
                 << use.getOwner()->getName() << "')";
        }
      }
      if (*addr + bytes->size() > bm.weights.size())
        return w.emitOpError() << "lies outside the weight region";
      std::string wname = tpuc::getOpName(w);
      bm.weightTensors.push_back(tensorInfo(
          wname.empty() ? "weight@" + std::to_string(*addr) : wname,
          w.getOutput(), *addr));
      uint8_t *dst = bm.weights.data() + *addr;
      for (size_t i = 0; i < n; ++i)
        std::memcpy(dst + i * es, bytes->data() + (order ? (*order)[i] : i) * es,
                    es);
    }

    chip::Network net;
    net.name = module.getName() ? module.getName()->str() : "main";
    llvm::StringSet<> names;
    for (BlockArgument arg : body.getArguments()) {
      Operation *input = nullptr;
      for (Operation *user : arg.getUsers())
        if (isa<top::InputOp>(user))
          input = user;
      auto addr = ddrAddr(arg);
      if (!input || !addr)
        return func.emitError() << "argument #" << arg.getArgNumber()
                                << " has no placed top.Input";
      std::string name = tpuc::getOpName(input);
      names.insert(name);
      net.inputs.push_back(tensorInfo(name, input->getResult(0), *addr));
    }

    CodegenContext ctx(bm.target, bm.plan.regions());
    auto name = [&](Operation *op) {
      std::string n = tpuc::getOpName(op);
      // A tensor in strided blocks is dumped as part of the Concat holding it.
      if (n.empty() || op->hasAttr(kBlockStrideAttr) || !names.insert(n).second)
        return;
      chip::NamedTensor t;
      t.info = tensorInfo(n, op->getResult(0), *ddrAddr(op->getResult(0)));
      t.engine = chip::Engine::GDMA;
      size_t index = net.tensors.size();
      net.tensors.push_back(t);
      ctx.whenStored(
          [&net, index](uint32_t id) { net.tensors[index].after_id = id; });
    };
    // The units emitted in order: layer groups, and single ops (every
    // member of a group on its own without layer groups).
    SmallVector<Operation *> units;
    for (Operation &op : body.without_terminator()) {
      if (!isa<tpu::TpuDialect>(op.getDialect()))
        continue;
      auto g = dyn_cast<tpu::GroupOp>(op);
      if (g && layerGroup) {
        for (Value v : g.getBody().front().getTerminator()->getOperands())
          if (!ddrAddr(v))
            return v.getDefiningOp()->emitOpError()
                   << "has no DDR address; run tpu-assign-address first";
        units.push_back(g);
        continue;
      }
      for (Operation *o : g ? g.getMembers() : SmallVector<Operation *>{&op}) {
        if (!isa<CodegenInterface>(o))
          return o->emitOpError()
                 << "is not supported by the codegen yet (no CodegenInterface)";
        if (!ddrAddr(o->getResult(0)))
          return o->emitOpError()
                 << "has no DDR address; run tpu-assign-address first"
                 << (isa<tpu::GroupOp>(o->getParentOp())
                         ? " with layer-group=false to emit the members of a "
                           "tpu.Group on their own"
                         : "");
        units.push_back(o);
      }
    }
    auto emitUnit = [](CodegenContext &c, Operation *u) -> LogicalResult {
      if (auto g = dyn_cast<tpu::GroupOp>(u)) {
        c.beginOp(g.getMembers().front());
        return failure(failed(emitLayerGroup(c, g)) || failed(c.endOp()));
      }
      c.beginOp(u);
      return failure(failed(cast<CodegenInterface>(u).codegen(c)) ||
                     failed(c.endOp()));
    };
    WeightPrefetcher prefetcher(
        units, bm.target, ctx.ddrRegions(),
        {bm.plan.weight_addr, bm.plan.weight_addr + bm.plan.weight_size},
        emitUnit);
    if (weightPrefetch)
      prefetcher.planNetwork();
    for (size_t i = 0; i < units.size(); ++i) {
      Operation *u = units[i];
      if (failed(weightPrefetch ? prefetcher.emit(ctx, i) : emitUnit(ctx, u)))
        return failure();
      // Only a group's stored results become tensors.
      auto g = dyn_cast<tpu::GroupOp>(u);
      SmallVector<Operation *> members =
          g ? g.getMembers() : SmallVector<Operation *>{u};
      for (Operation *op : members) {
        ctx.macs += modelMacs(op);
        if (!g || isStoredInGroup(op, members))
          name(op);
      }
    }
    ctx.finish();
    llvm::StringSet<> outNames;
    for (Value v : body.getTerminator()->getOperands()) {
      Operation *def = tpu::lookThroughGroup(v).getDefiningOp();
      if (!def)
        for (Operation *user : v.getUsers())
          if (isa<top::InputOp>(user))
            def = user;
      auto addr = ddrAddr(v);
      if (!def || !addr)
        return func.emitError() << "a returned value has no DDR address";
      std::string name = tpuc::getOpName(def);
      if (!outNames.insert(name).second)
        continue;
      net.outputs.push_back(tensorInfo(name, v, *addr));
    }
    net.tiu = std::move(ctx.streams().tiuStream());
    net.gdma = std::move(ctx.streams().gdmaStream());
    auto i64 = IntegerType::get(module.getContext(), 64);
    module->setAttr("tpu.macs", IntegerAttr::get(i64, ctx.macs));
    module->setAttr("tpu.tiu_instructions",
                    IntegerAttr::get(i64, int64_t(net.tiu.size())));
    module->setAttr("tpu.gdma_instructions",
                    IntegerAttr::get(i64, int64_t(net.gdma.size())));
    bm.networks.push_back(std::move(net));
    chip::Status st = bmodel.empty() ? chip::validateBModel(bm)
                        : chip::writeBModel(bm, bmodel);
    if (!st.ok())
      return module.emitError() << "cannot write bmodel: " << st.message();
    return success();
  }
};

} // namespace
