// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_pro print-plan=true" -o /dev/null 2>&1 | FileCheck %s
// A group whose ops all compute row by row, each from the same row of its
// operands or from operands shared by every row (a matmul by a weight
// without batch dims, a LayerNorm, GELU, a residual add), holds its tensors
// with the batch folded into the rows: the 8 windows of 8 tokens are 64
// rows on 64 lanes, [1, 64, 1, 32], not 8 batches on 8 lanes.

// CHECK: remark: loc(fused["n", "m0", "g", "m1", "r"]): layer group plan: 5 ops
// CHECK-NEXT: input 'x' [1, 64, 1, 32] f32
// CHECK: weight 'w0' [1, 32, 1, 128] f32
// CHECK: result 'm0' [1, 64, 1, 128] f32
// CHECK: result 'r' [1, 64, 1, 32] f32
func.func @main(%arg0: tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> loc("x")
  %nw = "top.Weight"() : () -> tensor<32xf32> loc("nw")
  %nb = "top.Weight"() : () -> tensor<32xf32> loc("nb")
  %w0 = "top.Weight"() : () -> tensor<32x128xf32> loc("w0")
  %b0 = "top.Weight"() : () -> tensor<128xf32> loc("b0")
  %w1 = "top.Weight"() : () -> tensor<128x32xf32> loc("w1")
  %b1 = "top.Weight"() : () -> tensor<32xf32> loc("b1")
  %n = "tpu.LayerNorm"(%x, %nw, %nb) {axis = 3 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x8x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x8x8x32xf32> loc("n")
  %m0 = "tpu.MatMul"(%n, %w0, %b0) {do_relu = false, right_transpose = false} : (tensor<1x8x8x32xf32>, tensor<32x128xf32>, tensor<128xf32>) -> tensor<1x8x8x128xf32> loc("m0")
  %g = "tpu.Active"(%m0) {mode = "gelu"} : (tensor<1x8x8x128xf32>) -> tensor<1x8x8x128xf32> loc("g")
  %m1 = "tpu.MatMul"(%g, %w1, %b1) {do_relu = false, right_transpose = false} : (tensor<1x8x8x128xf32>, tensor<128x32xf32>, tensor<32xf32>) -> tensor<1x8x8x32xf32> loc("m1")
  %r = "tpu.Add"(%x, %m1) {do_relu = false} : (tensor<1x8x8x32xf32>, tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32> loc("r")
  return %r : tensor<1x8x8x32xf32>
}

// -----

// A matmul whose right operand has the batch (the scores of attention)
// reads other rows for every batch: the group keeps the matrix view.
// CHECK: remark: loc(fused["s", "p", "o"]): layer group plan: 3 ops
// CHECK-NEXT: input 'q' [8, 16, 1, 16] f32
// CHECK: result 'p' [8, 16, 1, 16] f32
// CHECK: result 'o' [8, 16, 1, 32] f32
func.func @main(%arg0: tensor<8x16x16xf32>, %arg1: tensor<8x16x16xf32>) -> tensor<8x16x32xf32> {
  %q = "top.Input"(%arg0) : (tensor<8x16x16xf32>) -> tensor<8x16x16xf32> loc("q")
  %k = "top.Input"(%arg1) : (tensor<8x16x16xf32>) -> tensor<8x16x16xf32> loc("k")
  %w = "top.Weight"() : () -> tensor<16x32xf32> loc("w")
  %none = "top.None"() : () -> none
  %s = "tpu.MatMul"(%q, %k, %none) {do_relu = false, right_transpose = false} : (tensor<8x16x16xf32>, tensor<8x16x16xf32>, none) -> tensor<8x16x16xf32> loc("s")
  %p = "tpu.Softmax"(%s) {axis = 2 : i64} : (tensor<8x16x16xf32>) -> tensor<8x16x16xf32> loc("p")
  %o = "tpu.MatMul"(%p, %w, %none) {do_relu = false, right_transpose = false} : (tensor<8x16x16xf32>, tensor<16x32xf32>, none) -> tensor<8x16x32xf32> loc("o")
  return %o : tensor<8x16x32xf32>
}

// -----

// A transpose of heads moves rows only within their lanes in the unfolded
// layout, so it reads the second matmul's result unfolded (and the scores
// of each head, a matmul with batched right operands, do not fold): the
// first matmuls hold theirs folded, and GDMA moves copy the one the
// transpose reads to the unfolded layout, an image at a time.
// CHECK: remark: loc(fused["m0", "m1", "v", "p", "s"]): layer group plan: 5 ops
// CHECK: result 'm0' [1, 16, 1, 256] f32
// CHECK: result 'm1' [1, 16, 1, 32] f32
// CHECK: result 'v' [1, 16, 1, 32] f32 {{.*}} view of 'm1'
// CHECK: result 'p' [4, 8, 1, 16] f32
// CHECK: temp 'refold of v' [2, 8, 1, 32] f32
func.func @heads(%arg0: tensor<2x8x32xf32>) -> tensor<2x2x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x8x32xf32>) -> tensor<2x8x32xf32> loc("x")
  %none = "top.None"() : () -> none
  %w0 = "top.Weight"() : () -> tensor<32x256xf32> loc("w0")
  %w1 = "top.Weight"() : () -> tensor<256x32xf32> loc("w1")
  %m0 = "tpu.MatMul"(%x, %w0, %none) {do_relu = false, right_transpose = false} : (tensor<2x8x32xf32>, tensor<32x256xf32>, none) -> tensor<2x8x256xf32> loc("m0")
  %m1 = "tpu.MatMul"(%m0, %w1, %none) {do_relu = false, right_transpose = false} : (tensor<2x8x256xf32>, tensor<256x32xf32>, none) -> tensor<2x8x32xf32> loc("m1")
  %v = "tpu.Reshape"(%m1) : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32> loc("v")
  %p = "tpu.Permute"(%v) {order = [0, 2, 1, 3]} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32> loc("p")
  %s = "tpu.MatMul"(%p, %p, %none) {do_relu = false, right_transpose = true} : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, none) -> tensor<2x2x8x8xf32> loc("s")
  return %s : tensor<2x2x8x8xf32>
}
