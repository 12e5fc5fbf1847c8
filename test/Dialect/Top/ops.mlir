// RUN: tpuc-opt %s -split-input-file -mlir-print-debuginfo | tpuc-opt -split-input-file | FileCheck %s
// Every Top op survives a print/parse round trip.

module attributes {top.weight_file = "w.npz"} {
// CHECK-LABEL: func.func @conv
func.func @conv(%arg0: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // CHECK: top.Input
  %0 = "top.Input"(%arg0) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  // CHECK: top.Weight
  %1 = "top.Weight"() : () -> tensor<4x3x3x3xf32> loc("w")
  // CHECK: top.None
  %2 = "top.None"() : () -> none
  // CHECK: top.Conv{{.*}}dilations = [1, 1]{{.*}}group = 1{{.*}}kernel_shape = [3, 3], pads = [1, 1, 1, 1]
  %3 = "top.Conv"(%0, %1, %2) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  // CHECK: top.Relu
  %4 = "top.Relu"(%3) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Add
  %5 = "top.Add"(%4, %4) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  %6 = "top.Weight"() : () -> tensor<4xf32> loc("s")
  // CHECK: top.BatchNorm{{.*}}epsilon
  %7 = "top.BatchNorm"(%5, %6, %6, %6, %6) {epsilon = 1.0e-3 : f64} : (tensor<*xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %7 : tensor<*xf32>
}
}

// -----
// The remaining ops, each with its attributes.
module attributes {top.weight_file = "w.npz"} {
// CHECK-LABEL: func.func @all_ops
func.func @all_ops(%x: tensor<2x4x8x8xf32>, %m: tensor<2x8x16xf32>, %i: tensor<3xf32>) -> tensor<*xf32> {
  %n = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<16x4xf32> loc("mm_w")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("mm_b")
  // CHECK: top.Sub
  %0 = "top.Sub"(%x, %x) : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<*xf32>
  // CHECK: top.Mul{{.*}}do_relu = true
  %1 = "top.Mul"(%0, %x) {do_relu = true} : (tensor<*xf32>, tensor<2x4x8x8xf32>) -> tensor<*xf32>
  // CHECK: top.Div
  %2 = "top.Div"(%1, %x) : (tensor<*xf32>, tensor<2x4x8x8xf32>) -> tensor<*xf32>
  // CHECK: top.Max
  %3 = "top.Max"(%2, %x) : (tensor<*xf32>, tensor<2x4x8x8xf32>) -> tensor<*xf32>
  // CHECK: top.Min
  %4 = "top.Min"(%3, %x) : (tensor<*xf32>, tensor<2x4x8x8xf32>) -> tensor<*xf32>
  // CHECK: top.Relu{{.*}}relu_limit = 6.0
  %5 = "top.Relu"(%4) {relu_limit = 6.0 : f64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Clip{{.*}}max = 1.0{{.*}}min = -1.0
  %6 = "top.Clip"(%5) {min = -1.0 : f64, max = 1.0 : f64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Sigmoid
  %7 = "top.Sigmoid"(%6) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Tanh
  %8 = "top.Tanh"(%7) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.GELU{{.*}}approximate = "tanh"
  %9 = "top.GELU"(%8) {approximate = "tanh"} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.SiLU
  %10 = "top.SiLU"(%9) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Erf
  %11 = "top.Erf"(%10) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Abs
  %12 = "top.Abs"(%11) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Exp
  %13 = "top.Exp"(%12) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Log
  %14 = "top.Log"(%13) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Sqrt
  %15 = "top.Sqrt"(%14) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Rsqrt
  %16 = "top.Rsqrt"(%15) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Pow{{.*}}exponent = 2.0
  %17 = "top.Pow"(%16) {exponent = 2.0 : f64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Cast{{.*}}to = "bf16"
  %18 = "top.Cast"(%17) {to = "bf16"} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.LeakyRelu{{.*}}alpha = 1.0{{.*}}e-01
  %lr = "top.LeakyRelu"(%18) {alpha = 0.1 : f64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.HardSigmoid{{.*}}alpha = 2.0{{.*}}beta = 5.0{{.*}}e-01
  %hs = "top.HardSigmoid"(%lr) {alpha = 0.2 : f64, beta = 0.5 : f64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.HardSwish
  %hw = "top.HardSwish"(%hs) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.MaxPool{{.*}}ceil_mode = true{{.*}}kernel_shape = [2, 2]
  %19 = "top.MaxPool"(%hw) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1], ceil_mode = true} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.AvgPool{{.*}}count_include_pad = true
  %20 = "top.AvgPool"(%19) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], count_include_pad = true} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.GlobalAvgPool
  %21 = "top.GlobalAvgPool"(%20) : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Reduce{{.*}}axes = [-1, 2]{{.*}}keepdims = false{{.*}}mode = "max"
  %22 = "top.Reduce"(%x) {mode = "max", axes = [-1, 2], keepdims = false} : (tensor<2x4x8x8xf32>) -> tensor<*xf32>
  // CHECK: top.Reshape{{.*}}shape = [2, -1]
  %23 = "top.Reshape"(%22) {shape = [2, -1]} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Permute{{.*}}order = [1, 0]
  %24 = "top.Permute"(%23) {order = [1, 0]} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Concat{{.*}}axis = -1{{.*}}do_relu = true
  %25 = "top.Concat"(%24, %24, %24) {axis = -1 : i64, do_relu = true} : (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Slice{{.*}}axes = [0]{{.*}}ends = [-100]{{.*}}starts = [-1]{{.*}}steps = [-2]
  %26 = "top.Slice"(%25) {starts = [-1], ends = [-100], axes = [0], steps = [-2]} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Gather{{.*}}axis = 1
  %27 = "top.Gather"(%26, %i) {axis = 1 : i64} : (tensor<*xf32>, tensor<3xf32>) -> tensor<*xf32>
  // CHECK: top.Pad{{.*}}mode = "reflect"{{.*}}pads = [1, 0, 1, 0]
  %28 = "top.Pad"(%27) {pads = [1, 0, 1, 0], mode = "reflect"} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Upsample{{.*}}scale_h = 2{{.*}}scale_w = 3
  %29 = "top.Upsample"(%21) {scale_h = 2 : i64, scale_w = 3 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.MatMul{{.*}}do_relu = true
  %30 = "top.MatMul"(%m, %w, %b) {do_relu = true} : (tensor<2x8x16xf32>, tensor<16x4xf32>, tensor<4xf32>) -> tensor<*xf32>
  // CHECK: top.LayerNorm{{.*}}axis = -1{{.*}}epsilon
  %31 = "top.LayerNorm"(%30, %b, %n) {axis = -1 : i64, epsilon = 1.0e-6 : f64} : (tensor<*xf32>, tensor<4xf32>, none) -> tensor<*xf32>
  // CHECK: top.Softmax{{.*}}axis = 1
  %32 = "top.Softmax"(%31) {axis = 1 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  return %32 : tensor<*xf32>
}
}
