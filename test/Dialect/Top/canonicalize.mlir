// RUN: %python %S/Inputs/bn_weights.py %t.npz
// RUN: sed "s|WEIGHTS|%t.npz|" %s | tpuc-opt -split-input-file -canonicalize -mlir-print-debuginfo | FileCheck %s
// Fusion and data-movement canonicalizations. A surviving op takes the
// location (tensor name) of the op whose output it now produces.

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

// -----

// A BatchNorm that has no Conv to fold into becomes a depthwise 1x1 Conv
// under its name; the ReLU after it fuses.
module attributes {top.weight_file = "WEIGHTS"} {
// CHECK-LABEL: func.func @bn_alone
// CHECK: %[[C:.*]] = "top.Conv"(%arg0, %{{.*}}, %{{.*}}) <{{{.*}}do_relu = true, group = 2 : i64, kernel_shape = [1, 1]{{.*}}}> : (tensor<1x2x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc(#[[L:loc[0-9]*]])
// CHECK-NEXT: return %[[C]]
func.func @bn_alone(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %g = "top.Weight"() : () -> tensor<2xf32> loc("gamma")
  %b = "top.Weight"() : () -> tensor<2xf32> loc("beta")
  %m = "top.Weight"() : () -> tensor<2xf32> loc("mean")
  %v = "top.Weight"() : () -> tensor<2xf32> loc("var")
  %0 = "top.BatchNorm"(%arg0, %g, %b, %m, %v) {epsilon = 1.0 : f64} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("bn")
  %1 = "top.Relu"(%0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("relu")
  return %1 : tensor<1x2x4x4xf32>
}
}
// CHECK: #[[L]] = loc("relu")

// -----
// CHECK-LABEL: func.func @reshape_chain
// CHECK-NEXT: %[[R:.*]] = "top.Reshape"(%arg0) <{shape = [4, -1]}> : (tensor<2x3x4xf32>) -> tensor<4x6xf32> loc(#[[L:loc[0-9]*]])
// CHECK-NEXT: return %[[R]]
// CHECK: #[[L]] = loc("r2")
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = "top.Reshape"(%x) {shape = [6, 4]} : (tensor<2x3x4xf32>) -> tensor<6x4xf32> loc("r0")
  %1 = "top.Reshape"(%0) {shape = [24]} : (tensor<6x4xf32>) -> tensor<24xf32> loc("r1")
  %2 = "top.Reshape"(%1) {shape = [4, -1]} : (tensor<24xf32>) -> tensor<4x6xf32> loc("r2")
  return %2 : tensor<4x6xf32>
}

// -----

// A chain that comes back to the input's shape disappears.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-NEXT: return %arg0
func.func @reshape_round_trip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "top.Reshape"(%x) {shape = [6]} : (tensor<2x3xf32>) -> tensor<6xf32>
  %1 = "top.Reshape"(%0) {shape = [2, 3]} : (tensor<6xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// The inner Reshape stays when something else uses it.
// CHECK-LABEL: func.func @reshape_shared
// CHECK: %[[A:.*]] = "top.Reshape"(%arg0) <{shape = [6]}>
// CHECK: %[[B:.*]] = "top.Reshape"(%arg0) <{shape = [3, 2]}>
// CHECK: return %[[A]], %[[B]]
func.func @reshape_shared(%x: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {
  %0 = "top.Reshape"(%x) {shape = [6]} : (tensor<2x3xf32>) -> tensor<6xf32>
  %1 = "top.Reshape"(%0) {shape = [3, 2]} : (tensor<6xf32>) -> tensor<3x2xf32>
  return %0, %1 : tensor<6xf32>, tensor<3x2xf32>
}

// -----

// Identity Reshape goes only when its type is known to match.
// CHECK-LABEL: func.func @reshape_unranked_kept
// CHECK: top.Reshape
func.func @reshape_unranked_kept(%x: tensor<2x3xf32>) -> tensor<*xf32> {
  %0 = "top.Reshape"(%x) {shape = [2, 3]} : (tensor<2x3xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// CHECK-LABEL: func.func @permute_chain
// CHECK-NEXT: %[[P:.*]] = "top.Permute"(%arg0) <{order = [1, 0, 2]}> {{.*}} loc(#[[L:loc[0-9]*]])
// CHECK-NEXT: return %[[P]]
// CHECK: #[[L]] = loc("p1")
func.func @permute_chain(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %0 = "top.Permute"(%x) {order = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32> loc("p0")
  %1 = "top.Permute"(%0) {order = [2, 1, 0]} : (tensor<4x2x3xf32>) -> tensor<3x2x4xf32> loc("p1")
  return %1 : tensor<3x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @permute_inverse
// CHECK-NEXT: return %arg0
func.func @permute_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "top.Permute"(%x) {order = [0, 2, 1]} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %1 = "top.Permute"(%0) {order = [0, 2, 1]} : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @permute_identity
// CHECK-NEXT: return %arg0
func.func @permute_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "top.Permute"(%x) {order = [0, 1]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A real transpose stays.
// CHECK-LABEL: func.func @permute_kept
// CHECK: top.Permute{{.*}}order = [1, 0]
func.func @permute_kept(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = "top.Permute"(%x) {order = [1, 0]} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @slice_full
// CHECK-NEXT: return %arg0
func.func @slice_full(%x: tensor<3x1x4xf32>) -> tensor<3x1x4xf32> {
  %0 = "top.Slice"(%x) {starts = [-100, 0, 0], ends = [100, -100, 9223372036854775807], axes = [0, 1, -1], steps = [1, -1, 1]} : (tensor<3x1x4xf32>) -> tensor<3x1x4xf32>
  return %0 : tensor<3x1x4xf32>
}

// -----

// Reversing, striding or cutting is not the identity.
// CHECK-LABEL: func.func @slice_kept
// CHECK-COUNT-3: top.Slice
func.func @slice_kept(%x: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x2xf32>, tensor<2x4xf32>) {
  %0 = "top.Slice"(%x) {starts = [-1], ends = [-100], axes = [1], steps = [-1]} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = "top.Slice"(%x) {starts = [0], ends = [4], axes = [1], steps = [2]} : (tensor<3x4xf32>) -> tensor<3x2xf32>
  %2 = "top.Slice"(%x) {starts = [1], ends = [3], axes = [0], steps = [1]} : (tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0, %1, %2 : tensor<3x4xf32>, tensor<3x2xf32>, tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @pad_zero
// CHECK-NEXT: return %arg0
func.func @pad_zero(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "top.Pad"(%x) {pads = [0, 0, 0, 0], mode = "reflect"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @pad_kept
// CHECK: top.Pad
func.func @pad_kept(%x: tensor<3x4xf32>) -> tensor<3x5xf32> {
  %0 = "top.Pad"(%x) {pads = [0, 0, 0, 1]} : (tensor<3x4xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// CHECK-LABEL: func.func @relu_into_matmul_add_concat
// CHECK: %[[M:.*]] = "top.MatMul"{{.*}}do_relu = true{{.*}} loc(#[[LM:loc[0-9]*]])
// CHECK: %[[A:.*]] = "top.Add"{{.*}}do_relu = true{{.*}} loc(#[[LA:loc[0-9]*]])
// CHECK: %[[C:.*]] = "top.Concat"{{.*}}do_relu = true{{.*}} loc(#[[LC:loc[0-9]*]])
// CHECK-NOT: top.Relu
// CHECK: return %[[C]]
// CHECK-DAG: #[[LM]] = loc("mm_relu")
// CHECK-DAG: #[[LA]] = loc("add_relu")
// CHECK-DAG: #[[LC]] = loc("cat_relu")
func.func @relu_into_matmul_add_concat(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: none) -> tensor<4x4xf32> {
  %0 = "top.MatMul"(%x, %w, %n) : (tensor<2x4xf32>, tensor<4x4xf32>, none) -> tensor<2x4xf32> loc("mm")
  %1 = "top.Relu"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("mm_relu")
  %2 = "top.Add"(%1, %x) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("add")
  %3 = "top.Relu"(%2) : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("add_relu")
  %4 = "top.Concat"(%3, %x) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32> loc("cat")
  %5 = "top.Relu"(%4) : (tensor<4x4xf32>) -> tensor<4x4xf32> loc("cat_relu")
  return %5 : tensor<4x4xf32>
}

// -----

// No fusion when the pre-activation value has another user, when the
// producer cannot clamp at relu_limit, when it already applies a ReLU, or
// when it is not an op that can apply one (Sub).
// CHECK-LABEL: func.func @relu_not_fused
// CHECK: "top.Add"(%arg0, %arg0) <{do_relu = false}>
// CHECK: top.Relu
// CHECK: "top.MatMul"(%arg0, %arg1, %arg2) <{do_relu = false}>
// CHECK: top.Relu{{.*}}relu_limit = 6.0
// CHECK: "top.Sub"
// CHECK: top.Relu
// CHECK: "top.Add"(%arg0, %arg0) <{do_relu = true}>
// CHECK: top.Relu
func.func @relu_not_fused(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: none) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = "top.Add"(%x, %x) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = "top.Relu"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = "top.MatMul"(%x, %w, %n) : (tensor<2x4xf32>, tensor<4x4xf32>, none) -> tensor<2x4xf32>
  %3 = "top.Relu"(%2) {relu_limit = 6.0 : f64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = "top.Sub"(%x, %x) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %5 = "top.Relu"(%4) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %6 = "top.Add"(%x, %x) {do_relu = true} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %7 = "top.Relu"(%6) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0, %1, %3, %5, %7 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Conv can clamp: relu_limit moves into it.
// CHECK-LABEL: func.func @relu6_into_conv
// CHECK: top.Conv{{.*}}do_relu = true{{.*}}relu_limit = 6.0
// CHECK-NOT: top.Relu
func.func @relu6_into_conv(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %n: none) -> tensor<1x3x4x4xf32> {
  %0 = "top.Conv"(%x, %w, %n) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, none) -> tensor<1x3x4x4xf32>
  %1 = "top.Relu"(%0) {relu_limit = 6.0 : f64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %1 : tensor<1x3x4x4xf32>
}

// -----

// A mean over H and W is a GlobalAvgPool; without keepdims a Reshape named
// as the Reduce drops the unit dims. Other means stay Reduces.
// CHECK-LABEL: func.func @spatial_mean
// CHECK: %[[P:.*]] = "top.GlobalAvgPool"(%{{.*}}) : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32> loc(#[[LP:.*]])
// CHECK: "top.Reshape"(%[[P]]) {{.*}} -> tensor<1x8xf32> loc(#[[LM:.*]])
// CHECK: "top.GlobalAvgPool"(%{{.*}}) : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32> loc(#[[LK:.*]])
// CHECK: "top.Reduce"
// CHECK-DAG: #[[LP]] = loc("m_pool")
// CHECK-DAG: #[[LM]] = loc("m")
// CHECK-DAG: #[[LK]] = loc("k")
func.func @spatial_mean(%arg0: tensor<1x8x7x7xf32>) -> (tensor<1x8xf32>, tensor<1x8x1x1xf32>, tensor<1x7x7xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32> loc("x")
  %m = "top.Reduce"(%x) {mode = "mean", axes = [-1, 2], keepdims = false} : (tensor<1x8x7x7xf32>) -> tensor<1x8xf32> loc("m")
  %k = "top.Reduce"(%x) {mode = "mean", axes = [2, 3], keepdims = true} : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32> loc("k")
  %c = "top.Reduce"(%x) {mode = "mean", axes = [1], keepdims = false} : (tensor<1x8x7x7xf32>) -> tensor<1x7x7xf32> loc("c")
  return %m, %k, %c : tensor<1x8xf32>, tensor<1x8x1x1xf32>, tensor<1x7x7xf32>
}
