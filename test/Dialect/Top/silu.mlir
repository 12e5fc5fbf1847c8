// RUN: tpuc-opt -split-input-file -canonicalize -mlir-print-debuginfo %s | FileCheck %s
// x * sigmoid(x), in either operand order, becomes one SiLU with the Mul's
// location; a sigmoid read elsewhere too, or of another tensor, stays.

// CHECK-LABEL: func.func @silu
// CHECK: %[[X:.*]] = "top.Input"
// CHECK-NEXT: %[[S:.*]] = "top.SiLU"(%[[X]]) {{.*}} loc(#[[L1:loc[0-9]*]])
// CHECK-NEXT: %[[S2:.*]] = "top.SiLU"(%[[S]]) {{.*}} loc(#[[L2:loc[0-9]*]])
// CHECK-NEXT: return %[[S2]]
// CHECK-DAG: #[[L1]] = loc("silu")
// CHECK-DAG: #[[L2]] = loc("silu2")
func.func @silu(%arg0: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("x")
  %0 = "top.Sigmoid"(%x) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("sig")
  %1 = "top.Mul"(%x, %0) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("silu")
  %2 = "top.Sigmoid"(%1) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("sig2")
  %3 = "top.Mul"(%2, %1) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("silu2")
  return %3 : tensor<1x8x4x4xf32>
}

// -----
// CHECK-LABEL: func.func @not_silu
// CHECK-NOT: top.SiLU
// CHECK: top.Sigmoid
// CHECK: top.Mul
// CHECK: top.Sigmoid
// CHECK: top.Mul
func.func @not_silu(%arg0: tensor<1x8x4x4xf32>, %arg1: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("x")
  %y = "top.Input"(%arg1) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("y")
  %0 = "top.Sigmoid"(%x) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("sig")
  %1 = "top.Mul"(%x, %0) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("kept")
  %2 = "top.Sigmoid"(%y) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("sigy")
  %3 = "top.Mul"(%x, %2) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("gate")
  return %0, %1, %3 : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}
