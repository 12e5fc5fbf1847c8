// RUN: %python %S/Inputs/lower_weights.py %t.npz
// RUN: sed "s|WEIGHTS|%t.npz|" %s | tpuc-opt -split-input-file -verify-diagnostics -convert-top-to-tpu

// Shapes must be inferred first.
func.func @unranked(%arg0: tensor<2x3xf32>) -> tensor<*xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // expected-error @+1 {{result type 'tensor<*xf32>' has no shape; run top-shape-infer before convert-top-to-tpu}}
  %1 = "top.Relu"(%0) : (tensor<2x3xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

// A standalone BatchNorm needs constant statistics.
func.func @batchnorm_dynamic(%arg0: tensor<1x2x3x3xf32>, %arg1: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("x")
  %g = "top.Input"(%arg1) : (tensor<2xf32>) -> tensor<2xf32> loc("g")
  // expected-error @+2 {{'top.BatchNorm' op cannot be lowered: scale, bias, mean and variance must be top.Weight constants}}
  // expected-error @+1 {{failed to legalize operation 'top.BatchNorm'}}
  %1 = "top.BatchNorm"(%0, %g, %g, %g, %g) : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %1 : tensor<1x2x3x3xf32>
}

// -----

// Constant indices are checked when they are wrapped.
module attributes {top.weight_file = "WEIGHTS"} {
func.func @gather_range(%arg0: tensor<2x3x4xf32>) -> tensor<2x2x4xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  %i = "top.Weight"() : () -> tensor<2xf32> loc("bad")
  // expected-error @+2 {{'top.Gather' op cannot be lowered: index 7 (at position 1) is not an integer in [-3, 3) for axis 1 of size 3}}
  // expected-error @+1 {{failed to legalize operation 'top.Gather'}}
  %1 = "top.Gather"(%0, %i) {axis = 1} : (tensor<2x3x4xf32>, tensor<2xf32>) -> tensor<2x2x4xf32>
  return %1 : tensor<2x2x4xf32>
}
}

// -----

// New weights are registered in the module's weight file.
module {
func.func @no_weight_file(%arg0: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("x")
  %g = "top.Weight"() : () -> tensor<2xf32> loc("gamma")
  // expected-error @+2 {{'top.BatchNorm' op cannot be lowered: its new weights need the module's 'top.weight_file' attribute}}
  // expected-error @+1 {{failed to legalize operation 'top.BatchNorm'}}
  %1 = "top.BatchNorm"(%0, %g, %g, %g, %g) : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %1 : tensor<1x2x3x3xf32>
}
}
