// RUN: tpuc-opt %s -mlir-print-debuginfo | tpuc-opt | FileCheck %s
// Every Tpu op survives a print/parse round trip (and verifies).

module attributes {top.weight_file = "w.npz", tpu.mode = #tpu.mode<F32>, tpu.chip = "tpu_edge"} {
// CHECK: module attributes {{{.*}}tpu.chip = "tpu_edge", tpu.mode = #tpu.mode<F32>
// CHECK-LABEL: func.func @main
func.func @main(%arg0: tensor<1x4x8x8xf32>, %arg1: tensor<2x8x8xf32>, %arg2: tensor<3xf32>) -> tensor<1x4x4x4xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %m = "top.Input"(%arg1) : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32> loc("m")
  %i = "top.Input"(%arg2) : (tensor<3xf32>) -> tensor<3xf32> loc("i")
  %n = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<4x1x3x3xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
  %bc = "top.Weight"() : () -> tensor<4x1x1xf32> loc("bc")
  // CHECK: tpu.Conv{{.*}}dilations = [1, 1]{{.*}}group = 4 : i64, kernel_shape = [3, 3], pads = [1, 1, 1, 1], relu_limit = 6.0{{.*}}strides = [1, 1]
  %0 = "tpu.Conv"(%x, %w, %b) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1], group = 4, do_relu = true, relu_limit = 6.0} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32> loc("conv")
  // CHECK: tpu.MatMul
  %1 = "tpu.MatMul"(%m, %m, %n) {do_relu = true} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>, none) -> tensor<2x8x8xf32> loc("mm")
  // CHECK: tpu.Add
  %2 = "tpu.Add"(%0, %bc) : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32> loc("b0")
  // CHECK: tpu.Sub
  %3 = "tpu.Sub"(%2, %0) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("b1")
  // CHECK: tpu.Mul
  %4 = "tpu.Mul"(%3, %0) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("b2")
  // CHECK: tpu.Div
  %5 = "tpu.Div"(%4, %0) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("b3")
  // CHECK: tpu.Max{{.*}}do_relu = true
  %6 = "tpu.Max"(%5, %0) {do_relu = true} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("b4")
  // CHECK: tpu.Min
  %7 = "tpu.Min"(%6, %0) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("b5")
  // CHECK: tpu.Active{{.*}}max = 6.0{{.*}}mode = "relu"
  %8 = "tpu.Active"(%7) {mode = "relu", max = 6.0 : f64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("a0")
  // CHECK: tpu.Active{{.*}}max = 1.0{{.*}}min = -1.0{{.*}}mode = "clip"
  %9 = "tpu.Active"(%8) {mode = "clip", min = -1.0 : f64, max = 1.0 : f64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("a1")
  // CHECK: tpu.Active{{.*}}exponent = 2.0{{.*}}mode = "pow"
  %10 = "tpu.Active"(%9) {mode = "pow", exponent = 2.0 : f64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("a2")
  // CHECK: tpu.Active{{.*}}mode = "gelu_tanh"
  %11 = "tpu.Active"(%10) {mode = "gelu_tanh"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("a3")
  // CHECK: tpu.Active{{.*}}alpha = 1.0{{.*}}e-01{{.*}}mode = "leaky_relu"
  %lr = "tpu.Active"(%11) {mode = "leaky_relu", alpha = 0.1 : f64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("a4")
  // CHECK: tpu.Active{{.*}}alpha = 2.0{{.*}}beta = 5.0{{.*}}mode = "hard_sigmoid"
  %hs = "tpu.Active"(%lr) {mode = "hard_sigmoid", alpha = 0.2 : f64, beta = 0.5 : f64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("a5")
  // CHECK: tpu.Active{{.*}}mode = "hard_swish"
  %hw = "tpu.Active"(%hs) {mode = "hard_swish"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("a6")
  // CHECK: tpu.LayerNorm{{.*}}axis = 2
  %12 = "tpu.LayerNorm"(%11, %n, %n) {axis = 2, epsilon = 1.0e-5 : f64} : (tensor<1x4x8x8xf32>, none, none) -> tensor<1x4x8x8xf32> loc("ln")
  // CHECK: tpu.Softmax{{.*}}axis = 3
  %13 = "tpu.Softmax"(%12) {axis = 3} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("sm")
  // CHECK: tpu.MaxPool{{.*}}pads = [0, 0, 1, 1]
  %14 = "tpu.MaxPool"(%13) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1]} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> loc("mp")
  // CHECK: tpu.AvgPool{{.*}}count_include_pad = true
  %15 = "tpu.AvgPool"(%13) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], count_include_pad = true} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> loc("ap")
  // CHECK: tpu.Reduce{{.*}}axes = [2, 3]{{.*}}keepdims = true{{.*}}mode = "mean"
  %16 = "tpu.Reduce"(%15) {mode = "mean", axes = [2, 3], keepdims = true} : (tensor<1x4x4x4xf32>) -> tensor<1x4x1x1xf32> loc("rd")
  // CHECK: tpu.Reshape
  %17 = "tpu.Reshape"(%14) : (tensor<1x4x4x4xf32>) -> tensor<1x4x16xf32> loc("rs")
  // CHECK: tpu.Permute{{.*}}order = [0, 2, 1]
  %18 = "tpu.Permute"(%17) {order = [0, 2, 1]} : (tensor<1x4x16xf32>) -> tensor<1x16x4xf32> loc("pm")
  // CHECK: tpu.Concat{{.*}}axis = 2
  %19 = "tpu.Concat"(%18, %18) {axis = 2} : (tensor<1x16x4xf32>, tensor<1x16x4xf32>) -> tensor<1x16x8xf32> loc("cc")
  // CHECK: tpu.Slice{{.*}}offsets = [0, 15, 1], steps = [1, -2, 3]
  %20 = "tpu.Slice"(%19) {offsets = [0, 15, 1], steps = [1, -2, 3]} : (tensor<1x16x8xf32>) -> tensor<1x8x3xf32> loc("sl")
  // CHECK: tpu.Gather{{.*}}axis = 1
  %21 = "tpu.Gather"(%20, %i) {axis = 1} : (tensor<1x8x3xf32>, tensor<3xf32>) -> tensor<1x3x3xf32> loc("ga")
  // CHECK: tpu.Pad{{.*}}mode = "reflect"
  %22 = "tpu.Pad"(%21) {pads = [0, 1, 1, 0, 1, 1], mode = "reflect", value = 0.0} : (tensor<1x3x3xf32>) -> tensor<1x5x5xf32> loc("pd")
  // CHECK: tpu.Cast{{.*}}to = "f16"
  %23 = "tpu.Cast"(%22) {to = "f16"} : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32> loc("cs")
  // CHECK: tpu.Upsample{{.*}}scale_h = 2{{.*}}scale_w = 3
  %24 = "tpu.Upsample"(%14) {scale_h = 2, scale_w = 3} : (tensor<1x4x4x4xf32>) -> tensor<1x4x8x12xf32> loc("up")
  return %14 : tensor<1x4x4x4xf32>
}
}
