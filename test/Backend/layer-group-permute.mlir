// RUN: tpuc-opt %s -tpu-layer-group="chip=tpu_edge" | FileCheck %s
// RUN: tpuc-opt %s -tpu-layer-group="chip=tpu_pro" | FileCheck %s
// RUN: tpuc-opt %s -tpu-layer-group="chip=tpu_edge print-plan=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAN

// The multi-head split of an attention block is one group. The reshapes
// and the transposes of Q and V keep every token's row in its lane (rows on
// lanes before and after): copies within lanes. The transpose of K puts the
// head dim on the lanes, which only a load can do: the group stores K and
// loads it back transposed. The reshapes are views of the matmuls'
// results in LMEM (no copy): K's reshape is stored from K's space.
// CHECK-LABEL: func.func @heads
// CHECK: tpu.Group -> (tensor<1x12x64xf32>) {
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Reshape"
// CHECK-NEXT: "tpu.Permute"{{.*}}order = [0, 2, 1, 3]
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Reshape"
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Reshape"
// CHECK-NEXT: "tpu.Permute"{{.*}}order = [0, 2, 1, 3]
// CHECK-NEXT: "tpu.Permute"{{.*}}order = [0, 2, 3, 1]
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Softmax"
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Permute"{{.*}}order = [0, 2, 1, 3]
// CHECK-NEXT: "tpu.Reshape"
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: tpu.Yield
// PLAN: remark: {{.*}}layer group plan: 15 ops
// PLAN: result 'k' [1, 12, 1, 64] f32 at [[K:[0-9]+]] (256 bytes), ops 3-14
// PLAN: result 'kr' [1, 12, 1, 64] f32 at [[K]] (256 bytes), ops 4-14, stored, view of 'k'
// PLAN: result 'kt' [4, 16, 1, 12] f32 at {{[0-9]+}} (192 bytes), ops 8-9
func.func @heads(%arg0: tensor<1x12x64xf32>) -> tensor<1x12x64xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x12x64xf32>) -> tensor<1x12x64xf32> loc("x")
  %none = "top.None"() : () -> none
  %wq = "top.Weight"() : () -> tensor<64x64xf32> loc("wq")
  %wk = "top.Weight"() : () -> tensor<64x64xf32> loc("wk")
  %wv = "top.Weight"() : () -> tensor<64x64xf32> loc("wv")
  %wo = "top.Weight"() : () -> tensor<64x64xf32> loc("wo")
  %q = "tpu.MatMul"(%x, %wq, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("q")
  %qr = "tpu.Reshape"(%q) : (tensor<1x12x64xf32>) -> tensor<1x12x4x16xf32> loc("qr")
  %qt = "tpu.Permute"(%qr) {order = [0, 2, 1, 3]} : (tensor<1x12x4x16xf32>) -> tensor<1x4x12x16xf32> loc("qt")
  %k = "tpu.MatMul"(%x, %wk, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("k")
  %kr = "tpu.Reshape"(%k) : (tensor<1x12x64xf32>) -> tensor<1x12x4x16xf32> loc("kr")
  %v = "tpu.MatMul"(%x, %wv, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("v")
  %vr = "tpu.Reshape"(%v) : (tensor<1x12x64xf32>) -> tensor<1x12x4x16xf32> loc("vr")
  %vt = "tpu.Permute"(%vr) {order = [0, 2, 1, 3]} : (tensor<1x12x4x16xf32>) -> tensor<1x4x12x16xf32> loc("vt")
  %kt = "tpu.Permute"(%kr) {order = [0, 2, 3, 1]} : (tensor<1x12x4x16xf32>) -> tensor<1x4x16x12xf32> loc("kt")
  %s = "tpu.MatMul"(%qt, %kt, %none) : (tensor<1x4x12x16xf32>, tensor<1x4x16x12xf32>, none) -> tensor<1x4x12x12xf32> loc("s")
  %p = "tpu.Softmax"(%s) {axis = 3 : i64} : (tensor<1x4x12x12xf32>) -> tensor<1x4x12x12xf32> loc("p")
  %c = "tpu.MatMul"(%p, %vt, %none) : (tensor<1x4x12x12xf32>, tensor<1x4x12x16xf32>, none) -> tensor<1x4x12x16xf32> loc("c")
  %ct = "tpu.Permute"(%c) {order = [0, 2, 1, 3]} : (tensor<1x4x12x16xf32>) -> tensor<1x12x4x16xf32> loc("ct")
  %cr = "tpu.Reshape"(%ct) : (tensor<1x12x4x16xf32>) -> tensor<1x12x64xf32> loc("cr")
  %o = "tpu.MatMul"(%cr, %wo, %none) : (tensor<1x12x64xf32>, tensor<64x64xf32>, none) -> tensor<1x12x64xf32> loc("o")
  return %o : tensor<1x12x64xf32>
}
