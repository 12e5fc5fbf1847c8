// RUN: %python %S/Inputs/channels_last_weights.py %t.npz
// RUN: sed "s|WEIGHTS|%t.npz|" %s | tpuc-opt -split-input-file -canonicalize -mlir-print-debuginfo | FileCheck %s
// NHWC islands of NCHW models (ConvNeXt blocks) become channel-first ops:
// LayerNorm over the channels as 1x1 Convs to and from one channel, MatMul
// by a constant as a 1x1 Conv, activations on the NCHW tensor.

module attributes {top.weight_file = "WEIGHTS"} {
// The LayerNorm's beta folds into the first Linear's bias; the last Conv
// produces the closing Permute's tensor under its name.
// CHECK-LABEL: func.func @block
// CHECK-NOT: top.Permute
// CHECK: %[[M:.*]] = "top.Conv"(%arg0, {{.*}}: (tensor<1x4x3x5xf32>, tensor<1x4x1x1xf32>, none) -> tensor<1x1x3x5xf32> loc(#[[LM:loc[0-9]*]])
// CHECK: %[[MB:.*]] = "top.Conv"(%[[M]], {{.*}}-> tensor<1x4x3x5xf32>
// CHECK: %[[D:.*]] = "top.Sub"(%arg0, %[[MB]])
// CHECK: %[[SQ:.*]] = "top.Mul"(%[[D]], %[[D]])
// CHECK: %[[V:.*]] = "top.Conv"(%[[SQ]], {{.*}}: (tensor<1x4x3x5xf32>, tensor<1x4x1x1xf32>, tensor<1xf32>) -> tensor<1x1x3x5xf32>
// CHECK: %[[R:.*]] = "top.Rsqrt"(%[[V]])
// CHECK: %[[S:.*]] = "top.Conv"(%[[R]], {{.*}}: (tensor<1x1x3x5xf32>, tensor<4x1x1x1xf32>, none) -> tensor<1x4x3x5xf32>
// CHECK: %[[N:.*]] = "top.Mul"(%[[D]], %[[S]])
// CHECK: %[[L1:.*]] = "top.Conv"(%[[N]], {{.*}}: (tensor<1x4x3x5xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<1x8x3x5xf32>
// CHECK: %[[G:.*]] = "top.GELU"(%[[L1]]) {{.*}}: (tensor<1x8x3x5xf32>) -> tensor<1x8x3x5xf32>
// CHECK: %[[L2:.*]] = "top.Conv"(%[[G]], {{.*}}: (tensor<1x8x3x5xf32>, tensor<4x8x1x1xf32>, none) -> tensor<1x4x3x5xf32> loc(#[[LOUT:loc[0-9]*]])
// CHECK: return %[[L2]]
// CHECK-NOT: top.LayerNorm
// CHECK-NOT: top.MatMul
func.func @block(%arg0: tensor<1x4x3x5xf32>) -> tensor<1x4x3x5xf32> {
  %n = "top.None"() : () -> none
  %g = "top.Weight"() : () -> tensor<4xf32> loc("gamma")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("beta")
  %w1 = "top.Weight"() : () -> tensor<4x8xf32> loc("w1")
  %b1 = "top.Weight"() : () -> tensor<8xf32> loc("b1")
  %w2 = "top.Weight"() : () -> tensor<8x4xf32> loc("w2")
  %0 = "top.Permute"(%arg0) {order = [0, 2, 3, 1]} : (tensor<1x4x3x5xf32>) -> tensor<1x3x5x4xf32> loc("to_nhwc")
  %1 = "top.LayerNorm"(%0, %g, %b) {axis = -1 : i64, epsilon = 1.0e-6 : f64} : (tensor<1x3x5x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x3x5x4xf32> loc("ln")
  %2 = "top.MatMul"(%1, %w1, %b1) : (tensor<1x3x5x4xf32>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<1x3x5x8xf32> loc("fc1")
  %3 = "top.GELU"(%2) : (tensor<1x3x5x8xf32>) -> tensor<1x3x5x8xf32> loc("gelu")
  %4 = "top.MatMul"(%3, %w2, %n) : (tensor<1x3x5x8xf32>, tensor<8x4xf32>, none) -> tensor<1x3x5x4xf32> loc("fc2")
  %5 = "top.Permute"(%4) {order = [0, 3, 1, 2]} : (tensor<1x3x5x4xf32>) -> tensor<1x4x3x5xf32> loc("to_nchw")
  return %5 : tensor<1x4x3x5xf32>
}
}
// CHECK-DAG: #[[LM]] = loc("ln_nchw_mean")
// CHECK-DAG: #[[LOUT]] = loc("to_nchw")

// -----

// A LayerNorm alone between the Permutes keeps its beta as an Add, which
// takes the closing Permute's name.
module attributes {top.weight_file = "WEIGHTS"} {
// CHECK-LABEL: func.func @norm_only
// CHECK-NOT: top.Permute
// CHECK: top.Rsqrt
// CHECK: %[[N:.*]] = "top.Mul"
// CHECK: %[[A:.*]] = "top.Add"(%[[N]], %{{.*}}) {{.*}}: (tensor<1x4x3x5xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x3x5xf32> loc(#[[L:loc[0-9]*]])
// CHECK: return %[[A]]
func.func @norm_only(%arg0: tensor<1x4x3x5xf32>) -> tensor<1x4x3x5xf32> {
  %g = "top.Weight"() : () -> tensor<4xf32> loc("gamma")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("beta")
  %0 = "top.Permute"(%arg0) {order = [0, 2, 3, 1]} : (tensor<1x4x3x5xf32>) -> tensor<1x3x5x4xf32>
  %1 = "top.LayerNorm"(%0, %g, %b) {axis = 3 : i64} : (tensor<1x3x5x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x3x5x4xf32>
  %2 = "top.Permute"(%1) {order = [0, 3, 1, 2]} : (tensor<1x3x5x4xf32>) -> tensor<1x4x3x5xf32> loc("out")
  return %2 : tensor<1x4x3x5xf32>
}
}
// CHECK: #[[L]] = loc("out")

// -----

// A channels-last tensor used outside the chain keeps the chain as it is.
// CHECK-LABEL: func.func @shared
// CHECK: top.Permute
// CHECK: top.LayerNorm
// CHECK: top.Permute
func.func @shared(%arg0: tensor<1x4x3x5xf32>) -> (tensor<1x4x3x5xf32>, tensor<1x3x5x4xf32>) {
  %n = "top.None"() : () -> none
  %0 = "top.Permute"(%arg0) {order = [0, 2, 3, 1]} : (tensor<1x4x3x5xf32>) -> tensor<1x3x5x4xf32>
  %1 = "top.LayerNorm"(%0, %n, %n) {axis = 3 : i64} : (tensor<1x3x5x4xf32>, none, none) -> tensor<1x3x5x4xf32>
  %2 = "top.Permute"(%1) {order = [0, 3, 1, 2]} : (tensor<1x3x5x4xf32>) -> tensor<1x4x3x5xf32>
  return %2, %1 : tensor<1x4x3x5xf32>, tensor<1x3x5x4xf32>
}
