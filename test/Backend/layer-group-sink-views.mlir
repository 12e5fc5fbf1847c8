// RUN: tpuc-opt %s -tpu-layer-group="chip=tpu_edge" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s
// RUN: tpuc-opt %s -tpu-layer-group="chip=tpu_pro" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=PRO

// BERT-base's Q and K projections in F16 (768x768 weights, too big for a
// group on tpu_edge, so each runs on its own): the head split of Q, in
// program order before the K projection, moves down to the scores' matmul
// and joins its group with K's; the projections stay apart.
// CHECK-LABEL: func.func @qk_scores
// CHECK: "tpu.MatMul"
// CHECK-NOT: tpu.Permute
// CHECK: "tpu.MatMul"
// CHECK: tpu.Group -> (tensor<1x12x128x128xf16>) {
// CHECK-DAG: "tpu.Permute"{{.*}}loc("qp")
// CHECK-DAG: "tpu.Permute"{{.*}}loc("kp")
// CHECK: "tpu.MatMul"{{.*}}loc("s")
// CHECK-NEXT: tpu.Yield
// On tpu_pro the projections fit a group: nothing moves.
// PRO-LABEL: func.func @qk_scores
// PRO: "tpu.MatMul"{{.*}}loc("q")
// PRO: "tpu.Permute"{{.*}}loc("qp")
// PRO: "tpu.MatMul"{{.*}}loc("k")
func.func @qk_scores(%arg0: tensor<1x128x768xf16>) -> tensor<1x12x128x128xf16> {
  %x = "top.Input"(%arg0) : (tensor<1x128x768xf16>) -> tensor<1x128x768xf16> loc("x")
  %none = "top.None"() : () -> none
  %wq = "top.Weight"() : () -> tensor<768x768xf16> loc("wq")
  %q = "tpu.MatMul"(%x, %wq, %none) : (tensor<1x128x768xf16>, tensor<768x768xf16>, none) -> tensor<1x128x768xf16> loc("q")
  %qr = "tpu.Reshape"(%q) : (tensor<1x128x768xf16>) -> tensor<1x128x12x64xf16> loc("qr")
  %qp = "tpu.Permute"(%qr) {order = [0, 2, 1, 3]} : (tensor<1x128x12x64xf16>) -> tensor<1x12x128x64xf16> loc("qp")
  %wk = "top.Weight"() : () -> tensor<768x768xf16> loc("wk")
  %k = "tpu.MatMul"(%x, %wk, %none) : (tensor<1x128x768xf16>, tensor<768x768xf16>, none) -> tensor<1x128x768xf16> loc("k")
  %kr = "tpu.Reshape"(%k) : (tensor<1x128x768xf16>) -> tensor<1x128x12x64xf16> loc("kr")
  %kp = "tpu.Permute"(%kr) {order = [0, 2, 3, 1]} : (tensor<1x128x12x64xf16>) -> tensor<1x12x64x128xf16> loc("kp")
  %s = "tpu.MatMul"(%qp, %kp, %none) : (tensor<1x12x128x64xf16>, tensor<1x12x64x128xf16>, none) -> tensor<1x12x128x128xf16> loc("s")
  return %s : tensor<1x12x128x128xf16>
}
