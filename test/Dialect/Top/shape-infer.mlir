// RUN: tpuc-opt %s -top-shape-infer -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @conv_strided
// CHECK-SAME: -> tensor<1x4x4x3xf32>
func.func @conv_strided(%arg0: tensor<1x3x8x7xf32>, %w: tensor<4x3x3x3xf32>, %n: none) -> tensor<*xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x3x8x7xf32>) -> tensor<*xf32>
  // CHECK: top.Conv{{.*}} -> tensor<1x4x4x3xf32>
  %1 = "top.Conv"(%0, %w, %n) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 0, 0, 0], dilations = [1, 1]} : (tensor<*xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast
// CHECK: top.Add{{.*}} -> tensor<2x3x4xf32>
func.func @broadcast(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>) -> tensor<*xf32> {
  %0 = "top.Add"(%a, %b) : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{do not broadcast}}
  %0 = "top.Add"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @disagree(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{result #0 has shape 3x2 but its operands give 2x3}}
  %0 = "top.Relu"(%a) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "top.Relu"(%0) : (tensor<3x2xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}
