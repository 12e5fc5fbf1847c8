// RUN: tpuc-opt %s -tpu-layer-group="chip=tpu_pro" | FileCheck %s
// RUN: tpuc-opt %s -tpu-layer-group="chip=tpu_pro print-plan=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAN

// An attention mask [batch, tokens] reshaped to [batch, 1, 1, tokens] and
// broadcast over the query rows: the group loads the Reshape of the model
// input straight in the layout its users read (an image per batch, one
// channel), which no copy within lanes can make of the input's rows view,
// so mask and scores are one group.
// CHECK-LABEL: func.func @mask
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.Reshape"
// CHECK-NEXT: "tpu.Cast"
// CHECK-NEXT: "tpu.Mul"
// CHECK-NEXT: "tpu.Add"
// CHECK-NEXT: tpu.Yield
// PLAN: remark: {{.*}}layer group plan: 4 ops
// PLAN-NOT: input 'm'
// PLAN: result 'r' [2, 1, 1, 8] f32
func.func @mask(%arg0: tensor<2x8xf32>, %arg1: tensor<2x1x8x8xf32>) -> tensor<2x1x8x8xf32> {
  %m = "top.Input"(%arg0) : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("m")
  %s = "top.Input"(%arg1) : (tensor<2x1x8x8xf32>) -> tensor<2x1x8x8xf32> loc("s")
  %w = "top.Weight"() : () -> tensor<1x1x8x1xf32> loc("w")
  %r = "tpu.Reshape"(%m) : (tensor<2x8xf32>) -> tensor<2x1x1x8xf32> loc("r")
  %c = "tpu.Cast"(%r) {to = "bool"} : (tensor<2x1x1x8xf32>) -> tensor<2x1x1x8xf32> loc("c")
  %b = "tpu.Mul"(%w, %c) : (tensor<1x1x8x1xf32>, tensor<2x1x1x8xf32>) -> tensor<2x1x8x8xf32> loc("b")
  %a = "tpu.Add"(%s, %b) : (tensor<2x1x8x8xf32>, tensor<2x1x8x8xf32>) -> tensor<2x1x8x8xf32> loc("a")
  return %a : tensor<2x1x8x8xf32>
}
