// RUN: %python -c "import numpy as np; np.savez('%t.npz', w=np.ones((32, 32), np.float32))"
// RUN: sed s@WEIGHTS@%t.npz@ %s > %t.mlir
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-row-gather-as-matmul="chip=tpu_pro" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-row-gather-as-matmul="chip=tpu_edge" | FileCheck %s --check-prefix=EDGE
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-row-gather-as-matmul="chip=tpu_pro" -tpu-layer-group="chip=tpu_pro" | FileCheck %s --check-prefix=GROUP

// A window partition of 8x8 tokens into four 4x4 windows: each window's
// rows are rows of the tokens, so the chain is the matmul of a 0/1 matrix
// [4, 16, 64] by the tokens [64, 32] (reshaped), in the windows' shape.
// On tpu_edge loading the matrix costs more than the round trip it saves.
// CHECK-LABEL: func.func @windows
// CHECK: %[[X:.*]] = "tpu.Reshape"(%{{.*}}) : (tensor<1x8x8x32xf32>) -> tensor<64x32xf32> loc("p_gather_rows_in")
// CHECK: %[[P:.*]] = "top.Weight"() {tpu.data_movement} : () -> tensor<4x16x64xf32> loc("p_gather_rows")
// CHECK: "tpu.MatMul"(%[[P]], %[[X]], %{{.*}}) <{do_relu = false, right_transpose = false}> : (tensor<4x16x64xf32>, tensor<64x32xf32>, none) -> tensor<4x16x32xf32> loc("p")
// CHECK-NOT: tpu.Permute
// EDGE-LABEL: func.func @windows
// EDGE: "tpu.Permute"
// EDGE-NOT: top.Weight"() : () -> tensor<4x16x64xf32>
// The windows stay in the group of the matmul reading them, and so does
// the gelu: the tokens it holds as eight matrices of eight rows fold into
// the 64 rows of the gather's operand, which the Reshape views.
// GROUP-LABEL: func.func @windows
// GROUP: tpu.Group
// GROUP-NEXT: "tpu.Active"
// GROUP-NEXT: "tpu.Reshape"
// GROUP-NEXT: "tpu.MatMul"
// GROUP-NEXT: "tpu.MatMul"
// GROUP-NEXT: tpu.Yield
module attributes {top.weight_file = "WEIGHTS"} {
func.func @windows(%arg0: tensor<1x8x8x32xf32>) -> tensor<4x16x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<32x32xf32> loc("w")
  %none = "top.None"() : () -> none
  %a = "tpu.Active"(%x) {mode = "gelu"} : (tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> loc("a")
  %r = "tpu.Reshape"(%a) : (tensor<1x8x8x32xf32>) -> tensor<2x4x2x128xf32> loc("r")
  %t = "tpu.Permute"(%r) {order = [0, 2, 1, 3]} : (tensor<2x4x2x128xf32>) -> tensor<2x2x4x128xf32> loc("t")
  %p = "tpu.Reshape"(%t) : (tensor<2x2x4x128xf32>) -> tensor<4x16x32xf32> loc("p")
  %m = "tpu.MatMul"(%p, %w, %none) : (tensor<4x16x32xf32>, tensor<32x32xf32>, none) -> tensor<4x16x32xf32> loc("m")
  return %m : tensor<4x16x32xf32>
}
}

// -----

// A cyclic shift by two rows and two columns (a roll: Slices and Concats)
// picks whole rows of the tokens: the rows [64, 32] times a 0/1 [64, 64],
// reshaped back to the image.
// CHECK-LABEL: func.func @roll
// CHECK: %[[P:.*]] = "top.Weight"() {tpu.data_movement} : () -> tensor<64x64xf32> loc("c_gather_rows")
// CHECK: %[[M:.*]] = "tpu.MatMul"(%[[P]], %{{.*}}, %{{.*}}) {{.*}} -> tensor<64x32xf32> loc("c_gather_rows_out")
// CHECK: "tpu.Reshape"(%[[M]]) : (tensor<64x32xf32>) -> tensor<1x8x8x32xf32> loc("c")
// CHECK-NOT: tpu.Slice
// CHECK-NOT: tpu.Concat
module attributes {top.weight_file = "WEIGHTS"} {
func.func @roll(%arg0: tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "gelu"} : (tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> loc("a")
  %s0 = "tpu.Slice"(%a) {offsets = [0, 2, 0, 0], steps = [1, 1, 1, 1]} : (tensor<1x8x8x32xf32>) -> tensor<1x6x8x32xf32> loc("s0")
  %s1 = "tpu.Slice"(%a) {offsets = [0, 0, 0, 0], steps = [1, 1, 1, 1]} : (tensor<1x8x8x32xf32>) -> tensor<1x2x8x32xf32> loc("s1")
  %h = "tpu.Concat"(%s0, %s1) {axis = 1 : i64} : (tensor<1x6x8x32xf32>, tensor<1x2x8x32xf32>) -> tensor<1x8x8x32xf32> loc("h")
  %s2 = "tpu.Slice"(%h) {offsets = [0, 0, 2, 0], steps = [1, 1, 1, 1]} : (tensor<1x8x8x32xf32>) -> tensor<1x8x6x32xf32> loc("s2")
  %s3 = "tpu.Slice"(%h) {offsets = [0, 0, 0, 0], steps = [1, 1, 1, 1]} : (tensor<1x8x8x32xf32>) -> tensor<1x8x2x32xf32> loc("s3")
  %c = "tpu.Concat"(%s2, %s3) {axis = 2 : i64} : (tensor<1x8x6x32xf32>, tensor<1x8x2x32xf32>) -> tensor<1x8x8x32xf32> loc("c")
  %y = "tpu.Active"(%c) {mode = "abs"} : (tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> loc("y")
  return %y : tensor<1x8x8x32xf32>
}
}
