//===- BModel.h - Compiled model container ----------------------*- C++ -*-===//
//
// A bmodel holds everything needed to run a compiled network on the chip or
// the cmodel: the full target description, the DDR memory plan, the weight
// blob, and per network its named inputs/outputs, TIU and GDMA instruction
// streams and a table of named intermediate tensors. Binary layout in
// docs/bmodel.md. Reader and writer never throw; they return Status.
//
// Typical backend use:
//   BModel m; m.target = t; m.plan = {...}; m.weights = blob;
//   Network n; n.name = "main"; n.inputs.push_back({...}); ...
//   StreamBuilder b; ... n.tiu = b.tiuStream(); n.gdma = b.gdmaStream();
//   m.networks.push_back(n);
//   Status s = writeBModel(m, "out.bmodel");
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_CHIP_BMODEL_H
#define TPUC_CHIP_BMODEL_H

#include "tpuc/Chip/ISA.h"
#include "tpuc/Chip/Status.h"
#include "tpuc/Chip/Target.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tpuc {
namespace chip {

constexpr char kBModelMagic[8] = {'T', 'P', 'U', 'C', 'B', 'M', 'D', 'L'};
constexpr uint32_t kBModelVersion = 3;
constexpr size_t kBModelHeaderBytes = 40;
constexpr uint32_t kMaxTensorRank = 8;

/// A tensor stored densely (row-major) in DDR.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<uint32_t> shape;
  float scale = 1.0f;     // real = scale * (q - zero_point) for INT8/UINT8
  int32_t zero_point = 0;
  uint64_t ddr_addr = 0;

  uint64_t numElements() const;
  uint64_t byteSize() const { return numElements() * dtypeSize(dtype); }
};

/// An intermediate tensor the runtime can dump: valid in DDR right after
/// instruction `after_id` of `engine` completes (after_id 0: at start).
struct NamedTensor {
  TensorInfo info;
  Engine engine = Engine::GDMA;
  uint32_t after_id = 0;
};

/// DDR layout: [weight_addr, +weight_size) holds the weight blob;
/// [activation_addr, +activation_size) holds inputs, outputs and
/// intermediates. Regions must not overlap.
struct DdrPlan {
  uint64_t weight_addr = 0, weight_size = 0;
  uint64_t activation_addr = 0, activation_size = 0;
  uint64_t totalBytes() const;
  std::vector<DdrRegion> regions() const;
};

struct Network {
  std::string name;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<Instruction> tiu, gdma;
  std::vector<NamedTensor> tensors;
  /// Lanes the code was generated for. A loaded network always has it; 0 in
  /// a network being built means the model's target (the writer fills it in).
  /// The verifier rejects a network whose lanes differ from the target's: the
  /// same code on another lane count puts channels on other lanes.
  uint32_t lanes = 0;
};

struct BModel {
  Target target;
  DdrPlan plan;
  std::vector<uint8_t> weights; // size == plan.weight_size
  /// The weight tensors inside the blob (ddr_addr, dtype, shape): every
  /// DDR read of the weight region lies inside one and reads its dtype.
  /// Empty: the region is checked as a whole.
  std::vector<TensorInfo> weightTensors;
  std::vector<Network> networks;
  std::string producer; // free text, e.g. compiler version

  /// Index of the network with this name, or -1.
  int findNetwork(const std::string &name) const;
};

/// Semantic checks: target, plan fits the target's DDR, weights size,
/// tensors inside the activation/weight regions, every instruction valid
/// with addresses inside the plan, streams' ids/waits consistent.
Status validateBModel(const BModel &m);

/// Def-use of DDR activation memory, walked in GDMA order (only the GDMA
/// touches DDR): inputs are defined at start; every other activation byte a
/// GDMA reads was stored earlier, as the dtype it is read as; every byte of
/// every output is written, last by a store lying inside the output. Errors
/// name the instructions.
Status checkDdrDataflow(const Network &n, const DdrPlan &plan);

Status serializeBModel(const BModel &m, std::vector<uint8_t> &out,
                       bool validate = true);
Status writeBModel(const BModel &m, const std::string &path);
Status parseBModel(const uint8_t *data, size_t size, BModel &out);
Status readBModel(const std::string &path, BModel &out);

/// FNV-1a 64-bit hash (bmodel checksum).
uint64_t fnv1a64(const uint8_t *data, size_t n);

} // namespace chip
} // namespace tpuc

#endif
