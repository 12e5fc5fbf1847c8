//===- Target.cpp - Target description loader -----------------------------===//
#include "tpuc/Chip/Target.h"
#include "tpuc/Chip/Json.h"

#include <cmath>
#include <functional>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

namespace tpuc {
namespace chip {

uint32_t Target::euFor(DType t) const {
  switch (t) {
  case DType::F16:
    return eu_f16;
  case DType::BF16:
    return eu_bf16;
  case DType::INT8:
  case DType::UINT8:
    return eu_int8;
  default:
    return eu_f32;
  }
}

Status Target::validate() const {
  auto bad = [&](const std::string &m) {
    return Status::error("target '" + name + "': " + m);
  };
  if (name.empty())
    return Status::error("target: name is empty");
  if (lanes == 0 || lanes > 1024)
    return bad("lanes must be in [1, 1024]");
  if (lmem_bytes_per_lane == 0 || lmem_bytes_per_lane > (64u << 20))
    return bad("lmem.bytes_per_lane must be in [1, 64 MiB]");
  // The simulator holds all of it; real chips have tens of MiB.
  if (lmemTotalBytes() > (1ull << 30))
    return bad("local memory totals " + std::to_string(lmemTotalBytes()) +
               " bytes (lanes x lmem.bytes_per_lane); at most 1 GiB is supported");
  if (lmem_banks == 0 || (lmem_banks & (lmem_banks - 1)) ||
      lmem_bytes_per_lane % lmem_banks)
    return bad("lmem.banks must be a power of two dividing bytes_per_lane");
  if (!eu_f32 || !eu_f16 || !eu_bf16 || !eu_int8)
    return bad("eu_per_lane entries must be positive");
  if (!(clock_mhz > 0))
    return bad("clock_mhz must be positive");
  if (ddr_bytes == 0)
    return bad("ddr.bytes must be positive");
  if (!(ddr_bytes_per_cycle > 0) || !(gdma_lmem_bytes_per_cycle > 0))
    return bad("bandwidths must be positive");
  if (ddr_burst_bytes == 0)
    return bad("ddr.burst_bytes must be positive");
  if (!(tiu_sfu_factor >= 1) || !(tiu_div_factor >= 1))
    return bad("tiu cost factors must be >= 1");
  return Status::OK();
}

namespace {
// Reads members of one JSON object, rejecting unknown keys so that typos in
// a description do not silently fall back to defaults. Keys starting with
// '_' are free-form comments.
class ObjReader {
public:
  ObjReader(const llvm::json::Value &v, std::string path)
      : v_(v.getAsObject()), path_(std::move(path)) {}
  Status check() const {
    if (!v_)
      return Status::error(path_ + ": expected an object");
    return Status::OK();
  }
  Status num(const char *key, double &out, double lo, double hi) {
    seen_.insert(key);
    const llvm::json::Value *m = v_->get(key);
    if (!m)
      return Status::error(path_ + "." + key + ": missing");
    std::optional<double> d = m->getAsNumber();
    if (!d)
      return Status::error(path_ + "." + key + ": expected a number");
    if (!(*d >= lo && *d <= hi))
      return Status::error(path_ + "." + key + ": value out of range");
    out = *d;
    return Status::OK();
  }
  template <typename T> Status integer(const char *key, T &out, double lo, double hi) {
    double d;
    TPUC_RETURN_IF_ERROR(num(key, d, lo, hi));
    if (std::floor(d) != d)
      return Status::error(path_ + "." + key + ": expected an integer");
    out = static_cast<T>(d);
    return Status::OK();
  }
  Status str(const char *key, std::string &out, bool required) {
    seen_.insert(key);
    const llvm::json::Value *m = v_->get(key);
    if (!m) {
      if (required)
        return Status::error(path_ + "." + key + ": missing");
      return Status::OK();
    }
    std::optional<llvm::StringRef> str = m->getAsString();
    if (!str)
      return Status::error(path_ + "." + key + ": expected a string");
    out = str->str();
    return Status::OK();
  }
  const llvm::json::Value *child(const char *key) {
    seen_.insert(key);
    return v_->get(key);
  }
  Status noUnknown() const {
    // Object iteration order is unspecified: report the first unknown key
    // in sorted order so the message is deterministic.
    std::set<std::string> unknown;
    for (const auto &kv : *v_) {
      llvm::StringRef k = kv.first;
      if (!k.empty() && k[0] != '_' && !seen_.count(k.str()))
        unknown.insert(k.str());
    }
    if (!unknown.empty())
      return Status::error(path_ + ": unknown key \"" + *unknown.begin() + "\"");
    return Status::OK();
  }

private:
  const llvm::json::Object *v_;
  std::string path_;
  std::set<std::string> seen_;
};

Status readSub(ObjReader &parent, const char *key, const std::string &path,
               const std::function<Status(ObjReader &)> &fn) {
  const llvm::json::Value *c = parent.child(key);
  if (!c)
    return Status::error(path + ": missing");
  ObjReader r(*c, path);
  TPUC_RETURN_IF_ERROR(r.check());
  TPUC_RETURN_IF_ERROR(fn(r));
  return r.noUnknown();
}

std::string fmt(double d) {
  if (std::floor(d) == d && std::fabs(d) < 9e15) {
    std::ostringstream os;
    os << static_cast<long long>(d);
    return os.str();
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", d);
  return buf;
}
} // namespace

Status parseTarget(const std::string &json, Target &out) {
  llvm::json::Value root = nullptr;
  TPUC_RETURN_IF_ERROR(parseJson(json, root).withContext("target"));
  ObjReader r(root, "target");
  TPUC_RETURN_IF_ERROR(r.check());
  Target t;
  std::string format;
  TPUC_RETURN_IF_ERROR(r.str("format", format, true));
  if (format != "tpuc-target")
    return Status::error("target.format: expected \"tpuc-target\", got \"" +
                         format + "\"");
  uint32_t version = 0;
  TPUC_RETURN_IF_ERROR(r.integer("version", version, 0, 1e9));
  if (version != kTargetFormatVersion)
    return Status::error("target.version: unsupported version " +
                         std::to_string(version) + " (expected " +
                         std::to_string(kTargetFormatVersion) + ")");
  TPUC_RETURN_IF_ERROR(r.str("name", t.name, true));
  TPUC_RETURN_IF_ERROR(r.str("description", t.description, false));
  TPUC_RETURN_IF_ERROR(r.num("clock_mhz", t.clock_mhz, 1e-3, 1e6));
  TPUC_RETURN_IF_ERROR(r.integer("lanes", t.lanes, 1, 1024));
  TPUC_RETURN_IF_ERROR(readSub(r, "lmem", "target.lmem", [&](ObjReader &o) {
    TPUC_RETURN_IF_ERROR(o.integer("bytes_per_lane", t.lmem_bytes_per_lane, 1, 64.0 * (1 << 20)));
    return o.integer("banks", t.lmem_banks, 1, 1024);
  }));
  TPUC_RETURN_IF_ERROR(readSub(r, "eu_per_lane", "target.eu_per_lane", [&](ObjReader &o) {
    TPUC_RETURN_IF_ERROR(o.integer("f32", t.eu_f32, 1, 1 << 20));
    TPUC_RETURN_IF_ERROR(o.integer("f16", t.eu_f16, 1, 1 << 20));
    TPUC_RETURN_IF_ERROR(o.integer("bf16", t.eu_bf16, 1, 1 << 20));
    return o.integer("int8", t.eu_int8, 1, 1 << 20);
  }));
  TPUC_RETURN_IF_ERROR(readSub(r, "ddr", "target.ddr", [&](ObjReader &o) {
    TPUC_RETURN_IF_ERROR(o.integer("bytes", t.ddr_bytes, 1, 1ull << 40));
    TPUC_RETURN_IF_ERROR(o.num("bandwidth_bytes_per_cycle", t.ddr_bytes_per_cycle, 1e-6, 1e9));
    TPUC_RETURN_IF_ERROR(o.integer("latency_cycles", t.ddr_latency_cycles, 0, 1e9));
    return o.integer("burst_bytes", t.ddr_burst_bytes, 1, 1 << 20);
  }));
  TPUC_RETURN_IF_ERROR(readSub(r, "gdma", "target.gdma", [&](ObjReader &o) {
    TPUC_RETURN_IF_ERROR(o.integer("issue_cycles", t.gdma_issue_cycles, 0, 1e9));
    TPUC_RETURN_IF_ERROR(o.integer("queue_depth", t.gdma_queue_depth, 1, 1024));
    return o.num("lmem_bytes_per_cycle", t.gdma_lmem_bytes_per_cycle, 1e-6, 1e9);
  }));
  TPUC_RETURN_IF_ERROR(readSub(r, "tiu", "target.tiu", [&](ObjReader &o) {
    TPUC_RETURN_IF_ERROR(o.integer("issue_cycles", t.tiu_issue_cycles, 0, 1e9));
    TPUC_RETURN_IF_ERROR(o.num("sfu_cost_factor", t.tiu_sfu_factor, 1, 1e6));
    TPUC_RETURN_IF_ERROR(o.num("div_cost_factor", t.tiu_div_factor, 1, 1e6));
    return o.integer("bank_conflict_penalty_pct", t.bank_conflict_pct, 0, 10000);
  }));
  TPUC_RETURN_IF_ERROR(r.noUnknown());
  TPUC_RETURN_IF_ERROR(t.validate());
  out = t;
  return Status::OK();
}

Status loadTarget(const std::string &path, Target &out) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return Status::error("cannot open target description '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return parseTarget(ss.str(), out).withContext(path);
}

std::string Target::toJson() const {
  std::ostringstream os;
  os << "{\n"
     << "  \"format\": \"tpuc-target\",\n"
     << "  \"version\": " << kTargetFormatVersion << ",\n"
     << "  \"name\": " << jsonQuote(name) << ",\n"
     << "  \"description\": " << jsonQuote(description) << ",\n"
     << "  \"clock_mhz\": " << fmt(clock_mhz) << ",\n"
     << "  \"lanes\": " << lanes << ",\n"
     << "  \"lmem\": {\"bytes_per_lane\": " << lmem_bytes_per_lane
     << ", \"banks\": " << lmem_banks << "},\n"
     << "  \"eu_per_lane\": {\"f32\": " << eu_f32 << ", \"f16\": " << eu_f16
     << ", \"bf16\": " << eu_bf16 << ", \"int8\": " << eu_int8 << "},\n"
     << "  \"ddr\": {\"bytes\": " << ddr_bytes
     << ", \"bandwidth_bytes_per_cycle\": " << fmt(ddr_bytes_per_cycle)
     << ", \"latency_cycles\": " << ddr_latency_cycles
     << ", \"burst_bytes\": " << ddr_burst_bytes << "},\n"
     << "  \"gdma\": {\"issue_cycles\": " << gdma_issue_cycles
     << ", \"queue_depth\": " << gdma_queue_depth
     << ", \"lmem_bytes_per_cycle\": " << fmt(gdma_lmem_bytes_per_cycle)
     << "},\n"
     << "  \"tiu\": {\"issue_cycles\": " << tiu_issue_cycles
     << ", \"sfu_cost_factor\": " << fmt(tiu_sfu_factor)
     << ", \"div_cost_factor\": " << fmt(tiu_div_factor)
     << ", \"bank_conflict_penalty_pct\": " << bank_conflict_pct << "}\n"
     << "}\n";
  return os.str();
}

} // namespace chip
} // namespace tpuc
