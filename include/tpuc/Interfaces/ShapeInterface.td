#ifndef TPUC_INTERFACES_SHAPEINTERFACE
#define TPUC_INTERFACES_SHAPEINTERFACE
include "mlir/IR/OpBase.td"

def ShapeInterface : OpInterface<"ShapeInterface"> {
  let description = [{
    Ops whose result shapes follow from their operand shapes and attributes.
    `inferShapes` computes them and updates the result types; it fails with a
    diagnostic when the operands do not fit together or when a result type that
    was already ranked disagrees with the inferred one.
  }];
  let cppNamespace = "::tpuc";
  let methods = [
    InterfaceMethod<"Infer and set the result types.",
                    "::mlir::LogicalResult", "inferShapes", (ins)>,
  ];
}
#endif
