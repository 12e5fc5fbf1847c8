// RUN: tpuc-opt %s -convert-top-to-tpu | FileCheck %s

// Each Top unary function becomes tpu.Active; Cast stays a Cast.
// CHECK: module attributes {tpu.chip = "tpu_edge", tpu.mode = #tpu.mode<F32>}
// CHECK-LABEL: func.func @unary
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "relu"}>
// CHECK: "tpu.Active"(%{{.*}}) <{max = 6.000000e+00 : f64, mode = "relu"}>
// CHECK: "tpu.Active"(%{{.*}}) <{max = 2.000000e+00 : f64, min = -1.000000e+00 : f64, mode = "clip"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "sigmoid"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "tanh"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "gelu"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "gelu_tanh"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "silu"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "erf"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "abs"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "exp"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "log"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "sqrt"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "rsqrt"}>
// CHECK: "tpu.Active"(%{{.*}}) <{exponent = 3.000000e+00 : f64, mode = "pow"}>
// CHECK: "tpu.Active"(%{{.*}}) <{alpha = 1.000000e-01 : f64, mode = "leaky_relu"}>
// CHECK: "tpu.Active"(%{{.*}}) <{alpha = 2.000000e-01 : f64, beta = 5.000000e-01 : f64, mode = "hard_sigmoid"}>
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "hard_swish"}>
// CHECK: "tpu.Cast"(%{{.*}}) <{to = "bf16"}>
// CHECK-NOT: top.
func.func @unary(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %1 = "top.Relu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu")
  %2 = "top.Relu"(%1) {relu_limit = 6.0} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu6")
  %3 = "top.Clip"(%2) {min = -1.0, max = 2.0} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("clip")
  %4 = "top.Sigmoid"(%3) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("sigmoid")
  %5 = "top.Tanh"(%4) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("tanh")
  %6 = "top.GELU"(%5) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("gelu")
  %7 = "top.GELU"(%6) {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("gelu_tanh")
  %8 = "top.SiLU"(%7) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("silu")
  %9 = "top.Erf"(%8) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("erf")
  %10 = "top.Abs"(%9) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("abs")
  %11 = "top.Exp"(%10) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("exp")
  %12 = "top.Log"(%11) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("log")
  %13 = "top.Sqrt"(%12) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("sqrt")
  %14 = "top.Rsqrt"(%13) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("rsqrt")
  %15 = "top.Pow"(%14) {exponent = 3.0} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("pow")
  %lr = "top.LeakyRelu"(%15) {alpha = 0.1} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("leaky_relu")
  %hs = "top.HardSigmoid"(%lr) {alpha = 0.2, beta = 0.5} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("hard_sigmoid")
  %hw = "top.HardSwish"(%hs) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("hard_swish")
  %16 = "top.Cast"(%hw) {to = "bf16"} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("cast")
  return %16 : tensor<2x3xf32>
}
