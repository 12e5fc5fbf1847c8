// RUN: %python %S/Inputs/shuffle_weights.py %t.npz
// RUN: sed "s|WEIGHTS|%t.npz|" %s | tpuc-opt -split-input-file -canonicalize -mlir-print-debuginfo | FileCheck %s
// ShuffleNet's Concat -> channel shuffle -> channel Slices: no Permute is
// left. In a batch each half interleaves a Slice of the passed-through input
// with a Conv narrowed to the output channels it needs; with one image the
// Slices (views) take the halves of one interleaving Concat.

module attributes {top.weight_file = "WEIGHTS"} {
// CHECK-LABEL: func.func @shuffle_split
// CHECK-NOT: top.Permute
// CHECK-DAG: %[[C0:.*]] = "top.Conv"(%arg1, %{{.*}}, %{{.*}}) {{.*}}: (tensor<2x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<2x2x3x3xf32>
// CHECK-DAG: %[[C1:.*]] = "top.Conv"(%arg1, %{{.*}}, %{{.*}}) {{.*}}: (tensor<2x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<2x2x3x3xf32>
// CHECK: "top.Slice"(%arg0) <{axes = [1], ends = [2], starts = [0], steps = [1]}>
// CHECK: "top.Concat"({{.*}}) <{axis = 2 : i64{{.*}}}> {{.*}}-> tensor<2x2x2x3x3xf32>
// CHECK: %[[LO:.*]] = "top.Reshape"({{.*}}-> tensor<2x4x3x3xf32> loc(#[[LLO:loc[0-9]*]])
// CHECK: "top.Slice"(%arg0) <{axes = [1], ends = [4], starts = [2], steps = [1]}>
// CHECK: "top.Concat"({{.*}}) <{axis = 2 : i64{{.*}}}> {{.*}}-> tensor<2x2x2x3x3xf32>
// CHECK: %[[HI:.*]] = "top.Reshape"({{.*}}-> tensor<2x4x3x3xf32> loc(#[[LHI:loc[0-9]*]])
// CHECK: return %[[LO]], %[[HI]]
func.func @shuffle_split(%a: tensor<2x4x3x3xf32>, %x: tensor<2x2x3x3xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) {
  %w = "top.Weight"() : () -> tensor<4x2x1x1xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
  %y = "top.Conv"(%x, %w, %b) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<2x2x3x3xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32> loc("branch")
  %0 = "top.Concat"(%a, %y) {axis = 1 : i64} : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x8x3x3xf32> loc("cat")
  %1 = "top.Reshape"(%0) {shape = [2, 2, 4, 3, 3]} : (tensor<2x8x3x3xf32>) -> tensor<2x2x4x3x3xf32> loc("r1")
  %2 = "top.Permute"(%1) {order = [0, 2, 1, 3, 4]} : (tensor<2x2x4x3x3xf32>) -> tensor<2x4x2x3x3xf32> loc("perm")
  %3 = "top.Reshape"(%2) {shape = [2, 8, 3, 3]} : (tensor<2x4x2x3x3xf32>) -> tensor<2x8x3x3xf32> loc("r2")
  %4 = "top.Slice"(%3) {starts = [0], ends = [4], axes = [1], steps = [1]} : (tensor<2x8x3x3xf32>) -> tensor<2x4x3x3xf32> loc("lo")
  %5 = "top.Slice"(%3) {starts = [4], ends = [8], axes = [1], steps = [1]} : (tensor<2x8x3x3xf32>) -> tensor<2x4x3x3xf32> loc("hi")
  return %4, %5 : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
}
}
// CHECK-DAG: #[[LLO]] = loc("lo")
// CHECK-DAG: #[[LHI]] = loc("hi")

// -----

// One image: the Conv keeps all its channels, one Concat interleaves, and
// the halves are Slices of it.
// CHECK-LABEL: func.func @shuffle_split_one_image
// CHECK-NOT: top.Permute
// CHECK: %[[C:.*]] = "top.Conv"(%arg1, {{.*}}-> tensor<1x4x3x3xf32>
// CHECK: %[[P0:.*]] = "top.Reshape"(%arg0) {{.*}}-> tensor<1x4x1x3x3xf32>
// CHECK: %[[P1:.*]] = "top.Reshape"(%[[C]]) {{.*}}-> tensor<1x4x1x3x3xf32>
// CHECK: %[[K:.*]] = "top.Concat"(%[[P0]], %[[P1]]) <{axis = 2 : i64{{.*}}}> {{.*}}-> tensor<1x4x2x3x3xf32>
// CHECK: %[[R:.*]] = "top.Reshape"(%[[K]]) {{.*}}-> tensor<1x8x3x3xf32>
// CHECK: %[[LO:.*]] = "top.Slice"(%[[R]]) <{axes = [1], ends = [4], starts = [0], steps = [1]}>
// CHECK: %[[HI:.*]] = "top.Slice"(%[[R]]) <{axes = [1], ends = [8], starts = [4], steps = [1]}>
// CHECK: return %[[LO]], %[[HI]]
module attributes {top.weight_file = "WEIGHTS"} {
func.func @shuffle_split_one_image(%a: tensor<1x4x3x3xf32>, %x: tensor<1x2x3x3xf32>) -> (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) {
  %w = "top.Weight"() : () -> tensor<4x2x1x1xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
  %y = "top.Conv"(%x, %w, %b) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32> loc("branch")
  %0 = "top.Concat"(%a, %y) {axis = 1 : i64} : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x8x3x3xf32> loc("cat")
  %1 = "top.Reshape"(%0) {shape = [1, 2, 4, 3, 3]} : (tensor<1x8x3x3xf32>) -> tensor<1x2x4x3x3xf32> loc("r1")
  %2 = "top.Permute"(%1) {order = [0, 2, 1, 3, 4]} : (tensor<1x2x4x3x3xf32>) -> tensor<1x4x2x3x3xf32> loc("perm")
  %3 = "top.Reshape"(%2) {shape = [1, 8, 3, 3]} : (tensor<1x4x2x3x3xf32>) -> tensor<1x8x3x3xf32> loc("r2")
  %4 = "top.Slice"(%3) {starts = [0], ends = [4], axes = [1], steps = [1]} : (tensor<1x8x3x3xf32>) -> tensor<1x4x3x3xf32> loc("lo")
  %5 = "top.Slice"(%3) {starts = [4], ends = [8], axes = [1], steps = [1]} : (tensor<1x8x3x3xf32>) -> tensor<1x4x3x3xf32> loc("hi")
  return %4, %5 : tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>
}
}

// -----

// A whole shuffle of a Concat is one interleaving Concat.
// CHECK-LABEL: func.func @shuffle_whole
// CHECK-NOT: top.Permute
// CHECK: %[[P0:.*]] = "top.Reshape"(%arg0) {{.*}}-> tensor<1x3x1x2x2xf32>
// CHECK: %[[P1:.*]] = "top.Reshape"(%arg1) {{.*}}-> tensor<1x3x1x2x2xf32>
// CHECK: %[[C:.*]] = "top.Concat"(%[[P0]], %[[P1]]) <{axis = 2 : i64{{.*}}}> {{.*}}-> tensor<1x3x2x2x2xf32>
// CHECK: %[[R:.*]] = "top.Reshape"(%[[C]]) {{.*}}-> tensor<1x6x2x2xf32> loc(#[[L:loc[0-9]*]])
// CHECK: return %[[R]]
func.func @shuffle_whole(%a: tensor<1x3x2x2xf32>, %b: tensor<1x3x2x2xf32>) -> tensor<1x6x2x2xf32> {
  %0 = "top.Concat"(%a, %b) {axis = 1 : i64} : (tensor<1x3x2x2xf32>, tensor<1x3x2x2xf32>) -> tensor<1x6x2x2xf32>
  %1 = "top.Reshape"(%0) {shape = [1, 2, 3, 2, 2]} : (tensor<1x6x2x2xf32>) -> tensor<1x2x3x2x2xf32>
  %2 = "top.Permute"(%1) {order = [0, 2, 1, 3, 4]} : (tensor<1x2x3x2x2xf32>) -> tensor<1x3x2x2x2xf32>
  %3 = "top.Reshape"(%2) {shape = [1, 6, 2, 2]} : (tensor<1x3x2x2x2xf32>) -> tensor<1x6x2x2xf32> loc("shuffled")
  return %3 : tensor<1x6x2x2xf32>
}
// CHECK: #[[L]] = loc("shuffled")

// -----

// A Conv with a user other than channel Slices is not narrowed.
// CHECK-LABEL: func.func @conv_shared
// CHECK: %[[C:.*]] = "top.Conv"
// CHECK: "top.Slice"(%[[C]])
// CHECK: return
func.func @conv_shared(%x: tensor<1x4x3x3xf32>, %w: tensor<4x4x1x1xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x4x3x3xf32>) {
  %n = "top.None"() : () -> none
  %y = "top.Conv"(%x, %w, %n) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x4x3x3xf32>, tensor<4x4x1x1xf32>, none) -> tensor<1x4x3x3xf32>
  %s = "top.Slice"(%y) {starts = [0], ends = [2], axes = [1], steps = [1]} : (tensor<1x4x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %s, %y : tensor<1x2x3x3xf32>, tensor<1x4x3x3xf32>
}
