// RUN: tpuc-opt %s -split-input-file -convert-top-to-tpu -mlir-print-debuginfo | FileCheck %s

// A 2-D conv keeps its attributes; pads are already [top, left, bottom, right].
// CHECK-LABEL: func.func @conv2d
// CHECK: %[[C:.*]] = "tpu.Conv"(%{{.*}}, %{{.*}}, %{{.*}}) <{dilations = [1, 1], do_relu = true, group = 1 : i64, kernel_shape = [3, 3], pads = [1, 0, 2, 1], relu_limit = -1.000000e+00 : f64, strides = [2, 1]}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x5x7xf32> loc(#[[LC:loc[0-9]*]])
// CHECK-NOT: top.Conv
// CHECK: #[[LC]] = loc("conv")
module attributes {top.weight_file = "unused.npz"} {
func.func @conv2d(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x4x5x7xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<4x3x3x3xf32> loc("w")
  %n = "top.None"() : () -> none
  %1 = "top.Conv"(%0, %w, %n) {kernel_shape = [3, 3], strides = [2, 1], pads = [1, 0, 2, 1], dilations = [1, 1], do_relu = true} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x5x7xf32> loc("conv")
  return %1 : tensor<1x4x5x7xf32>
}
}

// -----

// A 1-D conv is a 2-D conv of height 1: the input and output are reshaped,
// the constant filter just changes type (same name, same data).
// CHECK-LABEL: func.func @conv1d
// CHECK-DAG: %[[W:.*]] = "top.Weight"() : () -> tensor<4x2x1x3xf32> loc(#[[LW:loc[0-9]*]])
// CHECK-DAG: %[[IN:.*]] = "tpu.Reshape"(%{{.*}}) : (tensor<1x2x10xf32>) -> tensor<1x2x1x10xf32> loc(#[[LIN:loc[0-9]*]])
// CHECK: %[[C:.*]] = "tpu.Conv"(%[[IN]], %[[W]], %{{.*}}) <{dilations = [1, 2], do_relu = false, group = 1 : i64, kernel_shape = [1, 3], pads = [0, 1, 0, 2], relu_limit = -1.000000e+00 : f64, strides = [1, 3]}> : (tensor<1x2x1x10xf32>, tensor<4x2x1x3xf32>, tensor<4xf32>) -> tensor<1x4x1x3xf32> loc(#[[L2D:loc[0-9]*]])
// CHECK: %[[OUT:.*]] = "tpu.Reshape"(%[[C]]) : (tensor<1x4x1x3xf32>) -> tensor<1x4x3xf32> loc(#[[LC:loc[0-9]*]])
// CHECK: return %[[OUT]]
// CHECK-DAG: #[[LW]] = loc("w1")
// CHECK-DAG: #[[LC]] = loc("conv1")
// CHECK-DAG: #[[LIN]] = loc("conv1_input_2d"(#[[LC]]))
// CHECK-DAG: #[[L2D]] = loc("conv1_2d"(#[[LC]]))
module attributes {top.weight_file = "unused.npz"} {
func.func @conv1d(%arg0: tensor<1x2x10xf32>) -> tensor<1x4x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x2x10xf32>) -> tensor<1x2x10xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<4x2x3xf32> loc("w1")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("b1")
  %1 = "top.Conv"(%0, %w, %b) {kernel_shape = [3], strides = [3], pads = [1, 2], dilations = [2]} : (tensor<1x2x10xf32>, tensor<4x2x3xf32>, tensor<4xf32>) -> tensor<1x4x3xf32> loc("conv1")
  return %1 : tensor<1x4x3xf32>
}
}

// -----

// CHECK-LABEL: func.func @matmul_binary
// CHECK: %[[M:.*]] = "tpu.MatMul"(%{{.*}}, %{{.*}}, %{{.*}}) <{do_relu = true, right_transpose = false}> : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
// CHECK: %[[A:.*]] = "tpu.Add"(%[[M]], %{{.*}}) <{do_relu = true}>
// CHECK: %[[S:.*]] = "tpu.Sub"(%[[A]], %[[M]])
// CHECK: %[[U:.*]] = "tpu.Mul"(%[[S]], %[[M]])
// CHECK: %[[D:.*]] = "tpu.Div"(%[[U]], %[[M]])
// CHECK: %[[X:.*]] = "tpu.Max"(%[[D]], %[[M]])
// CHECK: "tpu.Min"(%[[X]], %[[M]])
func.func @matmul_binary(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4x5xf32>, %arg2: tensor<5xf32>) -> tensor<2x3x5xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("a")
  %1 = "top.Input"(%arg1) : (tensor<4x5xf32>) -> tensor<4x5xf32> loc("b")
  %2 = "top.Input"(%arg2) : (tensor<5xf32>) -> tensor<5xf32> loc("c")
  %3 = "top.MatMul"(%0, %1, %2) {do_relu = true} : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32> loc("mm")
  %4 = "top.Add"(%3, %2) {do_relu = true} : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32> loc("add")
  %5 = "top.Sub"(%4, %3) : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32> loc("sub")
  %6 = "top.Mul"(%5, %3) : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32> loc("mul")
  %7 = "top.Div"(%6, %3) : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32> loc("div")
  %8 = "top.Max"(%7, %3) : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32> loc("max")
  %9 = "top.Min"(%8, %3) : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32> loc("min")
  return %9 : tensor<2x3x5xf32>
}
