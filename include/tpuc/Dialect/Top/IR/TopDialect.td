#ifndef TPUC_TOP_DIALECT
#define TPUC_TOP_DIALECT
include "mlir/IR/OpBase.td"

def Top_Dialect : Dialect {
  let name = "top";
  let summary = "Framework-independent float graph ops";
  let description = [{
    The Top dialect is what frontends produce: float32 ops with ONNX-like
    semantics on tensors in NCHW layout. Weights are `top.Weight` ops whose
    data lives in the `.npz` named by the module attribute `top.weight_file`,
    keyed by the op's location name. Every op's location name is the tensor
    name of the original model, so dumped tensors line up across stages.
  }];
  let cppNamespace = "::top";
}

// Attributes without a dialect prefix must be the op's own: a misspelled one
// is an error, not silently ignored.
def Top_KnownAttributes : NativeOpTrait<"KnownAttributes"> {
  let cppNamespace = "::tpuc::traits";
}

class Top_Op<string mnemonic, list<Trait> traits = []> :
    Op<Top_Dialect, mnemonic, !listconcat(traits, [Top_KnownAttributes])>;
#endif
