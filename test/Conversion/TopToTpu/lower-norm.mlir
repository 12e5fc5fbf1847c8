// RUN: %python %S/Inputs/lower_weights.py %t.npz
// RUN: sed "s|WEIGHTS|%t.npz|" %s | tpuc-opt -convert-top-to-tpu -mlir-print-debuginfo | FileCheck %s

module attributes {top.weight_file = "WEIGHTS"} {
// CHECK-LABEL: func.func @norms
// CHECK: "tpu.LayerNorm"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = 2 : i64, epsilon = 1.000000e-05 : f64}>
// CHECK: "tpu.Softmax"(%{{.*}}) <{axis = 1 : i64}>
func.func @norms(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  %n = "top.None"() : () -> none
  %1 = "top.LayerNorm"(%0, %n, %n) {axis = -1} : (tensor<2x3x4xf32>, none, none) -> tensor<2x3x4xf32> loc("ln")
  %2 = "top.Softmax"(%1) {axis = -2} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("sm")
  return %2 : tensor<2x3x4xf32>
}

// A standalone BatchNorm becomes x * s + b with per-channel [C, 1, 1]
// constants; the Add carries the BatchNorm's name.
// CHECK-LABEL: func.func @batchnorm
// CHECK-DAG: %[[S:.*]] = "top.Weight"() : () -> tensor<2x1x1xf32> loc(#[[LS:loc[0-9]*]])
// CHECK-DAG: %[[B:.*]] = "top.Weight"() : () -> tensor<2x1x1xf32> loc(#[[LB:loc[0-9]*]])
// CHECK: %[[M:.*]] = "tpu.Mul"(%{{.*}}, %[[S]]) <{do_relu = false}> : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32> loc(#[[LM:loc[0-9]*]])
// CHECK: "tpu.Add"(%[[M]], %[[B]]) <{do_relu = false}> : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32> loc(#[[LBN:loc[0-9]*]])
// CHECK-NOT: top.BatchNorm
func.func @batchnorm(%arg0: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("x")
  %g = "top.Weight"() : () -> tensor<2xf32> loc("gamma")
  %b = "top.Weight"() : () -> tensor<2xf32> loc("beta")
  %m = "top.Weight"() : () -> tensor<2xf32> loc("mean")
  %v = "top.Weight"() : () -> tensor<2xf32> loc("var")
  %1 = "top.BatchNorm"(%0, %g, %b, %m, %v) {epsilon = 1.0 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32> loc("bn")
  return %1 : tensor<1x2x3x3xf32>
}
}
// CHECK-DAG: #[[LS]] = loc("bn_tpu_scale")
// CHECK-DAG: #[[LB]] = loc("bn_tpu_bias")
// CHECK-DAG: #[[LBN]] = loc("bn")
// CHECK-DAG: #[[LM]] = loc("bn_mul"(#[[LBN]]))
