// RUN: tpuc-opt %s -mlir-print-debuginfo | tpuc-opt | FileCheck %s
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
