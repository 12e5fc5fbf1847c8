// RUN: tpuc-opt %s -canonicalize | FileCheck %s
// RUN: tpuc-opt %s -canonicalize -tpu-layer-group="chip=tpu_pro print-plan=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN

// A pooler on the first token of each sequence: the matmul reads the picked
// rows [2, 1, 32] as they are and the reshape to [2, 32] follows it.
// CHECK-LABEL: func.func @pooler
// CHECK: %[[S:.*]] = "tpu.Slice"
// CHECK: %[[M:.*]] = "tpu.MatMul"(%[[S]], %{{.*}}, %{{.*}}) <{do_relu = false, right_transpose = false}> : (tensor<2x1x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<2x1x32xf32>
// CHECK: %[[R:.*]] = "tpu.Reshape"(%[[M]]) : (tensor<2x1x32xf32>) -> tensor<2x32xf32>
// CHECK: "tpu.Active"(%[[R]])

// In a layer group the first token of each sequence stays in its lane (a
// lane copy): the slice is computed, not loaded back from the stored
// hidden states.
// PLAN: layer group plan: 5 ops
// PLAN: result 'h' [2, 8, 1, 32] f32 {{.*}} stored
// PLAN: result 'first' [2, 1, 1, 32] f32
// PLAN: result 'dense_rows' [2, 1, 1, 32] f32
// PLAN: result 'pooled' [2, 1, 1, 32] f32 {{.*}} stored
func.func @pooler(%arg0: tensor<2x8x32xf32>) -> (tensor<2x8x32xf32>, tensor<2x32xf32>) {
  %x = "top.Input"(%arg0) : (tensor<2x8x32xf32>) -> tensor<2x8x32xf32> loc("x")
  %nw = "top.Weight"() : () -> tensor<32xf32> loc("nw")
  %nb = "top.Weight"() : () -> tensor<32xf32> loc("nb")
  %h = "tpu.LayerNorm"(%x, %nw, %nb) {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32> loc("h")
  %s = "tpu.Slice"(%h) {offsets = [0, 0, 0], steps = [1, 1, 1]} : (tensor<2x8x32xf32>) -> tensor<2x1x32xf32> loc("first")
  %r = "tpu.Reshape"(%s) : (tensor<2x1x32xf32>) -> tensor<2x32xf32> loc("rows")
  %w = "top.Weight"() : () -> tensor<32x32xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<32xf32> loc("b")
  %m = "tpu.MatMul"(%r, %w, %b) {do_relu = false, right_transpose = false} : (tensor<2x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<2x32xf32> loc("dense")
  %t = "tpu.Active"(%m) {mode = "tanh"} : (tensor<2x32xf32>) -> tensor<2x32xf32> loc("pooled")
  return %h, %t : tensor<2x8x32xf32>, tensor<2x32xf32>
}
