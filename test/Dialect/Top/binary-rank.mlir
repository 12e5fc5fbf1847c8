// RUN: tpuc-opt %s -split-input-file -canonicalize -mlir-print-debuginfo | FileCheck %s
// An Add (or Mul) of more than four dims with leading unit dims computes at
// rank four between Reshapes (which fold into each other); the last Reshape
// keeps the op's name, and an operand of lower rank keeps the dims it has.

// CHECK-LABEL: func.func @mask
// CHECK: %[[A:.*]] = "top.Reshape"(%arg0) <{shape = [4, 2, 16, 16]}>
// CHECK: %[[B:.*]] = "top.Reshape"(%arg1) <{shape = [4, 1, 16, 16]}>
// CHECK: %[[S:.*]] = "top.Add"(%[[A]], %[[B]]) {{.*}} -> tensor<4x2x16x16xf32>
// CHECK: %[[M:.*]] = "top.Mul"(%[[S]], %arg2) {{.*}} -> tensor<4x2x16x16xf32>
// CHECK: %[[R:.*]] = "top.Reshape"(%[[M]]) <{shape = [1, 4, 2, 16, 16]}> {{.*}} loc(#[[L:loc[0-9]*]])
// CHECK: return %[[R]]
// CHECK: #[[L]] = loc("scaled")
func.func @mask(%s: tensor<1x4x2x16x16xf32>, %m: tensor<1x4x1x16x16xf32>, %k: tensor<f32>) -> tensor<1x4x2x16x16xf32> {
  %0 = "top.Add"(%s, %m) : (tensor<1x4x2x16x16xf32>, tensor<1x4x1x16x16xf32>) -> tensor<1x4x2x16x16xf32> loc("masked")
  %1 = "top.Mul"(%0, %k) : (tensor<1x4x2x16x16xf32>, tensor<f32>) -> tensor<1x4x2x16x16xf32> loc("scaled")
  return %1 : tensor<1x4x2x16x16xf32>
}
