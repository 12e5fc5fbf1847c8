//===- RuntimeModule.cpp - pybind11 module tpuc._runtime ------------------===//
//
// Thin bindings over the chip library: target loading, instruction assembly,
// bmodel reading/writing, the cmodel simulator and the bmodel runtime. Every
// failing Status becomes a tpuc._runtime.ChipError carrying its message.
// Tensor data crosses the boundary as bytes; tpuc.runtime converts to numpy.
//
//===----------------------------------------------------------------------===//
#include "tpuc/Chip/BModel.h"
#include "tpuc/Chip/CModel.h"
#include "tpuc/Chip/Float16.h"
#include "tpuc/Chip/ISA.h"
#include "tpuc/Chip/Log.h"
#include "tpuc/Chip/QuantMath.h"
#include "tpuc/Chip/Runtime.h"
#include "tpuc/Chip/Target.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <memory>

namespace py = pybind11;
using namespace tpuc::chip;

namespace {

class ChipError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

void check(const Status &s) {
  if (!s.ok())
    throw ChipError(s.message());
}

std::string bufferBytes(const py::buffer &b) {
  py::buffer_info info = b.request();
  if (!info.strides.empty()) {
    // Require C-contiguous data; the Python wrapper makes arrays contiguous.
    py::ssize_t expect = info.itemsize;
    for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
      if (info.shape[size_t(d)] > 1 && info.strides[size_t(d)] != expect)
        throw ChipError("buffer must be C-contiguous");
      expect *= info.shape[size_t(d)];
    }
  }
  return std::string(static_cast<const char *>(info.ptr), size_t(info.size * info.itemsize));
}

std::vector<uint8_t> bufferVec(const py::buffer &b) {
  std::string s = bufferBytes(b);
  return std::vector<uint8_t>(s.begin(), s.end());
}

py::bytes toBytes(const std::vector<uint8_t> &v) {
  return py::bytes(reinterpret_cast<const char *>(v.data()), v.size());
}

Operand makeOperand(Space space, uint64_t addr, std::vector<uint32_t> shape,
                    std::vector<int32_t> stride, DType dtype, uint16_t start_lane) {
  if (shape.size() != 4)
    throw ChipError("operand shape must have 4 dims [N, C, H, W]");
  Operand o = space == Space::LMEM ? lmemTensor(addr, shape[0], shape[1], shape[2], shape[3], dtype, start_lane)
                                   : ddrTensor(addr, shape[0], shape[1], shape[2], shape[3], dtype);
  o.space = space;
  if (!stride.empty()) {
    if (stride.size() != 4)
      throw ChipError("operand stride must have 4 entries");
    for (int d = 0; d < 4; ++d)
      o.stride[d] = stride[size_t(d)];
  }
  return o;
}

Operand optOperand(const py::object &o) {
  if (o.is_none())
    return Operand();
  return o.cast<Operand>();
}

py::dict statsRecord(const InstRecord &r) {
  py::dict d;
  d["engine"] = engineName(r.engine);
  d["id"] = r.id;
  d["name"] = r.name;
  d["start"] = r.start;
  d["end"] = r.end;
  d["cycles"] = r.end - r.start;
  d["work"] = r.work;
  d["bank_conflict"] = r.bank_conflict;
  return d;
}

std::array<uint32_t, 4> arr4u(const Operand &o) { return {o.shape[0], o.shape[1], o.shape[2], o.shape[3]}; }
std::array<int32_t, 4> arr4s(const Operand &o) { return {o.stride[0], o.stride[1], o.stride[2], o.stride[3]}; }

} // namespace

PYBIND11_MODULE(_runtime, m) {
  m.doc() = "tpuc chip runtime: targets, ISA assembly, bmodel I/O and the cmodel simulator";

  static py::exception<ChipError> exc(m, "ChipError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const ChipError &e) {
      // A damaged file's names need not be UTF-8: escape their bytes.
      std::string msg = e.what();
      PyObject *s = PyUnicode_DecodeUTF8(msg.data(), Py_ssize_t(msg.size()), "backslashreplace");
      if (!s)
        return py::set_error(exc, "(undecodable error message)");
      PyErr_SetObject(exc.ptr(), s);
      Py_DECREF(s);
    }
  });

  py::enum_<DType>(m, "DType")
      .value("F32", DType::F32)
      .value("F16", DType::F16)
      .value("BF16", DType::BF16)
      .value("INT8", DType::INT8)
      .value("UINT8", DType::UINT8)
      .value("INT32", DType::INT32);
  py::enum_<Engine>(m, "Engine").value("TIU", Engine::TIU).value("GDMA", Engine::GDMA);
  py::enum_<Space>(m, "Space").value("NONE", Space::None).value("DDR", Space::DDR).value("LMEM", Space::LMEM);
  py::enum_<Opcode>(m, "Opcode")
      .value("DMA_MOVE", Opcode::DmaMove)
      .value("DMA_FILL", Opcode::DmaFill)
      .value("DMA_GATHER", Opcode::DmaGather)
      .value("CONV", Opcode::Conv)
      .value("MATMUL", Opcode::MatMul)
      .value("BINARY", Opcode::Binary)
      .value("POOL", Opcode::Pool)
      .value("REDUCE", Opcode::Reduce)
      .value("ACTIVE", Opcode::Active)
      .value("LUT", Opcode::Lut)
      .value("CAST", Opcode::Cast)
      .value("REQUANT", Opcode::Requant);
  py::enum_<BinaryOp>(m, "BinaryOp")
      .value("ADD", BinaryOp::Add)
      .value("SUB", BinaryOp::Sub)
      .value("MUL", BinaryOp::Mul)
      .value("DIV", BinaryOp::Div)
      .value("MAX", BinaryOp::Max)
      .value("MIN", BinaryOp::Min);
  py::enum_<PoolMode>(m, "PoolMode").value("MAX", PoolMode::Max).value("AVG", PoolMode::Avg);
  py::enum_<ReduceMode>(m, "ReduceMode")
      .value("SUM", ReduceMode::Sum)
      .value("MEAN", ReduceMode::Mean)
      .value("MAX", ReduceMode::Max)
      .value("MIN", ReduceMode::Min);
  py::enum_<ActOp>(m, "ActOp")
      .value("RELU", ActOp::Relu)
      .value("LEAKY_RELU", ActOp::LeakyRelu)
      .value("SIGMOID", ActOp::Sigmoid)
      .value("TANH", ActOp::Tanh)
      .value("GELU", ActOp::Gelu)
      .value("SILU", ActOp::Silu)
      .value("EXP", ActOp::Exp)
      .value("LOG", ActOp::Log)
      .value("SQRT", ActOp::Sqrt)
      .value("RSQRT", ActOp::Rsqrt)
      .value("ERF", ActOp::Erf)
      .value("ABS", ActOp::Abs)
      .value("NEG", ActOp::Neg)
      .value("RECIPROCAL", ActOp::Reciprocal)
      .value("SQUARE", ActOp::Square)
      .value("CLIP", ActOp::Clip)
      .value("HARD_SIGMOID", ActOp::HardSigmoid)
      .value("SOFTPLUS", ActOp::Softplus)
      .value("GELU_TANH", ActOp::GeluTanh);
  py::enum_<RoundMode>(m, "RoundMode")
      .value("HALF_AWAY_FROM_ZERO", RoundMode::HalfAwayFromZero)
      .value("HALF_UP", RoundMode::HalfUp)
      .value("HALF_TO_EVEN", RoundMode::HalfToEven)
      .value("TOWARD_ZERO", RoundMode::TowardZero)
      .value("DOWN", RoundMode::Down)
      .value("UP", RoundMode::Up);

  m.attr("ISA_VERSION") = kIsaVersion;
  m.attr("BMODEL_VERSION") = kBModelVersion;
  m.attr("INSTRUCTION_BYTES") = kInstBytes;
  m.def("dtype_size", [](DType t) { return dtypeSize(t); });

  // --- Target -----------------------------------------------------------------
  py::class_<Target>(m, "Target")
      .def(py::init<>())
      .def_readwrite("name", &Target::name)
      .def_readwrite("description", &Target::description)
      .def_readwrite("clock_mhz", &Target::clock_mhz)
      .def_readwrite("lanes", &Target::lanes)
      .def_readwrite("lmem_bytes_per_lane", &Target::lmem_bytes_per_lane)
      .def_readwrite("lmem_banks", &Target::lmem_banks)
      .def_readwrite("eu_f32", &Target::eu_f32)
      .def_readwrite("eu_f16", &Target::eu_f16)
      .def_readwrite("eu_bf16", &Target::eu_bf16)
      .def_readwrite("eu_int8", &Target::eu_int8)
      .def_readwrite("ddr_bytes", &Target::ddr_bytes)
      .def_readwrite("ddr_bytes_per_cycle", &Target::ddr_bytes_per_cycle)
      .def_readwrite("ddr_latency_cycles", &Target::ddr_latency_cycles)
      .def_readwrite("ddr_burst_bytes", &Target::ddr_burst_bytes)
      .def_readwrite("gdma_issue_cycles", &Target::gdma_issue_cycles)
      .def_readwrite("gdma_lmem_bytes_per_cycle", &Target::gdma_lmem_bytes_per_cycle)
      .def_readwrite("gdma_queue_depth", &Target::gdma_queue_depth)
      .def_readwrite("tiu_issue_cycles", &Target::tiu_issue_cycles)
      .def_readwrite("tiu_sfu_factor", &Target::tiu_sfu_factor)
      .def_readwrite("tiu_div_factor", &Target::tiu_div_factor)
      .def_readwrite("bank_conflict_pct", &Target::bank_conflict_pct)
      .def("eu_for", &Target::euFor)
      .def("to_json", &Target::toJson)
      .def("validate", [](const Target &t) { check(t.validate()); })
      .def("__repr__", [](const Target &t) {
        return "<Target " + t.name + ": " + std::to_string(t.lanes) + " lanes x " +
               std::to_string(t.lmem_bytes_per_lane) + " B LMEM>";
      });
  m.def("load_target", [](const std::string &path) {
    Target t;
    check(loadTarget(path, t));
    return t;
  }, py::arg("path"), "Load a target description JSON file (chips/*.json).");
  m.def("parse_target", [](const std::string &json) {
    Target t;
    check(parseTarget(json, t));
    return t;
  }, py::arg("json"));

  // --- Operands and instructions -----------------------------------------------
  py::class_<Operand>(m, "Operand")
      .def(py::init(&makeOperand), py::arg("space"), py::arg("addr"), py::arg("shape"),
           py::arg("stride") = std::vector<int32_t>(), py::arg("dtype") = DType::F32,
           py::arg("start_lane") = 0)
      .def(py::init<>())
      .def_readwrite("addr", &Operand::addr)
      .def_readwrite("space", &Operand::space)
      .def_readwrite("dtype", &Operand::dtype)
      .def_readwrite("start_lane", &Operand::start_lane)
      .def_property("shape", &arr4u, [](Operand &o, std::array<uint32_t, 4> s) {
        for (int d = 0; d < 4; ++d) o.shape[d] = s[size_t(d)];
      })
      .def_property("stride", &arr4s, [](Operand &o, std::array<int32_t, 4> s) {
        for (int d = 0; d < 4; ++d) o.stride[d] = s[size_t(d)];
      })
      .def("__repr__", [](const Operand &o) { return "<Operand " + o.str() + ">"; });
  m.def("ddr_tensor", [](uint64_t addr, std::vector<uint32_t> shape, DType t, std::vector<int32_t> stride) {
    return makeOperand(Space::DDR, addr, shape, stride, t, 0);
  }, py::arg("addr"), py::arg("shape"), py::arg("dtype"), py::arg("stride") = std::vector<int32_t>());
  m.def("lmem_tensor", [](uint64_t addr, std::vector<uint32_t> shape, DType t, uint16_t lane,
                          std::vector<int32_t> stride) {
    return makeOperand(Space::LMEM, addr, shape, stride, t, lane);
  }, py::arg("addr"), py::arg("shape"), py::arg("dtype"), py::arg("start_lane") = 0,
     py::arg("stride") = std::vector<int32_t>());
  m.def("lmem_bytes_per_lane", [](std::vector<uint32_t> s, DType t, uint16_t lane, uint32_t lanes) {
    if (s.size() != 4) throw ChipError("shape must have 4 dims");
    return lmemBytesPerLane(s[0], s[1], s[2], s[3], t, lane, lanes);
  }, py::arg("shape"), py::arg("dtype"), py::arg("start_lane"), py::arg("lanes"));

  py::class_<Instruction>(m, "Instruction")
      .def(py::init<>())
      .def_readwrite("op", &Instruction::op)
      .def_readwrite("engine", &Instruction::engine)
      .def_readwrite("sub_op", &Instruction::sub_op)
      .def_readwrite("flags", &Instruction::flags)
      .def_readwrite("id", &Instruction::id)
      .def_readwrite("wait_id", &Instruction::wait_id)
      .def_readwrite("dst", &Instruction::dst)
      .def_property("src",
                    [](const Instruction &i) { return std::vector<Operand>(i.src, i.src + 3); },
                    [](Instruction &i, std::vector<Operand> v) {
                      if (v.size() > 3) throw ChipError("at most 3 sources");
                      for (size_t k = 0; k < 3; ++k) i.src[k] = k < v.size() ? v[k] : Operand();
                    })
      .def("set_src", [](Instruction &i, int k, const Operand &o) {
        if (k < 0 || k > 2) throw ChipError("source index must be 0..2");
        i.src[k] = o;
      })
      .def_property("iparam",
                    [](const Instruction &i) { return std::vector<int32_t>(i.iparam, i.iparam + kNumIParams); },
                    [](Instruction &i, std::vector<int32_t> v) {
                      if (v.size() > size_t(kNumIParams)) throw ChipError("too many iparams");
                      for (size_t k = 0; k < size_t(kNumIParams); ++k) i.iparam[k] = k < v.size() ? v[k] : 0;
                    })
      .def_property("fparam",
                    [](const Instruction &i) { return std::vector<float>(i.fparam, i.fparam + kNumFParams); },
                    [](Instruction &i, std::vector<float> v) {
                      if (v.size() > size_t(kNumFParams)) throw ChipError("too many fparams");
                      for (size_t k = 0; k < size_t(kNumFParams); ++k) i.fparam[k] = k < v.size() ? v[k] : 0.f;
                    })
      .def_property_readonly("name", &instructionName)
      .def("encode", [](const Instruction &i) {
        std::vector<uint8_t> b(kInstBytes);
        encodeInstruction(i, b.data());
        return toBytes(b);
      })
      .def_static("decode", [](const py::buffer &b) {
        std::string s = bufferBytes(b);
        if (s.size() != kInstBytes)
          throw ChipError("instruction record must be " + std::to_string(kInstBytes) + " bytes");
        Instruction i;
        check(decodeInstruction(reinterpret_cast<const uint8_t *>(s.data()), i));
        return i;
      })
      .def("cycles", [](const Instruction &i, const Target &t) { return instructionCycles(i, t); })
      .def("validate", [](const Instruction &i, const Target &t, uint64_t ddr_bytes) {
        check(validateInstruction(i, 0, t, {{0, ddr_bytes, "DDR"}}));
      }, py::arg("target"), py::arg("ddr_bytes"))
      .def("__repr__", [](const Instruction &i) {
        return "<Instruction " + std::string(engineName(i.engine)) + " id " + std::to_string(i.id) +
               " wait " + std::to_string(i.wait_id) + " " + instructionName(i) + ">";
      });

  m.def("make_conv", [](const Operand &out, const Operand &in, const Operand &w, const py::object &bias,
                        std::array<int, 2> stride, std::array<int, 2> dil, std::array<int, 4> pads,
                        int groups, bool relu, bool accumulate, int pad_value) {
    ConvParams p;
    p.stride_h = stride[0]; p.stride_w = stride[1];
    p.dilation_h = dil[0]; p.dilation_w = dil[1];
    p.pad_top = pads[0]; p.pad_bottom = pads[1]; p.pad_left = pads[2]; p.pad_right = pads[3];
    p.groups = groups; p.relu = relu; p.accumulate = accumulate; p.pad_value = pad_value;
    return makeConv(out, in, w, optOperand(bias), p);
  }, py::arg("out"), py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(),
     py::arg("stride") = std::array<int, 2>{1, 1}, py::arg("dilation") = std::array<int, 2>{1, 1},
     py::arg("pads") = std::array<int, 4>{0, 0, 0, 0}, py::arg("groups") = 1, py::arg("relu") = false,
     py::arg("accumulate") = false, py::arg("pad_value") = 0,
     "pads are (top, bottom, left, right); weight is [IC/groups, OC, KH, KW]; "
     "accumulate adds the result to out; pad_value fills the padding of 8-bit inputs");
  m.def("make_matmul", [](const Operand &out, const Operand &l, const Operand &r, const py::object &bias,
                          bool acc, bool relu, bool right_trans) {
          return makeMatMul(out, l, r, optOperand(bias), acc, relu, right_trans);
        },
        py::arg("out"), py::arg("left"), py::arg("right"), py::arg("bias") = py::none(),
        py::arg("accumulate") = false, py::arg("relu") = false, py::arg("right_trans") = false,
        "right_trans: right is [B,N,1,K] and out = left x right^T");
  m.def("make_binary", &makeBinary, py::arg("op"), py::arg("out"), py::arg("a"), py::arg("b"),
        py::arg("relu") = false);
  m.def("make_binary_scalar", &makeBinaryScalar, py::arg("op"), py::arg("out"), py::arg("a"),
        py::arg("scalar"), py::arg("scalar_first") = false);
  m.def("make_pool", [](PoolMode mode, const Operand &out, const Operand &in, std::array<int, 2> k,
                        std::array<int, 2> stride, std::array<int, 4> pads, bool cip, RoundMode rm) {
    PoolParams p;
    p.kh = k[0]; p.kw = k[1]; p.stride_h = stride[0]; p.stride_w = stride[1];
    p.pad_top = pads[0]; p.pad_bottom = pads[1]; p.pad_left = pads[2]; p.pad_right = pads[3];
    p.count_include_pad = cip; p.round = rm;
    return makePool(mode, out, in, p);
  }, py::arg("mode"), py::arg("out"), py::arg("input"), py::arg("kernel"),
     py::arg("stride") = std::array<int, 2>{1, 1}, py::arg("pads") = std::array<int, 4>{0, 0, 0, 0},
     py::arg("count_include_pad") = false, py::arg("round") = RoundMode::HalfAwayFromZero);
  m.def("make_reduce", &makeReduce, py::arg("mode"), py::arg("out"), py::arg("input"), py::arg("axis"),
        py::arg("round") = RoundMode::HalfAwayFromZero);
  m.def("make_active", &makeActive, py::arg("op"), py::arg("out"), py::arg("input"),
        py::arg("alpha") = 0.f, py::arg("beta") = 0.f);
  m.def("make_lut", &makeLut, py::arg("out"), py::arg("index"), py::arg("table"));
  m.def("make_cast", &makeCast, py::arg("out"), py::arg("input"), py::arg("round") = RoundMode::HalfToEven);
  m.def("make_requant", &makeRequant, py::arg("out"), py::arg("input"), py::arg("multiplier"),
        py::arg("shift"), py::arg("zero_point") = 0, py::arg("round") = RoundMode::HalfAwayFromZero);
  m.def("make_requant_per_channel", &makeRequantPerChannel, py::arg("out"), py::arg("input"),
        py::arg("params"), py::arg("zero_point") = 0, py::arg("round") = RoundMode::HalfAwayFromZero);
  m.def("make_dma_move", &makeDmaMove, py::arg("dst"), py::arg("src"), py::arg("round") = RoundMode::HalfToEven);
  m.def("make_dma_fill", &makeDmaFill, py::arg("dst"), py::arg("value"));
  m.def("make_dma_gather", &makeDmaGather, py::arg("dst"), py::arg("src"), py::arg("index"),
        py::arg("axis"));

  py::class_<StreamBuilder>(m, "StreamBuilder")
      .def(py::init<>())
      .def("tiu", &StreamBuilder::tiu, py::arg("inst"), py::arg("wait_gdma") = 0,
           "Append a TIU instruction; returns its id.")
      .def("gdma", &StreamBuilder::gdma, py::arg("inst"), py::arg("wait_tiu") = 0,
           "Append a GDMA instruction; returns its id.")
      .def_property_readonly("last_tiu_id", &StreamBuilder::lastTiuId)
      .def_property_readonly("last_gdma_id", &StreamBuilder::lastGdmaId)
      .def_property_readonly("tiu_stream", [](StreamBuilder &b) { return b.tiuStream(); })
      .def_property_readonly("gdma_stream", [](StreamBuilder &b) { return b.gdmaStream(); });

  // --- bmodel -------------------------------------------------------------------
  py::class_<TensorInfo>(m, "TensorInfo")
      .def(py::init([](std::string name, DType dt, std::vector<uint32_t> shape, float scale, int32_t zp,
                       uint64_t addr) {
             TensorInfo t;
             t.name = std::move(name); t.dtype = dt; t.shape = std::move(shape);
             t.scale = scale; t.zero_point = zp; t.ddr_addr = addr;
             return t;
           }),
           py::arg("name"), py::arg("dtype"), py::arg("shape"), py::arg("scale") = 1.0f,
           py::arg("zero_point") = 0, py::arg("ddr_addr") = 0)
      .def_readwrite("name", &TensorInfo::name)
      .def_readwrite("dtype", &TensorInfo::dtype)
      .def_readwrite("shape", &TensorInfo::shape)
      .def_readwrite("scale", &TensorInfo::scale)
      .def_readwrite("zero_point", &TensorInfo::zero_point)
      .def_readwrite("ddr_addr", &TensorInfo::ddr_addr)
      .def_property_readonly("byte_size", &TensorInfo::byteSize)
      .def("__repr__", [](const TensorInfo &t) {
        std::string s = "<TensorInfo " + t.name + " " + dtypeName(t.dtype) + " [";
        for (size_t k = 0; k < t.shape.size(); ++k) s += (k ? "," : "") + std::to_string(t.shape[k]);
        return s + "] @" + std::to_string(t.ddr_addr) + ">";
      });
  py::class_<NamedTensor>(m, "NamedTensor")
      .def(py::init([](TensorInfo info, Engine e, uint32_t after) {
             NamedTensor t; t.info = std::move(info); t.engine = e; t.after_id = after; return t;
           }), py::arg("info"), py::arg("engine"), py::arg("after_id"))
      .def_readwrite("info", &NamedTensor::info)
      .def_readwrite("engine", &NamedTensor::engine)
      .def_readwrite("after_id", &NamedTensor::after_id);
  py::class_<DdrPlan>(m, "DdrPlan")
      .def(py::init([](uint64_t wa, uint64_t ws, uint64_t aa, uint64_t as) {
             DdrPlan p; p.weight_addr = wa; p.weight_size = ws; p.activation_addr = aa; p.activation_size = as;
             return p;
           }), py::arg("weight_addr") = 0, py::arg("weight_size") = 0, py::arg("activation_addr") = 0,
           py::arg("activation_size") = 0)
      .def_readwrite("weight_addr", &DdrPlan::weight_addr)
      .def_readwrite("weight_size", &DdrPlan::weight_size)
      .def_readwrite("activation_addr", &DdrPlan::activation_addr)
      .def_readwrite("activation_size", &DdrPlan::activation_size)
      .def_property_readonly("total_bytes", &DdrPlan::totalBytes);
  py::class_<Network>(m, "Network")
      .def(py::init([](std::string name, std::vector<TensorInfo> in, std::vector<TensorInfo> out,
                       std::vector<Instruction> tiu, std::vector<Instruction> gdma,
                       std::vector<NamedTensor> tensors) {
             Network n; n.name = std::move(name); n.inputs = std::move(in); n.outputs = std::move(out);
             n.tiu = std::move(tiu); n.gdma = std::move(gdma); n.tensors = std::move(tensors);
             return n;
           }), py::arg("name"), py::arg("inputs"), py::arg("outputs"), py::arg("tiu"), py::arg("gdma"),
           py::arg("tensors") = std::vector<NamedTensor>())
      .def_readwrite("name", &Network::name)
      .def_readwrite("inputs", &Network::inputs)
      .def_readwrite("outputs", &Network::outputs)
      .def_readwrite("tiu", &Network::tiu)
      .def_readwrite("gdma", &Network::gdma)
      .def_readwrite("tensors", &Network::tensors)
      .def_readwrite("lanes", &Network::lanes);
  py::class_<BModel>(m, "BModel")
      .def(py::init([](Target t, DdrPlan p, const py::buffer &w, std::vector<Network> nets, std::string prod) {
             BModel b; b.target = std::move(t); b.plan = p; b.weights = bufferVec(w);
             b.networks = std::move(nets); b.producer = std::move(prod);
             return b;
           }), py::arg("target"), py::arg("plan"), py::arg("weights"), py::arg("networks"),
           py::arg("producer") = "")
      .def_readwrite("target", &BModel::target)
      .def_readwrite("plan", &BModel::plan)
      .def_property("weights", [](const BModel &b) { return toBytes(b.weights); },
                    [](BModel &b, const py::buffer &w) { b.weights = bufferVec(w); })
      .def_readwrite("networks", &BModel::networks)
      .def_readwrite("producer", &BModel::producer)
      .def("validate", [](const BModel &b) { check(validateBModel(b)); });
  m.def("serialize_bmodel", [](const BModel &b, bool validate) {
    std::vector<uint8_t> out;
    check(serializeBModel(b, out, validate));
    return toBytes(out);
  }, py::arg("model"), py::arg("validate") = true,
     "Encode a bmodel; validate=False exists only to craft invalid files for tests.");
  m.def("write_bmodel", [](const BModel &b, const std::string &path) { check(writeBModel(b, path)); },
        py::arg("model"), py::arg("path"));
  m.def("read_bmodel", [](const std::string &path) {
    BModel b;
    check(readBModel(path, b));
    return b;
  }, py::arg("path"));
  m.def("parse_bmodel", [](const py::buffer &data) {
    std::string s = bufferBytes(data);
    BModel b;
    check(parseBModel(reinterpret_cast<const uint8_t *>(s.data()), s.size(), b));
    return b;
  }, py::arg("data"));
  m.def("fnv1a64", [](const py::buffer &data) {
    std::string s = bufferBytes(data);
    return fnv1a64(reinterpret_cast<const uint8_t *>(s.data()), s.size());
  });

  // --- Simulation ---------------------------------------------------------------
  py::class_<RunStats>(m, "RunStats")
      .def_readonly("total_cycles", &RunStats::total_cycles)
      .def_readonly("tiu_busy_cycles", &RunStats::tiu_busy_cycles)
      .def_readonly("gdma_busy_cycles", &RunStats::gdma_busy_cycles)
      .def_readonly("tiu_instructions", &RunStats::tiu_instructions)
      .def_readonly("gdma_instructions", &RunStats::gdma_instructions)
      .def_readonly("macs", &RunStats::macs)
      .def_readonly("gdma_bytes", &RunStats::gdma_bytes)
      .def_readonly("bank_conflicts", &RunStats::bank_conflicts)
      .def_readonly("clock_mhz", &RunStats::clock_mhz)
      .def_property_readonly("tiu_utilization", &RunStats::tiuUtilization)
      .def_property_readonly("gdma_utilization", &RunStats::gdmaUtilization)
      .def_property_readonly("microseconds", &RunStats::microseconds)
      .def_property_readonly("records", [](const RunStats &s) {
        py::list l;
        for (const auto &r : s.records) l.append(statsRecord(r));
        return l;
      })
      .def("trace_json", [](const RunStats &s, const std::string &title) { return traceJson(s, title); },
           py::arg("title") = "tpuc cmodel")
      .def("write_trace", [](const RunStats &s, const std::string &path, const std::string &title) {
        check(writeTrace(s, title, path));
      }, py::arg("path"), py::arg("title") = "tpuc cmodel");

  py::class_<CModel>(m, "Simulator")
      .def(py::init([](const Target &t, uint64_t ddr_bytes) {
             auto c = std::make_unique<CModel>();
             check(c->init(t, ddr_bytes));
             return c;
           }), py::arg("target"), py::arg("ddr_bytes"))
      .def_property_readonly("ddr_bytes", &CModel::ddrSize)
      .def("write_ddr", [](CModel &c, uint64_t addr, const py::buffer &b) {
        std::string s = bufferBytes(b);
        check(c.writeDdr(addr, s.data(), s.size()));
      }, py::arg("addr"), py::arg("data"))
      .def("read_ddr", [](CModel &c, uint64_t addr, uint64_t n) {
        std::vector<uint8_t> v(n);
        check(c.readDdr(addr, v.data(), n));
        return toBytes(v);
      }, py::arg("addr"), py::arg("size"))
      .def("read_lmem", [](CModel &c, uint32_t lane, uint64_t addr, uint64_t n) {
        const Target &t = c.target();
        if (lane >= t.lanes || addr > t.lmem_bytes_per_lane || n > t.lmem_bytes_per_lane - addr)
          throw ChipError("LMEM read out of range");
        const uint8_t *p = c.lmem() + uint64_t(lane) * t.lmem_bytes_per_lane + addr;
        return py::bytes(reinterpret_cast<const char *>(p), n);
      }, py::arg("lane"), py::arg("addr"), py::arg("size"))
      .def("run", [](CModel &c, const std::vector<Instruction> &tiu, const std::vector<Instruction> &gdma) {
        RunStats s;
        Status st;
        {
          py::gil_scoped_release nogil;
          st = c.run(tiu, gdma, s);
        }
        check(st);
        return s;
      }, py::arg("tiu"), py::arg("gdma"));

  py::class_<Runtime>(m, "Runtime")
      .def(py::init([](const std::string &path) {
             auto r = std::make_unique<Runtime>();
             check(r->load(path));
             return r;
           }), py::arg("path"))
      .def_static("from_bytes", [](const py::buffer &b) {
        std::string s = bufferBytes(b);
        auto r = std::make_unique<Runtime>();
        check(r->loadFromMemory(reinterpret_cast<const uint8_t *>(s.data()), s.size()));
        return r;
      })
      .def_static("from_model", [](const BModel &m) {
        auto r = std::make_unique<Runtime>();
        check(r->loadModel(m));
        return r;
      })
      .def_property_readonly("model", &Runtime::model)
      .def("run", [](Runtime &r, const py::dict &inputs, size_t net, bool dump,
                     const py::object &progress) {
        std::map<std::string, std::vector<uint8_t>> in;
        for (auto kv : inputs)
          in[kv.first.cast<std::string>()] = bufferVec(kv.second.cast<py::buffer>());
        RunResult res;
        Status st;
        Runtime::Progress report;
        // A Python error in the callback is kept and raised after the run.
        std::unique_ptr<py::error_already_set> callbackError;
        if (!progress.is_none())
          report = [&](uint64_t done, uint64_t total) {
            py::gil_scoped_acquire gil;
            if (callbackError)
              return;
            try {
              progress(done, total);
            } catch (py::error_already_set &e) {
              callbackError = std::make_unique<py::error_already_set>(std::move(e));
            }
          };
        {
          py::gil_scoped_release nogil;
          st = r.run(net, in, dump, res, report);
        }
        if (callbackError)
          throw std::move(*callbackError);
        check(st);
        py::dict outs, tensors;
        for (const auto &kv : res.outputs) outs[py::str(kv.first)] = toBytes(kv.second);
        for (const auto &kv : res.tensors) tensors[py::str(kv.first)] = toBytes(kv.second);
        return py::make_tuple(outs, tensors, res.stats);
      }, py::arg("inputs"), py::arg("net") = 0, py::arg("dump_tensors") = false,
         py::arg("progress") = py::none());

  // --- Bit-exact helpers shared with the compiler (for tests and tools) --------
  m.def("f32_to_f16_bits", &f32ToF16);
  m.def("f16_bits_to_f32", &f16ToF32);
  m.def("f32_to_bf16_bits", &f32ToBF16);
  m.def("bf16_bits_to_f32", &bf16ToF32);
  m.def("requantize", [](int32_t x, int32_t mult, int shift, int32_t zp, RoundMode rm, DType t) {
    return requantize(x, mult, shift, zp, rm, t);
  }, py::arg("x"), py::arg("multiplier"), py::arg("shift"), py::arg("zero_point"), py::arg("round"),
     py::arg("dtype"));
  m.def("rounding_right_shift", &roundingRightShift);
  m.def("set_log_level", [](int level) { setLogLevel(static_cast<LogLevel>(level)); });
}
