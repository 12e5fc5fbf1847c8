// RUN: %python %S/Inputs/window_attention_weights.py %t.npz
// RUN: sed s@WEIGHTS@%t.npz@ %s > %t.mlir
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-masked-window-attention="chip=tpu_pro" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s

// Eight tokens [8, 4] in two windows of four (rows 0 4 1 5 and 2 6 3 7),
// two heads of two: the gather by P [2, 4, 8], the per-window attention
// with a bias per head and a mask per window, and the scatter by P's
// inverse become attention over the eight rows in place, one bias
// [1, 2, 8, 8] (-1e30 between windows), the permutations gone.
// CHECK-LABEL: func.func @window_block
// CHECK-NOT: tensor<2x4x8xf32>
// CHECK: "tpu.MatMul"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}} : (tensor<8x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<8x4xf32> loc("q_unwindowed")
// The roofline counts the windows' MACs (2 windows x 2 heads x 4 x 4 x 2).
// CHECK: %[[S:.*]] = "tpu.MatMul"({{.*}}) <{do_relu = false, right_transpose = true}> {tpu.model_macs = 128 : i64} : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>, none) -> tensor<1x2x8x8xf32>
// CHECK: %[[B:.*]] = "top.Weight"() {tpu.data_movement} : () -> tensor<1x2x8x8xf32> loc("sm_unwindowed_bias")
// CHECK: %[[A:.*]] = "tpu.Add"(%[[S]], %[[B]])
// CHECK: "tpu.Softmax"(%[[A]]) <{axis = 3 : i64}> : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
// CHECK: "tpu.MatMul"({{.*}}) <{do_relu = false, right_transpose = false}> {tpu.model_macs = 128 : i64} : (tensor<1x2x8x8xf32>, tensor<1x2x8x2xf32>, none) -> tensor<1x2x8x2xf32>
// CHECK: "tpu.MatMul"({{.*}}) {{.*}} : (tensor<8x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<8x4xf32> loc("z")
// CHECK-NOT: tensor<8x8xf32>
// CHECK-NOT: tensor<2x2x4x4xf32>
module attributes {top.weight_file = "WEIGHTS"} {
func.func @window_block(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %x = "top.Input"(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32> loc("x")
  %none = "top.None"() : () -> none
  %p = "top.Weight"() {tpu.data_movement} : () -> tensor<2x4x8xf32> loc("p")
  %pinv = "top.Weight"() {tpu.data_movement} : () -> tensor<8x8xf32> loc("pinv")
  %wq = "top.Weight"() : () -> tensor<4x4xf32> loc("wq")
  %bq = "top.Weight"() : () -> tensor<4xf32> loc("bq")
  %wk = "top.Weight"() : () -> tensor<4x4xf32> loc("wk")
  %bk = "top.Weight"() : () -> tensor<4xf32> loc("bk")
  %wv = "top.Weight"() : () -> tensor<4x4xf32> loc("wv")
  %bv = "top.Weight"() : () -> tensor<4xf32> loc("bv")
  %wo = "top.Weight"() : () -> tensor<4x4xf32> loc("wo")
  %bo = "top.Weight"() : () -> tensor<4xf32> loc("bo")
  %rb = "top.Weight"() : () -> tensor<1x2x4x4xf32> loc("rb")
  %mask = "top.Weight"() : () -> tensor<2x1x4x4xf32> loc("mask")
  %g = "tpu.MatMul"(%p, %x, %none) : (tensor<2x4x8xf32>, tensor<8x4xf32>, none) -> tensor<2x4x4xf32> loc("g")
  %q = "tpu.MatMul"(%g, %wq, %bq) : (tensor<2x4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32> loc("q")
  %qr = "tpu.Reshape"(%q) : (tensor<2x4x4xf32>) -> tensor<2x4x2x2xf32> loc("qr")
  %qh = "tpu.Permute"(%qr) {order = [0, 2, 1, 3]} : (tensor<2x4x2x2xf32>) -> tensor<2x2x4x2xf32> loc("qh")
  %k = "tpu.MatMul"(%g, %wk, %bk) : (tensor<2x4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32> loc("k")
  %kr = "tpu.Reshape"(%k) : (tensor<2x4x4xf32>) -> tensor<2x4x2x2xf32> loc("kr")
  %kh = "tpu.Permute"(%kr) {order = [0, 2, 1, 3]} : (tensor<2x4x2x2xf32>) -> tensor<2x2x4x2xf32> loc("kh")
  %v = "tpu.MatMul"(%g, %wv, %bv) : (tensor<2x4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32> loc("v")
  %vr = "tpu.Reshape"(%v) : (tensor<2x4x4xf32>) -> tensor<2x4x2x2xf32> loc("vr")
  %vh = "tpu.Permute"(%vr) {order = [0, 2, 1, 3]} : (tensor<2x4x2x2xf32>) -> tensor<2x2x4x2xf32> loc("vh")
  %s = "tpu.MatMul"(%qh, %kh, %none) {right_transpose = true} : (tensor<2x2x4x2xf32>, tensor<2x2x4x2xf32>, none) -> tensor<2x2x4x4xf32> loc("s")
  %s1 = "tpu.Add"(%s, %rb) : (tensor<2x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<2x2x4x4xf32> loc("s1")
  %s2 = "tpu.Add"(%s1, %mask) : (tensor<2x2x4x4xf32>, tensor<2x1x4x4xf32>) -> tensor<2x2x4x4xf32> loc("s2")
  %sm = "tpu.Softmax"(%s2) {axis = 3 : i64} : (tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32> loc("sm")
  %o = "tpu.MatMul"(%sm, %vh, %none) : (tensor<2x2x4x4xf32>, tensor<2x2x4x2xf32>, none) -> tensor<2x2x4x2xf32> loc("o")
  %ot = "tpu.Permute"(%o) {order = [0, 2, 1, 3]} : (tensor<2x2x4x2xf32>) -> tensor<2x4x2x2xf32> loc("ot")
  %om = "tpu.Reshape"(%ot) : (tensor<2x4x2x2xf32>) -> tensor<2x4x4xf32> loc("om")
  %y = "tpu.MatMul"(%om, %wo, %bo) : (tensor<2x4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32> loc("y")
  %yr = "tpu.Reshape"(%y) : (tensor<2x4x4xf32>) -> tensor<8x4xf32> loc("yr")
  %z = "tpu.MatMul"(%pinv, %yr, %none) : (tensor<8x8xf32>, tensor<8x4xf32>, none) -> tensor<8x4xf32> loc("z")
  return %z : tensor<8x4xf32>
}
}

// -----

// A scatter that is not the gather's inverse (here the gather itself, not
// its transpose) leaves the block as it is.
// CHECK-LABEL: func.func @not_inverse
// CHECK: "tpu.Softmax"({{.*}}) {{.*}} : (tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32>
// CHECK: "tpu.MatMul"({{.*}}) {{.*}} : (tensor<8x8xf32>, tensor<8x4xf32>, none) -> tensor<8x4xf32> loc("z")
// CHECK-NOT: unwindowed
module attributes {top.weight_file = "WEIGHTS"} {
func.func @not_inverse(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %x = "top.Input"(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32> loc("x")
  %none = "top.None"() : () -> none
  %p = "top.Weight"() {tpu.data_movement} : () -> tensor<2x4x8xf32> loc("p")
  %pinv = "top.Weight"() {tpu.data_movement} : () -> tensor<8x8xf32> loc("pbad")
  %wq = "top.Weight"() : () -> tensor<4x4xf32> loc("wq")
  %bq = "top.Weight"() : () -> tensor<4xf32> loc("bq")
  %wo = "top.Weight"() : () -> tensor<4x4xf32> loc("wo")
  %bo = "top.Weight"() : () -> tensor<4xf32> loc("bo")
  %g = "tpu.MatMul"(%p, %x, %none) : (tensor<2x4x8xf32>, tensor<8x4xf32>, none) -> tensor<2x4x4xf32> loc("g")
  %q = "tpu.MatMul"(%g, %wq, %bq) : (tensor<2x4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32> loc("q")
  %qr = "tpu.Reshape"(%q) : (tensor<2x4x4xf32>) -> tensor<2x4x2x2xf32> loc("qr")
  %qh = "tpu.Permute"(%qr) {order = [0, 2, 1, 3]} : (tensor<2x4x2x2xf32>) -> tensor<2x2x4x2xf32> loc("qh")
  %k = "tpu.MatMul"(%g, %wq, %bq) : (tensor<2x4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32> loc("k")
  %kr = "tpu.Reshape"(%k) : (tensor<2x4x4xf32>) -> tensor<2x4x2x2xf32> loc("kr")
  %kh = "tpu.Permute"(%kr) {order = [0, 2, 1, 3]} : (tensor<2x4x2x2xf32>) -> tensor<2x2x4x2xf32> loc("kh")
  %v = "tpu.MatMul"(%g, %wq, %bq) : (tensor<2x4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32> loc("v")
  %vr = "tpu.Reshape"(%v) : (tensor<2x4x4xf32>) -> tensor<2x4x2x2xf32> loc("vr")
  %vh = "tpu.Permute"(%vr) {order = [0, 2, 1, 3]} : (tensor<2x4x2x2xf32>) -> tensor<2x2x4x2xf32> loc("vh")
  %s = "tpu.MatMul"(%qh, %kh, %none) {right_transpose = true} : (tensor<2x2x4x2xf32>, tensor<2x2x4x2xf32>, none) -> tensor<2x2x4x4xf32> loc("s")
  %sm = "tpu.Softmax"(%s) {axis = 3 : i64} : (tensor<2x2x4x4xf32>) -> tensor<2x2x4x4xf32> loc("sm")
  %o = "tpu.MatMul"(%sm, %vh, %none) : (tensor<2x2x4x4xf32>, tensor<2x2x4x2xf32>, none) -> tensor<2x2x4x2xf32> loc("o")
  %ot = "tpu.Permute"(%o) {order = [0, 2, 1, 3]} : (tensor<2x2x4x2xf32>) -> tensor<2x4x2x2xf32> loc("ot")
  %om = "tpu.Reshape"(%ot) : (tensor<2x4x2x2xf32>) -> tensor<2x4x4xf32> loc("om")
  %y = "tpu.MatMul"(%om, %wo, %bo) : (tensor<2x4x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32> loc("y")
  %yr = "tpu.Reshape"(%y) : (tensor<2x4x4xf32>) -> tensor<8x4xf32> loc("yr")
  %z = "tpu.MatMul"(%pinv, %yr, %none) : (tensor<8x8xf32>, tensor<8x4xf32>, none) -> tensor<8x4xf32> loc("z")
  return %z : tensor<8x4xf32>
}
}
