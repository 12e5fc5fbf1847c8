//===- Runtime.cpp - bmodel execution on the cmodel -----------------------===//
#include "tpuc/Chip/Runtime.h"

#include <cstring>

namespace tpuc {
namespace chip {

Status Runtime::load(const std::string &path) {
  BModel m;
  TPUC_RETURN_IF_ERROR(readBModel(path, m));
  model_ = std::move(m);
  loaded_ = true;
  return Status::OK();
}

Status Runtime::loadFromMemory(const uint8_t *data, size_t size) {
  BModel m;
  TPUC_RETURN_IF_ERROR(parseBModel(data, size, m));
  model_ = std::move(m);
  loaded_ = true;
  return Status::OK();
}

Status Runtime::loadModel(BModel m) {
  TPUC_RETURN_IF_ERROR(validateBModel(m));
  model_ = std::move(m);
  loaded_ = true;
  return Status::OK();
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
  CModel sim;
  TPUC_RETURN_IF_ERROR(sim.init(model_.target, model_.plan.totalBytes()));
  TPUC_RETURN_IF_ERROR(sim.writeDdr(model_.plan.weight_addr, model_.weights.data(),
                                    model_.weights.size()));
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
  return Status::OK();
}

} // namespace chip
} // namespace tpuc
