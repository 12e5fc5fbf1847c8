// RUN: %python %S/Inputs/matmul_columns_weights.py %t.npz
// RUN: sed "s|WEIGHTS|%t.npz|" %s | tpuc-opt -split-input-file -canonicalize -mlir-print-debuginfo | FileCheck %s

// A fused q/k/v projection, reshaped [windows, tokens, 3, heads, d],
// permuted to [3, windows, heads, tokens, d] and sliced along the 3: each
// Slice becomes the matmul by its block of columns (and bias), reshaped and
// permuted as before (a transpose of a unit dim, lowered to a Reshape);
// the wide matmul and its transpose go.
// CHECK-LABEL: func.func @qkv
// CHECK-NOT: tensor<2x3x12xf32>
// CHECK-COUNT-3: "top.MatMul"(%arg0, %{{.*}}, %{{.*}}) {{.*}}: (tensor<2x3x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
// CHECK-NOT: tensor<3x2x2x3x2xf32>
// CHECK: return
module attributes {top.weight_file = "WEIGHTS"} {
func.func @qkv(%x: tensor<2x3x4xf32>) -> (tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>) {
  %w = "top.Weight"() : () -> tensor<4x12xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<12xf32> loc("b")
  %0 = "top.MatMul"(%x, %w, %b) : (tensor<2x3x4xf32>, tensor<4x12xf32>, tensor<12xf32>) -> tensor<2x3x12xf32> loc("qkv")
  %1 = "top.Reshape"(%0) {shape = [2, 3, 3, 2, 2]} : (tensor<2x3x12xf32>) -> tensor<2x3x3x2x2xf32> loc("split")
  %2 = "top.Permute"(%1) {order = [2, 0, 3, 1, 4]} : (tensor<2x3x3x2x2xf32>) -> tensor<3x2x2x3x2xf32> loc("perm")
  %3 = "top.Slice"(%2) {starts = [0], ends = [1], axes = [0], steps = [1]} : (tensor<3x2x2x3x2xf32>) -> tensor<1x2x2x3x2xf32> loc("q")
  %4 = "top.Slice"(%2) {starts = [1], ends = [2], axes = [0], steps = [1]} : (tensor<3x2x2x3x2xf32>) -> tensor<1x2x2x3x2xf32> loc("k")
  %5 = "top.Slice"(%2) {starts = [2], ends = [3], axes = [0], steps = [1]} : (tensor<3x2x2x3x2xf32>) -> tensor<1x2x2x3x2xf32> loc("v")
  %q = "top.Reshape"(%3) {shape = [2, 2, 3, 2]} : (tensor<1x2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  %k = "top.Reshape"(%4) {shape = [2, 2, 3, 2]} : (tensor<1x2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  %v = "top.Reshape"(%5) {shape = [2, 2, 3, 2]} : (tensor<1x2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  return %q, %k, %v : tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>, tensor<2x2x3x2xf32>
}
}

// -----

// A Slice along a dim the matmul keeps (its rows), or a matmul whose
// result has other users, stays.
// CHECK-LABEL: func.func @kept
// CHECK: "top.MatMul"{{.*}}-> tensor<2x3x12xf32>
// CHECK: "top.Slice"
// CHECK: "top.MatMul"{{.*}}-> tensor<2x3x12xf32>
// CHECK: "top.Slice"
module attributes {top.weight_file = "WEIGHTS"} {
func.func @kept(%x: tensor<2x3x4xf32>) -> (tensor<2x1x3x2x2xf32>, tensor<2x3x1x2x2xf32>, tensor<2x3x3x2x2xf32>) {
  %w = "top.Weight"() : () -> tensor<4x12xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<12xf32> loc("b")
  %0 = "top.MatMul"(%x, %w, %b) : (tensor<2x3x4xf32>, tensor<4x12xf32>, tensor<12xf32>) -> tensor<2x3x12xf32> loc("m0")
  %1 = "top.Reshape"(%0) {shape = [2, 3, 3, 2, 2]} : (tensor<2x3x12xf32>) -> tensor<2x3x3x2x2xf32> loc("r0")
  %2 = "top.Slice"(%1) {starts = [0], ends = [1], axes = [1], steps = [1]} : (tensor<2x3x3x2x2xf32>) -> tensor<2x1x3x2x2xf32> loc("rows")
  %3 = "top.MatMul"(%x, %w, %b) : (tensor<2x3x4xf32>, tensor<4x12xf32>, tensor<12xf32>) -> tensor<2x3x12xf32> loc("m1")
  %4 = "top.Reshape"(%3) {shape = [2, 3, 3, 2, 2]} : (tensor<2x3x12xf32>) -> tensor<2x3x3x2x2xf32> loc("r1")
  %5 = "top.Slice"(%4) {starts = [0], ends = [1], axes = [2], steps = [1]} : (tensor<2x3x3x2x2xf32>) -> tensor<2x3x1x2x2xf32> loc("cols")
  return %2, %5, %4 : tensor<2x1x3x2x2xf32>, tensor<2x3x1x2x2xf32>, tensor<2x3x3x2x2xf32>
}
}
