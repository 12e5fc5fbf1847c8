// RUN: tpuc-opt %s -split-input-file -canonicalize -mlir-print-debuginfo | FileCheck %s

// CHECK-LABEL: func.func @reshape_identity
// CHECK-NOT: tpu.Reshape
// CHECK: return %arg0
func.func @reshape_identity(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "tpu.Reshape"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Reshape chains collapse; back to the start type they vanish.
// CHECK-LABEL: func.func @reshape_chain
// CHECK: %[[R:.*]] = "tpu.Reshape"(%arg0) : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: return %[[R]], %arg0
func.func @reshape_chain(%arg0: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>) {
  %0 = "tpu.Reshape"(%arg0) : (tensor<2x3xf32>) -> tensor<6xf32>
  %1 = "tpu.Reshape"(%0) : (tensor<6xf32>) -> tensor<3x2xf32>
  %2 = "tpu.Reshape"(%1) : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %1, %2 : tensor<3x2xf32>, tensor<2x3xf32>
}

// -----

// A constant used once is retyped in place: same name, same data.
// CHECK-LABEL: func.func @reshape_weight
// CHECK: %[[W:.*]] = "top.Weight"() : () -> tensor<4x1xf32> loc(#[[L:loc[0-9]*]])
// CHECK: %[[S:.*]] = "top.Weight"() : () -> tensor<4xf32>
// CHECK: %[[R:.*]] = "tpu.Reshape"(%[[S]]) : (tensor<4xf32>) -> tensor<2x2xf32>
// CHECK: return %[[W]], %[[R]], %[[S]]
// CHECK: #[[L]] = loc("w")
module attributes {top.weight_file = "w.npz"} {
func.func @reshape_weight() -> (tensor<4x1xf32>, tensor<2x2xf32>, tensor<4xf32>) {
  %w = "top.Weight"() : () -> tensor<4xf32> loc("w")
  %0 = "tpu.Reshape"(%w) : (tensor<4xf32>) -> tensor<4x1xf32>
  // A shared constant keeps its type.
  %s = "top.Weight"() : () -> tensor<4xf32> loc("s")
  %1 = "tpu.Reshape"(%s) : (tensor<4xf32>) -> tensor<2x2xf32>
  return %0, %1, %s : tensor<4x1xf32>, tensor<2x2xf32>, tensor<4xf32>
}
}
