// RUN: %python %S/Inputs/lower_weights.py %t.npz
// RUN: sed "s|WEIGHTS|%t.npz|" %s | tpuc-opt -convert-top-to-tpu -mlir-print-debuginfo | FileCheck %s

module attributes {top.weight_file = "WEIGHTS"} {
// Negative axes become non-negative; empty Reduce axes list every dim.
// CHECK-LABEL: func.func @axes
// CHECK: "tpu.Reduce"(%{{.*}}) <{axes = [0, 2], keepdims = false, mode = "max"}> : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK: "tpu.Reduce"(%{{.*}}) <{axes = [0, 1, 2], keepdims = true, mode = "mean"}> : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
// CHECK: "tpu.Concat"(%{{.*}}, %{{.*}}) <{axis = 2 : i64, do_relu = false}> : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32>
// CHECK: "tpu.Permute"(%{{.*}}) <{order = [2, 0, 1]}> : (tensor<2x3x8xf32>) -> tensor<8x2x3xf32>
// CHECK: "tpu.Reshape"(%{{.*}}) : (tensor<8x2x3xf32>) -> tensor<16x3xf32>
func.func @axes(%arg0: tensor<2x3x4xf32>) -> (tensor<3xf32>, tensor<1x1x1xf32>, tensor<16x3xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  %1 = "top.Reduce"(%0) {mode = "max", axes = [-1, 0], keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32> loc("rmax")
  %2 = "top.Reduce"(%0) {mode = "mean", axes = []} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32> loc("rmean")
  %3 = "top.Concat"(%0, %0) {axis = -1} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x8xf32> loc("cat")
  %4 = "top.Permute"(%3) {order = [2, 0, 1]} : (tensor<2x3x8xf32>) -> tensor<8x2x3xf32> loc("perm")
  %5 = "top.Reshape"(%4) {shape = [-1, 3]} : (tensor<8x2x3xf32>) -> tensor<16x3xf32> loc("reshape")
  return %1, %2, %5 : tensor<3xf32>, tensor<1x1x1xf32>, tensor<16x3xf32>
}

// ONNX starts/ends (negative, out of range, reversed) resolve to offsets
// and steps per dim; untouched dims read everything.
// CHECK-LABEL: func.func @slice
// CHECK: "tpu.Slice"(%{{.*}}) <{offsets = [0, 9, 1], steps = [1, -3, 2]}> : (tensor<2x10x6xf32>) -> tensor<2x3x3xf32>
// CHECK: "tpu.Slice"(%{{.*}}) <{offsets = [1, 0, 0], steps = [1, 1, 1]}> : (tensor<2x10x6xf32>) -> tensor<1x10x6xf32>
func.func @slice(%arg0: tensor<2x10x6xf32>) -> (tensor<2x3x3xf32>, tensor<1x10x6xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x10x6xf32>) -> tensor<2x10x6xf32> loc("x")
  %1 = "top.Slice"(%0) {starts = [100, 1], ends = [-9, 1000], axes = [1, -1], steps = [-3, 2]} : (tensor<2x10x6xf32>) -> tensor<2x3x3xf32> loc("s1")
  %2 = "top.Slice"(%0) {starts = [-1], ends = [2], axes = [0], steps = [1]} : (tensor<2x10x6xf32>) -> tensor<1x10x6xf32> loc("s2")
  return %1, %2 : tensor<2x3x3xf32>, tensor<1x10x6xf32>
}

// Constant indices are wrapped at lowering time into a new weight (the old
// one, now unused, is dropped); already non-negative ones are kept.
// CHECK-LABEL: func.func @gather
// CHECK: %[[P:.*]] = "top.Weight"() : () -> tensor<2xf32> loc(#[[LP:loc[0-9]*]])
// CHECK: %[[I:.*]] = "top.Weight"() : () -> tensor<3xf32> loc(#[[LI:loc[0-9]*]])
// CHECK: "tpu.Gather"(%{{.*}}, %[[I]]) <{axis = 1 : i64}> : (tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
// CHECK: "tpu.Gather"(%{{.*}}, %[[P]]) <{axis = 2 : i64}> : (tensor<2x3x4xf32>, tensor<2xf32>) -> tensor<2x3x2xf32>
func.func @gather(%arg0: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x2xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  %i = "top.Weight"() : () -> tensor<3xf32> loc("idx")
  %p = "top.Weight"() : () -> tensor<2xf32> loc("pos")
  %1 = "top.Gather"(%0, %i) {axis = -2} : (tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32> loc("g")
  %2 = "top.Gather"(%0, %p) {axis = 2} : (tensor<2x3x4xf32>, tensor<2xf32>) -> tensor<2x3x2xf32> loc("g2")
  return %1, %2 : tensor<2x3x4xf32>, tensor<2x3x2xf32>
}

// CHECK-LABEL: func.func @pad_upsample
// CHECK: "tpu.Pad"(%{{.*}}) <{mode = "edge", pads = [0, 0, 1, 2, 0, 0, 3, 0], value = 0.000000e+00 : f64}> : (tensor<1x2x3x3xf32>) -> tensor<1x2x7x5xf32>
// CHECK: "tpu.Upsample"(%{{.*}}) <{scale_h = 2 : i64, scale_w = 3 : i64}> : (tensor<1x2x7x5xf32>) -> tensor<1x2x14x15xf32>
func.func @pad_upsample(%arg0: tensor<1x2x3x3xf32>) -> tensor<1x2x14x15xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("x")
  %1 = "top.Pad"(%0) {pads = [0, 0, 1, 2, 0, 0, 3, 0], mode = "edge"} : (tensor<1x2x3x3xf32>) -> tensor<1x2x7x5xf32> loc("pad")
  %2 = "top.Upsample"(%1) {scale_h = 2, scale_w = 3} : (tensor<1x2x7x5xf32>) -> tensor<1x2x14x15xf32> loc("up")
  return %2 : tensor<1x2x14x15xf32>
}
}
// CHECK-DAG: #[[LI]] = loc("g_tpu_indices")
// CHECK-DAG: #[[LP]] = loc("pos")
