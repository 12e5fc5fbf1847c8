// RUN: tpuc-opt %s -convert-top-to-tpu -mlir-print-debuginfo | FileCheck %s

module attributes {top.weight_file = "w.npz"} {
// A 1-D deconv becomes a 2-D one of height 1 between reshapes.
// CHECK-LABEL: func.func @deconv
// CHECK: "tpu.Deconv"(%{{.*}}) <{dilations = [1, 1], group = 2 : i64, kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}> : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x10x10xf32>
// CHECK: "tpu.Reshape"{{.*}} -> tensor<1x4x1x5xf32> loc(#[[IN2D:.*]])
// CHECK: "tpu.Deconv"{{.*}}kernel_shape = [1, 3], pads = [0, 1, 0, 0], strides = [1, 2]{{.*}} -> tensor<1x2x1x10xf32>
// CHECK: "tpu.Reshape"{{.*}} -> tensor<1x2x10xf32> loc(#[[D1:.*]])
func.func @deconv(%arg0: tensor<1x4x5x5xf32>, %arg1: tensor<1x4x5xf32>) -> (tensor<1x6x10x10xf32>, tensor<1x2x10xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> loc("x")
  %y = "top.Input"(%arg1) : (tensor<1x4x5xf32>) -> tensor<1x4x5xf32> loc("y")
  %w = "top.Weight"() : () -> tensor<4x3x3x3xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<6xf32> loc("b")
  %w1 = "top.Weight"() : () -> tensor<4x2x3xf32> loc("w1")
  %n = "top.None"() : () -> none
  %0 = "top.Deconv"(%x, %w, %b) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], dilations = [1, 1], output_padding = [1, 1], group = 2} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x10x10xf32> loc("d")
  %1 = "top.Deconv"(%y, %w1, %n) {kernel_shape = [3], strides = [2], pads = [1, 0], dilations = [1], output_padding = [0]} : (tensor<1x4x5xf32>, tensor<4x2x3xf32>, none) -> tensor<1x2x10xf32> loc("d1")
  return %0, %1 : tensor<1x6x10x10xf32>, tensor<1x2x10xf32>
}

// Resize becomes two interpolation matrices ([OH, H], [OW, W]) and tpu.Interp.
// CHECK-LABEL: func.func @interp
// CHECK-DAG: %[[H:.*]] = "top.Weight"() : () -> tensor<6x3xf32> loc(#[[HL:.*]])
// CHECK-DAG: %[[W:.*]] = "top.Weight"() : () -> tensor<10x5xf32> loc(#[[WL:.*]])
// CHECK: "tpu.Interp"(%{{.*}}, %[[H]], %[[W]]) : (tensor<1x2x3x5xf32>, tensor<6x3xf32>, tensor<10x5xf32>) -> tensor<1x2x6x10xf32>
func.func @interp(%arg0: tensor<1x2x3x5xf32>) -> tensor<1x2x6x10xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x2x3x5xf32>) -> tensor<1x2x3x5xf32> loc("x")
  %0 = "top.Interp"(%x) {mode = "linear", coord_mode = "half_pixel", target_h = 6, target_w = 10, scale_h = 2.0, scale_w = 2.0} : (tensor<1x2x3x5xf32>) -> tensor<1x2x6x10xf32> loc("up")
  return %0 : tensor<1x2x6x10xf32>
}
}
// CHECK-DAG: #[[IN2D]] = loc("d1_input_2d"
// CHECK-DAG: #[[D1]] = loc("d1")
// CHECK-DAG: #[[HL]] = loc("up_tpu_height_matrix")
// CHECK-DAG: #[[WL]] = loc("up_tpu_width_matrix")
