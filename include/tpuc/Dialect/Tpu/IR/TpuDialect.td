#ifndef TPUC_TPU_DIALECT
#define TPUC_TPU_DIALECT
include "mlir/IR/OpBase.td"

def Tpu_Dialect : Dialect {
  let name = "tpu";
  let summary = "Quantization-aware ops on typed tensors for the TPU";
  let description = [{
    Tpu ops mirror Top ops, but their tensors carry the element type the chip
    computes in: f32, f16, bf16, or `!quant.uniform` INT8 types. A new
    quantization mode adds types and attributes, not a new dialect.
  }];
  let cppNamespace = "::tpu";
  let dependentDialects = ["::mlir::quant::QuantDialect"];
  let useDefaultAttributePrinterParser = 1;
}

// Attributes without a dialect prefix must be the op's own (addresses and
// groups are `ddr.`/`tpu.` attributes).
def Tpu_KnownAttributes : NativeOpTrait<"KnownAttributes"> {
  let cppNamespace = "::tpuc::traits";
}

class Tpu_Op<string mnemonic, list<Trait> traits = []> :
    Op<Tpu_Dialect, mnemonic, !listconcat(traits, [Tpu_KnownAttributes])>;
#endif
