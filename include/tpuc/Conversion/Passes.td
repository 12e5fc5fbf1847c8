#ifndef TPUC_CONVERSION_PASSES
#define TPUC_CONVERSION_PASSES
include "mlir/Pass/PassBase.td"

def ConvertTopToTpu : Pass<"convert-top-to-tpu", "::mlir::ModuleOp"> {
  let summary = "Lower every Top op to Tpu ops for a quantization mode";
  let description = [{
    Two steps. First the structure: each Top compute op becomes Tpu ops
    whose attributes are resolved for the chip (non-negative axes, 2-D
    convolution and pooling with 1-D ops at height 1, pads as [top, left,
    bottom, right] with ceil_mode folded in, slices as offsets and steps,
    unary functions as tpu.Active, standalone BatchNorm as Mul and Add).
    Then the types: a LoweringTypes built from `mode`, the calibration
    table and the quantize table decides every op's mode and result type
    (F32/F16/BF16 element types, or !quant.uniform i8 types from the
    calibration thresholds), each op retypes itself and its weights through
    QuantizeInterface (per-channel i8 filters, i32 biases, requantization
    tables as typed weights), and tpu.QuantCast ops join producers and
    consumers of different types (one per value and type). INT8 ops that
    have no integer form, and every op named F16/BF16/F32 by the quantize
    table, compute in their float mode; a log line names the ones that fell
    back. The network's inputs and outputs stay f32.

    Every Tpu op keeps the Top op's location, so tensors keep their names;
    helper ops get names derived from it. top.Input, top.Weight and top.None
    stay. The module records the lowering in `tpu.mode` and `tpu.chip`. Top
    shapes must be inferred first (top-shape-infer).
  }];
  let options = [
    Option<"mode", "mode", "::tpu::LoweringMode", "::tpu::LoweringMode::F32",
           "Quantization mode the Tpu module computes in",
           [{::llvm::cl::values(
               clEnumValN(::tpu::LoweringMode::F32, "F32", "float32"),
               clEnumValN(::tpu::LoweringMode::F16, "F16", "float16"),
               clEnumValN(::tpu::LoweringMode::BF16, "BF16", "bfloat16"),
               clEnumValN(::tpu::LoweringMode::INT8, "INT8",
                          "int8 (needs calibration-table)"))}]>,
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip, recorded as the module's tpu.chip attribute">,
    Option<"calibrationTable", "calibration-table", "std::string", "\"\"",
           "Calibration table (name threshold min max per tensor); INT8 only">,
    Option<"asymmetric", "asymmetric", "bool", "false",
           "INT8 activations with zero points (from min/max) instead of "
           "symmetric thresholds">,
    Option<"quantizeTable", "quantize-table", "std::string", "\"\"",
           "Per-op modes (`op_name MODE` per line, # comments) overriding "
           "`mode`">,
    Option<"fallback", "fallback", "::tpu::LoweringMode",
           "::tpu::LoweringMode::F16",
           "Float mode of INT8 ops that have no integer form",
           [{::llvm::cl::values(
               clEnumValN(::tpu::LoweringMode::F32, "F32", "float32"),
               clEnumValN(::tpu::LoweringMode::F16, "F16", "float16"),
               clEnumValN(::tpu::LoweringMode::BF16, "BF16", "bfloat16"))}]>,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect",
                           "::mlir::quant::QuantDialect"];
}
#endif
