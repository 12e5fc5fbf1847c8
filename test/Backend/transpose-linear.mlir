// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t.npz', w1=r.random((32, 128), np.float32), b1=r.random(128, np.float32), w2=r.random((128, 32), np.float32), b2=r.random(32, np.float32), wq=r.random((32, 96), np.float32), w=r.random((32, 32), np.float32))"
// RUN: sed s@WEIGHTS@%t.npz@ %s > %t.mlir
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-transpose-linear="chip=tpu_pro" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s
// RUN: tpuc-opt %t.mlir -split-input-file -tpu-transpose-linear="chip=tpu_pro" -tpu-layer-group="chip=tpu_pro" | FileCheck %s --check-prefix=GROUP

// An MLP over 8 tokens on 64 lanes: the hidden result is computed with its
// 128 features on the lanes (W1^T times the tokens as the transposed right
// operand), takes its bias as a column and the GELU there, the second layer
// reads it as its plain right operand and the identity brings the tokens
// back with the second bias, under the MLP's name. One group.
// CHECK-LABEL: func.func @mlp
// CHECK-DAG: %[[W2:.*]] = "top.Weight"() : () -> tensor<1x32x128xf32> loc("w2_transposed")
// CHECK-DAG: %[[I:.*]] = "top.Weight"() {tpu.data_movement} : () -> tensor<1x8x8xf32> loc("y_identity")
// CHECK-DAG: %[[B1:.*]] = "top.Weight"() : () -> tensor<1x128x1xf32> loc("b1_column")
// CHECK-DAG: %[[W1:.*]] = "top.Weight"() : () -> tensor<1x128x32xf32> loc("w1_transposed")
// CHECK-DAG: %[[B2:.*]] = "top.Weight"() : () -> tensor<32xf32> loc("b2")
// CHECK: %[[H:.*]] = "tpu.MatMul"(%[[W1]], %{{.*}}, %{{.*}}) <{do_relu = false, right_transpose = true}> : (tensor<1x128x32xf32>, tensor<1x8x32xf32>, none) -> tensor<1x128x8xf32> loc("h_transposed")
// CHECK: %[[HB:.*]] = "tpu.Add"(%[[H]], %[[B1]])
// CHECK: %[[A:.*]] = "tpu.Active"(%[[HB]]) <{mode = "gelu"}> : (tensor<1x128x8xf32>) -> tensor<1x128x8xf32> loc("a_transposed")
// CHECK: %[[Z:.*]] = "tpu.MatMul"(%[[W2]], %[[A]], %{{.*}}) <{do_relu = false, right_transpose = false}> : (tensor<1x32x128xf32>, tensor<1x128x8xf32>, none) -> tensor<1x32x8xf32> loc("y_transposed")
// CHECK: %[[Y:.*]] = "tpu.MatMul"(%[[I]], %[[Z]], %[[B2]]) <{do_relu = false, right_transpose = true}> : (tensor<1x8x8xf32>, tensor<1x32x8xf32>, tensor<32xf32>) -> tensor<1x8x32xf32> loc("y")
// CHECK: return %[[Y]]
// GROUP-LABEL: func.func @mlp
// GROUP: tpu.Group
// GROUP-NEXT: "tpu.MatMul"
// GROUP-NEXT: "tpu.Add"
// GROUP-NEXT: "tpu.Active"
// GROUP-NEXT: "tpu.MatMul"
// GROUP-NEXT: "tpu.MatMul"
// GROUP-NEXT: tpu.Yield
module attributes {top.weight_file = "WEIGHTS"} {
func.func @mlp(%arg0: tensor<1x8x32xf32>) -> tensor<1x8x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x8x32xf32>) -> tensor<1x8x32xf32> loc("x")
  %w1 = "top.Weight"() : () -> tensor<32x128xf32> loc("w1")
  %b1 = "top.Weight"() : () -> tensor<128xf32> loc("b1")
  %w2 = "top.Weight"() : () -> tensor<128x32xf32> loc("w2")
  %b2 = "top.Weight"() : () -> tensor<32xf32> loc("b2")
  %h = "tpu.MatMul"(%x, %w1, %b1) : (tensor<1x8x32xf32>, tensor<32x128xf32>, tensor<128xf32>) -> tensor<1x8x128xf32> loc("h")
  %a = "tpu.Active"(%h) {mode = "gelu"} : (tensor<1x8x128xf32>) -> tensor<1x8x128xf32> loc("a")
  %y = "tpu.MatMul"(%a, %w2, %b2) : (tensor<1x8x128xf32>, tensor<128x32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32> loc("y")
  return %y : tensor<1x8x32xf32>
}
}

// -----
// A layer on its own (its result has two users) goes back right after.
// CHECK-LABEL: func.func @single
// CHECK: %[[Q:.*]] = "tpu.MatMul"(%{{.*}}, %{{.*}}, %{{.*}}) <{do_relu = false, right_transpose = true}> : (tensor<1x96x32xf32>, tensor<1x8x32xf32>, none) -> tensor<1x96x8xf32> loc("q_transposed")
// CHECK: "tpu.MatMul"(%{{.*}}, %[[Q]], %{{.*}}) <{do_relu = true, right_transpose = true}> : (tensor<1x8x8xf32>, tensor<1x96x8xf32>, none) -> tensor<1x8x96xf32> loc("q")
module attributes {top.weight_file = "WEIGHTS"} {
func.func @single(%arg0: tensor<1x8x32xf32>) -> (tensor<1x8x96xf32>, tensor<1x8x96xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x8x32xf32>) -> tensor<1x8x32xf32> loc("x")
  %none = "top.None"() : () -> none
  %wq = "top.Weight"() : () -> tensor<32x96xf32> loc("wq")
  %q = "tpu.MatMul"(%x, %wq, %none) {do_relu = true} : (tensor<1x8x32xf32>, tensor<32x96xf32>, none) -> tensor<1x8x96xf32> loc("q")
  %a = "tpu.Active"(%q) {mode = "gelu"} : (tensor<1x8x96xf32>) -> tensor<1x8x96xf32> loc("a")
  return %q, %a : tensor<1x8x96xf32>, tensor<1x8x96xf32>
}
}

// -----
// With 64 tokens on the lanes the plain layer is the cheaper one.
// CHECK-LABEL: func.func @many_rows
// CHECK: "tpu.MatMul"(%{{.*}}, %{{.*}}, %{{.*}}) <{do_relu = false, right_transpose = false}> : (tensor<1x64x32xf32>, tensor<32x32xf32>, none) -> tensor<1x64x32xf32> loc("y")
// CHECK-NOT: tpu.MatMul
module attributes {top.weight_file = "WEIGHTS"} {
func.func @many_rows(%arg0: tensor<1x64x32xf32>) -> tensor<1x64x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x64x32xf32>) -> tensor<1x64x32xf32> loc("x")
  %none = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<32x32xf32> loc("w")
  %y = "tpu.MatMul"(%x, %w, %none) : (tensor<1x64x32xf32>, tensor<32x32xf32>, none) -> tensor<1x64x32xf32> loc("y")
  return %y : tensor<1x64x32xf32>
}
}

// -----
// A batch of 2 sequences of 8 tokens read by a head split (which keeps the
// batch): plain, each batch fills 8 of the 64 lanes. Transposed, the weight
// and the identity have no batch dims (the matmul shares them by every
// batch), and the pair computes in a group.
// CHECK-LABEL: func.func @batched
// CHECK-DAG: %[[I:.*]] = "top.Weight"() {tpu.data_movement} : () -> tensor<8x8xf32> loc("q_identity")
// CHECK-DAG: %[[W:.*]] = "top.Weight"() : () -> tensor<32x32xf32> loc("w_transposed")
// CHECK: %[[Q:.*]] = "tpu.MatMul"(%[[W]], %{{.*}}, %{{.*}}) <{do_relu = false, right_transpose = true}> : (tensor<32x32xf32>, tensor<2x8x32xf32>, none) -> tensor<2x32x8xf32> loc("q_transposed")
// CHECK: "tpu.MatMul"(%[[I]], %[[Q]], %{{.*}}) <{do_relu = false, right_transpose = true}> : (tensor<8x8xf32>, tensor<2x32x8xf32>, none) -> tensor<2x8x32xf32> loc("q")
// GROUP-LABEL: func.func @batched
// GROUP: tpu.Group
// GROUP-NEXT: "tpu.MatMul"
// GROUP-NEXT: "tpu.MatMul"
module attributes {top.weight_file = "WEIGHTS"} {
func.func @batched(%arg0: tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x8x32xf32>) -> tensor<2x8x32xf32> loc("x")
  %none = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<32x32xf32> loc("w")
  %q = "tpu.MatMul"(%x, %w, %none) : (tensor<2x8x32xf32>, tensor<32x32xf32>, none) -> tensor<2x8x32xf32> loc("q")
  %h = "tpu.Reshape"(%q) : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32> loc("h")
  %a = "tpu.Active"(%h) {mode = "tanh"} : (tensor<2x8x2x16xf32>) -> tensor<2x8x2x16xf32> loc("a")
  return %a : tensor<2x8x2x16xf32>
}
}

// -----
// The same batch read by a residual add: a group folds the batch into 16
// rows on the lanes, cheaper than the transposed pair.
// CHECK-LABEL: func.func @batched_folds
// CHECK: "tpu.MatMul"(%{{.*}}, %{{.*}}, %{{.*}}) <{do_relu = false, right_transpose = false}> : (tensor<2x8x32xf32>, tensor<32x32xf32>, none) -> tensor<2x8x32xf32> loc("y")
// CHECK-NOT: tpu.MatMul
module attributes {top.weight_file = "WEIGHTS"} {
func.func @batched_folds(%arg0: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x8x32xf32>) -> tensor<2x8x32xf32> loc("x")
  %none = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<32x32xf32> loc("w")
  %y = "tpu.MatMul"(%x, %w, %none) : (tensor<2x8x32xf32>, tensor<32x32xf32>, none) -> tensor<2x8x32xf32> loc("y")
  %r = "tpu.Add"(%y, %x) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32> loc("r")
  return %r : tensor<2x8x32xf32>
}
}
