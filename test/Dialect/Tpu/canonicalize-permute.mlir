// RUN: tpuc-opt %s -split-input-file -canonicalize | FileCheck %s

// A Permute that moves only unit dims keeps the row-major order: a Reshape.
// CHECK-LABEL: func.func @permute_unit_dims
// CHECK-NOT: tpu.Permute
// CHECK: %[[R:.*]] = "tpu.Reshape"(%arg0) : (tensor<1x17x32xf32>) -> tensor<17x1x32xf32>
// CHECK: return %[[R]]
func.func @permute_unit_dims(%arg0: tensor<1x17x32xf32>) -> tensor<17x1x32xf32> {
  %0 = "tpu.Permute"(%arg0) {order = [1, 0, 2]} : (tensor<1x17x32xf32>) -> tensor<17x1x32xf32>
  return %0 : tensor<17x1x32xf32>
}

// -----

// A head split of rank 5 drops its unit dims: a rank-3 transpose between
// Reshapes.
// CHECK-LABEL: func.func @permute_rank5
// CHECK: %[[A:.*]] = "tpu.Reshape"(%arg0) : (tensor<1x17x1x3x32xf32>) -> tensor<17x3x32xf32>
// CHECK: %[[P:.*]] = "tpu.Permute"(%[[A]]) <{order = [1, 0, 2]}> : (tensor<17x3x32xf32>) -> tensor<3x17x32xf32>
// CHECK: %[[B:.*]] = "tpu.Reshape"(%[[P]]) : (tensor<3x17x32xf32>) -> tensor<3x17x1x1x32xf32>
// CHECK: return %[[B]]
func.func @permute_rank5(%arg0: tensor<1x17x1x3x32xf32>) -> tensor<3x17x1x1x32xf32> {
  %0 = "tpu.Permute"(%arg0) {order = [3, 1, 2, 0, 4]} : (tensor<1x17x1x3x32xf32>) -> tensor<3x17x1x1x32xf32>
  return %0 : tensor<3x17x1x1x32xf32>
}

// -----

// Nothing to drop or merge: the rank-5 Permute stays; rank 4 is left alone.
// CHECK-LABEL: func.func @permute_kept
// CHECK: "tpu.Permute"(%arg0) <{order = [2, 0, 3, 1, 4]}>
// CHECK: "tpu.Permute"(%arg1) <{order = [0, 1, 3, 2]}>
func.func @permute_kept(%arg0: tensor<4x16x3x2x16xf32>, %arg1: tensor<1x2x17x16xf32>) -> (tensor<3x4x2x16x16xf32>, tensor<1x2x16x17xf32>) {
  %0 = "tpu.Permute"(%arg0) {order = [2, 0, 3, 1, 4]} : (tensor<4x16x3x2x16xf32>) -> tensor<3x4x2x16x16xf32>
  %1 = "tpu.Permute"(%arg1) {order = [0, 1, 3, 2]} : (tensor<1x2x17x16xf32>) -> tensor<1x2x16x17xf32>
  return %0, %1 : tensor<3x4x2x16x16xf32>, tensor<1x2x16x17xf32>
}
