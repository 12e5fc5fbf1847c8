// RUN: tpuc-opt %s -split-input-file -canonicalize | FileCheck %s
// A roll along H then W (two Slices and a Concat per axis) becomes four
// Slices of the input, each once: Concats along W of the pieces of each
// band of rows, concatenated along H.

// CHECK-LABEL: func.func @roll2d
// CHECK-DAG: %[[A:.*]] = "top.Slice"(%arg0) <{axes = [0, 1, 2, 3], ends = [1, 8, 8, 4], starts = [0, 2, 2, 0], steps = [1, 1, 1, 1]}> {{.*}} -> tensor<1x6x6x4xf32>
// CHECK-DAG: %[[B:.*]] = "top.Slice"(%arg0) <{axes = [0, 1, 2, 3], ends = [1, 8, 2, 4], starts = [0, 2, 0, 0], steps = [1, 1, 1, 1]}> {{.*}} -> tensor<1x6x2x4xf32>
// CHECK-DAG: %[[C:.*]] = "top.Slice"(%arg0) <{axes = [0, 1, 2, 3], ends = [1, 2, 8, 4], starts = [0, 0, 2, 0], steps = [1, 1, 1, 1]}> {{.*}} -> tensor<1x2x6x4xf32>
// CHECK-DAG: %[[D:.*]] = "top.Slice"(%arg0) <{axes = [0, 1, 2, 3], ends = [1, 2, 2, 4], starts = [0, 0, 0, 0], steps = [1, 1, 1, 1]}> {{.*}} -> tensor<1x2x2x4xf32>
// CHECK-DAG: %[[R0:.*]] = "top.Concat"(%[[A]], %[[B]]) <{axis = 2 : i64{{.*}}}> {{.*}} -> tensor<1x6x8x4xf32>
// CHECK-DAG: %[[R1:.*]] = "top.Concat"(%[[C]], %[[D]]) <{axis = 2 : i64{{.*}}}> {{.*}} -> tensor<1x2x8x4xf32>
// CHECK: %[[R:.*]] = "top.Concat"(%[[R0]], %[[R1]]) <{axis = 1 : i64{{.*}}}> {{.*}} -> tensor<1x8x8x4xf32>
// CHECK: return %[[R]]
func.func @roll2d(%x: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> {
  %0 = "top.Slice"(%x) {starts = [2], ends = [8], axes = [1], steps = [1]} : (tensor<1x8x8x4xf32>) -> tensor<1x6x8x4xf32>
  %1 = "top.Slice"(%x) {starts = [0], ends = [2], axes = [1], steps = [1]} : (tensor<1x8x8x4xf32>) -> tensor<1x2x8x4xf32>
  %2 = "top.Concat"(%0, %1) {axis = 1 : i64} : (tensor<1x6x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x8x8x4xf32>
  %3 = "top.Slice"(%2) {starts = [2], ends = [8], axes = [2], steps = [1]} : (tensor<1x8x8x4xf32>) -> tensor<1x8x6x4xf32>
  %4 = "top.Slice"(%2) {starts = [0], ends = [2], axes = [2], steps = [1]} : (tensor<1x8x8x4xf32>) -> tensor<1x8x2x4xf32>
  %5 = "top.Concat"(%3, %4) {axis = 2 : i64} : (tensor<1x8x6x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x8x8x4xf32>
  return %5 : tensor<1x8x8x4xf32>
}

// -----

// A Concat another user reads whole stays, and so do Slices that cut its
// axis.
// CHECK-LABEL: func.func @kept
// CHECK: %[[C:.*]] = "top.Concat"(%arg0, %arg1) <{axis = 1 : i64
// CHECK: "top.Slice"(%[[C]])
// CHECK: "top.Slice"(%[[C]])
func.func @kept(%a: tensor<1x2x4xf32>, %b: tensor<1x2x4xf32>) -> (tensor<1x4x4xf32>, tensor<1x4x2xf32>, tensor<1x3x4xf32>) {
  %0 = "top.Concat"(%a, %b) {axis = 1 : i64} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x4x4xf32>
  %1 = "top.Slice"(%0) {starts = [0], ends = [2], axes = [2], steps = [1]} : (tensor<1x4x4xf32>) -> tensor<1x4x2xf32>
  %2 = "top.Slice"(%0) {starts = [1], ends = [4], axes = [1], steps = [1]} : (tensor<1x4x4xf32>) -> tensor<1x3x4xf32>
  return %0, %1, %2 : tensor<1x4x4xf32>, tensor<1x4x2xf32>, tensor<1x3x4xf32>
}
