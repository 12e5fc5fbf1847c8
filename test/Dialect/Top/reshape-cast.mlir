// RUN: tpuc-opt -split-input-file -canonicalize -mlir-print-debuginfo %s | FileCheck %s
// A Reshape of a Cast becomes a Cast of the Reshape, which takes the
// Reshape's name; a Cast to the type its operand already holds disappears.

// The attention mask: Cast to bool, Reshape, Cast to bool again. One Cast of
// the Reshape of the input remains.
// CHECK-LABEL: func.func @mask
// CHECK: %[[X:.*]] = "top.Input"
// CHECK: %[[R:.*]] = "top.Reshape"(%[[X]]) {{.*}}-> tensor<2x1x1x8xf32> loc(#[[LR:.*]])
// CHECK: %[[C:.*]] = "top.Cast"(%[[R]]) <{to = "bool"}> {{.*}}loc(#[[LC:.*]])
// CHECK-NOT: top.Cast
// CHECK: return %[[C]]
// CHECK-DAG: #[[LR]] = loc("c0_reshaped")
// CHECK-DAG: #[[LC]] = loc("c1")
func.func @mask(%arg0: tensor<2x8xf32>) -> tensor<2x1x1x8xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("x")
  %1 = "top.Cast"(%0) {to = "bool"} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("c0")
  %2 = "top.Reshape"(%1) {shape = [2, 1, 1, 8]} : (tensor<2x8xf32>) -> tensor<2x1x1x8xf32> loc("r")
  %3 = "top.Cast"(%2) {to = "bool"} : (tensor<2x1x1x8xf32>) -> tensor<2x1x1x8xf32> loc("c1")
  return %3 : tensor<2x1x1x8xf32>
}

// -----

// A Cast with another user stays before the Reshape; Casts to different
// types both stay.
// CHECK-LABEL: func.func @kept
// CHECK: "top.Cast"(%{{.*}}) <{to = "i8"}>
// CHECK: "top.Reshape"
// CHECK: "top.Cast"(%{{.*}}) <{to = "bool"}>
func.func @kept(%arg0: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<16xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("x")
  %1 = "top.Cast"(%0) {to = "i8"} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("c0")
  %2 = "top.Reshape"(%1) {shape = [16]} : (tensor<2x8xf32>) -> tensor<16xf32> loc("r")
  %3 = "top.Cast"(%2) {to = "bool"} : (tensor<16xf32>) -> tensor<16xf32> loc("c1")
  return %1, %3 : tensor<2x8xf32>, tensor<16xf32>
}
