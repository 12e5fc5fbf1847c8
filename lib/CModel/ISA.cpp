//===- ISA.cpp - Instruction builders, encoding and validation ------------===//
#include "tpuc/Chip/ISA.h"

#include <cstdio>
#include <cstring>
#include <sstream>

namespace tpuc {
namespace chip {

// --- Names -------------------------------------------------------------------

Engine engineOf(Opcode op) {
  return (op == Opcode::DmaMove || op == Opcode::DmaFill ||
          op == Opcode::DmaGather)
             ? Engine::GDMA
             : Engine::TIU;
}

bool isValidOpcode(uint8_t v) { return (v >= 1 && v <= 3) || (v >= 16 && v <= 24); }

const char *opcodeName(Opcode op) {
  switch (op) {
  case Opcode::DmaMove:
    return "dma_move";
  case Opcode::DmaFill:
    return "dma_fill";
  case Opcode::DmaGather:
    return "dma_gather";
  case Opcode::Conv:
    return "conv";
  case Opcode::MatMul:
    return "matmul";
  case Opcode::Binary:
    return "binary";
  case Opcode::Pool:
    return "pool";
  case Opcode::Reduce:
    return "reduce";
  case Opcode::Active:
    return "active";
  case Opcode::Lut:
    return "lut";
  case Opcode::Cast:
    return "cast";
  case Opcode::Requant:
    return "requant";
  }
  return "unknown";
}

const char *engineName(Engine e) { return e == Engine::TIU ? "TIU" : "GDMA"; }

static const char *kBinaryNames[] = {"add", "sub", "mul", "div", "max", "min"};
static const char *kPoolNames[] = {"max", "avg"};
static const char *kReduceNames[] = {"sum", "mean", "max", "min"};
static const char *kActNames[] = {
    "relu", "leaky_relu", "sigmoid", "tanh", "gelu", "silu", "exp",
    "log", "sqrt", "rsqrt", "erf", "abs", "neg", "reciprocal",
    "square", "clip", "hard_sigmoid", "softplus", "gelu_tanh"};

std::string describeInstruction(const Instruction &inst, size_t index) {
  return std::string(engineName(inst.engine)) + " instruction #" + std::to_string(index) + " (id " +
         std::to_string(inst.id) + ", " + instructionName(inst) + ")";
}

std::string instructionName(const Instruction &inst) {
  std::string n = opcodeName(inst.op);
  switch (inst.op) {
  case Opcode::Binary:
    if (inst.sub_op < kNumBinaryOps)
      n += std::string(".") + kBinaryNames[inst.sub_op];
    if (inst.flags & kFlagScalar)
      n += "_scalar";
    break;
  case Opcode::Pool:
    if (inst.sub_op < kNumPoolModes)
      n += std::string(".") + kPoolNames[inst.sub_op];
    break;
  case Opcode::Reduce:
    if (inst.sub_op < kNumReduceModes)
      n += std::string(".") + kReduceNames[inst.sub_op];
    break;
  case Opcode::Active:
    if (inst.sub_op < kNumActOps)
      n += std::string(".") + kActNames[inst.sub_op];
    break;
  default:
    break;
  }
  return n;
}

std::string Operand::str() const {
  std::ostringstream os;
  os << (space == Space::DDR ? "ddr" : space == Space::LMEM ? "lmem" : "none")
     << "[0x" << std::hex << addr << std::dec << "] " << dtypeName(dtype) << " ["
     << shape[0] << "," << shape[1] << "," << shape[2] << "," << shape[3]
     << "] strides [" << stride[0] << "," << stride[1] << "," << stride[2]
     << "," << stride[3] << "]";
  if (space == Space::LMEM)
    os << " lane " << start_lane;
  return os.str();
}

// --- Operand helpers -----------------------------------------------------------

Operand ddrTensor(uint64_t addr, uint32_t n, uint32_t c, uint32_t h,
                  uint32_t w, DType t) {
  Operand o;
  o.space = Space::DDR;
  o.addr = addr;
  o.dtype = t;
  o.shape[0] = n;
  o.shape[1] = c;
  o.shape[2] = h;
  o.shape[3] = w;
  o.stride[3] = 1;
  o.stride[2] = static_cast<int32_t>(w);
  o.stride[1] = static_cast<int32_t>(uint64_t(h) * w);
  o.stride[0] = static_cast<int32_t>(uint64_t(c) * h * w);
  return o;
}

Operand lmemTensor(uint64_t addr, uint32_t n, uint32_t c, uint32_t h,
                   uint32_t w, DType t, uint16_t start_lane) {
  Operand o;
  o.space = Space::LMEM;
  o.addr = addr;
  o.dtype = t;
  o.start_lane = start_lane;
  o.shape[0] = n;
  o.shape[1] = c;
  o.shape[2] = h;
  o.shape[3] = w;
  o.stride[3] = 1;
  o.stride[2] = static_cast<int32_t>(w);
  o.stride[0] = static_cast<int32_t>(uint64_t(h) * w);
  o.stride[1] = static_cast<int32_t>(uint64_t(n) * h * w);
  return o;
}

uint64_t lmemBytesPerLane(uint32_t n, uint32_t c, uint32_t h, uint32_t w,
                          DType t, uint16_t start_lane, uint32_t lanes) {
  uint64_t slots = (uint64_t(start_lane) + c + lanes - 1) / lanes;
  return slots * n * h * w * dtypeSize(t);
}

// --- Builders -------------------------------------------------------------------

static Instruction base(Opcode op) {
  Instruction i;
  i.op = op;
  i.engine = engineOf(op);
  return i;
}

Instruction makeConv(const Operand &out, const Operand &in,
                     const Operand &weight, const Operand &bias,
                     const ConvParams &p) {
  Instruction i = base(Opcode::Conv);
  i.dst = out;
  i.src[0] = in;
  i.src[1] = weight;
  if (bias.valid()) {
    i.src[2] = bias;
    i.flags |= kFlagBias;
  }
  if (p.relu)
    i.flags |= kFlagRelu;
  if (p.accumulate)
    i.flags |= kFlagAccumulate;
  using namespace conv_param;
  i.iparam[StrideH] = p.stride_h;
  i.iparam[StrideW] = p.stride_w;
  i.iparam[DilH] = p.dilation_h;
  i.iparam[DilW] = p.dilation_w;
  i.iparam[PadTop] = p.pad_top;
  i.iparam[PadBottom] = p.pad_bottom;
  i.iparam[PadLeft] = p.pad_left;
  i.iparam[PadRight] = p.pad_right;
  i.iparam[Groups] = p.groups;
  i.iparam[PadValue] = p.pad_value;
  return i;
}

Instruction makeMatMul(const Operand &out, const Operand &left,
                       const Operand &right, const Operand &bias,
                       bool accumulate, bool relu, bool right_trans) {
  Instruction i = base(Opcode::MatMul);
  if (right_trans)
    i.flags |= kFlagRightTrans;
  i.dst = out;
  i.src[0] = left;
  i.src[1] = right;
  if (bias.valid()) {
    i.src[2] = bias;
    i.flags |= kFlagBias;
  }
  if (accumulate)
    i.flags |= kFlagAccumulate;
  if (relu)
    i.flags |= kFlagRelu;
  return i;
}

Instruction makeBinary(BinaryOp op, const Operand &out, const Operand &a,
                       const Operand &b, bool relu) {
  Instruction i = base(Opcode::Binary);
  i.sub_op = static_cast<uint8_t>(op);
  i.dst = out;
  i.src[0] = a;
  i.src[1] = b;
  if (relu)
    i.flags |= kFlagRelu;
  return i;
}

Instruction makeBinaryScalar(BinaryOp op, const Operand &out,
                             const Operand &a, double scalar,
                             bool scalar_first) {
  Instruction i = base(Opcode::Binary);
  i.sub_op = static_cast<uint8_t>(op);
  i.dst = out;
  i.src[0] = a;
  i.flags |= kFlagScalar;
  if (scalar_first)
    i.flags |= kFlagScalarFirst;
  // Float ops read fparam[0]; integer ops read iparam[0].
  i.fparam[0] = static_cast<float>(scalar);
  i.iparam[0] = static_cast<int32_t>(roundToInt(scalar, RoundMode::HalfAwayFromZero, DType::INT32));
  return i;
}

Instruction makePool(PoolMode mode, const Operand &out, const Operand &in,
                     const PoolParams &p) {
  Instruction i = base(Opcode::Pool);
  i.sub_op = static_cast<uint8_t>(mode);
  i.dst = out;
  i.src[0] = in;
  using namespace pool_param;
  i.iparam[KH] = p.kh;
  i.iparam[KW] = p.kw;
  i.iparam[StrideH] = p.stride_h;
  i.iparam[StrideW] = p.stride_w;
  i.iparam[PadTop] = p.pad_top;
  i.iparam[PadBottom] = p.pad_bottom;
  i.iparam[PadLeft] = p.pad_left;
  i.iparam[PadRight] = p.pad_right;
  i.iparam[Round] = static_cast<int32_t>(p.round);
  if (p.count_include_pad)
    i.flags |= kFlagCountPad;
  return i;
}

Instruction makeReduce(ReduceMode mode, const Operand &out, const Operand &in,
                       int axis, RoundMode round) {
  Instruction i = base(Opcode::Reduce);
  i.sub_op = static_cast<uint8_t>(mode);
  i.dst = out;
  i.src[0] = in;
  i.iparam[0] = axis;
  i.iparam[1] = static_cast<int32_t>(round);
  return i;
}

Instruction makeActive(ActOp op, const Operand &out, const Operand &in,
                       float alpha, float beta) {
  Instruction i = base(Opcode::Active);
  i.sub_op = static_cast<uint8_t>(op);
  i.dst = out;
  i.src[0] = in;
  i.fparam[0] = alpha;
  i.fparam[1] = beta;
  return i;
}

Instruction makeLut(const Operand &out, const Operand &index,
                    const Operand &table) {
  Instruction i = base(Opcode::Lut);
  i.dst = out;
  i.src[0] = index;
  i.src[1] = table;
  return i;
}

Instruction makeCast(const Operand &out, const Operand &in, RoundMode round) {
  Instruction i = base(Opcode::Cast);
  i.dst = out;
  i.src[0] = in;
  i.iparam[0] = static_cast<int32_t>(round);
  return i;
}

Instruction makeRequant(const Operand &out, const Operand &in,
                        int32_t multiplier, int32_t shift, int32_t zero_point,
                        RoundMode round) {
  Instruction i = base(Opcode::Requant);
  i.dst = out;
  i.src[0] = in;
  using namespace requant_param;
  i.iparam[Multiplier] = multiplier;
  i.iparam[Shift] = shift;
  i.iparam[ZeroPoint] = zero_point;
  i.iparam[Round] = static_cast<int32_t>(round);
  return i;
}

Instruction makeRequantPerChannel(const Operand &out, const Operand &in,
                                  const Operand &params, int32_t zero_point,
                                  RoundMode round) {
  Instruction i = makeRequant(out, in, 0, 0, zero_point, round);
  i.src[1] = params;
  i.flags |= kFlagPerChannel;
  return i;
}

Instruction makeDmaMove(const Operand &dst, const Operand &src,
                        RoundMode round) {
  Instruction i = base(Opcode::DmaMove);
  i.dst = dst;
  i.src[0] = src;
  i.iparam[0] = static_cast<int32_t>(round);
  return i;
}

Instruction makeDmaFill(const Operand &dst, double value) {
  Instruction i = base(Opcode::DmaFill);
  i.dst = dst;
  i.fparam[0] = static_cast<float>(value);
  i.iparam[0] = static_cast<int32_t>(roundToInt(value, RoundMode::HalfAwayFromZero, DType::INT32));
  return i;
}

Instruction makeDmaGather(const Operand &dst, const Operand &src,
                          const Operand &index, int axis) {
  Instruction i = base(Opcode::DmaGather);
  i.dst = dst;
  i.src[0] = src;
  i.src[1] = index;
  i.iparam[gather_param::Axis] = axis;
  return i;
}

uint32_t StreamBuilder::tiu(Instruction inst, uint32_t wait_gdma_id) {
  inst.engine = Engine::TIU;
  inst.id = static_cast<uint32_t>(tiu_.size() + 1);
  inst.wait_id = wait_gdma_id;
  tiu_.push_back(inst);
  return inst.id;
}

uint32_t StreamBuilder::gdma(Instruction inst, uint32_t wait_tiu_id) {
  inst.engine = Engine::GDMA;
  inst.id = static_cast<uint32_t>(gdma_.size() + 1);
  inst.wait_id = wait_tiu_id;
  gdma_.push_back(inst);
  return inst.id;
}

// --- Encoding --------------------------------------------------------------------

namespace {
struct Writer {
  uint8_t *p;
  void u8(uint8_t v) { *p++ = v; }
  void u16(uint16_t v) {
    u8(uint8_t(v));
    u8(uint8_t(v >> 8));
  }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      u8(uint8_t(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      u8(uint8_t(v >> (8 * i)));
  }
  void f32(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u32(u);
  }
};
struct Reader {
  const uint8_t *p;
  uint8_t u8() { return *p++; }
  uint16_t u16() {
    uint16_t v = p[0] | uint16_t(p[1] << 8);
    p += 2;
    return v;
  }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= uint32_t(p[i]) << (8 * i);
    p += 4;
    return v;
  }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= uint64_t(p[i]) << (8 * i);
    p += 8;
    return v;
  }
  float f32() {
    uint32_t u = u32();
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

void encodeOperand(Writer &w, const Operand &o) {
  w.u64(o.addr);
  for (int d = 0; d < 4; ++d)
    w.u32(o.shape[d]);
  for (int d = 0; d < 4; ++d)
    w.u32(static_cast<uint32_t>(o.stride[d]));
  w.u8(static_cast<uint8_t>(o.space));
  w.u8(static_cast<uint8_t>(o.dtype));
  w.u16(o.start_lane);
  w.u32(0); // reserved
}

Status decodeOperand(Reader &r, Operand &o, const char *field) {
  o.addr = r.u64();
  for (int d = 0; d < 4; ++d)
    o.shape[d] = r.u32();
  for (int d = 0; d < 4; ++d)
    o.stride[d] = static_cast<int32_t>(r.u32());
  uint8_t space = r.u8(), dtype = r.u8();
  o.start_lane = r.u16();
  uint32_t reserved = r.u32();
  if (space > 2)
    return Status::error(std::string(field) + ": invalid memory space " + std::to_string(space));
  o.space = static_cast<Space>(space);
  if (o.space != Space::None && !isValidDType(dtype))
    return Status::error(std::string(field) + ": invalid dtype code " + std::to_string(dtype));
  o.dtype = static_cast<DType>(dtype);
  if (reserved != 0)
    return Status::error(std::string(field) + ": reserved bytes are not zero");
  return Status::OK();
}
} // namespace

void encodeInstruction(const Instruction &inst, uint8_t *out) {
  Writer w{out};
  w.u8(static_cast<uint8_t>(inst.op));
  w.u8(static_cast<uint8_t>(inst.engine));
  w.u8(inst.sub_op);
  w.u8(inst.flags);
  w.u32(inst.id);
  w.u32(inst.wait_id);
  w.u32(0); // reserved
  encodeOperand(w, inst.dst);
  for (int s = 0; s < 3; ++s)
    encodeOperand(w, inst.src[s]);
  for (int k = 0; k < kNumIParams; ++k)
    w.u32(static_cast<uint32_t>(inst.iparam[k]));
  for (int k = 0; k < kNumFParams; ++k)
    w.f32(inst.fparam[k]);
}

Status decodeInstruction(const uint8_t *in, Instruction &out) {
  Reader r{in};
  Instruction i;
  uint8_t op = r.u8(), engine = r.u8();
  if (!isValidOpcode(op))
    return Status::error("invalid opcode " + std::to_string(op));
  if (engine > 1)
    return Status::error("invalid engine " + std::to_string(engine));
  i.op = static_cast<Opcode>(op);
  i.engine = static_cast<Engine>(engine);
  i.sub_op = r.u8();
  i.flags = r.u8();
  i.id = r.u32();
  i.wait_id = r.u32();
  if (r.u32() != 0)
    return Status::error("reserved header word is not zero");
  TPUC_RETURN_IF_ERROR(decodeOperand(r, i.dst, "dst"));
  static const char *names[] = {"src0", "src1", "src2"};
  for (int s = 0; s < 3; ++s)
    TPUC_RETURN_IF_ERROR(decodeOperand(r, i.src[s], names[s]));
  for (int k = 0; k < kNumIParams; ++k)
    i.iparam[k] = static_cast<int32_t>(r.u32());
  for (int k = 0; k < kNumFParams; ++k)
    i.fparam[k] = r.f32();
  out = i;
  return Status::OK();
}

// --- Validation ------------------------------------------------------------------

Status operandExtent(const Operand &o, const Target &t, Extent &out) {
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < 4; ++d) {
    int64_t last = int64_t(o.shape[d]) - 1;
    if (d == 1 && o.space == Space::LMEM)
      last = (int64_t(o.start_lane) + o.shape[1] - 1) / t.lanes;
    int64_t c = last * o.stride[d];
    (c >= 0 ? hi : lo) += c;
  }
  int64_t es = static_cast<int64_t>(dtypeSize(o.dtype));
  if (o.addr >= (1ull << 48))
    return Status::error("address 0x" + [&] {
      char b[32];
      std::snprintf(b, sizeof(b), "%llx", (unsigned long long)o.addr);
      return std::string(b);
    }() + " is beyond the 48-bit address space");
  out.lo = int64_t(o.addr) + lo * es;
  out.hi = int64_t(o.addr) + (hi + 1) * es;
  return Status::OK();
}

namespace {
std::string hex(int64_t v) {
  char b[32];
  if (v < 0)
    std::snprintf(b, sizeof(b), "-0x%llx", (unsigned long long)(-v));
  else
    std::snprintf(b, sizeof(b), "0x%llx", (unsigned long long)v);
  return b;
}

std::string shapeStr(const Operand &o) {
  return "[" + std::to_string(o.shape[0]) + "," + std::to_string(o.shape[1]) +
         "," + std::to_string(o.shape[2]) + "," + std::to_string(o.shape[3]) + "]";
}

class Checker {
public:
  Checker(const Instruction &i, size_t index, const Target &t,
          const std::vector<DdrRegion> &ddr)
      : i_(i), index_(index), t_(t), ddr_(ddr) {}

  Status fail(const std::string &field, const std::string &msg) const {
    return Status::error(describeInstruction(i_, index_) + ": " + field + ": " +
                         msg);
  }

  Status operand(const Operand &o, const char *field, bool tiu) const {
    if (!o.valid())
      return fail(field, "operand is required but missing");
    if (!isValidDType(static_cast<uint8_t>(o.dtype)))
      return fail(field, "invalid dtype");
    for (int d = 0; d < 4; ++d)
      if (o.shape[d] == 0 || o.shape[d] > kMaxDim)
        return fail(field, "shape " + shapeStr(o) + " has an empty or oversized dimension");
    if (o.numElements() > kMaxElements)
      return fail(field, "too many elements");
    // Bound the work of stride-0 views: no operand may have more elements
    // than its memory space could hold densely.
    uint64_t capacity = 0;
    if (o.space == Space::LMEM) {
      capacity = t_.lmemTotalBytes();
    } else {
      for (const auto &r : ddr_)
        capacity += r.end - r.begin;
    }
    if (o.numElements() * dtypeSize(o.dtype) > capacity)
      return fail(field, "shape " + shapeStr(o) + " has more elements than its memory space holds");
    if (tiu && o.space != Space::LMEM)
      return fail(field, "TIU operands must be in LMEM");
    if (o.space == Space::LMEM && o.start_lane >= t_.lanes)
      return fail(field, "start_lane " + std::to_string(o.start_lane) +
                             " >= lanes " + std::to_string(t_.lanes));
    if (o.space == Space::DDR && o.start_lane != 0)
      return fail(field, "start_lane must be 0 for DDR operands");
    Extent e;
    Status st = operandExtent(o, t_, e);
    if (!st.ok())
      return fail(std::string(field) + ".addr", st.message());
    if (o.space == Space::LMEM) {
      if (e.lo < 0 || e.hi > int64_t(t_.lmem_bytes_per_lane))
        return fail(std::string(field) + ".addr",
                    "LMEM range [" + hex(e.lo) + ", " + hex(e.hi) +
                        ") exceeds lane size " + hex(t_.lmem_bytes_per_lane));
    } else {
      bool inside = false;
      for (const auto &r : ddr_)
        if (e.lo >= int64_t(r.begin) && e.hi <= int64_t(r.end))
          inside = true;
      if (!inside) {
        std::string lim;
        for (const auto &r : ddr_)
          lim += std::string(lim.empty() ? "" : ", ") + r.name + " [" +
                 hex(int64_t(r.begin)) + ", " + hex(int64_t(r.end)) + ")";
        return fail(std::string(field) + ".addr",
                    "DDR range [" + hex(e.lo) + ", " + hex(e.hi) +
                        ") is outside " + (lim.empty() ? "DDR (size 0)" : lim));
      }
    }
    return Status::OK();
  }

  Status unused(const Operand &o, const char *field) const {
    if (o.valid())
      return fail(field, "operand must be empty for this instruction");
    return Status::OK();
  }

  Status broadcastable(const Operand &src, const Operand &dst, const char *field) const {
    for (int d = 0; d < 4; ++d)
      if (src.shape[d] != dst.shape[d] && src.shape[d] != 1)
        return fail(field, "shape " + shapeStr(src) + " does not broadcast to " + shapeStr(dst));
    return Status::OK();
  }
  Status sameShape(const Operand &a, const Operand &b, const char *field) const {
    for (int d = 0; d < 4; ++d)
      if (a.shape[d] != b.shape[d])
        return fail(field, "shape " + shapeStr(a) + " must equal " + shapeStr(b));
    return Status::OK();
  }
  /// Bounds the inner-loop steps of one instruction (MACs, window cells), so
  /// that no instruction, however its views alias, runs unboundedly long.
  Status work(uint64_t steps) const {
    if (steps > kMaxWork)
      return fail("shape", "needs " + std::to_string(steps) + " steps, over the limit of " +
                               std::to_string(kMaxWork) + " for one instruction");
    return Status::OK();
  }
  Status round(int v, const char *field) const {
    if (!isValidRoundMode(v))
      return fail(field, "invalid rounding mode " + std::to_string(v));
    return Status::OK();
  }

  /// The flag bits an opcode gives meaning to; any other set bit is an
  /// encoding error rather than something the executor silently ignores.
  static uint8_t knownFlags(Opcode op) {
    switch (op) {
    case Opcode::Conv:
      return kFlagBias | kFlagAccumulate | kFlagRelu;
    case Opcode::MatMul:
      return kFlagBias | kFlagAccumulate | kFlagRelu | kFlagRightTrans;
    case Opcode::Binary:
      return kFlagRelu | kFlagScalar | kFlagScalarFirst;
    case Opcode::Pool:
      return kFlagCountPad;
    case Opcode::Requant:
      return kFlagPerChannel;
    default:
      return 0;
    }
  }

  Status run() const {
    if (i_.engine != engineOf(i_.op))
      return fail("engine", std::string("opcode belongs to ") + engineName(engineOf(i_.op)));
    if (uint8_t extra = i_.flags & ~knownFlags(i_.op))
      return fail("flags", "bits " + hex(extra) + " have no meaning for this opcode");
    const Operand &d = i_.dst, &a = i_.src[0], &b = i_.src[1], &c = i_.src[2];
    bool tiu = i_.engine == Engine::TIU;
    TPUC_RETURN_IF_ERROR(operand(d, "dst", tiu));
    switch (i_.op) {
    case Opcode::DmaMove:
      TPUC_RETURN_IF_ERROR(operand(a, "src0", false));
      TPUC_RETURN_IF_ERROR(unused(b, "src1"));
      TPUC_RETURN_IF_ERROR(unused(c, "src2"));
      TPUC_RETURN_IF_ERROR(broadcastable(a, d, "src0"));
      return round(i_.iparam[0], "iparam[0] (round)");
    case Opcode::DmaFill:
      TPUC_RETURN_IF_ERROR(unused(a, "src0"));
      TPUC_RETURN_IF_ERROR(unused(b, "src1"));
      return unused(c, "src2");
    case Opcode::DmaGather:
      return gather();
    case Opcode::Conv:
      return conv();
    case Opcode::MatMul:
      return matmul();
    case Opcode::Binary: {
      if (i_.sub_op >= kNumBinaryOps)
        return fail("sub_op", "invalid binary op " + std::to_string(i_.sub_op));
      TPUC_RETURN_IF_ERROR(operand(a, "src0", true));
      TPUC_RETURN_IF_ERROR(broadcastable(a, d, "src0"));
      if (i_.flags & kFlagScalar) {
        TPUC_RETURN_IF_ERROR(unused(b, "src1"));
      } else {
        TPUC_RETURN_IF_ERROR(operand(b, "src1", true));
        TPUC_RETURN_IF_ERROR(broadcastable(b, d, "src1"));
      }
      TPUC_RETURN_IF_ERROR(unused(c, "src2"));
      if (isInt(d.dtype)) {
        if (!isInt(a.dtype) || (b.valid() && !isInt(b.dtype)))
          return fail("dst", "integer result requires integer inputs");
        if (i_.sub_op == uint8_t(BinaryOp::Div))
          return fail("sub_op", "integer division is not supported");
      }
      return Status::OK();
    }
    case Opcode::Pool:
      return pool();
    case Opcode::Reduce: {
      if (i_.sub_op >= kNumReduceModes)
        return fail("sub_op", "invalid reduce mode");
      TPUC_RETURN_IF_ERROR(operand(a, "src0", true));
      TPUC_RETURN_IF_ERROR(unused(b, "src1"));
      TPUC_RETURN_IF_ERROR(unused(c, "src2"));
      int axis = i_.iparam[0];
      if (axis < 0 || axis > 3)
        return fail("iparam[0] (axis)", "axis must be 0..3");
      for (int k = 0; k < 4; ++k) {
        uint32_t want = k == axis ? 1 : a.shape[k];
        if (d.shape[k] != want)
          return fail("dst", "shape " + shapeStr(d) + " must equal input shape with axis " +
                                 std::to_string(axis) + " reduced to 1");
      }
      if (isInt(d.dtype) != isInt(a.dtype))
        return fail("dst", "reduce keeps the integer/float kind of its input");
      return round(i_.iparam[1], "iparam[1] (round)");
    }
    case Opcode::Active:
      if (i_.sub_op >= kNumActOps)
        return fail("sub_op", "invalid activation " + std::to_string(i_.sub_op));
      TPUC_RETURN_IF_ERROR(operand(a, "src0", true));
      TPUC_RETURN_IF_ERROR(unused(b, "src1"));
      TPUC_RETURN_IF_ERROR(unused(c, "src2"));
      TPUC_RETURN_IF_ERROR(sameShape(a, d, "src0"));
      if (!isFloat(a.dtype) || !isFloat(d.dtype))
        return fail("dst", "activations operate on float tensors (use lut for int8)");
      return Status::OK();
    case Opcode::Lut:
      TPUC_RETURN_IF_ERROR(operand(a, "src0", true));
      TPUC_RETURN_IF_ERROR(operand(b, "src1", true));
      TPUC_RETURN_IF_ERROR(unused(c, "src2"));
      TPUC_RETURN_IF_ERROR(sameShape(a, d, "src0"));
      if (a.dtype != DType::INT8 && a.dtype != DType::UINT8)
        return fail("src0", "lut index must be int8 or uint8");
      if (b.shape[0] != 1 || b.shape[1] != 1 || b.shape[2] != 1 || b.shape[3] != 256)
        return fail("src1", "lut table must have shape [1,1,1,256]");
      if (b.dtype != d.dtype)
        return fail("dst", "dtype must equal the table dtype");
      return Status::OK();
    case Opcode::Cast:
      TPUC_RETURN_IF_ERROR(operand(a, "src0", true));
      TPUC_RETURN_IF_ERROR(unused(b, "src1"));
      TPUC_RETURN_IF_ERROR(unused(c, "src2"));
      TPUC_RETURN_IF_ERROR(sameShape(a, d, "src0"));
      return round(i_.iparam[0], "iparam[0] (round)");
    case Opcode::Requant: {
      using namespace requant_param;
      TPUC_RETURN_IF_ERROR(operand(a, "src0", true));
      TPUC_RETURN_IF_ERROR(sameShape(a, d, "src0"));
      TPUC_RETURN_IF_ERROR(unused(c, "src2"));
      if (a.dtype != DType::INT32)
        return fail("src0", "requant input must be int32");
      if (!isInt(d.dtype))
        return fail("dst", "requant output must be an integer type");
      if (i_.flags & kFlagPerChannel) {
        TPUC_RETURN_IF_ERROR(operand(b, "src1", true));
        if (b.dtype != DType::INT32 || b.shape[0] != 1 || b.shape[1] != d.shape[1] ||
            b.shape[2] != 1 || b.shape[3] != 2)
          return fail("src1", "per-channel params must be int32 [1,C,1,2]");
      } else {
        TPUC_RETURN_IF_ERROR(unused(b, "src1"));
        int s = i_.iparam[Shift];
        if (s < -31 || s > 62)
          return fail("iparam[1] (shift)", "shift must be in [-31, 62]");
      }
      return round(i_.iparam[Round], "iparam[3] (round)");
    }
    }
    return fail("op", "unknown opcode");
  }

  Status kindsMac(const Operand &d, const Operand &in, const Operand &w,
                  const Operand *bias) const {
    if (isFloat(in.dtype)) {
      if (w.dtype != in.dtype)
        return fail("src1", "weight dtype must equal input dtype");
      if (!isFloat(d.dtype))
        return fail("dst", "float inputs need a float output");
      if (bias && bias->valid() && !isFloat(bias->dtype))
        return fail("src2", "bias must be float");
    } else if (in.dtype == DType::INT8 || in.dtype == DType::UINT8) {
      if (w.dtype != DType::INT8 && w.dtype != DType::UINT8)
        return fail("src1", "integer MAC needs int8/uint8 weights");
      if (d.dtype != DType::INT32)
        return fail("dst", "integer MAC accumulates into int32");
      if (bias && bias->valid() && bias->dtype != DType::INT32)
        return fail("src2", "integer bias must be int32");
    } else {
      return fail("src0", "MAC input must be a float or 8-bit type");
    }
    return Status::OK();
  }

  Status conv() const {
    using namespace conv_param;
    const Operand &o = i_.dst, &in = i_.src[0], &w = i_.src[1], &b = i_.src[2];
    TPUC_RETURN_IF_ERROR(operand(in, "src0", true));
    TPUC_RETURN_IF_ERROR(operand(w, "src1", true));
    if (i_.flags & kFlagBias) {
      TPUC_RETURN_IF_ERROR(operand(b, "src2", true));
      if (b.shape[0] != 1 || b.shape[1] != o.shape[1] || b.shape[2] != 1 || b.shape[3] != 1)
        return fail("src2", "bias must have shape [1,OC,1,1]");
    } else {
      TPUC_RETURN_IF_ERROR(unused(b, "src2"));
    }
    const int32_t *p = i_.iparam;
    if (p[StrideH] < 1 || p[StrideW] < 1 || p[DilH] < 1 || p[DilW] < 1 ||
        p[StrideH] > 4096 || p[StrideW] > 4096 || p[DilH] > 4096 || p[DilW] > 4096)
      return fail("iparam", "strides and dilations must be in [1, 4096]");
    for (int k = PadTop; k <= PadRight; ++k)
      if (p[k] < 0 || p[k] > 4096)
        return fail("iparam", "pads must be in [0, 4096]");
    int64_t g = p[Groups];
    int64_t ic = in.shape[1], oc = o.shape[1];
    if (g < 1 || ic % g || oc % g)
      return fail("iparam[8] (groups)", "groups must divide input and output channels");
    if (w.shape[0] != ic / g || w.shape[1] != oc)
      return fail("src1", "weight shape " + shapeStr(w) + " must be [IC/groups, OC, KH, KW]");
    if (p[PadValue] != 0 &&
        (isFloat(in.dtype) || saturate(p[PadValue], in.dtype) != p[PadValue]))
      return fail("iparam[9] (pad value)",
                  "pad value " + std::to_string(p[PadValue]) +
                      " must be 0 for float inputs and in range for 8-bit ones");
    int64_t kh = w.shape[2], kw = w.shape[3];
    int64_t eh = p[DilH] * (kh - 1) + 1, ew = p[DilW] * (kw - 1) + 1;
    int64_t ph = in.shape[2] + p[PadTop] + p[PadBottom], pw = in.shape[3] + p[PadLeft] + p[PadRight];
    if (ph < eh || pw < ew)
      return fail("src1", "kernel larger than padded input");
    int64_t oh = (ph - eh) / p[StrideH] + 1, ow = (pw - ew) / p[StrideW] + 1;
    if (o.shape[0] != in.shape[0] || o.shape[2] != oh || o.shape[3] != ow)
      return fail("dst", "shape " + shapeStr(o) + " does not match conv output [" +
                             std::to_string(in.shape[0]) + "," + std::to_string(oc) + "," +
                             std::to_string(oh) + "," + std::to_string(ow) + "]");
    TPUC_RETURN_IF_ERROR(work(o.numElements() * uint64_t(ic / g) * uint64_t(kh * kw)));
    return kindsMac(o, in, w, &b);
  }

  Status matmul() const {
    const Operand &o = i_.dst, &l = i_.src[0], &r = i_.src[1], &b = i_.src[2];
    TPUC_RETURN_IF_ERROR(operand(l, "src0", true));
    TPUC_RETURN_IF_ERROR(operand(r, "src1", true));
    if (i_.flags & kFlagBias) {
      TPUC_RETURN_IF_ERROR(operand(b, "src2", true));
      if (b.shape[0] != 1 || b.shape[1] != 1 || b.shape[2] != 1 || b.shape[3] != o.shape[3])
        return fail("src2", "bias must have shape [1,1,1,N]");
    } else {
      TPUC_RETURN_IF_ERROR(unused(b, "src2"));
    }
    const bool trans = i_.flags & kFlagRightTrans;
    if (o.shape[2] != 1 || l.shape[2] != 1 || r.shape[2] != 1)
      return fail("dst", trans ? "matmul operands are [B,M,1,K] x [B,N,1,K]^T -> [B,M,1,N]"
                               : "matmul operands are [B,M,1,K] x [B,K,1,N] -> [B,M,1,N]");
    if ((l.shape[0] != o.shape[0] && l.shape[0] != 1) || (r.shape[0] != o.shape[0] && r.shape[0] != 1))
      return fail("src0", "batch must equal the output batch or be 1");
    const uint32_t rk = trans ? r.shape[3] : r.shape[1], rn = trans ? r.shape[1] : r.shape[3];
    if (l.shape[1] != o.shape[1] || rn != o.shape[3] || l.shape[3] != rk)
      return fail("dst", "shapes " + shapeStr(l) + " x " + shapeStr(r) + " -> " +
                             shapeStr(o) + " are inconsistent");
    TPUC_RETURN_IF_ERROR(work(o.numElements() * uint64_t(l.shape[3])));
    return kindsMac(o, l, r, &b);
  }

  Status gather() const {
    const Operand &d = i_.dst, &src = i_.src[0], &idx = i_.src[1];
    TPUC_RETURN_IF_ERROR(operand(src, "src0", false));
    TPUC_RETURN_IF_ERROR(operand(idx, "src1", false));
    TPUC_RETURN_IF_ERROR(unused(i_.src[2], "src2"));
    // The row addresses depend on data, which only the DDR side computes.
    if (src.space != Space::DDR)
      return fail("src0", "gather source must be in DDR");
    if (idx.space != Space::DDR)
      return fail("src1", "gather indices must be in DDR");
    if (idx.dtype != DType::F32 && idx.dtype != DType::INT32)
      return fail("src1", std::string("gather indices must be f32 or int32, not ") +
                              dtypeName(idx.dtype));
    if (src.dtype != d.dtype)
      return fail("dst", std::string("dtype ") + dtypeName(d.dtype) +
                             " must equal the source dtype " + dtypeName(src.dtype));
    int axis = i_.iparam[gather_param::Axis];
    if (axis < 0 || axis > 3)
      return fail("iparam[0] (axis)", "axis must be 0..3, not " + std::to_string(axis));
    for (int k = 0; k < 4; ++k)
      if (k != axis && d.shape[k] != src.shape[k])
        return fail("dst", "shape " + shapeStr(d) + " must equal the source shape " +
                               shapeStr(src) + " except along axis " + std::to_string(axis));
    if (idx.numElements() != d.shape[axis])
      return fail("src1", "shape " + shapeStr(idx) + " must hold " +
                              std::to_string(d.shape[axis]) + " indices (dst dim " +
                              std::to_string(axis) + ")");
    return Status::OK();
  }

  Status pool() const {
    using namespace pool_param;
    const Operand &o = i_.dst, &in = i_.src[0];
    if (i_.sub_op >= kNumPoolModes)
      return fail("sub_op", "invalid pool mode");
    TPUC_RETURN_IF_ERROR(operand(in, "src0", true));
    TPUC_RETURN_IF_ERROR(unused(i_.src[1], "src1"));
    TPUC_RETURN_IF_ERROR(unused(i_.src[2], "src2"));
    const int32_t *p = i_.iparam;
    if (p[KH] < 1 || p[KW] < 1 || p[StrideH] < 1 || p[StrideW] < 1 ||
        p[KH] > 4096 || p[KW] > 4096 || p[StrideH] > 4096 || p[StrideW] > 4096)
      return fail("iparam", "kernel and strides must be in [1, 4096]");
    for (int k = PadTop; k <= PadRight; ++k)
      if (p[k] < 0 || p[k] > 4096)
        return fail("iparam", "pads must be in [0, 4096]");
    if (p[PadTop] >= p[KH] || p[PadBottom] >= p[KH] || p[PadLeft] >= p[KW] || p[PadRight] >= p[KW])
      return fail("iparam", "pads must be smaller than the kernel");
    int64_t ph = in.shape[2] + p[PadTop] + p[PadBottom], pw = in.shape[3] + p[PadLeft] + p[PadRight];
    if (ph < p[KH] || pw < p[KW])
      return fail("iparam", "kernel larger than padded input");
    int64_t oh = (ph - p[KH]) / p[StrideH] + 1, ow = (pw - p[KW]) / p[StrideW] + 1;
    if (o.shape[0] != in.shape[0] || o.shape[1] != in.shape[1] || o.shape[2] != oh || o.shape[3] != ow)
      return fail("dst", "shape " + shapeStr(o) + " does not match pool output");
    TPUC_RETURN_IF_ERROR(work(o.numElements() * uint64_t(p[KH]) * uint64_t(p[KW])));
    if (isInt(o.dtype) != isInt(in.dtype))
      return fail("dst", "pooling keeps the integer/float kind of its input");
    return round(p[Round], "iparam[8] (round)");
  }

private:
  const Instruction &i_;
  size_t index_;
  const Target &t_;
  const std::vector<DdrRegion> &ddr_;
};
} // namespace

Status validateInstruction(const Instruction &inst, size_t index,
                           const Target &t, const std::vector<DdrRegion> &ddr) {
  return Checker(inst, index, t, ddr).run();
}

Status validateStreams(const std::vector<Instruction> &tiu,
                       const std::vector<Instruction> &gdma) {
  auto check = [](const std::vector<Instruction> &s, Engine e, size_t other) -> Status {
    for (size_t k = 0; k < s.size(); ++k) {
      const Instruction &i = s[k];
      std::string where = std::string(engineName(e)) + " instruction #" + std::to_string(k);
      if (i.engine != e)
        return Status::error(where + ": engine field says " + engineName(i.engine));
      if (engineOf(i.op) != e)
        return Status::error(where + ": opcode " + opcodeName(i.op) + " belongs to the " +
                             engineName(engineOf(i.op)) + " engine");
      if (i.id != k + 1)
        return Status::error(where + ": id " + std::to_string(i.id) +
                             " must equal its 1-based position " + std::to_string(k + 1));
      if (i.wait_id > other)
        return Status::error(where + ": wait_id " + std::to_string(i.wait_id) +
                             " exceeds the other engine's stream length " + std::to_string(other));
    }
    return Status::OK();
  };
  TPUC_RETURN_IF_ERROR(check(tiu, Engine::TIU, gdma.size()));
  return check(gdma, Engine::GDMA, tiu.size());
}

} // namespace chip
} // namespace tpuc
