#ifndef TPUC_CONVERSION_QUANTIZEINTERFACE
#define TPUC_CONVERSION_QUANTIZEINTERFACE
include "mlir/IR/OpBase.td"

def QuantizeInterface : OpInterface<"QuantizeInterface"> {
  let description = [{
    How a Tpu op (made by convert-top-to-tpu's structural step, in f32)
    computes in a lowering mode: it retypes its result, converts its weights
    (f16/bf16 data, per-channel i8 filters, i32 biases, requantization
    tables) and asks the QuantizeContext for operands of the types it reads
    (which inserts one tpu.QuantCast per value and type). Implemented as
    external models attached by the Conversion library.
  }];
  let cppNamespace = "::tpuc";
  let methods = [
    InterfaceMethod<[{
        Whether the op can compute in INT8 with its current operands (an
        INT8-mode op without one falls back to the float fallback mode).
      }], "bool", "hasInt8Form", (ins "::tpuc::QuantizeContext &":$ctx), "",
      [{ return false; }]>,
    InterfaceMethod<[{
        Whether the op only moves operand 0's values (reshape, permute,
        slice, ...), so in INT8 its result has operand 0's type. A result
        no calibration saw (a tensor a rewrite made, such as the 2-D view
        of a 1-D conv's input) then takes the operand's calibrated type.
      }], "bool", "movesOperandValues", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{ Retypes the op to compute in `mode`. }],
      "::mlir::LogicalResult", "quantize",
      (ins "::tpuc::QuantizeContext &":$ctx, "::tpu::LoweringMode":$mode)>,
  ];
}
#endif
