#ifndef TPUC_BACKEND_PASSES
#define TPUC_BACKEND_PASSES
include "mlir/Pass/PassBase.td"

def AssignAddress : Pass<"tpu-assign-address", "::mlir::ModuleOp"> {
  let summary = "Assign DDR addresses to weights and activations";
  let description = [{
    Lays out the DDR of a Tpu module in two regions. The weight region starts
    at 0 and holds every top.Weight a Tpu op uses, each at an aligned offset.
    The activation region follows it and holds the network inputs and every
    Tpu op result. Activation buffers are reused by linear scan over the
    entry function: a tensor lives from its definition to its last use, and
    two tensors share memory only when their lifetimes do not overlap.
    Network inputs and outputs live for the whole program, so they are never
    overwritten. An op whose CodegenInterface says it aliases an operand
    (tpu.Reshape) gets that operand's address and extends its lifetime.

    Every placed value's defining op gets `ddr.addr` (an absolute byte
    address); the module gets `tpu.weight_size`, `tpu.activation_addr` and
    `tpu.activation_size`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
    Option<"alignment", "alignment", "int64_t", "64",
           "Byte alignment of every tensor (at least the DDR burst is best)">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}

def Codegen : Pass<"tpu-codegen", "::mlir::ModuleOp"> {
  let summary = "Emit GDMA/TIU instructions and write a bmodel";
  let description = [{
    Builds the weight blob (reordering weights into the layouts the chip
    wants, see CodegenInterface::layoutWeight), then lets each Tpu op emit
    its instructions through CodegenInterface, tiling its tensors to fit the
    local memory and double-buffering loads against compute. Every op's
    result becomes a named tensor the runtime can dump. Needs the addresses
    from tpu-assign-address. The module gets `tpu.macs` (multiply-accumulates
    of the network) and the instruction counts.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
    Option<"bmodel", "bmodel", "std::string", "\"\"",
           "Output .bmodel path (empty: generate and check only)">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}
#endif
