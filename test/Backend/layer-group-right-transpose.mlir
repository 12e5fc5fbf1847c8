// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge" | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_pro" | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge print-plan=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAN

// The same block once canonicalization has folded K's transpose into the
// scores' matmul (transposed right operand): K's head split keeps each
// token's row in its lane as Q's and V's do, so K is no longer stored.
// CHECK-LABEL: func.func @heads_right_transpose
// CHECK: tpu.Group -> (tensor<1x12x64xf32>) {
// CHECK: "tpu.MatMul"{{.*}}right_transpose = true
// PLAN: layer group plan: 15 ops
// The reshapes are views of their operands' buffers (no copy), and so is
// the head split: the 12 tokens take one slot of each lane, whose 64
// columns are the 4 heads' 16 one after the other.
// PLAN: result 'rt_k' [1, 12, 1, 64] f32 at [[K:[0-9]+]] (256 bytes), ops 3-9{{$}}
// PLAN: result 'rt_kr' [1, 12, 1, 64] f32 at [[K]] (256 bytes), ops 4-8, view of 'rt_k'{{$}}
// PLAN: result 'rt_kt' [4, 12, 1, 16] f32 at [[K]] (256 bytes), ops 8-9, view of 'rt_k'{{$}}
func.func @heads_right_transpose(%arg0: tensor<1x12x64xf32>) -> tensor<1x12x64xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x12x64xf32>) -> tensor<1x12x64xf32> loc("rt_x")
  %none = "top.None"() : () -> none
  %wq = "top.Weight"() : () -> tensor<64x64xf32> loc("rt_wq")
  %wk = "top.Weight"() : () -> tensor<64x64xf32> loc("rt_wk")
  %wv = "top.Weight"() : () -> tensor<64x64xf32> loc("rt_wv")
  %wo = "top.Weight"() : () -> tensor<64x64xf32> loc("rt_wo")
  %q = "tpu.MatMul"(%x, %wq, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("rt_q")
  %qr = "tpu.Reshape"(%q) : (tensor<1x12x64xf32>) -> tensor<1x12x4x16xf32> loc("rt_qr")
  %qt = "tpu.Permute"(%qr) {order = [0, 2, 1, 3]} : (tensor<1x12x4x16xf32>) -> tensor<1x4x12x16xf32> loc("rt_qt")
  %k = "tpu.MatMul"(%x, %wk, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("rt_k")
  %kr = "tpu.Reshape"(%k) : (tensor<1x12x64xf32>) -> tensor<1x12x4x16xf32> loc("rt_kr")
  %v = "tpu.MatMul"(%x, %wv, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("rt_v")
  %vr = "tpu.Reshape"(%v) : (tensor<1x12x64xf32>) -> tensor<1x12x4x16xf32> loc("rt_vr")
  %vt = "tpu.Permute"(%vr) {order = [0, 2, 1, 3]} : (tensor<1x12x4x16xf32>) -> tensor<1x4x12x16xf32> loc("rt_vt")
  %kt = "tpu.Permute"(%kr) {order = [0, 2, 1, 3]} : (tensor<1x12x4x16xf32>) -> tensor<1x4x12x16xf32> loc("rt_kt")
  %s = "tpu.MatMul"(%qt, %kt, %none) {right_transpose = true} : (tensor<1x4x12x16xf32>, tensor<1x4x12x16xf32>, none) -> tensor<1x4x12x12xf32> loc("rt_s")
  %p = "tpu.Softmax"(%s) {axis = 3 : i64} : (tensor<1x4x12x12xf32>) -> tensor<1x4x12x12xf32> loc("rt_p")
  %c = "tpu.MatMul"(%p, %vt, %none) : (tensor<1x4x12x12xf32>, tensor<1x4x12x16xf32>, none) -> tensor<1x4x12x16xf32> loc("rt_c")
  %ct = "tpu.Permute"(%c) {order = [0, 2, 1, 3]} : (tensor<1x4x12x16xf32>) -> tensor<1x12x4x16xf32> loc("rt_ct")
  %cr = "tpu.Reshape"(%ct) : (tensor<1x12x4x16xf32>) -> tensor<1x12x64xf32> loc("rt_cr")
  %o = "tpu.MatMul"(%cr, %wo, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("rt_o")
  return %o : tensor<1x12x64xf32>
}

// -----

// Scaled K (whisper's attention scales K^T too): the scale after K's head
// split computes in the split's layout, so the block stays one group.
// CHECK-LABEL: func.func @scaled_heads
// CHECK: tpu.Group -> (tensor<1x12x64xf32>) {
// CHECK: "tpu.Mul"
// CHECK: "tpu.MatMul"{{.*}}right_transpose = true
// CHECK-NOT: tpu.Group
// PLAN: layer group plan: 16 ops
func.func @scaled_heads(%arg0: tensor<1x12x64xf32>) -> tensor<1x12x64xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x12x64xf32>) -> tensor<1x12x64xf32> loc("sc_x")
  %none = "top.None"() : () -> none
  %wq = "top.Weight"() : () -> tensor<64x64xf32> loc("sc_wq")
  %wk = "top.Weight"() : () -> tensor<64x64xf32> loc("sc_wk")
  %wv = "top.Weight"() : () -> tensor<64x64xf32> loc("sc_wv")
  %wo = "top.Weight"() : () -> tensor<64x64xf32> loc("sc_wo")
  %c = "top.Weight"() : () -> tensor<f32> loc("sc_c")
  %q = "tpu.MatMul"(%x, %wq, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("sc_q")
  %qr = "tpu.Reshape"(%q) : (tensor<1x12x64xf32>) -> tensor<1x12x4x16xf32> loc("sc_qr")
  %qt = "tpu.Permute"(%qr) {order = [0, 2, 1, 3]} : (tensor<1x12x4x16xf32>) -> tensor<1x4x12x16xf32> loc("sc_qt")
  %k = "tpu.MatMul"(%x, %wk, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("sc_k")
  %kr = "tpu.Reshape"(%k) : (tensor<1x12x64xf32>) -> tensor<1x12x4x16xf32> loc("sc_kr")
  %v = "tpu.MatMul"(%x, %wv, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("sc_v")
  %vr = "tpu.Reshape"(%v) : (tensor<1x12x64xf32>) -> tensor<1x12x4x16xf32> loc("sc_vr")
  %vt = "tpu.Permute"(%vr) {order = [0, 2, 1, 3]} : (tensor<1x12x4x16xf32>) -> tensor<1x4x12x16xf32> loc("sc_vt")
  %kt = "tpu.Permute"(%kr) {order = [0, 2, 1, 3]} : (tensor<1x12x4x16xf32>) -> tensor<1x4x12x16xf32> loc("sc_kt")
  %ks = "tpu.Mul"(%kt, %c) : (tensor<1x4x12x16xf32>, tensor<f32>) -> tensor<1x4x12x16xf32> loc("sc_ks")
  %s = "tpu.MatMul"(%qt, %ks, %none) {right_transpose = true} : (tensor<1x4x12x16xf32>, tensor<1x4x12x16xf32>, none) -> tensor<1x4x12x12xf32> loc("sc_s")
  %p = "tpu.Softmax"(%s) {axis = 3 : i64} : (tensor<1x4x12x12xf32>) -> tensor<1x4x12x12xf32> loc("sc_p")
  %cx = "tpu.MatMul"(%p, %vt, %none) : (tensor<1x4x12x12xf32>, tensor<1x4x12x16xf32>, none) -> tensor<1x4x12x16xf32> loc("sc_c")
  %ct = "tpu.Permute"(%cx) {order = [0, 2, 1, 3]} : (tensor<1x4x12x16xf32>) -> tensor<1x12x4x16xf32> loc("sc_ct")
  %cr = "tpu.Reshape"(%ct) : (tensor<1x12x4x16xf32>) -> tensor<1x12x64xf32> loc("sc_cr")
  %o = "tpu.MatMul"(%cr, %wo, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("sc_o")
  return %o : tensor<1x12x64xf32>
}
