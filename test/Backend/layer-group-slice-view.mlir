// RUN: tpuc-opt %s -tpu-layer-group="chip=tpu_pro print-plan=true" 2>&1 >/dev/null | FileCheck %s

// A fused projection's queries, keys and values as a batch of three
// ([L, 3 D] -> [3, L, D]) are each a run of every lane's bytes when the L
// tokens take one slot of each lane: the split is a view, and each Slice
// is a view at its run's offset (D elements, 128 bytes, apart), as are
// the head splits after them. No lane copy is left.
// CHECK: layer group plan: 10 ops
// CHECK: result 'qkv' [1, 12, 1, 96] f32 at [[A:[0-9]+]] (384 bytes)
// CHECK: result 't' [3, 12, 1, 32] f32 at [[A]] (384 bytes), ops {{.*}}, view of 'qkv'
// CHECK: result 'q' [1, 12, 1, 32] f32 at [[A]] (128 bytes), ops {{.*}}, view of 'qkv'
// CHECK: result 'k' [1, 12, 1, 32] f32 at [[K:[0-9]+]] (128 bytes), ops {{.*}}, view of 'qkv'
// CHECK: result 'kh' [2, 12, 1, 16] f32 at [[K]] (128 bytes), ops {{.*}}, view of 'qkv'
func.func @fused_qkv(%arg0: tensor<1x12x32xf32>) -> tensor<1x2x12x12xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x12x32xf32>) -> tensor<1x12x32xf32> loc("x")
  %none = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<32x96xf32> loc("w")
  %qkv = "tpu.MatMul"(%x, %w, %none) : (tensor<1x12x32xf32>, tensor<32x96xf32>, none) -> tensor<1x12x96xf32> loc("qkv")
  %r = "tpu.Reshape"(%qkv) : (tensor<1x12x96xf32>) -> tensor<12x3x32xf32> loc("r")
  %t = "tpu.Permute"(%r) {order = [1, 0, 2]} : (tensor<12x3x32xf32>) -> tensor<3x12x32xf32> loc("t")
  %q = "tpu.Slice"(%t) {offsets = [0, 0, 0], steps = [1, 1, 1]} : (tensor<3x12x32xf32>) -> tensor<1x12x32xf32> loc("q")
  %k = "tpu.Slice"(%t) {offsets = [1, 0, 0], steps = [1, 1, 1]} : (tensor<3x12x32xf32>) -> tensor<1x12x32xf32> loc("k")
  %qr = "tpu.Reshape"(%q) : (tensor<1x12x32xf32>) -> tensor<1x12x2x16xf32> loc("qr")
  %qh = "tpu.Permute"(%qr) {order = [0, 2, 1, 3]} : (tensor<1x12x2x16xf32>) -> tensor<1x2x12x16xf32> loc("qh")
  %kr = "tpu.Reshape"(%k) : (tensor<1x12x32xf32>) -> tensor<1x12x2x16xf32> loc("kr")
  %kh = "tpu.Permute"(%kr) {order = [0, 2, 1, 3]} : (tensor<1x12x2x16xf32>) -> tensor<1x2x12x16xf32> loc("kh")
  %s = "tpu.MatMul"(%qh, %kh, %none) {right_transpose = true} : (tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, none) -> tensor<1x2x12x12xf32> loc("s")
  return %s : tensor<1x2x12x12xf32>
}
