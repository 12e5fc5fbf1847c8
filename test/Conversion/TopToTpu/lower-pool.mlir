// RUN: tpuc-opt %s -split-input-file -convert-top-to-tpu | FileCheck %s

// ceil_mode: the last window needs one more row and column of end padding.
// CHECK-LABEL: func.func @maxpool_ceil
// CHECK: "tpu.MaxPool"(%{{.*}}) <{kernel_shape = [2, 2], pads = [0, 0, 1, 1], strides = [2, 2]}> : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
func.func @maxpool_ceil(%arg0: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32> loc("x")
  %1 = "top.MaxPool"(%0) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], ceil_mode = true} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> loc("pool")
  return %1 : tensor<1x1x3x3xf32>
}

// -----

// ceil_mode whose extra window would start in the end padding: ONNX drops
// it, so the floor size already fits and the pads stay.
// CHECK-LABEL: func.func @maxpool_ceil_dropped
// CHECK: "tpu.MaxPool"(%{{.*}}) <{kernel_shape = [2, 2], pads = [1, 1, 1, 1], strides = [2, 2]}> : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
func.func @maxpool_ceil_dropped(%arg0: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32> loc("x")
  %1 = "top.MaxPool"(%0) {kernel_shape = [2, 2], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = true} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> loc("pool")
  return %1 : tensor<1x1x3x3xf32>
}

// -----

// 1-D: height 1 between reshapes; ceil_mode adds one end pad.
// CHECK-LABEL: func.func @avgpool_1d_ceil
// CHECK: %[[IN:.*]] = "tpu.Reshape"(%{{.*}}) : (tensor<1x2x7xf32>) -> tensor<1x2x1x7xf32>
// CHECK: %[[P:.*]] = "tpu.AvgPool"(%[[IN]]) <{count_include_pad = false, kernel_shape = [1, 3], pads = [0, 1, 0, 1], strides = [1, 2]}> : (tensor<1x2x1x7xf32>) -> tensor<1x2x1x4xf32>
// CHECK: "tpu.Reshape"(%[[P]]) : (tensor<1x2x1x4xf32>) -> tensor<1x2x4xf32>
func.func @avgpool_1d_ceil(%arg0: tensor<1x2x7xf32>) -> tensor<1x2x4xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x2x7xf32>) -> tensor<1x2x7xf32> loc("x")
  %1 = "top.AvgPool"(%0) {kernel_shape = [3], strides = [2], pads = [1, 0], ceil_mode = true} : (tensor<1x2x7xf32>) -> tensor<1x2x4xf32> loc("pool")
  return %1 : tensor<1x2x4xf32>
}

// -----

// count_include_pad with a ceil_mode extension: the real padding becomes
// zeros (counted as input), the extension is not counted.
// CHECK-LABEL: func.func @avgpool_include_pad_ceil
// CHECK: %[[PAD:.*]] = "tpu.Pad"(%{{.*}}) <{mode = "constant", pads = [0, 0, 1, 1, 0, 0, 1, 1], value = 0.000000e+00 : f64}> : (tensor<1x1x6x6xf32>) -> tensor<1x1x8x8xf32>
// CHECK: "tpu.AvgPool"(%[[PAD]]) <{count_include_pad = false, kernel_shape = [3, 3], pads = [0, 0, 1, 1], strides = [2, 2]}> : (tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32>
func.func @avgpool_include_pad_ceil(%arg0: tensor<1x1x6x6xf32>) -> tensor<1x1x4x4xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32> loc("x")
  %1 = "top.AvgPool"(%0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = true, count_include_pad = true} : (tensor<1x1x6x6xf32>) -> tensor<1x1x4x4xf32> loc("pool")
  return %1 : tensor<1x1x4x4xf32>
}

// -----

// Without ceil_mode growth, count_include_pad is kept as is.
// CHECK-LABEL: func.func @avgpool_include_pad
// CHECK-NOT: tpu.Pad
// CHECK: "tpu.AvgPool"(%{{.*}}) <{count_include_pad = true, kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]}>
func.func @avgpool_include_pad(%arg0: tensor<1x1x6x6xf32>) -> tensor<1x1x3x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32> loc("x")
  %1 = "top.AvgPool"(%0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], count_include_pad = true} : (tensor<1x1x6x6xf32>) -> tensor<1x1x3x3xf32> loc("pool")
  return %1 : tensor<1x1x3x3xf32>
}

// -----

// A small plane pools in one window.
// CHECK-LABEL: func.func @global_avgpool
// CHECK: "tpu.AvgPool"(%{{.*}}) <{count_include_pad = false, kernel_shape = [7, 5], pads = [0, 0, 0, 0], strides = [1, 1]}> : (tensor<2x3x7x5xf32>) -> tensor<2x3x1x1xf32>
func.func @global_avgpool(%arg0: tensor<2x3x7x5xf32>) -> tensor<2x3x1x1xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3x7x5xf32>) -> tensor<2x3x7x5xf32> loc("x")
  %1 = "top.GlobalAvgPool"(%0) : (tensor<2x3x7x5xf32>) -> tensor<2x3x1x1xf32> loc("gap")
  return %1 : tensor<2x3x1x1xf32>
}

// -----

// A larger plane pools its rows, then the column of row means, so that the
// row pool can join a layer group sliced along H.
// CHECK-LABEL: func.func @global_avgpool_large
// CHECK: %[[R:.*]] = "tpu.AvgPool"(%{{.*}}) <{count_include_pad = false, kernel_shape = [1, 112], pads = [0, 0, 0, 0], strides = [1, 1]}> : (tensor<1x4x112x112xf32>) -> tensor<1x4x112x1xf32>
// CHECK: "tpu.AvgPool"(%[[R]]) <{count_include_pad = false, kernel_shape = [112, 1], pads = [0, 0, 0, 0], strides = [1, 1]}> : (tensor<1x4x112x1xf32>) -> tensor<1x4x1x1xf32>
func.func @global_avgpool_large(%arg0: tensor<1x4x112x112xf32>) -> tensor<1x4x1x1xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x4x112x112xf32>) -> tensor<1x4x112x112xf32> loc("x")
  %1 = "top.GlobalAvgPool"(%0) : (tensor<1x4x112x112xf32>) -> tensor<1x4x1x1xf32> loc("gap")
  return %1 : tensor<1x4x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @global_avgpool_1d
// CHECK: %[[IN:.*]] = "tpu.Reshape"(%{{.*}}) : (tensor<2x3x9xf32>) -> tensor<2x3x1x9xf32>
// CHECK: %[[P:.*]] = "tpu.AvgPool"(%[[IN]]) <{count_include_pad = false, kernel_shape = [1, 9], pads = [0, 0, 0, 0], strides = [1, 1]}>
// CHECK: "tpu.Reshape"(%[[P]]) : (tensor<2x3x1x1xf32>) -> tensor<2x3x1xf32>
func.func @global_avgpool_1d(%arg0: tensor<2x3x9xf32>) -> tensor<2x3x1xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3x9xf32>) -> tensor<2x3x9xf32> loc("x")
  %1 = "top.GlobalAvgPool"(%0) : (tensor<2x3x9xf32>) -> tensor<2x3x1xf32> loc("gap")
  return %1 : tensor<2x3x1xf32>
}
