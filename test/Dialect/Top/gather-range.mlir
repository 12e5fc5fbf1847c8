// RUN: %python %S/Inputs/gather_weights.py %t.npz
// RUN: sed "s|WEIGHTS|%t.npz|" %s | tpuc-opt -split-input-file -canonicalize -mlir-print-debuginfo | FileCheck %s
// A Gather by constant indices counting up by one is a Slice of that run
// and a Reshape to the gathered shape, which keeps the Gather's name.

// The attention-mask expansion: every index of the axis in order, a
// Reshape only (the full Slice disappears).
// CHECK-LABEL: func.func @arange
// CHECK-NOT: top.Gather
// CHECK-NOT: top.Slice
// CHECK: top.Reshape{{.*}}(tensor<8x1xf32>) -> tensor<1x1x1x8x1xf32> loc(#[[G:.*]])
// CHECK: #[[G]] = loc("g")
module attributes {top.weight_file = "WEIGHTS"} {
  func.func @arange(%arg0: tensor<8x1xf32>) -> tensor<1x1x1x8x1xf32> {
    %x = "top.Input"(%arg0) : (tensor<8x1xf32>) -> tensor<8x1xf32> loc("x")
    %i = "top.Weight"() : () -> tensor<1x1x1x8xf32> loc("arange")
    %g = "top.Gather"(%x, %i) {axis = 0 : i64} : (tensor<8x1xf32>, tensor<1x1x1x8xf32>) -> tensor<1x1x1x8x1xf32> loc("g")
    return %g : tensor<1x1x1x8x1xf32>
  }
}

// -----

// One index (a scalar), and one counted from the end, whose Slice has the
// gathered shape and takes the Gather's name.
// CHECK-LABEL: func.func @single
// CHECK-NOT: top.Gather
// CHECK: top.Slice{{.*}}axes = [0], ends = [3], {{.*}}starts = [2]{{.*}} -> tensor<1x17x32xf32> loc(#[[S:.*]])
// CHECK: top.Reshape{{.*}} -> tensor<17x32xf32>
// CHECK: top.Slice{{.*}}axes = [1], ends = [17], {{.*}}starts = [16]{{.*}} -> tensor<3x1x32xf32> loc(#[[H:.*]])
// CHECK-DAG: #[[S]] = loc("g_range")
// CHECK-DAG: #[[H]] = loc("h")
module attributes {top.weight_file = "WEIGHTS"} {
  func.func @single(%arg0: tensor<3x17x32xf32>) -> (tensor<17x32xf32>, tensor<3x1x32xf32>) {
    %x = "top.Input"(%arg0) : (tensor<3x17x32xf32>) -> tensor<3x17x32xf32> loc("x")
    %i = "top.Weight"() : () -> tensor<f32> loc("one")
    %g = "top.Gather"(%x, %i) {axis = 0 : i64} : (tensor<3x17x32xf32>, tensor<f32>) -> tensor<17x32xf32> loc("g")
    %j = "top.Weight"() : () -> tensor<1xf32> loc("last")
    %h = "top.Gather"(%x, %j) {axis = 1 : i64} : (tensor<3x17x32xf32>, tensor<1xf32>) -> tensor<3x1x32xf32> loc("h")
    return %g, %h : tensor<17x32xf32>, tensor<3x1x32xf32>
  }
}

// -----

// Indices with gaps stay a Gather.
// CHECK-LABEL: func.func @gaps
// CHECK: top.Gather
module attributes {top.weight_file = "WEIGHTS"} {
  func.func @gaps(%arg0: tensor<3x4xf32>) -> tensor<2x4xf32> {
    %x = "top.Input"(%arg0) : (tensor<3x4xf32>) -> tensor<3x4xf32> loc("x")
    %i = "top.Weight"() : () -> tensor<2xf32> loc("gaps")
    %g = "top.Gather"(%x, %i) {axis = 0 : i64} : (tensor<3x4xf32>, tensor<2xf32>) -> tensor<2x4xf32> loc("g")
    return %g : tensor<2x4xf32>
  }
}
