// RUN: %python %S/Inputs/asym_inputs.py %t.npz %t.table
// RUN: sed s@WEIGHTS@%t.npz@ %s > %t.mlir
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table asymmetric=true" -tpu-layer-group="chip=tpu_edge" | FileCheck %s
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table asymmetric=true" -tpu-layer-group="chip=tpu_pro" | FileCheck %s
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table asymmetric=true" -tpu-layer-group="chip=tpu_edge" -tpu-assign-address="chip=tpu_edge" -tpu-codegen="chip=tpu_edge" | FileCheck %s --check-prefix=CODEGEN
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table" -tpu-layer-group="chip=tpu_edge" -tpu-assign-address="chip=tpu_edge" -tpu-codegen="chip=tpu_edge" | FileCheck %s --check-prefix=CODEGEN

// Asymmetric INT8 convs pad with their input's zero point themselves: no
// tpu.Pad is materialized, the padded depthwise convs (stride 1 and 2) keep
// their pads and the whole chain is one layer group, as in symmetric INT8.
// CHECK-NOT: "tpu.Pad"
// CHECK: tpu.Group
// CHECK-NEXT: %[[X:.*]] = "tpu.QuantCast"{{.*}} -> tensor<1x16x16x16x!quant.uniform<i8:f32, {{.*}}:-64>>
// CHECK-NEXT: %[[A:.*]] = "tpu.Conv"(%[[X]], {{.*}}group = 16 : i64, {{.*}}pads = [1, 1, 1, 1], {{.*}}strides = [1, 1]}>
// CHECK-NEXT: %[[B:.*]] = "tpu.Conv"(%[[A]], {{.*}}pads = [0, 0, 0, 0], {{.*}}>
// CHECK-NEXT: "tpu.Conv"(%[[B]], {{.*}}group = 16 : i64, {{.*}}pads = [1, 1, 1, 1], {{.*}}strides = [2, 2]}>
// CHECK-NEXT: "tpu.QuantCast"
// CHECK-NEXT: tpu.Yield
// CHECK-NOT: "tpu.Pad"

// Asymmetric and symmetric INT8 move the same data: one group, casts at
// its edges included, loading the float input and the three filters, biases
// and requant tables once and storing one float result.
// CODEGEN: tpu.gdma_instructions = 11
module attributes {top.weight_file = "WEIGHTS"} {
func.func @main(%arg0: tensor<1x16x16x16xf32>) -> tensor<1x16x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32> loc("x")
  %n = "top.None"() : () -> none
  %w1 = "top.Weight"() : () -> tensor<16x1x3x3xf32> loc("dw1")
  %b = "top.Weight"() : () -> tensor<16xf32> loc("b")
  %c1 = "top.Conv"(%x, %w1, %b) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1], group = 16 : i64, do_relu = true} : (tensor<1x16x16x16xf32>, tensor<16x1x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32> loc("dw1")
  %w2 = "top.Weight"() : () -> tensor<16x16x1x1xf32> loc("pw")
  %c2 = "top.Conv"(%c1, %w2, %n) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x16x16x16xf32>, tensor<16x16x1x1xf32>, none) -> tensor<1x16x16x16xf32> loc("pw")
  %w3 = "top.Weight"() : () -> tensor<16x1x3x3xf32> loc("dw2")
  %c3 = "top.Conv"(%c2, %w3, %n) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], dilations = [1, 1], group = 16 : i64} : (tensor<1x16x16x16xf32>, tensor<16x1x3x3xf32>, none) -> tensor<1x16x8x8xf32> loc("dw2")
  return %c3 : tensor<1x16x8x8xf32>
}
}
