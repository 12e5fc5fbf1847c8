// RUN: %python %S/Inputs/fusion_weights.py %t.npz
// RUN: sed "s|WEIGHTS|%t.npz|" %s | tpuc-opt -split-input-file -canonicalize -mlir-print-debuginfo | FileCheck %s
// Epilogue fusions of the canonicalizer: a constant row added to a MatMul
// becomes its bias, the written-out erf GELU one GELU. The fused op takes
// the location (tensor name) of the op whose output it produces.

module attributes {top.weight_file = "WEIGHTS"} {
// The bias weight, defined after the MatMul (as exporters write it), moves
// up to it.
// CHECK-LABEL: func.func @matmul_bias
// CHECK: %[[B:.*]] = "top.Weight"() : () -> tensor<3xf32>
// CHECK: %[[M:.*]] = "top.MatMul"(%{{.*}}, %{{.*}}, %[[B]]) <{do_relu = true}> {{.*}} loc(#[[L:loc[0-9]*]])
// CHECK-NOT: top.Add
// CHECK: return %[[M]]
// CHECK: #[[L]] = loc("sum")
func.func @matmul_bias(%arg0: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("x")
  %n = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<4x3xf32> loc("w")
  %1 = "top.MatMul"(%0, %w, %n) : (tensor<2x4xf32>, tensor<4x3xf32>, none) -> tensor<2x3xf32> loc("mm")
  %b = "top.Weight"() : () -> tensor<3xf32> loc("b")
  %2 = "top.Add"(%b, %1) {do_relu = true} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("sum")
  return %2 : tensor<2x3xf32>
}
}

// -----
module attributes {top.weight_file = "WEIGHTS"} {
// A [1, N] row is a bias too; a column, a run-time tensor, a MatMul with
// another user or a broadcast result is not.
// CHECK-LABEL: func.func @matmul_not_bias
// CHECK: "top.MatMul"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}}: (tensor<2x4xf32>, tensor<4x3xf32>, tensor<1x3xf32>)
// CHECK: "top.MatMul"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}}: (tensor<2x4xf32>, tensor<4x3xf32>, none)
// CHECK: "top.Add"
// CHECK: "top.MatMul"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}}: (tensor<2x4xf32>, tensor<4x3xf32>, none)
// CHECK: "top.Add"
// CHECK: "top.MatMul"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}}: (tensor<2x4xf32>, tensor<4x3xf32>, none)
// CHECK: "top.Add"
func.func @matmul_not_bias(%arg0: tensor<2x4xf32>, %arg1: tensor<2x3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("x")
  %r = "top.Input"(%arg1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("r")
  %n = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<4x3xf32> loc("w")
  %b2 = "top.Weight"() : () -> tensor<1x3xf32> loc("b2")
  %c = "top.Weight"() : () -> tensor<2x1xf32> loc("col")
  %1 = "top.MatMul"(%0, %w, %n) : (tensor<2x4xf32>, tensor<4x3xf32>, none) -> tensor<2x3xf32> loc("mm1")
  %2 = "top.Add"(%1, %b2) : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32> loc("row")
  %3 = "top.MatMul"(%0, %w, %n) : (tensor<2x4xf32>, tensor<4x3xf32>, none) -> tensor<2x3xf32> loc("mm2")
  %4 = "top.Add"(%3, %c) : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32> loc("column")
  %5 = "top.MatMul"(%0, %w, %n) : (tensor<2x4xf32>, tensor<4x3xf32>, none) -> tensor<2x3xf32> loc("mm3")
  %6 = "top.Add"(%5, %r) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("residual")
  %7 = "top.MatMul"(%0, %w, %n) : (tensor<2x4xf32>, tensor<4x3xf32>, none) -> tensor<2x3xf32> loc("mm4")
  %b = "top.Weight"() : () -> tensor<3xf32> loc("b")
  %8 = "top.Add"(%7, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("shared")
  return %2, %4, %6, %7, %8 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
}

// -----
module attributes {top.weight_file = "WEIGHTS"} {
// x * (1 + erf(x / sqrt2)) * 0.5 (the ONNX exporter's order) and
// (0.5 * x) * (1 + erf(x * rsqrt2)) are both one GELU.
// CHECK-LABEL: func.func @gelu
// CHECK: %[[X:.*]] = "top.Input"
// CHECK-NEXT: %[[G:.*]] = "top.GELU"(%[[X]]) <{approximate = "none"}> {{.*}} loc(#[[L1:loc[0-9]*]])
// CHECK-NEXT: %[[G2:.*]] = "top.GELU"(%[[G]]) <{approximate = "none"}> {{.*}} loc(#[[L2:loc[0-9]*]])
// CHECK-NEXT: return %[[G2]]
// CHECK-DAG: #[[L1]] = loc("gelu")
// CHECK-DAG: #[[L2]] = loc("gelu2")
func.func @gelu(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %s = "top.Weight"() : () -> tensor<f32> loc("sqrt2")
  %r = "top.Weight"() : () -> tensor<f32> loc("rsqrt2")
  %o = "top.Weight"() : () -> tensor<f32> loc("one")
  %h = "top.Weight"() : () -> tensor<f32> loc("half")
  %0 = "top.Div"(%x, %s) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("div")
  %1 = "top.Erf"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("erf")
  %2 = "top.Add"(%1, %o) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("add")
  %3 = "top.Mul"(%x, %2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("mul")
  %4 = "top.Mul"(%3, %h) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("gelu")
  %5 = "top.Mul"(%4, %r) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("scale")
  %6 = "top.Erf"(%5) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("erf2")
  %7 = "top.Add"(%o, %6) : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("add2")
  %8 = "top.Mul"(%h, %4) : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("halfx")
  %9 = "top.Mul"(%8, %7) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("gelu2")
  return %9 : tensor<2x3xf32>
}
}

// -----
module attributes {top.weight_file = "WEIGHTS"} {
// Other constants, or the erf of another tensor, are not a GELU.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: top.GELU
// CHECK: top.Erf
// CHECK-NOT: top.GELU
// CHECK: top.Erf
// CHECK-NOT: top.GELU
func.func @not_gelu(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %x = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %y = "top.Input"(%arg1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("y")
  %s = "top.Weight"() : () -> tensor<f32> loc("sqrt2")
  %o = "top.Weight"() : () -> tensor<f32> loc("one")
  %h = "top.Weight"() : () -> tensor<f32> loc("half")
  %t = "top.Weight"() : () -> tensor<f32> loc("third")
  %0 = "top.Div"(%x, %s) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("div")
  %1 = "top.Erf"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("erf")
  %2 = "top.Add"(%1, %o) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("add")
  %3 = "top.Mul"(%x, %2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("mul")
  %4 = "top.Mul"(%3, %t) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("third_not_half")
  %5 = "top.Div"(%y, %s) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("div_y")
  %6 = "top.Erf"(%5) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("erf_y")
  %7 = "top.Add"(%6, %o) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("add_y")
  %8 = "top.Mul"(%x, %7) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("mul_y")
  %9 = "top.Mul"(%8, %h) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("other_tensor")
  return %4, %9 : tensor<2x3xf32>, tensor<2x3xf32>
}
}

// -----
module attributes {top.weight_file = "WEIGHTS"} {
// GPT-2's tanh approximation x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715
// x^3))) is one GELU (tanh form); with another cubic coefficient it is not.
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: %[[X:.*]] = "top.Input"
// CHECK: %[[G:.*]] = "top.GELU"(%[[X]]) <{approximate = "tanh"}> {{.*}} loc(#[[L:loc[0-9]*]])
// CHECK: top.Tanh
// CHECK-NOT: top.GELU
// CHECK: #[[L]] = loc("gelu_tanh")
func.func @gelu_tanh(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %x = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %h = "top.Weight"() : () -> tensor<f32> loc("half")
  %c = "top.Weight"() : () -> tensor<f32> loc("cubic")
  %s = "top.Weight"() : () -> tensor<f32> loc("sqrt2pi")
  %o = "top.Weight"() : () -> tensor<f32> loc("one")
  %t = "top.Weight"() : () -> tensor<f32> loc("third")
  %0 = "top.Mul"(%x, %h) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("xh")
  %1 = "top.Pow"(%x) {exponent = 3.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x3")
  %2 = "top.Mul"(%1, %c) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("cx3")
  %3 = "top.Add"(%x, %2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("inner")
  %4 = "top.Mul"(%3, %s) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("scaled")
  %5 = "top.Tanh"(%4) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("tanh")
  %6 = "top.Add"(%5, %o) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("one_plus")
  %7 = "top.Mul"(%0, %6) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("gelu_tanh")
  %10 = "top.Mul"(%x, %h) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("xh2")
  %11 = "top.Pow"(%x) {exponent = 3.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x3_2")
  %12 = "top.Mul"(%11, %t) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("tx3")
  %13 = "top.Add"(%x, %12) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("inner2")
  %14 = "top.Mul"(%13, %s) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("scaled2")
  %15 = "top.Tanh"(%14) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("tanh2")
  %16 = "top.Add"(%15, %o) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("one_plus2")
  %17 = "top.Mul"(%10, %16) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("not_gelu_tanh")
  return %7, %17 : tensor<2x3xf32>, tensor<2x3xf32>
}
}
