#ifndef TPUC_TOP_PASSES
#define TPUC_TOP_PASSES
include "mlir/Pass/PassBase.td"

def TopShapeInfer : Pass<"top-shape-infer", "::mlir::ModuleOp"> {
  let summary = "Infer every Top op's result shape from its operands";
  let description = [{
    Visits ops in order and calls ShapeInterface::inferShapes, turning
    unranked results into ranked ones and checking results that were already
    ranked. Function result types are updated to match their returned values.
  }];
  let dependentDialects = ["::top::TopDialect"];
}
#endif
