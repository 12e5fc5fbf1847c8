//===- CModel.cpp - Functional and timing simulation ----------------------===//
//
// Execution model: each engine executes its stream in order, one
// instruction at a time. An instruction starts at max(engine free, end of
// the instruction it waits for). It reads its operands at its start cycle
// (computing the full result into a pending buffer) and its result is
// written to memory at its end cycle. Pending results are committed before
// any instruction that starts at or after their end cycle reads memory, so
// the data a consumer sees depends on the synchronisation exactly as on
// hardware with in-order engines.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Chip/CModel.h"
#include "tpuc/Chip/Float16.h"
#include "tpuc/Chip/Json.h"
#include "tpuc/Chip/Log.h"
#include "tpuc/Chip/QuantMath.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace tpuc {
namespace chip {

struct CModel::Pending {
  Operand dst;
  std::vector<uint8_t> data; // dense NCHW elements of dst.dtype
  Engine engine;
  uint32_t id;
  uint64_t end;
  uint64_t seq;
};

namespace {

// --- Element conversion -------------------------------------------------------

inline float loadF(const uint8_t *p, DType t) {
  switch (t) {
  case DType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case DType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16ToF32(h);
  }
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bf16ToF32(h);
  }
  case DType::INT8:
    return float(int8_t(*p));
  case DType::UINT8:
    return float(*p);
  case DType::INT32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return float(v);
  }
  default:
    return 0.f;
  }
}

inline int64_t loadI(const uint8_t *p, DType t) {
  switch (t) {
  case DType::INT8:
    return int8_t(*p);
  case DType::UINT8:
    return *p;
  case DType::INT32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  default:
    return static_cast<int64_t>(loadF(p, t));
  }
}

inline void storeInt(uint8_t *p, DType t, int64_t v) {
  switch (t) {
  case DType::INT8:
    *p = uint8_t(int8_t(saturate(v, t)));
    return;
  case DType::UINT8:
    *p = uint8_t(saturate(v, t));
    return;
  case DType::INT32: {
    int32_t x = int32_t(saturate(v, t));
    std::memcpy(p, &x, 4);
    return;
  }
  case DType::F32: {
    float f = float(v);
    std::memcpy(p, &f, 4);
    return;
  }
  case DType::F16: {
    uint16_t h = f32ToF16(float(v));
    std::memcpy(p, &h, 2);
    return;
  }
  case DType::BF16: {
    uint16_t h = f32ToBF16(float(v));
    std::memcpy(p, &h, 2);
    return;
  }
  default:
    return;
  }
}

/// Stores a float result; float->int uses `mode` and saturates.
inline void storeF(uint8_t *p, DType t, float f, RoundMode mode) {
  switch (t) {
  case DType::F32:
    std::memcpy(p, &f, 4);
    return;
  case DType::F16: {
    uint16_t h = f32ToF16(f);
    std::memcpy(p, &h, 2);
    return;
  }
  case DType::BF16: {
    uint16_t h = f32ToBF16(f);
    std::memcpy(p, &h, 2);
    return;
  }
  default:
    storeInt(p, t, roundToInt(f, mode, t));
  }
}

inline uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/// Channel slots the busiest lane holds: the TIU processes lanes in
/// parallel, so this is the number of sequential channel passes.
inline uint64_t laneRows(const Operand &o, const Target &t) {
  return ceilDiv(uint64_t(o.start_lane) + o.shape[1], t.lanes);
}
inline uint64_t perChannel(const Operand &o) {
  return uint64_t(o.shape[0]) * o.shape[2] * o.shape[3];
}

bool isSfu(ActOp a) {
  switch (a) {
  case ActOp::Relu:
  case ActOp::LeakyRelu:
  case ActOp::Abs:
  case ActOp::Neg:
  case ActOp::Square:
  case ActOp::Clip:
  case ActOp::HardSigmoid:
    return false;
  default:
    return true;
  }
}

/// Bytes the DDR side really transfers: contiguous runs are rounded up to
/// whole bursts, so strided access costs more than dense access.
uint64_t ddrEffectiveBytes(const Operand &o, uint64_t elems, uint32_t burst) {
  uint64_t es = dtypeSize(o.dtype);
  uint64_t run = 1;
  if (o.stride[3] == 1) {
    run = o.shape[3];
    if (int64_t(o.stride[2]) == int64_t(run)) {
      run *= o.shape[2];
      if (int64_t(o.stride[1]) == int64_t(run)) {
        run *= o.shape[1];
        if (int64_t(o.stride[0]) == int64_t(run))
          run *= o.shape[0];
      }
    }
  }
  uint64_t runs = ceilDiv(elems, run);
  return runs * ceilDiv(run * es, burst) * burst;
}

} // namespace

uint64_t instructionCycles(const Instruction &inst, const Target &t,
                           uint64_t *work, bool *bank_conflict) {
  const Operand &d = inst.dst, &a = inst.src[0], &b = inst.src[1];
  if (bank_conflict)
    *bank_conflict = false;
  if (inst.op == Opcode::DmaGather) {
    // As dma_move, plus reading the indices. Gathered source rows are
    // contiguous only inside the gather axis: a zero stride there keeps
    // the burst runs from merging across it.
    uint64_t elems = d.numElements(), es = dtypeSize(d.dtype);
    Operand rows = a;
    for (int k = 0; k < 4; ++k)
      rows.shape[k] = d.shape[k];
    rows.stride[inst.iparam[gather_param::Axis] & 3] = 0;
    uint64_t bytes = elems * es, idxBytes = b.numElements() * dtypeSize(b.dtype);
    uint64_t eff = std::max(bytes, ddrEffectiveBytes(rows, elems, t.ddr_burst_bytes));
    if (d.space == Space::DDR)
      eff = std::max(eff, ddrEffectiveBytes(d, elems, t.ddr_burst_bytes));
    eff += std::max(idxBytes, ddrEffectiveBytes(b, b.numElements(), t.ddr_burst_bytes));
    if (work)
      *work = bytes + idxBytes;
    return t.gdma_issue_cycles + t.ddr_latency_cycles +
           static_cast<uint64_t>(std::ceil(double(eff) / t.ddr_bytes_per_cycle));
  }
  if (inst.engine == Engine::GDMA) {
    uint64_t elems = d.numElements();
    bool ddr = d.space == Space::DDR || (a.valid() && a.space == Space::DDR);
    uint64_t es = dtypeSize(d.dtype);
    if (a.valid())
      es = std::max<uint64_t>(es, dtypeSize(a.dtype));
    uint64_t bytes = elems * es;
    uint64_t eff = bytes;
    if (d.space == Space::DDR)
      eff = std::max(eff, ddrEffectiveBytes(d, elems, t.ddr_burst_bytes));
    if (a.valid() && a.space == Space::DDR)
      eff = std::max(eff, ddrEffectiveBytes(a, a.numElements(), t.ddr_burst_bytes));
    double bw = ddr ? t.ddr_bytes_per_cycle : t.gdma_lmem_bytes_per_cycle;
    if (work)
      *work = bytes;
    return t.gdma_issue_cycles + (ddr ? t.ddr_latency_cycles : 0) +
           static_cast<uint64_t>(std::ceil(double(eff) / bw));
  }

  uint64_t w = 0, eu = 1;
  double factor = 1.0;
  auto minEu = [&](std::initializer_list<const Operand *> ops) {
    uint64_t e = UINT64_MAX;
    for (const Operand *o : ops)
      if (o->valid())
        e = std::min<uint64_t>(e, t.euFor(o->dtype));
    return e;
  };
  uint64_t cycles_work = 0;
  switch (inst.op) {
  case Opcode::Conv: {
    uint64_t icg = a.shape[1] / std::max(1, inst.iparam[conv_param::Groups]);
    uint64_t per = perChannel(d) * icg * b.shape[2] * b.shape[3];
    w = per * d.shape[1];
    eu = t.euFor(a.dtype);
    cycles_work = laneRows(d, t) * per;
    break;
  }
  case Opcode::MatMul: {
    uint64_t per = uint64_t(d.shape[0]) * d.shape[3] * a.shape[3];
    w = per * d.shape[1];
    eu = t.euFor(a.dtype);
    cycles_work = laneRows(d, t) * per;
    break;
  }
  case Opcode::Pool: {
    uint64_t per = perChannel(d) * inst.iparam[pool_param::KH] * inst.iparam[pool_param::KW];
    w = per * d.shape[1];
    eu = t.euFor(a.dtype);
    cycles_work = laneRows(d, t) * per;
    break;
  }
  case Opcode::Reduce:
    w = a.numElements();
    eu = t.euFor(a.dtype);
    cycles_work = laneRows(a, t) * perChannel(a);
    if (inst.iparam[0] == 1) // cross-lane reduction tree
      cycles_work += t.lanes;
    break;
  default: // elementwise family
    w = d.numElements();
    eu = minEu({&d, &a, &b});
    cycles_work = laneRows(d, t) * perChannel(d);
    if (inst.op == Opcode::Active && isSfu(static_cast<ActOp>(inst.sub_op)))
      factor = t.tiu_sfu_factor;
    if (inst.op == Opcode::Binary && inst.sub_op == uint8_t(BinaryOp::Div))
      factor = t.tiu_div_factor;
    break;
  }
  double compute = std::ceil(double(cycles_work) / double(eu) * factor);
  // Two sources starting in the same LMEM bank are read through one port.
  if (a.valid() && b.valid() && a.space == Space::LMEM && b.space == Space::LMEM &&
      a.addr != b.addr && a.addr / t.bankBytes() == b.addr / t.bankBytes()) {
    compute = std::ceil(compute * (1.0 + t.bank_conflict_pct / 100.0));
    if (bank_conflict)
      *bank_conflict = true;
  }
  if (work)
    *work = w;
  return t.tiu_issue_cycles + std::max<uint64_t>(1, static_cast<uint64_t>(compute));
}

// --- CModel ---------------------------------------------------------------------

Status CModel::init(const Target &t, uint64_t ddr_bytes) {
  TPUC_RETURN_IF_ERROR(t.validate());
  target_ = t;
  if (ddr_bytes > t.ddr_bytes)
    return Status::error("requested DDR size " + std::to_string(ddr_bytes) +
                         " exceeds the target's DDR (" + std::to_string(t.ddr_bytes) + " bytes)");
  ddr_.reset(static_cast<uint8_t *>(std::calloc(std::max<uint64_t>(ddr_bytes, 1), 1)));
  lmem_.reset(static_cast<uint8_t *>(std::calloc(t.lmemTotalBytes(), 1)));
  if (!ddr_ || !lmem_)
    return Status::error("cannot allocate simulated " + std::string(!ddr_ ? "DDR (" : "local memory (") +
                         std::to_string(!ddr_ ? ddr_bytes : t.lmemTotalBytes()) + " bytes)");
  ddr_size_ = ddr_bytes;
  return Status::OK();
}

Status CModel::writeDdr(uint64_t addr, const void *data, uint64_t n) {
  if (addr > ddr_size_ || n > ddr_size_ - addr)
    return Status::error("DDR write [" + std::to_string(addr) + ", +" + std::to_string(n) +
                         ") exceeds DDR size " + std::to_string(ddr_size_));
  if (n)
    std::memcpy(ddr_.get() + addr, data, n);
  return Status::OK();
}

Status CModel::readDdr(uint64_t addr, void *data, uint64_t n) const {
  if (addr > ddr_size_ || n > ddr_size_ - addr)
    return Status::error("DDR read [" + std::to_string(addr) + ", +" + std::to_string(n) +
                         ") exceeds DDR size " + std::to_string(ddr_size_));
  if (n)
    std::memcpy(data, ddr_.get() + addr, n);
  return Status::OK();
}

namespace {
/// Resolves element addresses of validated operands.
struct Mem {
  uint8_t *ddr;
  uint8_t *lmem;
  uint64_t lane_bytes;
  uint32_t lanes;

  uint8_t *at(const Operand &o, uint64_t n, uint64_t c, uint64_t h, uint64_t w) const {
    int64_t es = int64_t(dtypeSize(o.dtype));
    if (o.space == Space::DDR)
      return ddr + o.addr +
             (int64_t(n) * o.stride[0] + int64_t(c) * o.stride[1] +
              int64_t(h) * o.stride[2] + int64_t(w) * o.stride[3]) * es;
    uint64_t lc = o.start_lane + c;
    uint64_t lane = lc % lanes, slot = lc / lanes;
    return lmem + lane * lane_bytes + o.addr +
           (int64_t(n) * o.stride[0] + int64_t(slot) * o.stride[1] +
            int64_t(h) * o.stride[2] + int64_t(w) * o.stride[3]) * es;
  }

  /// Visits every element of `shape` reading operand o with broadcasting
  /// (dims of size 1 in o repeat).
  template <typename F> void forEach(const Operand &o, const uint32_t *shape, F fn) const {
    uint64_t idx = 0;
    for (uint64_t n = 0; n < shape[0]; ++n)
      for (uint64_t c = 0; c < shape[1]; ++c)
        for (uint64_t h = 0; h < shape[2]; ++h)
          for (uint64_t w = 0; w < shape[3]; ++w)
            fn(idx++, at(o, o.shape[0] == 1 ? 0 : n, o.shape[1] == 1 ? 0 : c,
                         o.shape[2] == 1 ? 0 : h, o.shape[3] == 1 ? 0 : w));
  }

  std::vector<float> gatherF(const Operand &o, const uint32_t *shape) const {
    std::vector<float> v(uint64_t(shape[0]) * shape[1] * shape[2] * shape[3]);
    DType t = o.dtype;
    forEach(o, shape, [&](uint64_t i, const uint8_t *p) { v[i] = loadF(p, t); });
    return v;
  }
  std::vector<float> gatherF(const Operand &o) const { return gatherF(o, o.shape); }
  std::vector<int64_t> gatherI(const Operand &o, const uint32_t *shape) const {
    std::vector<int64_t> v(uint64_t(shape[0]) * shape[1] * shape[2] * shape[3]);
    DType t = o.dtype;
    forEach(o, shape, [&](uint64_t i, const uint8_t *p) { v[i] = loadI(p, t); });
    return v;
  }
  std::vector<int64_t> gatherI(const Operand &o) const { return gatherI(o, o.shape); }
};

float activate(ActOp op, float x, float alpha, float beta) {
  switch (op) {
  case ActOp::Relu:
    return x > 0.f ? x : (std::isnan(x) ? x : 0.f);
  case ActOp::LeakyRelu:
    return x >= 0.f ? x : alpha * x;
  case ActOp::Sigmoid:
    return 1.f / (1.f + std::exp(-x));
  case ActOp::Tanh:
    return std::tanh(x);
  case ActOp::Gelu:
    return 0.5f * x * (1.f + std::erf(x * 0.70710678118654752f));
  case ActOp::Silu:
    return x / (1.f + std::exp(-x));
  case ActOp::Exp:
    return std::exp(x);
  case ActOp::Log:
    return std::log(x);
  case ActOp::Sqrt:
    return std::sqrt(x);
  case ActOp::Rsqrt:
    return 1.f / std::sqrt(x);
  case ActOp::Erf:
    return std::erf(x);
  case ActOp::Abs:
    return std::fabs(x);
  case ActOp::Neg:
    return -x;
  case ActOp::Reciprocal:
    return 1.f / x;
  case ActOp::Square:
    return x * x;
  case ActOp::Clip:
    return std::min(std::max(x, alpha), beta);
  case ActOp::HardSigmoid:
    return std::min(std::max(alpha * x + beta, 0.f), 1.f);
  case ActOp::Softplus:
    return x > 20.f ? x : std::log1p(std::exp(x));
  case ActOp::GeluTanh: {
    const float k = 0.7978845608028654f; // sqrt(2/pi)
    return 0.5f * x * (1.f + std::tanh(k * (x + 0.044715f * x * x * x)));
  }
  }
  return x;
}

float binaryF(BinaryOp op, float a, float b) {
  switch (op) {
  case BinaryOp::Add:
    return a + b;
  case BinaryOp::Sub:
    return a - b;
  case BinaryOp::Mul:
    return a * b;
  case BinaryOp::Div:
    return a / b;
  case BinaryOp::Max:
    return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : std::max(a, b);
  case BinaryOp::Min:
    return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : std::min(a, b);
  }
  return 0.f;
}

int64_t binaryI(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
  case BinaryOp::Add:
    return a + b;
  case BinaryOp::Sub:
    return a - b;
  case BinaryOp::Mul:
    return a * b;
  case BinaryOp::Max:
    return std::max(a, b);
  case BinaryOp::Min:
    return std::min(a, b);
  default:
    return 0;
  }
}

/// Packs results in the destination dtype.
struct Packer {
  std::vector<uint8_t> &buf;
  DType t;
  size_t es;
  Packer(std::vector<uint8_t> &b, const Operand &d)
      : buf(b), t(d.dtype), es(dtypeSize(d.dtype)) {
    buf.assign(d.numElements() * es, 0);
  }
  void f(uint64_t i, float v, RoundMode m = RoundMode::HalfToEven) { storeF(&buf[i * es], t, v, m); }
  void i(uint64_t i, int64_t v) { storeInt(&buf[i * es], t, v); }
};
} // namespace

Status CModel::compute(const Instruction &inst, Pending &p) {
  Mem m{ddr_.get(), lmem_.get(), target_.lmem_bytes_per_lane, target_.lanes};
  const Operand &d = inst.dst, &a = inst.src[0], &b = inst.src[1], &c = inst.src[2];
  p.dst = d;
  Packer out(p.data, d);
  const uint64_t total = d.numElements();
  switch (inst.op) {
  case Opcode::DmaMove: {
    RoundMode rm = static_cast<RoundMode>(inst.iparam[0]);
    if (a.dtype == d.dtype) { // bit-exact copy
      size_t es = dtypeSize(d.dtype);
      m.forEach(a, d.shape, [&](uint64_t i, const uint8_t *q) { std::memcpy(&p.data[i * es], q, es); });
    } else if (isFloat(a.dtype)) {
      m.forEach(a, d.shape, [&](uint64_t i, const uint8_t *q) { out.f(i, loadF(q, a.dtype), rm); });
    } else {
      m.forEach(a, d.shape, [&](uint64_t i, const uint8_t *q) { out.i(i, loadI(q, a.dtype)); });
    }
    return Status::OK();
  }
  case Opcode::DmaGather: {
    const int axis = inst.iparam[gather_param::Axis];
    const int64_t dim = a.shape[axis];
    // Resolve every index before moving anything: a bad one stops the
    // instruction with nothing written.
    std::vector<uint64_t> rows(b.numElements());
    std::vector<double> vals(rows.size());
    m.forEach(b, b.shape, [&](uint64_t i, const uint8_t *q) {
      vals[i] = b.dtype == DType::F32 ? double(loadF(q, b.dtype)) : double(loadI(q, b.dtype));
    });
    for (size_t i = 0; i < vals.size(); ++i) {
      double v = vals[i];
      bool integral = std::isfinite(v) && std::trunc(v) == v;
      if (!integral || v < -double(dim) || v >= double(dim)) {
        char text[48];
        if (integral && std::fabs(v) < 9.0e15)
          std::snprintf(text, sizeof(text), "%lld", (long long)v);
        else
          std::snprintf(text, sizeof(text), "%.9g", v);
        return Status::error(
            std::string("src1: index ") + text + " at position " + std::to_string(i) +
            (integral ? " is outside [" + std::to_string(-dim) + ", " + std::to_string(dim) +
                            ") for axis " + std::to_string(axis)
                      : std::string(" is not an integer")));
      }
      rows[i] = uint64_t(v < 0 ? int64_t(v) + dim : int64_t(v));
    }
    size_t es = dtypeSize(d.dtype);
    uint64_t i = 0, co[4];
    for (co[0] = 0; co[0] < d.shape[0]; ++co[0])
      for (co[1] = 0; co[1] < d.shape[1]; ++co[1])
        for (co[2] = 0; co[2] < d.shape[2]; ++co[2])
          for (co[3] = 0; co[3] < d.shape[3]; ++co[3], ++i) {
            uint64_t s[4] = {co[0], co[1], co[2], co[3]};
            s[axis] = rows[co[axis]];
            std::memcpy(&p.data[i * es], m.at(a, s[0], s[1], s[2], s[3]), es);
          }
    return Status::OK();
  }
  case Opcode::DmaFill:
    for (uint64_t i = 0; i < total; ++i) {
      if (isFloat(d.dtype))
        out.f(i, inst.fparam[0]);
      else
        out.i(i, inst.iparam[0]);
    }
    return Status::OK();
  case Opcode::Conv: {
    using namespace conv_param;
    const int32_t *q = inst.iparam;
    const uint64_t N = a.shape[0], IC = a.shape[1], H = a.shape[2], W = a.shape[3];
    const uint64_t OC = d.shape[1], OH = d.shape[2], OW = d.shape[3];
    const uint64_t G = q[Groups], ICG = IC / G, OCG = OC / G;
    const uint64_t KH = b.shape[2], KW = b.shape[3];
    const bool relu = inst.flags & kFlagRelu, bias = inst.flags & kFlagBias,
               acc = inst.flags & kFlagAccumulate;
    const bool fl = isFloat(a.dtype);
    std::vector<float> xf, wf, bf, oldf;
    std::vector<int64_t> xi, wi, bi, oldi;
    if (fl) {
      xf = m.gatherF(a);
      wf = m.gatherF(b);
      if (bias)
        bf = m.gatherF(c);
      if (acc)
        oldf = m.gatherF(d);
    } else {
      xi = m.gatherI(a);
      wi = m.gatherI(b);
      if (bias)
        bi = m.gatherI(c);
      if (acc)
        oldi = m.gatherI(d);
    }
    uint64_t idx = 0;
    for (uint64_t n = 0; n < N; ++n)
      for (uint64_t oc = 0; oc < OC; ++oc) {
        uint64_t g = oc / OCG;
        for (uint64_t oh = 0; oh < OH; ++oh)
          for (uint64_t ow = 0; ow < OW; ++ow, ++idx) {
            float accf = 0.f;
            int64_t acci = 0;
            for (uint64_t icg = 0; icg < ICG; ++icg) {
              uint64_t ic = g * ICG + icg;
              for (uint64_t kh = 0; kh < KH; ++kh) {
                int64_t ih = int64_t(oh * q[StrideH] + kh * q[DilH]) - q[PadTop];
                if (ih < 0 || ih >= int64_t(H))
                  continue;
                for (uint64_t kw = 0; kw < KW; ++kw) {
                  int64_t iw = int64_t(ow * q[StrideW] + kw * q[DilW]) - q[PadLeft];
                  if (iw < 0 || iw >= int64_t(W))
                    continue;
                  uint64_t xo = ((n * IC + ic) * H + uint64_t(ih)) * W + uint64_t(iw);
                  uint64_t wo = ((icg * OC + oc) * KH + kh) * KW + kw;
                  if (fl)
                    accf += xf[xo] * wf[wo];
                  else
                    acci += xi[xo] * wi[wo];
                }
              }
            }
            if (fl) {
              if (bias)
                accf += bf[oc];
              if (acc)
                accf += oldf[idx];
              if (relu && accf < 0.f)
                accf = 0.f;
              out.f(idx, accf);
            } else {
              if (bias)
                acci += bi[oc];
              if (acc)
                acci += oldi[idx];
              if (relu && acci < 0)
                acci = 0;
              out.i(idx, acci);
            }
          }
      }
    return Status::OK();
  }
  case Opcode::MatMul: {
    const uint64_t B = d.shape[0], M = d.shape[1], K = a.shape[3], N = d.shape[3];
    const bool relu = inst.flags & kFlagRelu, bias = inst.flags & kFlagBias,
               acc = inst.flags & kFlagAccumulate;
    const bool fl = isFloat(a.dtype);
    if (fl) {
      std::vector<float> l = m.gatherF(a), r = m.gatherF(b), bv, old;
      if (bias)
        bv = m.gatherF(c);
      if (acc)
        old = m.gatherF(d);
      std::vector<float> row(N);
      for (uint64_t bb = 0; bb < B; ++bb) {
        const float *L = &l[(a.shape[0] == 1 ? 0 : bb) * M * K];
        const float *R = &r[(b.shape[0] == 1 ? 0 : bb) * K * N];
        for (uint64_t i = 0; i < M; ++i) {
          std::fill(row.begin(), row.end(), 0.f);
          // k outermost keeps each output's sum in k order.
          for (uint64_t k = 0; k < K; ++k) {
            float lv = L[i * K + k];
            const float *Rk = R + k * N;
            for (uint64_t j = 0; j < N; ++j)
              row[j] += lv * Rk[j];
          }
          for (uint64_t j = 0; j < N; ++j) {
            float v = row[j];
            if (bias)
              v += bv[j];
            uint64_t o = (bb * M + i) * N + j;
            if (acc)
              v += old[o];
            if (relu && v < 0.f)
              v = 0.f;
            out.f(o, v);
          }
        }
      }
    } else {
      std::vector<int64_t> l = m.gatherI(a), r = m.gatherI(b), bv, old;
      if (bias)
        bv = m.gatherI(c);
      if (acc)
        old = m.gatherI(d);
      for (uint64_t bb = 0; bb < B; ++bb) {
        const int64_t *L = &l[(a.shape[0] == 1 ? 0 : bb) * M * K];
        const int64_t *R = &r[(b.shape[0] == 1 ? 0 : bb) * K * N];
        for (uint64_t i = 0; i < M; ++i)
          for (uint64_t j = 0; j < N; ++j) {
            int64_t v = 0;
            for (uint64_t k = 0; k < K; ++k)
              v += L[i * K + k] * R[k * N + j];
            if (bias)
              v += bv[j];
            uint64_t o = (bb * M + i) * N + j;
            if (acc)
              v += old[o];
            if (relu && v < 0)
              v = 0;
            out.i(o, v);
          }
      }
    }
    return Status::OK();
  }
  case Opcode::Binary: {
    BinaryOp op = static_cast<BinaryOp>(inst.sub_op);
    bool scalar = inst.flags & kFlagScalar, first = inst.flags & kFlagScalarFirst;
    bool relu = inst.flags & kFlagRelu;
    if (isFloat(d.dtype)) {
      std::vector<float> x = m.gatherF(a, d.shape), y;
      if (!scalar)
        y = m.gatherF(b, d.shape);
      for (uint64_t i = 0; i < total; ++i) {
        float s = scalar ? inst.fparam[0] : y[i];
        float v = (scalar && first) ? binaryF(op, s, x[i]) : binaryF(op, x[i], s);
        if (relu && v < 0.f)
          v = 0.f;
        out.f(i, v);
      }
    } else {
      std::vector<int64_t> x = m.gatherI(a, d.shape), y;
      if (!scalar)
        y = m.gatherI(b, d.shape);
      for (uint64_t i = 0; i < total; ++i) {
        int64_t s = scalar ? inst.iparam[0] : y[i];
        int64_t v = (scalar && first) ? binaryI(op, s, x[i]) : binaryI(op, x[i], s);
        if (relu && v < 0)
          v = 0;
        out.i(i, v);
      }
    }
    return Status::OK();
  }
  case Opcode::Pool: {
    using namespace pool_param;
    const int32_t *q = inst.iparam;
    const bool avg = inst.sub_op == uint8_t(PoolMode::Avg);
    const bool countPad = inst.flags & kFlagCountPad;
    const uint64_t N = a.shape[0], C = a.shape[1], H = a.shape[2], W = a.shape[3];
    const uint64_t OH = d.shape[2], OW = d.shape[3];
    const bool fl = isFloat(a.dtype);
    std::vector<float> xf;
    std::vector<int64_t> xi;
    if (fl)
      xf = m.gatherF(a);
    else
      xi = m.gatherI(a);
    uint64_t idx = 0;
    for (uint64_t n = 0; n < N; ++n)
      for (uint64_t ch = 0; ch < C; ++ch)
        for (uint64_t oh = 0; oh < OH; ++oh)
          for (uint64_t ow = 0; ow < OW; ++ow, ++idx) {
            float sf = avg ? 0.f : -std::numeric_limits<float>::infinity();
            int64_t si = avg ? 0 : INT64_MIN;
            int64_t count = 0;
            for (int64_t kh = 0; kh < q[KH]; ++kh) {
              int64_t ih = int64_t(oh) * q[StrideH] + kh - q[PadTop];
              for (int64_t kw = 0; kw < q[KW]; ++kw) {
                int64_t iw = int64_t(ow) * q[StrideW] + kw - q[PadLeft];
                bool inside = ih >= 0 && ih < int64_t(H) && iw >= 0 && iw < int64_t(W);
                // Cells of the padded frame count for avg with count_include_pad.
                bool inFrame = ih < int64_t(H) + q[PadBottom] && iw < int64_t(W) + q[PadRight];
                if (inside || (countPad && inFrame))
                  ++count;
                if (!inside)
                  continue;
                uint64_t o = ((n * C + ch) * H + uint64_t(ih)) * W + uint64_t(iw);
                if (fl)
                  sf = avg ? sf + xf[o] : std::max(sf, xf[o]);
                else
                  si = avg ? si + xi[o] : std::max(si, xi[o]);
              }
            }
            if (fl)
              out.f(idx, avg ? sf / float(std::max<int64_t>(count, 1)) : sf);
            else
              out.i(idx, avg ? divRound(si, std::max<int64_t>(count, 1),
                                        static_cast<RoundMode>(q[Round]))
                             : si);
          }
    return Status::OK();
  }
  case Opcode::Reduce: {
    ReduceMode mode = static_cast<ReduceMode>(inst.sub_op);
    int axis = inst.iparam[0];
    RoundMode rm = static_cast<RoundMode>(inst.iparam[1]);
    uint64_t dims[4] = {a.shape[0], a.shape[1], a.shape[2], a.shape[3]};
    uint64_t L = dims[axis];
    uint64_t inner = 1;
    for (int k = axis + 1; k < 4; ++k)
      inner *= dims[k];
    uint64_t outer = total / inner;
    const bool fl = isFloat(a.dtype);
    std::vector<float> xf;
    std::vector<int64_t> xi;
    if (fl)
      xf = m.gatherF(a);
    else
      xi = m.gatherI(a);
    for (uint64_t o = 0; o < outer; ++o)
      for (uint64_t in = 0; in < inner; ++in) {
        uint64_t base = o * L * inner + in;
        if (fl) {
          float acc = xf[base];
          for (uint64_t k = 1; k < L; ++k) {
            float v = xf[base + k * inner];
            if (mode == ReduceMode::Max)
              acc = std::max(acc, v);
            else if (mode == ReduceMode::Min)
              acc = std::min(acc, v);
            else
              acc += v;
          }
          if (mode == ReduceMode::Mean)
            acc /= float(L);
          out.f(o * inner + in, acc);
        } else {
          int64_t acc = xi[base];
          for (uint64_t k = 1; k < L; ++k) {
            int64_t v = xi[base + k * inner];
            if (mode == ReduceMode::Max)
              acc = std::max(acc, v);
            else if (mode == ReduceMode::Min)
              acc = std::min(acc, v);
            else
              acc += v;
          }
          if (mode == ReduceMode::Mean)
            acc = divRound(acc, int64_t(L), rm);
          out.i(o * inner + in, acc);
        }
      }
    return Status::OK();
  }
  case Opcode::Active: {
    ActOp op = static_cast<ActOp>(inst.sub_op);
    std::vector<float> x = m.gatherF(a);
    for (uint64_t i = 0; i < total; ++i)
      out.f(i, activate(op, x[i], inst.fparam[0], inst.fparam[1]));
    return Status::OK();
  }
  case Opcode::Lut: {
    size_t es = dtypeSize(d.dtype);
    std::vector<uint8_t> table(256 * es);
    m.forEach(b, b.shape, [&](uint64_t i, const uint8_t *q) { std::memcpy(&table[i * es], q, es); });
    // An int8 index addresses the table by its two's-complement byte.
    m.forEach(a, d.shape, [&](uint64_t i, const uint8_t *q) {
      std::memcpy(&p.data[i * es], &table[size_t(*q) * es], es);
    });
    return Status::OK();
  }
  case Opcode::Cast: {
    RoundMode rm = static_cast<RoundMode>(inst.iparam[0]);
    if (isFloat(a.dtype)) {
      std::vector<float> x = m.gatherF(a);
      for (uint64_t i = 0; i < total; ++i)
        out.f(i, x[i], rm);
    } else {
      std::vector<int64_t> x = m.gatherI(a);
      for (uint64_t i = 0; i < total; ++i)
        out.i(i, x[i]);
    }
    return Status::OK();
  }
  case Opcode::Requant: {
    using namespace requant_param;
    const int32_t *q = inst.iparam;
    RoundMode rm = static_cast<RoundMode>(q[Round]);
    std::vector<int64_t> x = m.gatherI(a);
    std::vector<int64_t> pc;
    const bool perChannel = inst.flags & kFlagPerChannel;
    if (perChannel) {
      pc = m.gatherI(b);
      for (uint64_t ch = 0; ch < d.shape[1]; ++ch)
        if (pc[ch * 2 + 1] < -31 || pc[ch * 2 + 1] > 62)
          return Status::error("src1: per-channel shift " + std::to_string(pc[ch * 2 + 1]) +
                               " of channel " + std::to_string(ch) + " is outside [-31, 62]");
    }
    const uint64_t C = d.shape[1], HW = uint64_t(d.shape[2]) * d.shape[3];
    for (uint64_t i = 0; i < total; ++i) {
      int32_t mult = q[Multiplier], sh = q[Shift];
      if (perChannel) {
        uint64_t ch = (i / HW) % C;
        mult = int32_t(pc[ch * 2]);
        sh = int32_t(pc[ch * 2 + 1]);
      }
      out.i(i, requantize(int32_t(x[i]), mult, sh, q[ZeroPoint], rm, d.dtype));
    }
    return Status::OK();
  }
  }
  return Status::error("unknown opcode");
}

void CModel::commit(const Pending &p) {
  Mem m{ddr_.get(), lmem_.get(), target_.lmem_bytes_per_lane, target_.lanes};
  size_t es = dtypeSize(p.dst.dtype);
  m.forEach(p.dst, p.dst.shape, [&](uint64_t i, uint8_t *q) { std::memcpy(q, &p.data[i * es], es); });
}

Status CModel::run(const std::vector<Instruction> &tiu,
                   const std::vector<Instruction> &gdma, RunStats &stats,
                   const CommitHook &hook, const std::vector<DdrRegion> *regions) {
  if (!ddr_ || !lmem_)
    return Status::error("cmodel is not initialised");
  std::vector<DdrRegion> all = {{0, ddr_size_, "DDR"}};
  const std::vector<DdrRegion> &reg = regions ? *regions : all;
  TPUC_RETURN_IF_ERROR(validateStreams(tiu, gdma));
  for (size_t k = 0; k < tiu.size(); ++k)
    TPUC_RETURN_IF_ERROR(validateInstruction(tiu[k], k, target_, reg));
  for (size_t k = 0; k < gdma.size(); ++k)
    TPUC_RETURN_IF_ERROR(validateInstruction(gdma[k], k, target_, reg));

  stats = RunStats();
  stats.clock_mhz = target_.clock_mhz;
  std::vector<uint64_t> tiuEnd(tiu.size()), gdmaEnd(gdma.size());
  size_t ti = 0, gi = 0;
  uint64_t tFree = 0, gFree = 0, seq = 0;
  std::vector<Pending> pending;

  auto commitUntil = [&](uint64_t cycle) {
    while (true) {
      size_t best = pending.size();
      for (size_t k = 0; k < pending.size(); ++k)
        if (pending[k].end <= cycle &&
            (best == pending.size() || pending[k].end < pending[best].end ||
             (pending[k].end == pending[best].end && pending[k].seq < pending[best].seq)))
          best = k;
      if (best == pending.size())
        return;
      commit(pending[best]);
      Engine e = pending[best].engine;
      uint32_t id = pending[best].id;
      pending.erase(pending.begin() + long(best));
      if (hook)
        hook(e, id);
    }
  };

  const uint64_t kNever = UINT64_MAX;
  while (ti < tiu.size() || gi < gdma.size()) {
    uint64_t tStart = kNever, gStart = kNever;
    if (ti < tiu.size()) {
      uint32_t w = tiu[ti].wait_id;
      if (w == 0)
        tStart = tFree;
      else if (w <= gi)
        tStart = std::max(tFree, gdmaEnd[w - 1]);
    }
    if (gi < gdma.size()) {
      uint32_t w = gdma[gi].wait_id;
      if (w == 0)
        gStart = gFree;
      else if (w <= ti)
        gStart = std::max(gFree, tiuEnd[w - 1]);
    }
    if (tStart == kNever && gStart == kNever) {
      std::string msg = "deadlock: ";
      if (ti < tiu.size())
        msg += "TIU instruction #" + std::to_string(ti) + " waits for GDMA id " +
               std::to_string(tiu[ti].wait_id);
      if (gi < gdma.size())
        msg += std::string(ti < tiu.size() ? " while " : "") + "GDMA instruction #" +
               std::to_string(gi) + " waits for TIU id " + std::to_string(gdma[gi].wait_id);
      return Status::error(msg + ", which can never complete first");
    }
    bool pickTiu = tStart <= gStart && tStart != kNever;
    const Instruction &inst = pickTiu ? tiu[ti] : gdma[gi];
    size_t index = pickTiu ? ti : gi;
    uint64_t start = pickTiu ? tStart : gStart;
    commitUntil(start);

    Pending p;
    Status st = compute(inst, p);
    if (!st.ok())
      return Status::error(std::string(engineName(inst.engine)) + " instruction #" +
                           std::to_string(index) + " (id " + std::to_string(inst.id) + ", " +
                           instructionName(inst) + "): " + st.message());
    uint64_t work = 0;
    bool conflict = false;
    uint64_t cost = instructionCycles(inst, target_, &work, &conflict);
    uint64_t end = start + cost;
    p.engine = inst.engine;
    p.id = inst.id;
    p.end = end;
    p.seq = seq++;
    pending.push_back(std::move(p));

    InstRecord rec{inst.engine, inst.id, instructionName(inst), start, end, work, conflict};
    stats.records.push_back(rec);
    stats.total_cycles = std::max(stats.total_cycles, end);
    if (conflict)
      ++stats.bank_conflicts;
    if (pickTiu) {
      tiuEnd[ti++] = end;
      tFree = end;
      stats.tiu_busy_cycles += cost;
      ++stats.tiu_instructions;
      if (inst.op == Opcode::Conv || inst.op == Opcode::MatMul)
        stats.macs += work;
    } else {
      gdmaEnd[gi++] = end;
      gFree = end;
      stats.gdma_busy_cycles += cost;
      ++stats.gdma_instructions;
      stats.gdma_bytes += work;
    }
  }
  commitUntil(kNever);
  if (logEnabled(LogLevel::Debug))
    log(LogLevel::Debug, "cmodel run: " + std::to_string(stats.total_cycles) + " cycles, " +
                             std::to_string(stats.tiu_instructions) + " TIU / " +
                             std::to_string(stats.gdma_instructions) + " GDMA instructions");
  return Status::OK();
}

// --- Trace ----------------------------------------------------------------------

std::string traceJson(const RunStats &stats, const std::string &title) {
  std::ostringstream os;
  double mhz = stats.clock_mhz > 0 ? stats.clock_mhz : 1.0;
  os << "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"title\": " << jsonQuote(title)
     << ", \"total_cycles\": " << stats.total_cycles << ", \"clock_mhz\": " << mhz
     << "}, \"traceEvents\": [\n";
  os << "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": "
     << jsonQuote(title) << "}},\n";
  os << "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"args\": {\"name\": \"TIU\"}},\n";
  os << "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 1, \"args\": {\"name\": \"GDMA\"}}";
  char buf[96];
  for (const InstRecord &r : stats.records) {
    os << ",\n{\"name\": " << jsonQuote(r.name) << ", \"cat\": \"" << engineName(r.engine)
       << "\", \"ph\": \"X\", \"pid\": 0, \"tid\": " << (r.engine == Engine::TIU ? 0 : 1);
    std::snprintf(buf, sizeof(buf), ", \"ts\": %.6f, \"dur\": %.6f", double(r.start) / mhz,
                  double(r.end - r.start) / mhz);
    os << buf << ", \"args\": {\"id\": " << r.id << ", \"start_cycle\": " << r.start
       << ", \"cycles\": " << (r.end - r.start) << ", \"work\": " << r.work
       << ", \"bank_conflict\": " << (r.bank_conflict ? "true" : "false") << "}}";
  }
  os << "\n]}\n";
  return os.str();
}

Status writeTrace(const RunStats &stats, const std::string &title, const std::string &path) {
  std::ofstream f(path, std::ios::binary);
  if (!f)
    return Status::error("cannot open trace file '" + path + "' for writing");
  std::string s = traceJson(stats, title);
  f.write(s.data(), std::streamsize(s.size()));
  if (!f)
    return Status::error("failed writing trace file '" + path + "'");
  return Status::OK();
}

} // namespace chip
} // namespace tpuc
