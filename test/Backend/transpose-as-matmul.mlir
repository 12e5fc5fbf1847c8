// RUN: %python -c "import numpy as np; np.savez('%t.npz', cls=np.ones((1, 1, 32), np.float32))"
// RUN: sed s@WEIGHTS@%t.npz@ %s > %t.mlir
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-transpose-as-matmul="chip=tpu_pro" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-transpose-as-matmul="chip=tpu_pro" -tpu-layer-group="chip=tpu_pro" | FileCheck %s --check-prefix=GROUP
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-transpose-as-matmul="chip=tpu_pro" -tpu-layer-group="chip=tpu_pro print-plan=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAN

// A conv stem's [channels, tokens] features turned into tokens: the
// transpose is the identity [16, 16] times the features transposed, and
// the stem, the transpose and the layer norm after it are one group.
// CHECK-LABEL: func.func @tokens
// CHECK: %[[I:.*]] = "top.Weight"() {tpu.data_movement} : () -> tensor<1x16x16xf32>
// CHECK: "tpu.MatMul"(%[[I]], %{{.*}}, %{{.*}}) <{do_relu = false, right_transpose = true}> : (tensor<1x16x16xf32>, tensor<1x32x16xf32>, none) -> tensor<1x16x32xf32>
// CHECK-NOT: tpu.Permute
// GROUP-LABEL: func.func @tokens
// GROUP: tpu.Group
// GROUP-NEXT: "tpu.Active"
// GROUP-NEXT: "tpu.MatMul"
// GROUP-NEXT: "tpu.LayerNorm"
// GROUP-NEXT: tpu.Yield
module attributes {top.weight_file = "WEIGHTS"} {
func.func @tokens(%arg0: tensor<1x32x16xf32>) -> tensor<1x16x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x32x16xf32>) -> tensor<1x32x16xf32> loc("x")
  %g = "top.Weight"() : () -> tensor<32xf32> loc("g")
  %b = "top.Weight"() : () -> tensor<32xf32> loc("b")
  %a = "tpu.Active"(%x) {mode = "gelu"} : (tensor<1x32x16xf32>) -> tensor<1x32x16xf32> loc("a")
  %t = "tpu.Permute"(%a) {order = [0, 2, 1]} : (tensor<1x32x16xf32>) -> tensor<1x16x32xf32> loc("t")
  %y = "tpu.LayerNorm"(%t, %g, %b) {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<1x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32> loc("y")
  return %y : tensor<1x16x32xf32>
}
}

// -----

// A patch embedding: the conv's [32, 4, 4] features flattened to [32, 16]
// are the same bytes of each lane, so the Reshape is a view of the conv's
// result in the layout the matmul reads; stem and transpose are one group.
// GROUP-LABEL: func.func @patches
// GROUP: tpu.Group
// GROUP-NEXT: "tpu.Conv"
// GROUP-NEXT: "tpu.Reshape"
// GROUP-NEXT: "tpu.MatMul"
// PLAN: result 'c' [1, 32, 4, 4] f32 at [[C:[0-9]+]]
// PLAN-NEXT: result 'r' [1, 32, 1, 16] f32 at [[C]] (64 bytes), ops 1-2, view of 'c'
module attributes {top.weight_file = "WEIGHTS"} {
func.func @patches(%arg0: tensor<1x3x32x32xf32>) -> tensor<1x16x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x3x32x32xf32>) -> tensor<1x3x32x32xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<32x3x8x8xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<32xf32> loc("b")
  %c = "tpu.Conv"(%x, %w, %b) {kernel_shape = [8, 8], strides = [8, 8], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x3x32x32xf32>, tensor<32x3x8x8xf32>, tensor<32xf32>) -> tensor<1x32x4x4xf32> loc("c")
  %r = "tpu.Reshape"(%c) : (tensor<1x32x4x4xf32>) -> tensor<1x32x16xf32> loc("r")
  %t = "tpu.Permute"(%r) {order = [0, 2, 1]} : (tensor<1x32x16xf32>) -> tensor<1x16x32xf32> loc("t")
  return %t : tensor<1x16x32xf32>
}
}

// -----

// A class token put before the patch tokens: the matmul's left operand
// holds the identity in rows 1-16 (row 0 is zeros) and the Add puts the
// token in row 0 (zeros elsewhere); the Concat is gone.
// CHECK-LABEL: func.func @class_token
// CHECK-DAG: %[[L:.*]] = "top.Weight"() {tpu.data_movement} : () -> tensor<1x17x16xf32> loc("cat_identity_rows")
// CHECK-DAG: %[[K:.*]] = "top.Weight"() : () -> tensor<1x17x32xf32> loc("cat_constants")
// CHECK: %[[M:.*]] = "tpu.MatMul"(%[[L]], %{{.*}}, %{{.*}}) <{do_relu = false, right_transpose = true}> : (tensor<1x17x16xf32>, tensor<1x32x16xf32>, none) -> tensor<1x17x32xf32> loc("cat_rows")
// CHECK: "tpu.Add"(%[[M]], %[[K]]) {{.*}} loc("cat")
// CHECK-NOT: tpu.Concat
module attributes {top.weight_file = "WEIGHTS"} {
func.func @class_token(%arg0: tensor<1x32x16xf32>) -> tensor<1x17x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x32x16xf32>) -> tensor<1x32x16xf32> loc("x")
  %cls = "top.Weight"() : () -> tensor<1x1x32xf32> loc("cls")
  %t = "tpu.Permute"(%x) {order = [0, 2, 1]} : (tensor<1x32x16xf32>) -> tensor<1x16x32xf32> loc("t")
  %c = "tpu.Concat"(%cls, %t) {axis = 1 : i64} : (tensor<1x1x32xf32>, tensor<1x16x32xf32>) -> tensor<1x17x32xf32> loc("cat")
  return %c : tensor<1x17x32xf32>
}
}

// -----

// More tokens than lanes (the identity would take more than one pass of
// the lanes), and a transpose of whole batches: left as they are.
// CHECK-LABEL: func.func @kept
// CHECK: "tpu.Permute"
// CHECK: "tpu.Permute"
// CHECK-NOT: tpu.MatMul
module attributes {top.weight_file = "WEIGHTS"} {
func.func @kept(%arg0: tensor<1x8x128xf32>, %arg1: tensor<2x8x16xf32>) -> (tensor<1x128x8xf32>, tensor<2x16x8xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x8x128xf32>) -> tensor<1x8x128xf32> loc("x")
  %z = "top.Input"(%arg1) : (tensor<2x8x16xf32>) -> tensor<2x8x16xf32> loc("z")
  %t = "tpu.Permute"(%x) {order = [0, 2, 1]} : (tensor<1x8x128xf32>) -> tensor<1x128x8xf32> loc("t")
  %u = "tpu.Permute"(%z) {order = [0, 2, 1]} : (tensor<2x8x16xf32>) -> tensor<2x16x8xf32> loc("u")
  return %t, %u : tensor<1x128x8xf32>, tensor<2x16x8xf32>
}
}

// -----

// A conv's [32, 8, 8] features turned into 8x8 tokens of 32 channels
// (NCHW to NHWC): the matrix [32, 64] transposed by the identity [64, 64]
// between Reshapes. With 16 channels the identity [64, 64] would move more
// bytes than the round trip it saves: kept.
// CHECK-LABEL: func.func @nhwc
// CHECK: %[[X:.*]] = "tpu.Reshape"(%{{.*}}) : (tensor<1x32x8x8xf32>) -> tensor<32x64xf32> loc("t_matrix")
// CHECK: %[[I:.*]] = "top.Weight"() {tpu.data_movement} : () -> tensor<64x64xf32> loc("t_identity")
// CHECK: %[[M:.*]] = "tpu.MatMul"(%[[I]], %[[X]], %{{.*}}) <{do_relu = false, right_transpose = true}> : (tensor<64x64xf32>, tensor<32x64xf32>, none) -> tensor<64x32xf32> loc("t_transposed")
// CHECK: "tpu.Reshape"(%[[M]]) : (tensor<64x32xf32>) -> tensor<1x8x8x32xf32> loc("t")
// CHECK: "tpu.Permute"(%{{.*}}) <{order = [0, 2, 3, 1]}> : (tensor<1x16x8x8xf32>) -> tensor<1x8x8x16xf32> loc("u")
module attributes {top.weight_file = "WEIGHTS"} {
func.func @nhwc(%arg0: tensor<1x32x8x8xf32>, %arg1: tensor<1x16x8x8xf32>) -> (tensor<1x8x8x32xf32>, tensor<1x8x8x16xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> loc("x")
  %z = "top.Input"(%arg1) : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("z")
  %t = "tpu.Permute"(%x) {order = [0, 2, 3, 1]} : (tensor<1x32x8x8xf32>) -> tensor<1x8x8x32xf32> loc("t")
  %u = "tpu.Permute"(%z) {order = [0, 2, 3, 1]} : (tensor<1x16x8x8xf32>) -> tensor<1x8x8x16xf32> loc("u")
  return %t, %u : tensor<1x8x8x32xf32>, tensor<1x8x8x16xf32>
}
}

// -----

// A Swin head: the final tokens [4x4, 64] transposed to channels and
// averaged over all 4x4 by a pool, then read as a row by the classifier.
// The mean is a constant row of 1/16 times the tokens, whose result is the
// row: layer norm, mean and classifier are one group.
// CHECK-LABEL: func.func @mean
// CHECK: %[[X:.*]] = "tpu.Reshape"(%{{.*}}) : (tensor<1x4x4x64xf32>) -> tensor<16x64xf32> loc("p_tokens")
// CHECK: %[[R:.*]] = "top.Weight"() {tpu.data_movement} : () -> tensor<1x16xf32> loc("p_mean_row")
// CHECK: %[[M:.*]] = "tpu.MatMul"(%[[R]], %[[X]], %{{.*}}) <{do_relu = false, right_transpose = false}> : (tensor<1x16xf32>, tensor<16x64xf32>, none) -> tensor<1x64xf32> loc("p_row")
// CHECK: "tpu.Reshape"(%[[M]]) : (tensor<1x64xf32>) -> tensor<1x64x1x1xf32> loc("p")
// CHECK-NOT: tpu.Permute
// CHECK-NOT: tpu.AvgPool
// GROUP-LABEL: func.func @mean
// GROUP: tpu.Group
// GROUP-NEXT: "tpu.LayerNorm"
// GROUP: "tpu.MatMul"
// GROUP: "tpu.MatMul"
// GROUP-NEXT: tpu.Yield
module attributes {top.weight_file = "WEIGHTS"} {
func.func @mean(%arg0: tensor<1x4x4x64xf32>) -> tensor<1x10xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x4x64xf32>) -> tensor<1x4x4x64xf32> loc("x")
  %g = "top.Weight"() : () -> tensor<64xf32> loc("g")
  %b = "top.Weight"() : () -> tensor<64xf32> loc("b")
  %w = "top.Weight"() : () -> tensor<64x10xf32> loc("w")
  %c = "top.Weight"() : () -> tensor<10xf32> loc("c")
  %n = "tpu.LayerNorm"(%x, %g, %b) {axis = 3 : i64, epsilon = 1.0e-5 : f64} : (tensor<1x4x4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x4x4x64xf32> loc("n")
  %t = "tpu.Permute"(%n) {order = [0, 3, 1, 2]} : (tensor<1x4x4x64xf32>) -> tensor<1x64x4x4xf32> loc("t")
  %p = "tpu.AvgPool"(%t) {kernel_shape = [4, 4], strides = [1, 1], pads = [0, 0, 0, 0]} : (tensor<1x64x4x4xf32>) -> tensor<1x64x1x1xf32> loc("p")
  %f = "tpu.Reshape"(%p) : (tensor<1x64x1x1xf32>) -> tensor<1x64xf32> loc("f")
  %y = "tpu.MatMul"(%f, %w, %c) {right_transpose = false} : (tensor<1x64xf32>, tensor<64x10xf32>, tensor<10xf32>) -> tensor<1x10xf32> loc("y")
  return %y : tensor<1x10xf32>
}
}
