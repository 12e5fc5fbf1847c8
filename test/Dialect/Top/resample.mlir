// RUN: tpuc-opt %s -split-input-file -mlir-print-debuginfo | tpuc-opt -split-input-file -top-shape-infer | FileCheck %s
// top.Deconv and top.Interp survive a round trip and infer their shapes.

// CHECK-LABEL: func.func @deconv
// CHECK: top.Deconv{{.*}}output_padding = [1, 0]{{.*}} -> tensor<1x6x12x9xf32>
// CHECK: top.Deconv{{.*}}group = 4{{.*}} -> tensor<1x4x11xf32>
func.func @deconv(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<6xf32>,
                  %y: tensor<1x4x5xf32>, %wd: tensor<4x1x3xf32>, %n: none) -> (tensor<*xf32>, tensor<*xf32>) {
  %0 = "top.Deconv"(%x, %w, %b) {kernel_shape = [3, 3], strides = [2, 2], pads = [0, 1, 0, 1], dilations = [1, 1], output_padding = [1, 0], group = 2} : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<*xf32> loc("d")
  %1 = "top.Deconv"(%y, %wd, %n) {kernel_shape = [3], strides = [2], pads = [0, 0], dilations = [1], output_padding = [0], group = 4} : (tensor<1x4x5xf32>, tensor<4x1x3xf32>, none) -> tensor<*xf32> loc("d1")
  return %0, %1 : tensor<*xf32>, tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @interp
// CHECK: top.Interp{{.*}}coord_mode = "align_corners"{{.*}}mode = "linear"{{.*}} -> tensor<1x2x7x10xf32>
func.func @interp(%x: tensor<1x2x3x5xf32>) -> tensor<*xf32> {
  %0 = "top.Interp"(%x) {mode = "linear", coord_mode = "align_corners", target_h = 7, target_w = 10, scale_h = 2.333 : f64, scale_w = 2.0 : f64} : (tensor<1x2x3x5xf32>) -> tensor<*xf32> loc("i")
  return %0 : tensor<*xf32>
}
