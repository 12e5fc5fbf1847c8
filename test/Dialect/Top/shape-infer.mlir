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

// -----

// CHECK-LABEL: func.func @conv_dilated_grouped_asym
func.func @conv_dilated_grouped_asym(%x: tensor<1x4x10x11xf32>, %w: tensor<6x2x3x2xf32>, %n: none) -> tensor<*xf32> {
  // (10+0+2-5)/2+1 = 4, (11+1+0-3)/1+1 = 10
  // CHECK: top.Conv{{.*}} -> tensor<1x6x4x10xf32>
  %0 = "top.Conv"(%x, %w, %n) {kernel_shape = [3, 2], strides = [2, 1], pads = [0, 1, 2, 0], dilations = [2, 2], group = 2 : i64} : (tensor<1x4x10x11xf32>, tensor<6x2x3x2xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @conv1d
func.func @conv1d(%x: tensor<2x3x12xf32>, %w: tensor<5x3x4xf32>, %n: none) -> tensor<*xf32> {
  // CHECK: top.Conv{{.*}} -> tensor<2x5x3xf32>
  %0 = "top.Conv"(%x, %w, %n) {kernel_shape = [4], strides = [3], pads = [2, 1], dilations = [2]} : (tensor<2x3x12xf32>, tensor<5x3x4xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @unary_keep_shape
func.func @unary_keep_shape(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  // CHECK: top.GELU{{.*}} -> tensor<2x3xf32>
  %0 = "top.GELU"(%x) : (tensor<2x3xf32>) -> tensor<*xf32>
  // CHECK: top.Cast{{.*}} -> tensor<2x3xf32>
  %1 = "top.Cast"(%0) {to = "i8"} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: top.Pow{{.*}} -> tensor<2x3xf32>
  %2 = "top.Pow"(%1) {exponent = 3.0 : f64} : (tensor<*xf32>) -> tensor<*xf32>
  return %2 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @sub_scalar_broadcast
func.func @sub_scalar_broadcast(%a: tensor<f32>, %b: tensor<4x1x5xf32>) -> tensor<*xf32> {
  // CHECK: top.Sub{{.*}} -> tensor<4x1x5xf32>
  %0 = "top.Sub"(%a, %b) : (tensor<f32>, tensor<4x1x5xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_batch_broadcast
func.func @matmul_batch_broadcast(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>, %c: tensor<4x6xf32>, %n: none) -> tensor<*xf32> {
  // CHECK: top.MatMul{{.*}} -> tensor<2x5x3x6xf32>
  %0 = "top.MatMul"(%a, %b, %n) : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>, none) -> tensor<*xf32>
  // CHECK: top.MatMul{{.*}} -> tensor<2x1x3x6xf32>
  %1 = "top.MatMul"(%a, %c, %n) : (tensor<2x1x3x4xf32>, tensor<4x6xf32>, none) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<2x3x4xf32>, %w: tensor<3x4xf32>, %n: none) -> tensor<*xf32> {
  // CHECK: top.LayerNorm{{.*}} -> tensor<2x3x4xf32>
  %0 = "top.LayerNorm"(%x, %w, %n) {axis = -2 : i64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, none) -> tensor<*xf32>
  // CHECK: top.Softmax{{.*}} -> tensor<2x3x4xf32>
  %1 = "top.Softmax"(%0) {axis = -1 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @pools
func.func @pools(%x: tensor<1x2x7x7xf32>, %y: tensor<1x2x5x6xf32>, %z: tensor<2x3x11xf32>) -> tensor<*xf32> {
  // floor((7-3)/2)+1 = 3
  // CHECK: top.MaxPool{{.*}} -> tensor<1x2x3x3xf32>
  %0 = "top.MaxPool"(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [0, 0, 0, 0]} : (tensor<1x2x7x7xf32>) -> tensor<*xf32>
  // ceil((8-3)/2)+1 = 4 on H (pad end 1); W: ceil((7-3)/2)+1 = 3
  // CHECK: top.MaxPool{{.*}} -> tensor<1x2x4x3xf32>
  %1 = "top.MaxPool"(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [0, 0, 1, 0], ceil_mode = true} : (tensor<1x2x7x7xf32>) -> tensor<*xf32>
  // ceil((5+2-2)/3)+1 = 3, but the last window would start at 6 >= 5+1: 2
  // CHECK: top.AvgPool{{.*}} -> tensor<1x2x2x3xf32>
  %2 = "top.AvgPool"(%y) {kernel_shape = [2, 2], strides = [3, 3], pads = [1, 1, 1, 1], ceil_mode = true} : (tensor<1x2x5x6xf32>) -> tensor<*xf32>
  // CHECK: top.AvgPool{{.*}} -> tensor<2x3x6xf32>
  %3 = "top.AvgPool"(%z) {kernel_shape = [3], strides = [2], pads = [1, 1], ceil_mode = true} : (tensor<2x3x11xf32>) -> tensor<*xf32>
  // CHECK: top.GlobalAvgPool{{.*}} -> tensor<2x3x1xf32>
  %4 = "top.GlobalAvgPool"(%z) : (tensor<2x3x11xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @reduce
func.func @reduce(%x: tensor<2x3x4x5xf32>) -> tensor<*xf32> {
  // CHECK: top.Reduce{{.*}} -> tensor<2x1x4x1xf32>
  %0 = "top.Reduce"(%x) {mode = "sum", axes = [1, -1]} : (tensor<2x3x4x5xf32>) -> tensor<*xf32>
  // CHECK: top.Reduce{{.*}} -> tensor<2x4xf32>
  %1 = "top.Reduce"(%x) {mode = "mean", axes = [-1, 1], keepdims = false} : (tensor<2x3x4x5xf32>) -> tensor<*xf32>
  // Empty axes reduce every dim.
  // CHECK: top.Reduce{{.*}} -> tensor<f32>
  %2 = "top.Reduce"(%x) {mode = "max", axes = [], keepdims = false} : (tensor<2x3x4x5xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<2x3x4xf32>, %i: tensor<2x2xf32>, %s: tensor<f32>) -> tensor<*xf32> {
  // CHECK: top.Reshape{{.*}} -> tensor<4x3x2xf32>
  %0 = "top.Reshape"(%x) {shape = [4, -1, 2]} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  // CHECK: top.Permute{{.*}} -> tensor<4x2x3xf32>
  %1 = "top.Permute"(%x) {order = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  // CHECK: top.Concat{{.*}} -> tensor<2x3x12xf32>
  %2 = "top.Concat"(%x, %x, %x) {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<*xf32>
  // CHECK: top.Gather{{.*}} -> tensor<2x2x2x4xf32>
  %3 = "top.Gather"(%x, %i) {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x2xf32>) -> tensor<*xf32>
  // A scalar index drops the axis.
  // CHECK: top.Gather{{.*}} -> tensor<2x3xf32>
  %4 = "top.Gather"(%x, %s) {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<*xf32>
  // CHECK: top.Pad{{.*}} -> tensor<3x5x7xf32>
  %5 = "top.Pad"(%x) {pads = [1, 0, 1, 0, 2, 2], mode = "edge"} : (tensor<2x3x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @slices
func.func @slices(%x: tensor<3x4x6xf32>) -> tensor<*xf32> {
  // Clamped ends, negative axis and step 2: [1, 100) over 6 -> 3.
  // CHECK: top.Slice{{.*}} -> tensor<3x4x3xf32>
  %0 = "top.Slice"(%x) {starts = [1], ends = [100], axes = [-1], steps = [2]} : (tensor<3x4x6xf32>) -> tensor<*xf32>
  // Full reverse: start -1 -> 5, end -100 clamps to -1.
  // CHECK: top.Slice{{.*}} -> tensor<3x4x6xf32>
  %1 = "top.Slice"(%x) {starts = [-1], ends = [-100], axes = [2], steps = [-1]} : (tensor<3x4x6xf32>) -> tensor<*xf32>
  // Start past end: empty.
  // CHECK: top.Slice{{.*}} -> tensor<0x4x6xf32>
  %2 = "top.Slice"(%x) {starts = [2], ends = [1], axes = [0], steps = [1]} : (tensor<3x4x6xf32>) -> tensor<*xf32>
  // 5, 2 with step -3.
  // CHECK: top.Slice{{.*}} -> tensor<3x4x2xf32>
  %3 = "top.Slice"(%x) {starts = [5], ends = [1], axes = [-1], steps = [-3]} : (tensor<3x4x6xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @upsample
func.func @upsample(%x: tensor<1x2x3x4xf32>) -> tensor<*xf32> {
  // CHECK: top.Upsample{{.*}} -> tensor<1x2x6x12xf32>
  %0 = "top.Upsample"(%x) {scale_h = 2 : i64, scale_w = 3 : i64} : (tensor<1x2x3x4xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Checks that need the operand shape run once it is known.
func.func @late_verify(%arg0: tensor<2x3xf32>) -> tensor<*xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<*xf32>
  // expected-error @+1 {{cannot reshape 6 elements}}
  %1 = "top.Reshape"(%0) {shape = [4, -1]} : (tensor<*xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

func.func @pool_too_small(%x: tensor<1x1x2x2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{padded input dim 0 (2) is smaller than the kernel (3)}}
  %0 = "top.MaxPool"(%x) {kernel_shape = [3, 1], strides = [1, 1], pads = [0, 0, 0, 0]} : (tensor<1x1x2x2xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @global_pool_rank(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{rank >= 3}}
  %0 = "top.GlobalAvgPool"(%x) : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}
