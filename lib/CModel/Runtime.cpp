//===- Runtime.cpp - bmodel execution on the cmodel -----------------------===//
#include "tpuc/Chip/Runtime.h"

#include <algorithm>
#include <cstring>

namespace tpuc {
namespace chip {

Status Runtime::load(const std::string &path) {
  BModel m;
  TPUC_RETURN_IF_ERROR(readBModel(path, m));
  model_ = std::move(m);
  loaded_ = true;
  sim_ready_ = false;
  return Status::OK();
}

Status Runtime::loadFromMemory(const uint8_t *data, size_t size) {
  BModel m;
  TPUC_RETURN_IF_ERROR(parseBModel(data, size, m));
  model_ = std::move(m);
  loaded_ = true;
  sim_ready_ = false;
  return Status::OK();
}

Status Runtime::loadModel(BModel m) {
  TPUC_RETURN_IF_ERROR(validateBModel(m));
  model_ = std::move(m);
  loaded_ = true;
  sim_ready_ = false;
  return Status::OK();
}

Status Runtime::prepareMemory() {
  const DdrPlan &plan = model_.plan;
  if (!sim_ready_) {
    TPUC_RETURN_IF_ERROR(sim_.init(model_.target, plan.totalBytes()));
    weights_intact_ = false;
    sim_ready_ = true;
  } else {
    if (plan.activation_size)
      std::memset(sim_.ddr() + plan.activation_addr, 0, plan.activation_size);
    const Target &t = model_.target;
    for (uint32_t lane = 0; lane < t.lanes && lmem_dirty_; ++lane)
      std::memset(sim_.lmem() + uint64_t(lane) * t.lmem_bytes_per_lane, 0, lmem_dirty_);
  }
  if (!weights_intact_)
    TPUC_RETURN_IF_ERROR(sim_.writeDdr(plan.weight_addr, model_.weights.data(), model_.weights.size()));
  weights_intact_ = true;
  return Status::OK();
}

void Runtime::scanWrites(const Network &n, const DdrPlan &plan, const Target &t, bool &weights,
                         uint64_t &lmem_end) {
  weights = false;
  lmem_end = 0;
  for (const auto *stream : {&n.tiu, &n.gdma})
    for (const Instruction &inst : *stream) {
      Extent e;
      if (!operandExtent(inst.dst, t, e).ok()) { // validation rejects it later
        weights = true;
        lmem_end = t.lmem_bytes_per_lane;
        return;
      }
      if (inst.dst.space == Space::LMEM)
        lmem_end = std::max<uint64_t>(lmem_end, uint64_t(std::max<int64_t>(e.hi, 0)));
      else if (inst.dst.space == Space::DDR && plan.weight_size &&
               e.lo < int64_t(plan.weight_addr + plan.weight_size) && e.hi > int64_t(plan.weight_addr))
        weights = true;
    }
  lmem_end = std::min<uint64_t>(lmem_end, t.lmem_bytes_per_lane);
}

Status Runtime::run(size_t net, const std::map<std::string, std::vector<uint8_t>> &in,
                    bool dump_tensors, RunResult &out, const Progress &progress) {
  if (!loaded_)
    return Status::error("no bmodel loaded");
  if (net >= model_.networks.size())
    return Status::error("network index " + std::to_string(net) + " out of range (" +
                         std::to_string(model_.networks.size()) + " networks)");
  const Network &n = model_.networks[net];
  for (const auto &kv : in) {
    bool known = false;
    for (const auto &t : n.inputs)
      known |= t.name == kv.first;
    if (!known)
      return Status::error("unknown input '" + kv.first + "' for network '" + n.name + "'");
  }
  TPUC_RETURN_IF_ERROR(prepareMemory());
  CModel &sim = sim_;
  // Until this run has finished cleanly, memory is in an unknown state.
  sim_ready_ = false;
  bool writes_weights = true;
  scanWrites(n, model_.plan, model_.target, writes_weights, lmem_dirty_);
  weights_intact_ = !writes_weights;
  for (const auto &t : n.inputs) {
    auto it = in.find(t.name);
    if (it == in.end())
      return Status::error("missing input '" + t.name + "'");
    if (it->second.size() != t.byteSize())
      return Status::error("input '" + t.name + "' has " + std::to_string(it->second.size()) +
                           " bytes, expected " + std::to_string(t.byteSize()));
    TPUC_RETURN_IF_ERROR(sim.writeDdr(t.ddr_addr, it->second.data(), it->second.size()));
  }
  out = RunResult();
  auto snapshot = [&](const TensorInfo &t) {
    std::vector<uint8_t> &buf = out.tensors[t.name];
    buf.resize(t.byteSize());
    // Ranges were validated against the plan, so this cannot fail.
    (void)sim.readDdr(t.ddr_addr, buf.data(), buf.size());
  };
  if (dump_tensors)
    for (const auto &t : n.tensors)
      if (t.after_id == 0)
        snapshot(t.info);
  CModel::CommitHook hook;
  const bool dumping = dump_tensors && !n.tensors.empty();
  const uint64_t total = n.tiu.size() + n.gdma.size();
  const uint64_t step = total / 100 + 1;
  uint64_t done = 0;
  if (dumping || progress)
    hook = [&](Engine e, uint32_t id) {
      if (dumping)
        for (const auto &t : n.tensors)
          if (t.engine == e && t.after_id == id)
            snapshot(t.info);
      if (progress && (++done % step == 0 || done == total))
        progress(done, total);
    };
  std::vector<DdrRegion> regions = model_.plan.regions();
  TPUC_RETURN_IF_ERROR(sim.run(n.tiu, n.gdma, out.stats, hook, &regions));
  for (const auto &t : n.outputs) {
    std::vector<uint8_t> &buf = out.outputs[t.name];
    buf.resize(t.byteSize());
    TPUC_RETURN_IF_ERROR(sim.readDdr(t.ddr_addr, buf.data(), buf.size()));
  }
  sim_ready_ = true;
  return Status::OK();
}

} // namespace chip
} // namespace tpuc
