// RUN: tpuc-opt %s -split-input-file -verify-diagnostics

func.func @pads_length(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{pads needs 4 values (begins then ends), got 2}}
  %0 = "top.Conv"(%a, %w, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1], dilations = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @channels(%a: tensor<1x5x8x8xf32>, %w: tensor<4x3x3x3xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{input has 5 channels but filter expects 3}}
  %0 = "top.Conv"(%a, %w, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x5x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @kernel_mismatch(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{filter spatial dim 0 is 3 but kernel_shape says 5}}
  %0 = "top.Conv"(%a, %w, %n) {kernel_shape = [5, 5], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unknown_attr(%a: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'top.Relu' op attribute 'relu_limit' failed to satisfy constraint}}
  %0 = "top.Relu"(%a) {relu_limit = "high"} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @weight_without_name() -> tensor<4xf32> {
  // expected-error @+1 {{needs a name location}}
  %0 = "top.Weight"() : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bn_sizes(%a: tensor<1x4x2x2xf32>, %s: tensor<4xf32>, %t: tensor<3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{scale, bias, mean and variance sizes differ}}
  %0 = "top.BatchNorm"(%a, %s, %s, %t, %s) : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
