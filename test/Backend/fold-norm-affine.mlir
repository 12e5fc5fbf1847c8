// RUN: %python -c "import numpy as np; np.savez('%t.npz', g=np.full(4, 2, np.float32), be=np.ones(4, np.float32), w=np.arange(12, dtype=np.float32).reshape(4, 3), b=np.full(3, 10, np.float32), w2=np.ones((4, 2), np.float32))"
// RUN: sed s@WEIGHTS@%t.npz@ %s > %t.mlir
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-fold-norm-affine="chip=tpu_pro" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-fold-norm-affine="chip=tpu_pro" | FileCheck %s --check-prefix=DATA

// A norm read by two linear layers (one through a Reshape, one without a
// bias): each layer takes diag(gamma) W and beta W + b, the norm drops its
// affine and, with its Reshape, takes a new name.
// CHECK-LABEL: func.func @two_layers
// CHECK-DAG: %[[W:.*]] = "top.Weight"() : () -> tensor<4x3xf32> loc("y_weight_of_norm")
// CHECK-DAG: %[[B:.*]] = "top.Weight"() : () -> tensor<3xf32> loc("y_bias_of_norm")
// CHECK-DAG: %[[W2:.*]] = "top.Weight"() : () -> tensor<4x2xf32> loc("z_weight_of_norm")
// CHECK-DAG: %[[B2:.*]] = "top.Weight"() : () -> tensor<2xf32> loc("z_bias_of_norm")
// CHECK: %[[N:.*]] = "tpu.LayerNorm"(%{{.*}}, %[[NONE:.*]], %[[NONE]]) {{.*}} loc("n_normalized")
// CHECK: %[[R:.*]] = "tpu.Reshape"(%[[N]]) {{.*}} loc("r_normalized")
// CHECK: "tpu.MatMul"(%[[R]], %[[W]], %[[B]]) {{.*}} loc("y")
// CHECK: "tpu.MatMul"(%[[N]], %[[W2]], %[[B2]]) {{.*}} loc("z")
// DATA-LABEL: func.func @two_layers
// DATA-NOT: "top.Weight"() : () -> tensor<4xf32>
// DATA-LABEL: func.func @returned
module attributes {top.weight_file = "WEIGHTS"} {
func.func @two_layers(%arg0: tensor<1x2x4xf32>) -> (tensor<2x3xf32>, tensor<1x2x2xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("x")
  %none = "top.None"() : () -> none
  %g = "top.Weight"() : () -> tensor<4xf32> loc("g")
  %be = "top.Weight"() : () -> tensor<4xf32> loc("be")
  %w = "top.Weight"() : () -> tensor<4x3xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<3xf32> loc("b")
  %w2 = "top.Weight"() : () -> tensor<4x2xf32> loc("w2")
  %n = "tpu.LayerNorm"(%x, %g, %be) {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<1x2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x2x4xf32> loc("n")
  %r = "tpu.Reshape"(%n) : (tensor<1x2x4xf32>) -> tensor<2x4xf32> loc("r")
  %y = "tpu.MatMul"(%r, %w, %b) : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("y")
  %z = "tpu.MatMul"(%n, %w2, %none) : (tensor<1x2x4xf32>, tensor<4x2xf32>, none) -> tensor<1x2x2xf32> loc("z")
  return %y, %z : tensor<2x3xf32>, tensor<1x2x2xf32>
}
}

// -----
// A norm that is also a result of the function keeps its affine.
// CHECK-LABEL: func.func @returned
// CHECK: "tpu.LayerNorm"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}} : (tensor<1x2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x2x4xf32> loc("n")
module attributes {top.weight_file = "WEIGHTS"} {
func.func @returned(%arg0: tensor<1x2x4xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x3xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("x")
  %g = "top.Weight"() : () -> tensor<4xf32> loc("g")
  %be = "top.Weight"() : () -> tensor<4xf32> loc("be")
  %w = "top.Weight"() : () -> tensor<4x3xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<3xf32> loc("b")
  %n = "tpu.LayerNorm"(%x, %g, %be) {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<1x2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x2x4xf32> loc("n")
  %y = "tpu.MatMul"(%n, %w, %b) : (tensor<1x2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<1x2x3xf32> loc("y")
  return %n, %y : tensor<1x2x4xf32>, tensor<1x2x3xf32>
}
}
