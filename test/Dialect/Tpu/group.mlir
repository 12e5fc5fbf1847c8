// RUN: tpuc-opt %s -split-input-file -mlir-print-debuginfo | tpuc-opt -split-input-file -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -mlir-print-op-generic | tpuc-opt -split-input-file | FileCheck %s --check-prefix=GENERIC
// A layer group survives a print/parse round trip (custom and generic
// forms): its members, the values it yields, its plan and the members'
// locations (tensor names).

// CHECK-LABEL: func.func @two_results
// CHECK: %[[G:.*]]:2 = tpu.Group -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) attributes {h_slices = 2 : i64} {
// CHECK-NEXT: %[[A:.*]] = "tpu.Active"(%{{.*}}) <{mode = "abs"}> {{.*}} loc("a")
// CHECK-NEXT: %[[B:.*]] = "tpu.Active"(%[[A]]) <{mode = "relu"}> {{.*}} loc("b")
// CHECK-NEXT: %[[C:.*]] = "tpu.Add"(%[[A]], %[[B]]) {{.*}} loc("c")
// CHECK-NEXT: tpu.Yield %[[B]], %[[C]] : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
// CHECK-NEXT: } loc(
// CHECK: "tpu.Add"(%[[G]]#0, %[[G]]#1)
// GENERIC-LABEL: func.func @two_results
// GENERIC: tpu.Group -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) attributes {h_slices = 2 : i64}
func.func @two_results(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %g:2 = tpu.Group -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) attributes {h_slices = 2 : i64} {
    %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("a")
    %b = "tpu.Active"(%a) {mode = "relu"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("b")
    %c = "tpu.Add"(%a, %b) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("c")
    tpu.Yield %b, %c : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
  } loc(fused["a", "b", "c"])
  %d = "tpu.Add"(%g#0, %g#1) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("d")
  return %d : tensor<1x4x8x8xf32>
}

// -----

// The default plan (whole tensors) is not printed; a rows-view chunk and
// slices along N are.
// CHECK-LABEL: func.func @plans
// CHECK: tpu.Group -> (tensor<64x32xf32>) {
// CHECK: tpu.Group -> (tensor<64x32xf32>) attributes {row_chunk = 3 : i64} {
// CHECK: tpu.Group -> (tensor<64x32xf32>) attributes {h_slices = 2 : i64, n_slices = 4 : i64} {
func.func @plans(%arg0: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<64x32xf32>) -> tensor<64x32xf32> loc("x")
  %g = tpu.Group -> (tensor<64x32xf32>) attributes {h_slices = 1 : i64, row_chunk = 0 : i64} {
    %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<64x32xf32>) -> tensor<64x32xf32> loc("a")
    %b = "tpu.Active"(%a) {mode = "exp"} : (tensor<64x32xf32>) -> tensor<64x32xf32> loc("b")
    tpu.Yield %b : tensor<64x32xf32>
  }
  %h = tpu.Group -> (tensor<64x32xf32>) attributes {row_chunk = 3 : i64} {
    %a = "tpu.Active"(%g) {mode = "abs"} : (tensor<64x32xf32>) -> tensor<64x32xf32> loc("c")
    %b = "tpu.Active"(%a) {mode = "exp"} : (tensor<64x32xf32>) -> tensor<64x32xf32> loc("d")
    tpu.Yield %b : tensor<64x32xf32>
  }
  %n = tpu.Group -> (tensor<64x32xf32>) attributes {n_slices = 4 : i64, h_slices = 2 : i64} {
    %a = "tpu.Active"(%h) {mode = "abs"} : (tensor<64x32xf32>) -> tensor<64x32xf32> loc("e")
    tpu.Yield %a : tensor<64x32xf32>
  }
  return %n : tensor<64x32xf32>
}
