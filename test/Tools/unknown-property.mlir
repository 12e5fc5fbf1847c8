// An entry of a generic op's <{...}> properties that the op does not define
// is an error, not dropped; known entries (a function type, a string holding
// brackets) parse as before.
// RUN: not tpuc-opt %s 2>&1 | FileCheck %s
// RUN: not tpuc-opt --split-input-file %s 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: sed -e 's/, bogus = "x"//' %s | tpuc-opt | FileCheck %s --check-prefix=OK

// CHECK: unknown-property.mlir:[[@LINE+4]]:8: error: 'top.Reshape' op has unknown property 'bogus'
// CHECK-NOT: module
// SPLIT: error: 'top.Reshape' op has unknown property 'bogus'
func.func @f(%arg0: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = "top.Reshape"(%arg0) <{shape = [4, -1], bogus = "x"}> : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// SPLIT: error: 'func.func' op has unknown property 'bogus'
// OK: "top.Reshape"(%arg0) <{shape = [4, -1]}>
// OK: func.func @"g}>"(%arg0: tensor<2xf32>) -> tensor<2xf32>
"func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "g}>", bogus = "x"}> ({
^bb0(%a: tensor<2xf32>):
  "func.return"(%a) : (tensor<2xf32>) -> ()
}) : () -> ()
