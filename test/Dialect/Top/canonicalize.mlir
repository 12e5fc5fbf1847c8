// RUN: %python %S/Inputs/bn_weights.py %t.npz
// RUN: sed "s|WEIGHTS|%t.npz|" %s | tpuc-opt -canonicalize -mlir-print-debuginfo | FileCheck %s

module attributes {top.weight_file = "WEIGHTS"} {
// BatchNorm folds into the Conv before it, taking its name; the ReLU after
// it fuses too, so one Conv remains.
// CHECK-LABEL: func.func @conv_bn_relu
// CHECK-DAG: %[[W:.*]] = "top.Weight"() {{.*}}loc(#[[LW:loc[0-9]*]])
// CHECK-DAG: %[[B:.*]] = "top.Weight"() {{.*}}loc(#[[LB:loc[0-9]*]])
// CHECK: "top.Conv"(%{{.*}}, %[[W]], %[[B]]) {{.*}}do_relu = true
// CHECK-NOT: top.BatchNorm
// CHECK-NOT: top.Relu
func.func @conv_bn_relu(%arg0: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("x")
  %n = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<2x1x1x1xf32> loc("w")
  %g = "top.Weight"() : () -> tensor<2xf32> loc("gamma")
  %b = "top.Weight"() : () -> tensor<2xf32> loc("beta")
  %m = "top.Weight"() : () -> tensor<2xf32> loc("mean")
  %v = "top.Weight"() : () -> tensor<2xf32> loc("var")
  %1 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32> loc("conv")
  %2 = "top.BatchNorm"(%1, %g, %b, %m, %v) {epsilon = 1.0 : f64} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("bn")
  %3 = "top.Relu"(%2) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("relu")
  return %3 : tensor<1x2x4x4xf32>
}
}
// CHECK-DAG: #[[LW]] = loc("bn_filter_bn")
// CHECK-DAG: #[[LB]] = loc("bn_bias_bn")
