// RUN: tpuc-opt %s -split-input-file -verify-diagnostics

func.func @conv_pads(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %n: none) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{pads needs 4 values, got 2}}
  %0 = "tpu.Conv"(%a, %w, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1], dilations = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @conv_strides(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %n: none) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{strides needs 2 values, got 1}}
  %0 = "tpu.Conv"(%a, %w, %n) {kernel_shape = [3, 3], strides = [1], pads = [1, 1, 1, 1], dilations = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @conv_kernel(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %n: none) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{filter spatial dims [3, 3] differ from kernel_shape [1, 3]}}
  %0 = "tpu.Conv"(%a, %w, %n) {kernel_shape = [1, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @conv_channels(%a: tensor<1x6x8x8xf32>, %w: tensor<4x3x3x3xf32>, %n: none) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{input has 6 channels but filter expects 3 (3 x group 1)}}
  %0 = "tpu.Conv"(%a, %w, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1]} : (tensor<1x6x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @conv_result(%a: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %n: none) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{result shape [1, 4, 8, 8] does not match the computed shape [1, 4, 6, 6]}}
  %0 = "tpu.Conv"(%a, %w, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @matmul_k(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>, %n: none) -> tensor<2x5xf32> {
  // expected-error @+1 {{contracting dims differ: input has K = 3, right has K = 4}}
  %0 = "tpu.MatMul"(%a, %b, %n) : (tensor<2x3xf32>, tensor<4x5xf32>, none) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @binary_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{operands 'tensor<2x3xf32>' and 'tensor<4xf32>' do not broadcast}}
  %0 = "tpu.Add"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @active_mode(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown mode 'swish'; expected one of relu, clip}}
  %0 = "tpu.Active"(%a) {mode = "swish"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @active_clip(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{mode clip needs 'max'}}
  %0 = "tpu.Active"(%a) {mode = "clip", min = 0.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @active_clip_order(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{clip min (2.000000e+00) is greater than max (1.000000e+00)}}
  %0 = "tpu.Active"(%a) {mode = "clip", min = 2.0 : f64, max = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @active_pow(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{mode pow needs 'exponent'}}
  %0 = "tpu.Active"(%a) {mode = "pow"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @active_stray_attr(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'min' is only used by mode clip}}
  %0 = "tpu.Active"(%a) {mode = "relu", min = 0.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @active_leaky_relu(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{mode leaky_relu needs 'alpha'}}
  %0 = "tpu.Active"(%a) {mode = "leaky_relu"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @active_hard_sigmoid(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{mode hard_sigmoid needs 'alpha' and 'beta'}}
  %0 = "tpu.Active"(%a) {mode = "hard_sigmoid"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @active_stray_beta(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'beta' is only used by mode hard_sigmoid}}
  %0 = "tpu.Active"(%a) {mode = "leaky_relu", alpha = 0.1 : f64, beta = 0.5 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @active_stray_alpha(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'alpha' is only used by modes leaky_relu, hard_sigmoid}}
  %0 = "tpu.Active"(%a) {mode = "hard_swish", alpha = 0.1 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @active_alpha_finite(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'alpha' must be finite}}
  %0 = "tpu.Active"(%a) {mode = "leaky_relu", alpha = 0x7FF8000000000000 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @softmax_axis(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{axis -1 must be in [0, 2)}}
  %0 = "tpu.Softmax"(%a) {axis = -1} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @softmax_divisor(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{divisor must be finite and non-zero, got 0}}
  %0 = "tpu.Softmax"(%a) {axis = 1, divisor = 0.0 : f64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @layernorm_weight(%a: tensor<2x4xf32>, %w: tensor<8xf32>, %n: none) -> tensor<2x4xf32> {
  // expected-error @+1 {{weight and bias must have 4 elements (the normalized dims), got 8}}
  %0 = "tpu.LayerNorm"(%a, %w, %n) {axis = 1, epsilon = 1.0e-5 : f64} : (tensor<2x4xf32>, tensor<8xf32>, none) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @pool_pad(%a: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  // expected-error @+1 {{pads of spatial dim 0 must be smaller than the kernel (2)}}
  %0 = "tpu.MaxPool"(%a) {kernel_shape = [2, 2], strides = [2, 2], pads = [2, 0, 0, 0]} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @pool_result(%a: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  // Ceil-mode sizes need their extra end pads spelled out.
  // expected-error @+1 {{result shape [1, 1, 3, 3] does not match the computed shape [1, 1, 2, 2]}}
  %0 = "tpu.AvgPool"(%a) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0]} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

func.func @reduce_mode(%a: tensor<2x4xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{mode must be sum, mean, max or min, got 'prod'}}
  %0 = "tpu.Reduce"(%a) {mode = "prod", axes = [1], keepdims = true} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @reduce_axis(%a: tensor<2x4xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{axis -1 must be in [0, 2)}}
  %0 = "tpu.Reduce"(%a) {mode = "sum", axes = [-1], keepdims = true} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @reshape_count(%a: tensor<2x4xf32>) -> tensor<9xf32> {
  // expected-error @+1 {{cannot reshape 8 elements to 'tensor<9xf32>' (9 elements)}}
  %0 = "tpu.Reshape"(%a) : (tensor<2x4xf32>) -> tensor<9xf32>
  return %0 : tensor<9xf32>
}

// -----

func.func @permute_order(%a: tensor<2x4xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{order must be a permutation of [0, 2)}}
  %0 = "tpu.Permute"(%a) {order = [1, 1]} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @concat_dims(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{inputs differ in dim 0 (not the concat axis 1)}}
  %0 = "tpu.Concat"(%a, %b) {axis = 1} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_length(%a: tensor<2x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{offsets and steps need one value per input dim (2), got 1 and 2}}
  %0 = "tpu.Slice"(%a) {offsets = [0], steps = [1, 2]} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @slice_bounds(%a: tensor<2x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{dim 1 reads elements 2 to 8 (step 2), outside [0, 8)}}
  %0 = "tpu.Slice"(%a) {offsets = [0, 2], steps = [1, 2]} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @slice_step(%a: tensor<2x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{step of dim 1 must be non-zero}}
  %0 = "tpu.Slice"(%a) {offsets = [0, 2], steps = [1, 0]} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @gather_axis(%a: tensor<2x8xf32>, %i: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 must be in [0, 2)}}
  %0 = "tpu.Gather"(%a, %i) {axis = 2} : (tensor<2x8xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @pad_mode(%a: tensor<2x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{mode must be constant, reflect or edge, got 'wrap'}}
  %0 = "tpu.Pad"(%a) {pads = [1, 0, 1, 0], mode = "wrap", value = 0.0} : (tensor<2x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @pad_length(%a: tensor<2x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{pads needs 4 values, got 2}}
  %0 = "tpu.Pad"(%a) {pads = [1, 1], mode = "constant", value = 0.0} : (tensor<2x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @cast_to(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{cannot cast to 'f64'}}
  %0 = "tpu.Cast"(%a) {to = "f64"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @upsample_scale(%a: tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{scales must be >= 1, got 0 and 1}}
  %0 = "tpu.Upsample"(%a) {scale_h = 0, scale_w = 1} : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @deconv_result(%a: tensor<1x4x5x5xf32>, %w: tensor<4x2x3x3xf32>, %n: none) -> tensor<1x2x13x11xf32> {
  // expected-error @+1 {{result dim 2 is 13, expected 11 plus an output padding below 2}}
  %0 = "tpu.Deconv"(%a, %w, %n) {kernel_shape = [3, 3], strides = [2, 2], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>, none) -> tensor<1x2x13x11xf32>
  return %0 : tensor<1x2x13x11xf32>
}

// -----

func.func @interp_matrix(%a: tensor<1x1x2x3xf32>, %h: tensor<4x2xf32>, %w: tensor<6x2xf32>) -> tensor<1x1x4x6xf32> {
  // expected-error @+1 {{height_matrix [4, 2] and width_matrix [6, 2] must be [OH, H] and [OW, W] for [1, 1, 2, 3] -> [1, 1, 4, 6]}}
  %0 = "tpu.Interp"(%a, %h, %w) : (tensor<1x1x2x3xf32>, tensor<4x2xf32>, tensor<6x2xf32>) -> tensor<1x1x4x6xf32>
  return %0 : tensor<1x1x4x6xf32>
}

// -----

func.func @unknown_attr(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'tpu.Active' op has unknown attribute 'maximum'}}
  %0 = "tpu.Active"(%a) {mode = "relu", maximum = 6.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @matmul_right_transpose_k(%a: tensor<4x16xf32>, %b: tensor<8x12xf32>) -> tensor<4x8xf32> {
  %none = "top.None"() : () -> none
  // expected-error @+1 {{contracting dims differ: input has K = 16, right has K = 12}}
  %0 = "tpu.MatMul"(%a, %b, %none) {right_transpose = true} : (tensor<4x16xf32>, tensor<8x12xf32>, none) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
