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

func.func @bad_attr_type(%a: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'top.Relu' op attribute 'relu_limit' failed to satisfy constraint}}
  %0 = "top.Relu"(%a) {relu_limit = "high"} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unknown_attr(%a: tensor<1x3x8x8xf32>) -> tensor<*xf32> {
  // A misspelled attribute would otherwise be ignored (relu_limit stays -1).
  // expected-error @+1 {{'top.Relu' op has unknown attribute 'relu_limt'}}
  %0 = "top.Relu"(%a) {relu_limt = 6.0 : f64} : (tensor<1x3x8x8xf32>) -> tensor<*xf32>
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

// -----

func.func @clip_range(%a: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{min (2.000000e+00) is greater than max (1.000000e+00)}}
  %0 = "top.Clip"(%a) {min = 2.0 : f64, max = 1.0 : f64} : (tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @leaky_relu_alpha(%a: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{alpha must be finite}}
  %0 = "top.LeakyRelu"(%a) {alpha = 0x7FF0000000000000 : f64} : (tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @hard_sigmoid_attrs(%a: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{requires attribute 'beta'}}
  %0 = "top.HardSigmoid"(%a) {alpha = 0.2 : f64} : (tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @hard_sigmoid_finite(%a: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{alpha and beta must be finite}}
  %0 = "top.HardSigmoid"(%a) {alpha = 0.2 : f64, beta = 0x7FF8000000000000 : f64} : (tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gelu_mode(%a: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "fast"}}
  %0 = "top.GELU"(%a) {approximate = "fast"} : (tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @cast_type(%a: tensor<4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{cannot cast to 'i64'; expected f32, f16, bf16, i32, i8, ui8 or bool}}
  %0 = "top.Cast"(%a) {to = "i64"} : (tensor<4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @matmul_rank(%a: tensor<4xf32>, %b: tensor<4x2xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{operands must have rank >= 2}}
  %0 = "top.MatMul"(%a, %b, %n) : (tensor<4xf32>, tensor<4x2xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @matmul_k(%a: tensor<3x4xf32>, %b: tensor<5x2xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{contracting dims differ: input has K = 4, right has K = 5}}
  %0 = "top.MatMul"(%a, %b, %n) : (tensor<3x4xf32>, tensor<5x2xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x2xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{batch dims of 'tensor<2x3x4xf32>' and 'tensor<3x4x2xf32>' do not broadcast}}
  %0 = "top.MatMul"(%a, %b, %n) : (tensor<2x3x4xf32>, tensor<3x4x2xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @matmul_bias(%a: tensor<3x4xf32>, %b: tensor<4x2xf32>, %c: tensor<3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{bias must have 2 elements, got 3}}
  %0 = "top.MatMul"(%a, %b, %c) : (tensor<3x4xf32>, tensor<4x2xf32>, tensor<3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @layernorm_axis(%a: tensor<2x3xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = "top.LayerNorm"(%a, %n, %n) {axis = -3 : i64} : (tensor<2x3xf32>, none, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @layernorm_weight(%a: tensor<2x3x4xf32>, %w: tensor<4xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{weight and bias must have 12 elements (the normalized dims), got 4}}
  %0 = "top.LayerNorm"(%a, %w, %n) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @softmax_axis(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = "top.Softmax"(%a) {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pool_dims(%a: tensor<1x1x4x4x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{supports 1-D and 2-D pooling, got kernel_shape of 3 dims}}
  %0 = "top.MaxPool"(%a) {kernel_shape = [2, 2, 2], strides = [1, 1, 1], pads = [0, 0, 0, 0, 0, 0]} : (tensor<1x1x4x4x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pool_strides(%a: tensor<1x1x4x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{strides needs 2 values, got 1}}
  %0 = "top.AvgPool"(%a) {kernel_shape = [2, 2], strides = [1], pads = [0, 0, 0, 0]} : (tensor<1x1x4x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pool_pads(%a: tensor<1x1x4x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{pads needs 4 values (begins then ends), got 2}}
  %0 = "top.MaxPool"(%a) {kernel_shape = [2, 2], strides = [1, 1], pads = [0, 0]} : (tensor<1x1x4x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pool_pad_vs_kernel(%a: tensor<1x1x4x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{pads of spatial dim 1 must be in [0, 2)}}
  %0 = "top.MaxPool"(%a) {kernel_shape = [2, 2], strides = [1, 1], pads = [0, 0, 0, 2]} : (tensor<1x1x4x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pool_zero_stride(%a: tensor<1x1x4x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{kernel_shape and strides must be positive}}
  %0 = "top.MaxPool"(%a) {kernel_shape = [2, 2], strides = [0, 1], pads = [0, 0, 0, 0]} : (tensor<1x1x4x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pool_rank(%a: tensor<1x4x4xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{input must have rank 4, got 3}}
  %0 = "top.MaxPool"(%a) {kernel_shape = [2, 2], strides = [1, 1], pads = [0, 0, 0, 0]} : (tensor<1x4x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reduce_mode(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{mode must be sum, mean, max or min, got 'prod'}}
  %0 = "top.Reduce"(%a) {mode = "prod", axes = [0]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reduce_axis(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = "top.Reduce"(%a) {mode = "sum", axes = [2]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reduce_repeat(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{axis -1 is repeated}}
  %0 = "top.Reduce"(%a) {mode = "sum", axes = [1, -1]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_two_inferred(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{shape may have at most one -1, got 2}}
  %0 = "top.Reshape"(%a) {shape = [-1, -1]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_zero(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{shape dims must be positive or -1, got 0}}
  %0 = "top.Reshape"(%a) {shape = [0, 3]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{cannot reshape 6 elements ('tensor<2x3xf32>') to shape [4, 2]}}
  %0 = "top.Reshape"(%a) {shape = [4, 2]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @reshape_result(%a: tensor<2x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{result #0 has shape 3x3 but its operands give 3x2}}
  %0 = "top.Reshape"(%a) {shape = [3, -1]} : (tensor<2x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @permute_order(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{order must be a permutation of [0, 2)}}
  %0 = "top.Permute"(%a) {order = [1, 1]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @permute_rank(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{order has 3 entries but the input has rank 2}}
  %0 = "top.Permute"(%a) {order = [2, 0, 1]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_empty() -> tensor<*xf32> {
  // expected-error @+1 {{needs at least one input}}
  %0 = "top.Concat"() {axis = 0 : i64} : () -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = "top.Concat"(%a, %a) {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{inputs differ in dim 0 (not the concat axis)}}
  %0 = "top.Concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{inputs must have the same rank}}
  %0 = "top.Concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_lengths(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{starts, ends, axes and steps must have the same length, got 1, 2, 1, 1}}
  %0 = "top.Slice"(%a) {starts = [0], ends = [1, 2], axes = [0], steps = [1]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_step(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{steps must be non-zero}}
  %0 = "top.Slice"(%a) {starts = [0], ends = [1], axes = [0], steps = [0]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @slice_axes(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{axis -2 is repeated}}
  %0 = "top.Slice"(%a) {starts = [0, 0], ends = [1, 1], axes = [0, -2], steps = [1, 1]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @gather_axis(%a: tensor<2x3xf32>, %i: tensor<2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = "top.Gather"(%a, %i) {axis = -3 : i64} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_mode(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{mode must be constant, reflect or edge, got 'wrap'}}
  %0 = "top.Pad"(%a) {pads = [0, 0, 0, 0], mode = "wrap"} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_negative(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{pads must be non-negative, got -1}}
  %0 = "top.Pad"(%a) {pads = [0, -1, 0, 0]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_length(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{pads needs 4 values (begins then ends) for rank 2, got 2}}
  %0 = "top.Pad"(%a) {pads = [1, 1]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_reflect(%a: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{reflect pads of dim 0 must be smaller than its size 2}}
  %0 = "top.Pad"(%a) {pads = [2, 0, 0, 0], mode = "reflect"} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @pad_edge_empty(%a: tensor<0x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{edge padding needs a non-empty dim 0}}
  %0 = "top.Pad"(%a) {pads = [1, 0, 0, 0], mode = "edge"} : (tensor<0x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @upsample_scale(%a: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{scales must be >= 1, got 0 and 2}}
  %0 = "top.Upsample"(%a) {scale_h = 0 : i64, scale_w = 2 : i64} : (tensor<1x1x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @upsample_rank(%a: tensor<1x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{input must be NCHW (rank 4), got 'tensor<1x2x2xf32>'}}
  %0 = "top.Upsample"(%a) {scale_h = 2 : i64, scale_w = 2 : i64} : (tensor<1x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @ranked_binary_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // A fully ranked op must agree with its own shape inference.
  // expected-error @+1 {{operands 'tensor<2x3xf32>' and 'tensor<4xf32>' do not broadcast}}
  %0 = "top.Add"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @conv_stride(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{strides must be positive}}
  %0 = "top.Conv"(%a, %w, %n) {kernel_shape = [3, 3], strides = [0, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @conv_group(%a: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{output channels 6 not divisible by group 4}}
  %0 = "top.Conv"(%a, %w, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @upsample_negative(%a: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{scales must be >= 1, got 2 and -1}}
  %0 = "top.Upsample"(%a) {scale_h = 2 : i64, scale_w = -1 : i64} : (tensor<1x1x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @deconv_output_padding(%a: tensor<1x4x5x5xf32>, %w: tensor<4x2x3x3xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{output_padding 2 must be in [0, max(stride, dilation))}}
  %0 = "top.Deconv"(%a, %w, %n) {kernel_shape = [3, 3], strides = [2, 2], pads = [0, 0, 0, 0], dilations = [1, 1], output_padding = [2, 0]} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @deconv_channels(%a: tensor<1x3x5x5xf32>, %w: tensor<4x2x3x3xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{input has 3 channels but filter expects 4}}
  %0 = "top.Deconv"(%a, %w, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], output_padding = [0, 0]} : (tensor<1x3x5x5xf32>, tensor<4x2x3x3xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @deconv_pads_exceed(%a: tensor<1x4x2x2xf32>, %w: tensor<4x2x1x1xf32>, %n: none) -> tensor<*xf32> {
  // expected-error @+1 {{output dim 0 would be 0 (pads exceed the deconvolved extent)}}
  %0 = "top.Deconv"(%a, %w, %n) {kernel_shape = [1, 1], strides = [1, 1], pads = [1, 0, 1, 0], dilations = [1, 1], output_padding = [0, 0]} : (tensor<1x4x2x2xf32>, tensor<4x2x1x1xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @interp_mode(%a: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{unknown mode 'cubic' (linear or nearest)}}
  %0 = "top.Interp"(%a) {mode = "cubic", coord_mode = "half_pixel", target_h = 4, target_w = 4, scale_h = 2.0, scale_w = 2.0} : (tensor<1x1x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @interp_coord(%a: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{unknown coord_mode 'tf_crop_and_resize'}}
  %0 = "top.Interp"(%a) {mode = "linear", coord_mode = "tf_crop_and_resize", target_h = 4, target_w = 4, scale_h = 2.0, scale_w = 2.0} : (tensor<1x1x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @interp_target(%a: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{target sizes must be >= 1, got 0 and 4}}
  %0 = "top.Interp"(%a) {mode = "linear", coord_mode = "half_pixel", target_h = 0, target_w = 4, scale_h = 2.0, scale_w = 2.0} : (tensor<1x1x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
