// RUN: tpuc-opt %s -tpu-layer-group="chip=tpu_edge print-plan=true" -o /dev/null 2>&1 | FileCheck %s
// print-plan reports each group's plan as a remark: its LMEM buffers (kind,
// tensor, shape, dtype, per-lane offset and size, the ops between which it
// lives) and, sliced along H, the rows each input and result holds per
// slice. Going backwards from the stored result, the pool's 3x3/2 window
// and the conv's 3x3 window widen each slice's rows by their halos. The
// conv's halo row is carried: each slice copies it from the previous one
// (whose rows the conv's buffer keeps through the loop) and computes the
// rows after it, so the input holds only the rows those need.

// CHECK: remark: loc(fused["c0", "p", "c1"]): layer group plan: 3 ops, 20480 bytes per lane, 16 slices along H
// CHECK-NEXT: input 'x' [1, 16, 6, 128] f32 at 0 (6144 bytes in 2 slots), ops 0-2, rows 0-5 | 3-9 | 7-13 | 11-17 | {{.*}} | 55-61 | 59-64
// CHECK-NEXT: weight 'w0' [16, 32, 3, 3] f32 at 6144 (1152 bytes), ops 0-2
// CHECK-NEXT: result 'c0' [1, 32, 5, 128] f32 at 8192 (5120 bytes), ops 0-2, rows 0-4 | 3-8 (1 carried) | 7-12 (1 carried) | {{.*}} | 59-64 (1 carried)
// CHECK-NEXT: result 'p' [1, 32, 2, 64] f32 at 16384 (1024 bytes), ops 1-2, rows 0-2 | 2-4 | 4-6 | {{.*}} | 30-32
// CHECK-NEXT: weight 'w1' [32, 32, 1, 1] f32 at 7296 (256 bytes), ops 0-2
// CHECK-NEXT: result 'c1' [1, 32, 2, 64] f32 at 13312 (2048 bytes in 2 slots), ops 0-2, stored, rows 0-2 | 2-4 | {{.*}} | 30-32
// CHECK-NEXT: estimated {{[0-9]+}} cycles
func.func @windows(%arg0: tensor<1x16x64x128xf32>) -> tensor<1x32x32x64xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16x64x128xf32>) -> tensor<1x16x64x128xf32> loc("x")
  %none = "top.None"() : () -> none
  %w0 = "top.Weight"() : () -> tensor<32x16x3x3xf32> loc("w0")
  %w1 = "top.Weight"() : () -> tensor<32x32x1x1xf32> loc("w1")
  %c0 = "tpu.Conv"(%x, %w0, %none) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1], do_relu = true} : (tensor<1x16x64x128xf32>, tensor<32x16x3x3xf32>, none) -> tensor<1x32x64x128xf32> loc("c0")
  %p = "tpu.MaxPool"(%c0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x32x64x128xf32>) -> tensor<1x32x32x64xf32> loc("p")
  %c1 = "tpu.Conv"(%p, %w1, %none) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x32x32x64xf32>, tensor<32x32x1x1xf32>, none) -> tensor<1x32x32x64xf32> loc("c1")
  return %c1 : tensor<1x32x32x64xf32>
}
