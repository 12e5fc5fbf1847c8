// RUN: %python -c "import numpy as np; np.savez('%t.npz', w=np.ones((4, 4), np.float32), b=np.ones(4, np.float32), c=np.array(0.5, np.float32))"
// RUN: sed s@WEIGHTS@%t.npz@ %s > %t.mlir
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-fold-scale="chip=tpu_pro" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s

// Queries scaled after their projection and head split: the scale goes
// into the projection's weight and bias, the moves between are renamed.
// CHECK-LABEL: func.func @queries
// CHECK-DAG: %[[W:.*]] = "top.Weight"() : () -> tensor<4x4xf32> loc("q_scaled_weight")
// CHECK-DAG: %[[B:.*]] = "top.Weight"() : () -> tensor<4xf32> loc("q_scaled_bias")
// CHECK: %[[Q:.*]] = "tpu.MatMul"(%{{.*}}, %[[W]], %[[B]]) {{.*}} loc("q_scaled")
// CHECK: %[[R:.*]] = "tpu.Reshape"(%[[Q]]) {{.*}} loc("r_scaled")
// CHECK: %[[P:.*]] = "tpu.Permute"(%[[R]]) {{.*}} loc("p_scaled")
// CHECK-NOT: tpu.Mul
// CHECK: "tpu.Active"(%[[P]])
module attributes {top.weight_file = "WEIGHTS"} {
func.func @queries(%arg0: tensor<1x3x4xf32>) -> tensor<1x2x3x2xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<4x4xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
  %c = "top.Weight"() : () -> tensor<f32> loc("c")
  %q = "tpu.MatMul"(%x, %w, %b) : (tensor<1x3x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32> loc("q")
  %r = "tpu.Reshape"(%q) : (tensor<1x3x4xf32>) -> tensor<1x3x2x2xf32> loc("r")
  %p = "tpu.Permute"(%r) {order = [0, 2, 1, 3]} : (tensor<1x3x2x2xf32>) -> tensor<1x2x3x2xf32> loc("p")
  %s = "tpu.Mul"(%p, %c) : (tensor<1x2x3x2xf32>, tensor<f32>) -> tensor<1x2x3x2xf32> loc("s")
  %t = "tpu.Active"(%s) {mode = "relu"} : (tensor<1x2x3x2xf32>) -> tensor<1x2x3x2xf32> loc("t")
  return %t : tensor<1x2x3x2xf32>
}
}

// -----
// A projection with another user, or a returned Mul, keeps its scale.
// CHECK-LABEL: func.func @kept
// CHECK: "tpu.Mul"
// CHECK: "tpu.Mul"
module attributes {top.weight_file = "WEIGHTS"} {
func.func @kept(%arg0: tensor<1x3x4xf32>) -> (tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x3x4xf32>) -> tensor<1x3x4xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<4x4xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
  %c = "top.Weight"() : () -> tensor<f32> loc("c")
  %q = "tpu.MatMul"(%x, %w, %b) : (tensor<1x3x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32> loc("q")
  %s = "tpu.Mul"(%q, %c) : (tensor<1x3x4xf32>, tensor<f32>) -> tensor<1x3x4xf32> loc("s")
  %k = "tpu.MatMul"(%x, %w, %b) : (tensor<1x3x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x3x4xf32> loc("k")
  %t = "tpu.Mul"(%k, %c) : (tensor<1x3x4xf32>, tensor<f32>) -> tensor<1x3x4xf32> loc("t")
  return %q, %s, %t : tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>
}
}
