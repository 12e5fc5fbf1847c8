#ifndef TPUC_TPU_ENUMS
#define TPUC_TPU_ENUMS
include "mlir/IR/EnumAttr.td"
include "tpuc/Dialect/Tpu/IR/TpuDialect.td"

// How a Tpu op computes: the element types of its tensors. A module's mode
// (convert-top-to-tpu's `mode`) is the default; a quantize table or an
// automatic fallback gives single ops another one.
def Tpu_LoweringMode : I32EnumAttr<"LoweringMode", "element types an op computes in", [
    I32EnumAttrCase<"F32", 0>,
    I32EnumAttrCase<"F16", 1>,
    I32EnumAttrCase<"BF16", 2>,
    I32EnumAttrCase<"INT8", 3>,
  ]> {
  let cppNamespace = "::tpu";
  let genSpecializedAttr = 0;
}
def Tpu_LoweringModeAttr : EnumAttr<Tpu_Dialect, Tpu_LoweringMode, "mode"> {
  let assemblyFormat = "`<` $value `>`";
}
#endif
