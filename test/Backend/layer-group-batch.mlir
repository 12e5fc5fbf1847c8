// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge print-plan=true" -o /dev/null 2>&1 | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge" | FileCheck %s --check-prefix=IR
// Groups of a batch whose maps do not fit local memory together run as a
// loop over slices of the batch (N), which need no halo; an image too big
// for local memory on its own is sliced along H as well. Input, result and
// temp buffers hold the images of one slice; the tpu.Group records both
// counts.

// CHECK: remark: loc(fused["c0", "p", "c1"]): layer group plan: 3 ops, 49152 bytes per lane, 4 slices along N (1 of 4 images each)
// CHECK-NEXT: input 'x' [1, 16, 32, 64] f32 at 0 (16384 bytes in 2 slots), ops 0-2, rows 0-32
// CHECK: result 'c1' [1, 32, 16, 32] f32 at 36864 (8192 bytes in 2 slots), ops 0-2, stored, rows 0-16
// IR: tpu.Group -> (tensor<4x32x16x32xf32>) attributes {n_slices = 4 : i64} {
func.func @main(%arg0: tensor<4x16x32x64xf32>) -> tensor<4x32x16x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<4x16x32x64xf32>) -> tensor<4x16x32x64xf32> loc("x")
  %none = "top.None"() : () -> none
  %w0 = "top.Weight"() : () -> tensor<32x16x3x3xf32> loc("w0")
  %w1 = "top.Weight"() : () -> tensor<32x32x1x1xf32> loc("w1")
  %c0 = "tpu.Conv"(%x, %w0, %none) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1], do_relu = true} : (tensor<4x16x32x64xf32>, tensor<32x16x3x3xf32>, none) -> tensor<4x32x32x64xf32> loc("c0")
  %p = "tpu.MaxPool"(%c0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<4x32x32x64xf32>) -> tensor<4x32x16x32xf32> loc("p")
  %c1 = "tpu.Conv"(%p, %w1, %none) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<4x32x16x32xf32>, tensor<32x32x1x1xf32>, none) -> tensor<4x32x16x32xf32> loc("c1")
  return %c1 : tensor<4x32x16x32xf32>
}

// -----

// CHECK: remark: loc(fused["c0", "p", "c1"]): layer group plan: 3 ops, 20480 bytes per lane, 2 slices along N (1 of 2 images each), 16 slices along H
// CHECK-NEXT: input 'x' [1, 16, 6, 128] f32 at 0 (6144 bytes in 2 slots), ops 0-2, rows 0-5 | 3-9 | 7-13 | {{.*}} | 59-64
// IR: tpu.Group -> (tensor<2x32x32x64xf32>) attributes {h_slices = 16 : i64, n_slices = 2 : i64} {
func.func @main(%arg0: tensor<2x16x64x128xf32>) -> tensor<2x32x32x64xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x16x64x128xf32>) -> tensor<2x16x64x128xf32> loc("x")
  %none = "top.None"() : () -> none
  %w0 = "top.Weight"() : () -> tensor<32x16x3x3xf32> loc("w0")
  %w1 = "top.Weight"() : () -> tensor<32x32x1x1xf32> loc("w1")
  %c0 = "tpu.Conv"(%x, %w0, %none) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1], do_relu = true} : (tensor<2x16x64x128xf32>, tensor<32x16x3x3xf32>, none) -> tensor<2x32x64x128xf32> loc("c0")
  %p = "tpu.MaxPool"(%c0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<2x32x64x128xf32>) -> tensor<2x32x32x64xf32> loc("p")
  %c1 = "tpu.Conv"(%p, %w1, %none) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<2x32x32x64xf32>, tensor<32x32x1x1xf32>, none) -> tensor<2x32x32x64xf32> loc("c1")
  return %c1 : tensor<2x32x32x64xf32>
}

// -----

// An operand broadcast along N (one row of channels for every image) keeps
// the group from slicing the batch: it is sliced along H only.
// IR: tpu.Group -> (tensor<2x16x64x129xf32>) attributes {h_slices = 6 : i64} {
// CHECK: remark: loc(fused["a", "b"]): layer group plan: 2 ops, {{[0-9]+}} bytes per lane, {{[0-9]+}} slices along H
// IR-NOT: n_slices
func.func @main(%arg0: tensor<2x16x64x129xf32>, %arg1: tensor<1x16x1x1xf32>) -> tensor<2x16x64x129xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x16x64x129xf32>) -> tensor<2x16x64x129xf32> loc("x")
  %s = "top.Input"(%arg1) : (tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32> loc("s")
  %a = "tpu.Sub"(%x, %s) : (tensor<2x16x64x129xf32>, tensor<1x16x1x1xf32>) -> tensor<2x16x64x129xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "abs"} : (tensor<2x16x64x129xf32>) -> tensor<2x16x64x129xf32> loc("b")
  return %b : tensor<2x16x64x129xf32>
}
