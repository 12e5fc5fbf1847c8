//===- BModel.cpp - bmodel reader and writer ------------------------------===//
#include "tpuc/Chip/BModel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace tpuc {
namespace chip {

uint64_t TensorInfo::numElements() const {
  uint64_t n = 1;
  for (uint32_t d : shape)
    n *= d;
  return n;
}

uint64_t DdrPlan::totalBytes() const {
  return std::max(weight_addr + weight_size, activation_addr + activation_size);
}

std::vector<DdrRegion> DdrPlan::regions() const {
  std::vector<DdrRegion> r;
  if (weight_size)
    r.push_back({weight_addr, weight_addr + weight_size, "weight region"});
  if (activation_size)
    r.push_back({activation_addr, activation_addr + activation_size, "activation region"});
  return r;
}

int BModel::findNetwork(const std::string &name) const {
  for (size_t k = 0; k < networks.size(); ++k)
    if (networks[k].name == name)
      return int(k);
  return -1;
}

uint64_t fnv1a64(const uint8_t *data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// --- Validation -----------------------------------------------------------------

namespace {
Status checkTensor(const TensorInfo &t, const std::string &where,
                   const std::vector<DdrRegion> &regions) {
  std::string w = where + " '" + t.name + "'";
  if (t.name.empty())
    return Status::error(where + ": tensor name is empty");
  if (!isValidDType(uint8_t(t.dtype)))
    return Status::error(w + ": invalid dtype");
  if (t.shape.size() > kMaxTensorRank)
    return Status::error(w + ": rank " + std::to_string(t.shape.size()) + " exceeds " +
                         std::to_string(kMaxTensorRank));
  uint64_t n = 1;
  for (uint32_t d : t.shape) {
    if (d == 0 || d > kMaxDim)
      return Status::error(w + ": invalid dimension " + std::to_string(d));
    n *= d;
    if (n > kMaxElements)
      return Status::error(w + ": too many elements");
  }
  if (!(t.scale > 0) || !std::isfinite(t.scale))
    return Status::error(w + ": scale must be positive and finite");
  uint64_t end = t.ddr_addr + t.byteSize();
  for (const DdrRegion &r : regions)
    if (t.ddr_addr >= r.begin && end <= r.end && t.ddr_addr < end)
      return Status::OK();
  return Status::error(w + ": DDR range [" + std::to_string(t.ddr_addr) + ", " +
                       std::to_string(end) + ") lies outside the allowed DDR regions");
}
bool overlaps(const Extent &e, const TensorInfo &t) {
  return e.lo < int64_t(t.ddr_addr + t.byteSize()) && int64_t(t.ddr_addr) < e.hi;
}

/// The I/O table and the code agree on dtypes: the first DDR access to each
/// input reads it as the input's dtype, the last write to each output stores
/// the output's dtype. Only GDMA touches DDR, so its stream order is the
/// order of every DDR access.
Status checkIoDtypes(const Network &n) {
  Target any; // DDR extents do not depend on the target
  for (const TensorInfo &t : n.inputs) {
    for (size_t k = 0; k < n.gdma.size(); ++k) {
      const Instruction &i = n.gdma[k];
      Extent e;
      bool hit = false;
      for (const Operand &o : i.src)
        if (o.valid() && o.space == Space::DDR && operandExtent(o, any, e).ok() &&
            overlaps(e, t)) {
          if (o.dtype != t.dtype)
            return Status::error("input '" + t.name + "' is " + dtypeName(t.dtype) + " but " +
                                 describeInstruction(i, k) + " reads it as " + dtypeName(o.dtype));
          hit = true;
        }
      if (hit || (i.dst.space == Space::DDR && operandExtent(i.dst, any, e).ok() &&
                  overlaps(e, t)))
        break;
    }
  }
  for (const TensorInfo &t : n.outputs) {
    for (size_t k = n.gdma.size(); k-- > 0;) {
      const Instruction &i = n.gdma[k];
      Extent e;
      if (i.dst.space == Space::DDR && operandExtent(i.dst, any, e).ok() && overlaps(e, t)) {
        if (i.dst.dtype != t.dtype)
          return Status::error("output '" + t.name + "' is " + dtypeName(t.dtype) + " but " +
                               describeInstruction(i, k) + ", its last writer, stores " +
                               dtypeName(i.dst.dtype));
        break;
      }
    }
  }
  return Status::OK();
}
/// Tensor byte spans sorted by start, with the furthest end reached so far:
/// whether some tensor holds [lo, hi) is one binary search.
class Spans {
public:
  explicit Spans(std::vector<const TensorInfo *> ts) : t_(std::move(ts)) {
    std::sort(t_.begin(), t_.end(), [](const TensorInfo *a, const TensorInfo *b) {
      return a->ddr_addr < b->ddr_addr;
    });
    for (size_t k = 0; k < t_.size(); ++k)
      reach_.push_back(std::max(k ? reach_[k - 1] : 0, end(*t_[k])));
  }
  /// A tensor holding [lo, hi) (the latest starting one), or null.
  const TensorInfo *holding(int64_t lo, int64_t hi) const {
    size_t k = size_t(std::upper_bound(t_.begin(), t_.end(), lo,
                                       [](int64_t v, const TensorInfo *t) {
                                         return v < int64_t(t->ddr_addr);
                                       }) - t_.begin());
    while (k-- > 0 && reach_[k] >= hi)
      if (end(*t_[k]) >= hi)
        return t_[k];
    return nullptr;
  }
  bool empty() const { return t_.empty(); }

private:
  static int64_t end(const TensorInfo &t) { return int64_t(t.ddr_addr + t.byteSize()); }
  std::vector<const TensorInfo *> t_;
  std::vector<int64_t> reach_;
};

/// Every DDR access lies inside one tensor the bmodel names: in the
/// activation region an input, an output or a named intermediate; in the
/// weight region a weight tensor, read as its dtype. A view moved past its
/// tensor's end reads or clobbers a neighbour.
Status checkDdrTensors(const Network &n, const BModel &m) {
  std::vector<const TensorInfo *> act;
  for (const TensorInfo &t : n.inputs)
    act.push_back(&t);
  for (const TensorInfo &t : n.outputs)
    act.push_back(&t);
  for (const NamedTensor &t : n.tensors)
    act.push_back(&t.info);
  std::vector<const TensorInfo *> wt;
  for (const TensorInfo &t : m.weightTensors)
    wt.push_back(&t);
  Spans acts(std::move(act)), weights(std::move(wt));
  const DdrPlan &p = m.plan;
  Target any;
  for (size_t k = 0; k < n.gdma.size(); ++k) {
    const Instruction &i = n.gdma[k];
    const Operand *ops[4] = {&i.dst, &i.src[0], &i.src[1], &i.src[2]};
    static const char *names[4] = {"dst", "src0", "src1", "src2"};
    for (int j = 0; j < 4; ++j) {
      Extent e;
      if (ops[j]->space != Space::DDR || !operandExtent(*ops[j], any, e).ok())
        continue;
      bool inWeights = e.lo >= int64_t(p.weight_addr) &&
                       e.lo < int64_t(p.weight_addr + p.weight_size);
      if (inWeights && weights.empty())
        continue;
      const TensorInfo *t = (inWeights ? weights : acts).holding(e.lo, e.hi);
      std::string where = describeInstruction(i, k) + " " + names[j] + ": DDR bytes [" +
                          std::to_string(e.lo) + ", " + std::to_string(e.hi) + ")";
      if (!t)
        return Status::error(where + " lie inside no " +
                             (inWeights ? "weight tensor" : "input, output or named tensor"));
      if (inWeights && ops[j]->dtype != t->dtype)
        return Status::error(where + " read weight '" + t->name + "' of dtype " +
                             dtypeName(t->dtype) + " as " + dtypeName(ops[j]->dtype));
    }
  }
  return Status::OK();
}

} // namespace

Status validateBModel(const BModel &m) {
  TPUC_RETURN_IF_ERROR(m.target.validate());
  const DdrPlan &p = m.plan;
  if (p.weight_addr > (1ull << 40) || p.weight_size > (1ull << 40) ||
      p.activation_addr > (1ull << 40) || p.activation_size > (1ull << 40))
    return Status::error("DDR plan: addresses and sizes must be below 1 TiB");
  if (p.weight_size && p.activation_size &&
      p.weight_addr < p.activation_addr + p.activation_size &&
      p.activation_addr < p.weight_addr + p.weight_size)
    return Status::error("DDR plan: weight and activation regions overlap");
  if (p.totalBytes() > m.target.ddr_bytes)
    return Status::error("DDR plan needs " + std::to_string(p.totalBytes()) +
                         " bytes but target '" + m.target.name + "' has " +
                         std::to_string(m.target.ddr_bytes));
  if (m.weights.size() != p.weight_size)
    return Status::error("weight blob has " + std::to_string(m.weights.size()) +
                         " bytes but the DDR plan says " + std::to_string(p.weight_size));
  if (m.networks.empty())
    return Status::error("bmodel has no network");
  {
    std::vector<DdrRegion> wr;
    if (p.weight_size)
      wr.push_back({p.weight_addr, p.weight_addr + p.weight_size, "weight region"});
    for (const TensorInfo &t : m.weightTensors)
      TPUC_RETURN_IF_ERROR(checkTensor(t, "weight table", wr));
  }
  std::vector<DdrRegion> all = p.regions();
  std::vector<DdrRegion> act;
  if (p.activation_size)
    act.push_back({p.activation_addr, p.activation_addr + p.activation_size, "activation region"});
  std::set<std::string> netNames;
  for (const Network &n : m.networks) {
    std::string where = "network '" + n.name + "'";
    if (n.name.empty() || !netNames.insert(n.name).second)
      return Status::error(where + ": network names must be non-empty and unique");
    if (n.inputs.empty() || n.outputs.empty())
      return Status::error(where + ": a network needs at least one input and one output");
    if (n.lanes && n.lanes != m.target.lanes)
      return Status::error(where + ": its code was generated for " + std::to_string(n.lanes) +
                           " lanes but target '" + m.target.name + "' has " +
                           std::to_string(m.target.lanes));
    std::set<std::string> io;
    for (const TensorInfo &t : n.inputs) {
      TPUC_RETURN_IF_ERROR(checkTensor(t, where + " input", act));
      if (!io.insert(t.name).second)
        return Status::error(where + ": duplicate input/output name '" + t.name + "'");
    }
    for (const TensorInfo &t : n.outputs) {
      TPUC_RETURN_IF_ERROR(checkTensor(t, where + " output", act));
      if (!io.insert(t.name).second && true) {
        // An output may alias an input name only if it is the same tensor.
        bool same = false;
        for (const TensorInfo &i : n.inputs)
          same |= i.name == t.name && i.ddr_addr == t.ddr_addr;
        if (!same)
          return Status::error(where + ": duplicate input/output name '" + t.name + "'");
      }
    }
    std::set<std::string> named;
    for (const NamedTensor &t : n.tensors) {
      TPUC_RETURN_IF_ERROR(checkTensor(t.info, where + " tensor", all));
      if (!named.insert(t.info.name).second)
        return Status::error(where + ": duplicate named tensor '" + t.info.name + "'");
      size_t len = t.engine == Engine::TIU ? n.tiu.size() : n.gdma.size();
      if (t.after_id > len)
        return Status::error(where + " tensor '" + t.info.name + "': after_id " +
                             std::to_string(t.after_id) + " exceeds the " +
                             engineName(t.engine) + " stream length " + std::to_string(len));
    }
    TPUC_RETURN_IF_ERROR(validateStreams(n.tiu, n.gdma).withContext(where));
    for (size_t k = 0; k < n.tiu.size(); ++k)
      TPUC_RETURN_IF_ERROR(validateInstruction(n.tiu[k], k, m.target, all).withContext(where));
    for (size_t k = 0; k < n.gdma.size(); ++k) {
      TPUC_RETURN_IF_ERROR(validateInstruction(n.gdma[k], k, m.target, all).withContext(where));
      // Weights are read-only: every DDR write lands in the activation region.
      const Operand &d = n.gdma[k].dst;
      Extent e;
      if (d.space == Space::DDR && operandExtent(d, m.target, e).ok() &&
          (act.empty() || e.lo < int64_t(act[0].begin) || e.hi > int64_t(act[0].end)))
        return Status::error(where + ": " + describeInstruction(n.gdma[k], k) + " writes DDR [" +
                             std::to_string(e.lo) + ", " + std::to_string(e.hi) +
                             ") outside the activation region");
    }
    TPUC_RETURN_IF_ERROR(checkIoDtypes(n).withContext(where));
    TPUC_RETURN_IF_ERROR(checkDdrTensors(n, m).withContext(where));
    TPUC_RETURN_IF_ERROR(checkHazards(n.tiu, n.gdma, m.target).withContext(where));
    TPUC_RETURN_IF_ERROR(checkDataflow(n.tiu, n.gdma, m.target).withContext(where));
    TPUC_RETURN_IF_ERROR(checkDdrDataflow(n, p).withContext(where));
  }
  return Status::OK();
}

// --- Serialization ----------------------------------------------------------------

namespace {
constexpr uint32_t tag(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 |
         uint32_t(uint8_t(s[2])) << 16 | uint32_t(uint8_t(s[3])) << 24;
}
constexpr uint32_t kTagTarget = tag("TRGT"), kTagPlan = tag("PLAN"),
                   kTagWeights = tag("WGHT"), kTagNetwork = tag("NETW"),
                   kTagMeta = tag("META"), kTagWeightTable = tag("WTAB");

struct Out {
  std::vector<uint8_t> &b;
  void u8(uint8_t v) { b.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      b.push_back(uint8_t(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      b.push_back(uint8_t(v >> (8 * i)));
  }
  void f32(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u32(u);
  }
  void str(const std::string &s) {
    u32(uint32_t(s.size()));
    b.insert(b.end(), s.begin(), s.end());
  }
  void bytes(const uint8_t *p, size_t n) { b.insert(b.end(), p, p + n); }
  void tensor(const TensorInfo &t) {
    str(t.name);
    u8(uint8_t(t.dtype));
    u8(uint8_t(t.shape.size()));
    for (uint32_t d : t.shape)
      u32(d);
    f32(t.scale);
    u32(uint32_t(t.zero_point));
    u64(t.ddr_addr);
  }
};

struct In {
  In(const uint8_t *data, size_t n, size_t start, std::string w)
      : p(data), size(n), pos(start), where(std::move(w)) {}
  const uint8_t *p;
  size_t size, pos;
  std::string where;
  Status err;

  bool need(size_t n, const char *field) {
    if (!err.ok())
      return false;
    if (n > size - pos) {
      err = Status::error(where + ": truncated reading " + field + " at offset " +
                          std::to_string(pos) + " (need " + std::to_string(n) +
                          " bytes, " + std::to_string(size - pos) + " left)");
      return false;
    }
    return true;
  }
  uint8_t u8(const char *f) {
    if (!need(1, f))
      return 0;
    return p[pos++];
  }
  uint32_t u32(const char *f) {
    if (!need(4, f))
      return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= uint32_t(p[pos + i]) << (8 * i);
    pos += 4;
    return v;
  }
  uint64_t u64(const char *f) {
    if (!need(8, f))
      return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= uint64_t(p[pos + i]) << (8 * i);
    pos += 8;
    return v;
  }
  float f32(const char *f) {
    uint32_t u = u32(f);
    float x;
    std::memcpy(&x, &u, 4);
    return x;
  }
  std::string str(const char *f) {
    uint32_t n = u32(f);
    if (!need(n, f))
      return std::string();
    std::string s(reinterpret_cast<const char *>(p + pos), n);
    pos += n;
    return s;
  }
  void tensor(TensorInfo &t) {
    t.name = str("tensor name");
    uint8_t dt = u8("tensor dtype");
    if (err.ok() && !isValidDType(dt))
      err = Status::error(where + ": tensor '" + t.name + "' has invalid dtype code " + std::to_string(dt));
    t.dtype = static_cast<DType>(dt);
    uint8_t rank = u8("tensor rank");
    if (err.ok() && rank > kMaxTensorRank)
      err = Status::error(where + ": tensor '" + t.name + "' rank " + std::to_string(rank) + " too large");
    if (!err.ok())
      return;
    t.shape.resize(rank);
    for (uint8_t k = 0; k < rank; ++k)
      t.shape[k] = u32("tensor shape");
    t.scale = f32("tensor scale");
    t.zero_point = int32_t(u32("tensor zero point"));
    t.ddr_addr = u64("tensor address");
  }
};

void section(Out &o, uint32_t t, const std::vector<uint8_t> &body) {
  o.u32(t);
  o.u32(0);
  o.u64(body.size());
  o.bytes(body.data(), body.size());
}
} // namespace

Status serializeBModel(const BModel &m, std::vector<uint8_t> &outBytes, bool validate) {
  if (validate)
    TPUC_RETURN_IF_ERROR(validateBModel(m).withContext("refusing to write invalid bmodel"));
  std::vector<uint8_t> payload;
  Out pl{payload};
  uint32_t count = 0;
  {
    std::string js = m.target.toJson();
    section(pl, kTagTarget, std::vector<uint8_t>(js.begin(), js.end()));
    ++count;
  }
  {
    std::vector<uint8_t> b;
    Out o{b};
    o.u64(m.plan.weight_addr);
    o.u64(m.plan.weight_size);
    o.u64(m.plan.activation_addr);
    o.u64(m.plan.activation_size);
    section(pl, kTagPlan, b);
    ++count;
  }
  section(pl, kTagWeights, m.weights);
  ++count;
  {
    std::vector<uint8_t> b;
    Out o{b};
    o.u32(uint32_t(m.weightTensors.size()));
    for (const TensorInfo &t : m.weightTensors)
      o.tensor(t);
    section(pl, kTagWeightTable, b);
    ++count;
  }
  for (const Network &n : m.networks) {
    std::vector<uint8_t> b;
    Out o{b};
    o.str(n.name);
    o.u32(uint32_t(n.inputs.size()));
    for (const auto &t : n.inputs)
      o.tensor(t);
    o.u32(uint32_t(n.outputs.size()));
    for (const auto &t : n.outputs)
      o.tensor(t);
    o.u32(uint32_t(n.tensors.size()));
    for (const auto &t : n.tensors) {
      o.tensor(t.info);
      o.u8(uint8_t(t.engine));
      o.u32(t.after_id);
    }
    o.u32(kIsaVersion);
    o.u32(uint32_t(kInstBytes));
    o.u32(n.lanes ? n.lanes : m.target.lanes);
    o.u32(uint32_t(n.tiu.size()));
    o.u32(uint32_t(n.gdma.size()));
    uint8_t rec[kInstBytes];
    for (const auto &i : n.tiu) {
      encodeInstruction(i, rec);
      o.bytes(rec, kInstBytes);
    }
    for (const auto &i : n.gdma) {
      encodeInstruction(i, rec);
      o.bytes(rec, kInstBytes);
    }
    section(pl, kTagNetwork, b);
    ++count;
  }
  {
    std::vector<uint8_t> b(m.producer.begin(), m.producer.end());
    section(pl, kTagMeta, b);
    ++count;
  }
  outBytes.clear();
  Out h{outBytes};
  h.bytes(reinterpret_cast<const uint8_t *>(kBModelMagic), 8);
  h.u32(kBModelVersion);
  h.u32(uint32_t(kBModelHeaderBytes));
  h.u64(payload.size());
  h.u64(fnv1a64(payload.data(), payload.size()));
  h.u32(count);
  h.u32(0);
  h.bytes(payload.data(), payload.size());
  return Status::OK();
}

Status writeBModel(const BModel &m, const std::string &path) {
  std::vector<uint8_t> bytes;
  TPUC_RETURN_IF_ERROR(serializeBModel(m, bytes));
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f)
    return Status::error("cannot open '" + path + "' for writing");
  f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  f.close();
  if (!f)
    return Status::error("failed writing '" + path + "'");
  return Status::OK();
}

Status parseBModel(const uint8_t *data, size_t size, BModel &out) {
  if (size < kBModelHeaderBytes)
    return Status::error("truncated bmodel: " + std::to_string(size) +
                         " bytes is shorter than the " + std::to_string(kBModelHeaderBytes) +
                         "-byte header");
  if (std::memcmp(data, kBModelMagic, 8) != 0)
    return Status::error("not a tpuc bmodel (bad magic)");
  In h{data, size, 8, "header"};
  uint32_t version = h.u32("version");
  uint32_t hdr = h.u32("header size");
  uint64_t plen = h.u64("payload size");
  uint64_t sum = h.u64("checksum");
  uint32_t count = h.u32("section count");
  uint32_t reserved = h.u32("reserved");
  if (version != kBModelVersion)
    return Status::error("unsupported bmodel version " + std::to_string(version) +
                         " (this reader supports version " + std::to_string(kBModelVersion) +
                         "; recompile the model with this tpuc)");
  if (hdr != kBModelHeaderBytes)
    return Status::error("bad header size " + std::to_string(hdr));
  if (reserved != 0)
    return Status::error("header: reserved field is " + std::to_string(reserved) + ", not 0");
  if (plen != size - kBModelHeaderBytes)
    return Status::error("truncated or padded bmodel: header declares a payload of " +
                         std::to_string(plen) + " bytes but the file holds " +
                         std::to_string(size - kBModelHeaderBytes));
  const uint8_t *payload = data + kBModelHeaderBytes;
  uint64_t actual = fnv1a64(payload, size_t(plen));
  if (actual != sum)
    return Status::error("bmodel checksum mismatch (file is corrupted): stored 0x" + [&] {
      std::ostringstream os;
      os << std::hex << sum << ", computed 0x" << actual;
      return os.str();
    }());

  BModel m;
  bool haveTarget = false, havePlan = false, haveWeights = false, haveWeightTable = false;
  std::set<uint32_t> singles; // every section but NETW appears at most once
  In s{payload, size_t(plen), 0, "bmodel"};
  for (uint32_t k = 0; k < count; ++k) {
    uint32_t t = s.u32("section tag");
    uint32_t flags = s.u32("section flags");
    uint64_t len = s.u64("section length");
    if (!s.err.ok())
      return s.err;
    if (flags != 0)
      return Status::error("section " + std::to_string(k) + ": flags are " +
                           std::to_string(flags) + ", not 0");
    if (len > s.size - s.pos)
      return Status::error("section " + std::to_string(k) + " length " + std::to_string(len) +
                           " exceeds the remaining " + std::to_string(s.size - s.pos) + " bytes");
    const uint8_t *body = payload + s.pos;
    s.pos += size_t(len);
    char name[5] = {char(t), char(t >> 8), char(t >> 16), char(t >> 24), 0};
    In b{body, size_t(len), 0, std::string("section ") + name};
    if (t != kTagNetwork && !singles.insert(t).second)
      return Status::error(std::string("duplicate section '") + name + "'");
    if (t == kTagTarget) {
      std::string js(reinterpret_cast<const char *>(body), size_t(len));
      TPUC_RETURN_IF_ERROR(parseTarget(js, m.target).withContext("embedded target"));
      haveTarget = true;
    } else if (t == kTagPlan) {
      m.plan.weight_addr = b.u64("weight_addr");
      m.plan.weight_size = b.u64("weight_size");
      m.plan.activation_addr = b.u64("activation_addr");
      m.plan.activation_size = b.u64("activation_size");
      havePlan = true;
    } else if (t == kTagWeights) {
      m.weights.assign(body, body + len);
      haveWeights = true;
    } else if (t == kTagWeightTable) {
      uint32_t nw = b.u32("weight table count");
      for (uint32_t i = 0; i < nw && b.err.ok(); ++i) {
        m.weightTensors.emplace_back();
        b.tensor(m.weightTensors.back());
      }
      if (b.err.ok() && b.pos != b.size)
        return Status::error("section WTAB: " + std::to_string(b.size - b.pos) +
                             " unexpected trailing bytes");
      haveWeightTable = true;
    } else if (t == kTagMeta) {
      m.producer.assign(reinterpret_cast<const char *>(body), size_t(len));
    } else if (t == kTagNetwork) {
      Network n;
      n.name = b.str("network name");
      b.where = "network '" + n.name + "'";
      uint32_t ni = b.u32("input count");
      for (uint32_t i = 0; i < ni && b.err.ok(); ++i) {
        n.inputs.emplace_back();
        b.tensor(n.inputs.back());
      }
      uint32_t no = b.u32("output count");
      for (uint32_t i = 0; i < no && b.err.ok(); ++i) {
        n.outputs.emplace_back();
        b.tensor(n.outputs.back());
      }
      uint32_t nt = b.u32("tensor count");
      for (uint32_t i = 0; i < nt && b.err.ok(); ++i) {
        n.tensors.emplace_back();
        b.tensor(n.tensors.back().info);
        uint8_t e = b.u8("tensor engine");
        if (b.err.ok() && e > 1)
          return Status::error(b.where + ": tensor '" + n.tensors.back().info.name +
                               "' has invalid engine " + std::to_string(e));
        n.tensors.back().engine = static_cast<Engine>(e);
        n.tensors.back().after_id = b.u32("tensor after_id");
      }
      uint32_t isa = b.u32("ISA version");
      uint32_t rec = b.u32("instruction size");
      n.lanes = b.u32("lanes");
      uint32_t ntiu = b.u32("TIU count");
      uint32_t ngdma = b.u32("GDMA count");
      if (!b.err.ok())
        return b.err;
      if (isa != kIsaVersion)
        return Status::error(b.where + ": unsupported ISA version " + std::to_string(isa));
      if (rec != kInstBytes)
        return Status::error(b.where + ": instruction size " + std::to_string(rec) +
                             " != " + std::to_string(kInstBytes));
      if (n.lanes == 0)
        return Status::error(b.where + ": lane count is 0");
      uint64_t need = (uint64_t(ntiu) + ngdma) * kInstBytes;
      if (need > b.size - b.pos)
        return Status::error(b.where + ": truncated instruction streams (" + std::to_string(ntiu) +
                             " TIU + " + std::to_string(ngdma) + " GDMA records need " +
                             std::to_string(need) + " bytes, " +
                             std::to_string(b.size - b.pos) + " left)");
      for (uint32_t i = 0; i < ntiu + ngdma; ++i) {
        Instruction inst;
        Status st = decodeInstruction(body + b.pos, inst);
        if (!st.ok())
          return Status::error(b.where + ": " + (i < ntiu ? "TIU" : "GDMA") +
                               " instruction #" + std::to_string(i < ntiu ? i : i - ntiu) +
                               ": " + st.message());
        (i < ntiu ? n.tiu : n.gdma).push_back(inst);
        b.pos += kInstBytes;
      }
      if (b.pos != b.size)
        return Status::error(b.where + ": " + std::to_string(b.size - b.pos) +
                             " unexpected trailing bytes");
      m.networks.push_back(std::move(n));
    } else {
      return Status::error(std::string("unknown section '") + name + "'");
    }
    if (!b.err.ok())
      return b.err;
  }
  if (s.pos != s.size)
    return Status::error("trailing bytes after the last section");
  if (!haveTarget || !havePlan || !haveWeights || !haveWeightTable)
    return Status::error("bmodel lacks a required section (TRGT, PLAN, WGHT, WTAB)");
  TPUC_RETURN_IF_ERROR(validateBModel(m).withContext("invalid bmodel"));
  out = std::move(m);
  return Status::OK();
}

Status readBModel(const std::string &path, BModel &out) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return Status::error("cannot open bmodel '" + path + "'");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parseBModel(bytes.data(), bytes.size(), out).withContext(path);
}

} // namespace chip
} // namespace tpuc
