#ifndef TPUC_TPU_PASSES
#define TPUC_TPU_PASSES
include "mlir/Pass/PassBase.td"

def ConvertTopToTpu : Pass<"convert-top-to-tpu", "::mlir::ModuleOp"> {
  let summary = "Lower every Top op to Tpu ops for a quantization mode";
  let description = [{
    Rewrites each Top compute op into Tpu ops whose attributes are resolved
    for the chip: non-negative axes, 2-D convolution and pooling (1-D ops get
    a height of 1), pads as [top, left, bottom, right] with ceil_mode folded
    into the end pads, slices as offsets and steps, unary functions as
    tpu.Active, standalone BatchNorm as a per-channel Mul and Add. Every Tpu
    op keeps the Top op's location, so tensors keep their names; helper ops
    get names derived from it. top.Input, top.Weight and top.None stay.

    The module records the lowering in the `tpu.mode` and `tpu.chip`
    attributes. Top shapes must be inferred first (top-shape-infer).
  }];
  let options = [
    Option<"mode", "mode", "::tpu::LoweringMode", "::tpu::LoweringMode::F32",
           "Quantization mode the Tpu module computes in",
           [{::llvm::cl::values(
               clEnumValN(::tpu::LoweringMode::F32, "F32", "float32"),
               clEnumValN(::tpu::LoweringMode::F16, "F16", "float16"),
               clEnumValN(::tpu::LoweringMode::BF16, "BF16", "bfloat16"),
               clEnumValN(::tpu::LoweringMode::INT8, "INT8",
                          "symmetric int8"))}]>,
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip, recorded as the module's tpu.chip attribute">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}
#endif
