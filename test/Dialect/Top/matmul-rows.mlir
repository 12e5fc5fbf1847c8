// RUN: tpuc-opt %s -split-input-file -canonicalize -mlir-print-debuginfo | FileCheck %s
// A MatMul of one row per batch by a [K, N] matrix becomes one matmul of
// all the rows between Reshapes; the last Reshape keeps the tensor's name.

// CHECK-LABEL: func.func @one_row_per_batch
// CHECK: %[[L:.*]] = "top.Reshape"(%arg0) <{shape = [1, 17, 32]}> : (tensor<17x1x32xf32>) -> tensor<1x17x32xf32>
// CHECK: %[[M:.*]] = "top.MatMul"(%[[L]], %arg1, %arg2) <{do_relu = false}> : (tensor<1x17x32xf32>, tensor<32x96xf32>, tensor<96xf32>) -> tensor<1x17x96xf32> loc(#[[ROWS:loc[0-9]*]])
// CHECK: %[[R:.*]] = "top.Reshape"(%[[M]]) <{shape = [17, 1, 96]}> : (tensor<1x17x96xf32>) -> tensor<17x1x96xf32> loc(#[[NAME:loc[0-9]*]])
// CHECK: return %[[R]]
// CHECK-DAG: #[[ROWS]] = loc("qkv_rows")
// CHECK-DAG: #[[NAME]] = loc("qkv")
func.func @one_row_per_batch(%arg0: tensor<17x1x32xf32>, %arg1: tensor<32x96xf32>, %arg2: tensor<96xf32>) -> tensor<17x1x96xf32> {
  %0 = "top.MatMul"(%arg0, %arg1, %arg2) : (tensor<17x1x32xf32>, tensor<32x96xf32>, tensor<96xf32>) -> tensor<17x1x96xf32> loc("qkv")
  return %0 : tensor<17x1x96xf32>
}

// -----

// Matrices of several rows, and batched right operands, stay.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: top.Reshape
// CHECK: "top.MatMul"(%arg0, %arg1, %{{.*}}) {{.*}} -> tensor<4x16x96xf32>
// CHECK: "top.MatMul"(%arg2, %arg3, %{{.*}}) {{.*}} -> tensor<4x1x16xf32>
func.func @kept(%arg0: tensor<4x16x32xf32>, %arg1: tensor<32x96xf32>, %arg2: tensor<4x1x32xf32>, %arg3: tensor<4x32x16xf32>) -> (tensor<4x16x96xf32>, tensor<4x1x16xf32>) {
  %n = "top.None"() : () -> none
  %0 = "top.MatMul"(%arg0, %arg1, %n) : (tensor<4x16x32xf32>, tensor<32x96xf32>, none) -> tensor<4x16x96xf32>
  %1 = "top.MatMul"(%arg2, %arg3, %n) : (tensor<4x1x32xf32>, tensor<4x32x16xf32>, none) -> tensor<4x1x16xf32>
  return %0, %1 : tensor<4x16x96xf32>, tensor<4x1x16xf32>
}
