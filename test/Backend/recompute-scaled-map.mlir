// RUN: tpuc-opt %s -split-input-file -tpu-recompute-scaled-map="chip=tpu_edge" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s

// A map scaled by a pool of itself: the multiply reads a copy of the 1x1
// conv (its input x is a quarter of the map), so the pool's group can keep
// the map in local memory. The copy is marked, so its MACs are not counted
// in the model's.
// CHECK-LABEL: func.func @squeeze
// CHECK: %[[M:.*]] = "tpu.Conv"(%[[X:[^,]*]],
// CHECK: "tpu.AvgPool"(%[[M]])
// CHECK: %[[C:.*]] = "tpu.Conv"(%[[X]], {{.*}}tpu.recomputed{{.*}}loc("m_recomputed")
// CHECK: "tpu.Mul"(%[[C]],
func.func @squeeze(%arg0: tensor<1x8x64x64xf32>) -> tensor<1x32x64x64xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<32x8x1x1xf32> loc("w")
  %n = "top.None"() : () -> none
  %m = "tpu.Conv"(%x, %w, %n) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x8x64x64xf32>, tensor<32x8x1x1xf32>, none) -> tensor<1x32x64x64xf32> loc("m")
  %r = "tpu.AvgPool"(%m) {kernel_shape = [1, 64], strides = [1, 1], pads = [0, 0, 0, 0], count_include_pad = false} : (tensor<1x32x64x64xf32>) -> tensor<1x32x64x1xf32> loc("rows")
  %p = "tpu.AvgPool"(%r) {kernel_shape = [64, 1], strides = [1, 1], pads = [0, 0, 0, 0], count_include_pad = false} : (tensor<1x32x64x1xf32>) -> tensor<1x32x1x1xf32> loc("pool")
  %s = "tpu.Active"(%p) {mode = "sigmoid"} : (tensor<1x32x1x1xf32>) -> tensor<1x32x1x1xf32> loc("s")
  %y = "tpu.Mul"(%m, %s) : (tensor<1x32x64x64xf32>, tensor<1x32x1x1xf32>) -> tensor<1x32x64x64xf32> loc("y")
  return %y : tensor<1x32x64x64xf32>
}

// -----

// Scales not computed from the map: nothing to recompute.
// CHECK-LABEL: func.func @other_scale
// CHECK-NOT: recomputed
// CHECK: return
func.func @other_scale(%arg0: tensor<1x8x64x64xf32>, %arg1: tensor<1x32x1x1xf32>) -> tensor<1x32x64x64xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x8x64x64xf32>) -> tensor<1x8x64x64xf32> loc("x")
  %s = "top.Input"(%arg1) : (tensor<1x32x1x1xf32>) -> tensor<1x32x1x1xf32> loc("s")
  %w = "top.Weight"() : () -> tensor<32x8x1x1xf32> loc("w")
  %n = "top.None"() : () -> none
  %m = "tpu.Conv"(%x, %w, %n) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x8x64x64xf32>, tensor<32x8x1x1xf32>, none) -> tensor<1x32x64x64xf32> loc("m")
  %y = "tpu.Mul"(%m, %s) : (tensor<1x32x64x64xf32>, tensor<1x32x1x1xf32>) -> tensor<1x32x64x64xf32> loc("y")
  return %y : tensor<1x32x64x64xf32>
}
