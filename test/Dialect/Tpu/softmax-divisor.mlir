// RUN: %python %S/../Top/Inputs/fusion_weights.py %t.npz
// RUN: sed "s|WEIGHTS|%t.npz|" %s | tpuc-opt -split-input-file -canonicalize -mlir-print-debuginfo | FileCheck %s
// A Softmax of a tensor divided by a constant scalar takes the divisor.

module attributes {top.weight_file = "WEIGHTS"} {
// CHECK-LABEL: func.func @scaled_scores
// CHECK-NEXT: %[[S:.*]] = "tpu.Softmax"(%arg0) <{axis = 1 : i64, divisor = 1.41421{{[0-9]*}} : f64}> {{.*}} loc(#[[L:loc[0-9]*]])
// CHECK-NEXT: return %[[S]]
// CHECK: #[[L]] = loc("softmax")
func.func @scaled_scores(%x: tensor<2x8xf16>) -> tensor<2x8xf16> {
  %c = "top.Weight"() : () -> tensor<f16> loc("sqrt2")
  %0 = "tpu.Div"(%x, %c) : (tensor<2x8xf16>, tensor<f16>) -> tensor<2x8xf16> loc("scores")
  %1 = "tpu.Softmax"(%0) <{axis = 1 : i64}> : (tensor<2x8xf16>) -> tensor<2x8xf16> loc("softmax")
  return %1 : tensor<2x8xf16>
}
}

// -----
module attributes {top.weight_file = "WEIGHTS"} {
// A divisor that is a tensor, or scores used elsewhere, stay a Div.
// CHECK-LABEL: func.func @not_fused
// CHECK: tpu.Div
// CHECK: "tpu.Softmax"(%{{.*}}) <{axis = 1 : i64}>
// CHECK: tpu.Div
// CHECK: "tpu.Softmax"(%{{.*}}) <{axis = 1 : i64}>
func.func @not_fused(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %c = "top.Weight"() : () -> tensor<f32> loc("sqrt2")
  %0 = "tpu.Div"(%x, %y) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("by_tensor")
  %1 = "tpu.Softmax"(%0) <{axis = 1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("s1")
  %2 = "tpu.Div"(%x, %c) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> loc("shared")
  %3 = "tpu.Softmax"(%2) <{axis = 1 : i64}> : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("s2")
  return %1, %2, %3 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}
}
