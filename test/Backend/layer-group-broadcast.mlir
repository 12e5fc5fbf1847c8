// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge" | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_pro" | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_pro print-plan=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAN

// An attention mask added to the scores of a batch of sequences broadcasts
// over the heads: in the matrix view the group holds it as one matrix per
// sequence, [2, 8, 1, 8], beside the scores' [4, 8, 1, 8], and the add
// joins the group of the matmul.
// CHECK-LABEL: func.func @mask_per_sequence
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Add"
// PLAN: remark: {{.*}}layer group plan: 2 ops
// PLAN: input 'm' [2, 8, 1, 8] f32
func.func @mask_per_sequence(%arg0: tensor<2x2x8x16xf32>, %arg1: tensor<2x1x8x8xf32>) -> tensor<2x2x8x8xf32> {
  %q = "top.Input"(%arg0) : (tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> loc("q")
  %m = "top.Input"(%arg1) : (tensor<2x1x8x8xf32>) -> tensor<2x1x8x8xf32> loc("m")
  %none = "top.None"() : () -> none
  %kt = "top.Weight"() : () -> tensor<2x2x16x8xf32> loc("kt")
  %s = "tpu.MatMul"(%q, %kt, %none) : (tensor<2x2x8x16xf32>, tensor<2x2x16x8xf32>, none) -> tensor<2x2x8x8xf32> loc("s")
  %a = "tpu.Add"(%s, %m) : (tensor<2x2x8x8xf32>, tensor<2x1x8x8xf32>) -> tensor<2x2x8x8xf32> loc("a")
  %p = "tpu.Softmax"(%a) {axis = 3 : i64} : (tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32> loc("p")
  return %p : tensor<2x2x8x8xf32>
}

// -----

// A mask shared by every sequence and head, [8, 1, 8] ([1, 8, 1, 8]).
// CHECK-LABEL: func.func @mask_shared
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Add"
// PLAN: remark: {{.*}}layer group plan: 2 ops
// PLAN: input 'm' [1, 8, 1, 8] f32
func.func @mask_shared(%arg0: tensor<2x2x8x16xf32>, %arg1: tensor<1x1x8x8xf32>) -> tensor<2x2x8x8xf32> {
  %q = "top.Input"(%arg0) : (tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> loc("q")
  %m = "top.Input"(%arg1) : (tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> loc("m")
  %none = "top.None"() : () -> none
  %kt = "top.Weight"() : () -> tensor<2x2x16x8xf32> loc("kt")
  %s = "tpu.MatMul"(%q, %kt, %none) : (tensor<2x2x8x16xf32>, tensor<2x2x16x8xf32>, none) -> tensor<2x2x8x8xf32> loc("s")
  %a = "tpu.Add"(%s, %m) : (tensor<2x2x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<2x2x8x8xf32> loc("a")
  %p = "tpu.Softmax"(%a) {axis = 3 : i64} : (tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32> loc("p")
  return %p : tensor<2x2x8x8xf32>
}

// -----

// Columns sliced from a matmul's result keep their rows' lanes: copies
// within lanes, so the split of a fused Q/K/V projection stays in the
// group of the projection and the matmuls after it.
// CHECK-LABEL: func.func @column_slices
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Slice"
// CHECK-NEXT: "tpu.Slice"
// CHECK-NEXT: "tpu.Add"
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: tpu.Yield
func.func @column_slices(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %x = "top.Input"(%arg0) : (tensor<16x32xf32>) -> tensor<16x32xf32> loc("x")
  %none = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<32x64xf32> loc("w")
  %w2 = "top.Weight"() : () -> tensor<32x32xf32> loc("w2")
  %y = "tpu.MatMul"(%x, %w, %none) : (tensor<16x32xf32>, tensor<32x64xf32>, none) -> tensor<16x64xf32> loc("y")
  %a = "tpu.Slice"(%y) {offsets = [0, 0], steps = [1, 1]} : (tensor<16x64xf32>) -> tensor<16x32xf32> loc("a")
  %b = "tpu.Slice"(%y) {offsets = [0, 32], steps = [1, 1]} : (tensor<16x64xf32>) -> tensor<16x32xf32> loc("b")
  %c = "tpu.Add"(%a, %b) : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32> loc("c")
  %o = "tpu.MatMul"(%c, %w2, %none) : (tensor<16x32xf32>, tensor<32x32xf32>, none) -> tensor<16x32xf32> loc("o")
  return %o : tensor<16x32xf32>
}

// -----

// Slices of a tensor the group does not compute load only the columns
// they pick: no buffer holds the whole input.
// CHECK-LABEL: func.func @input_slices
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.Slice"
// CHECK-NEXT: "tpu.Slice"
// CHECK-NEXT: "tpu.Add"
// CHECK-NEXT: "tpu.MatMul"
// PLAN: remark: {{.*}}layer group plan: 4 ops
// PLAN-NOT: input
// PLAN: result 'a' [1, 16, 1, 32] f32
// PLAN-NOT: input
// PLAN: result 'b' [1, 16, 1, 32] f32
// PLAN-NOT: input
// PLAN: estimated
func.func @input_slices(%arg0: tensor<16x64xf32>) -> tensor<16x32xf32> {
  %y = "top.Input"(%arg0) : (tensor<16x64xf32>) -> tensor<16x64xf32> loc("y")
  %none = "top.None"() : () -> none
  %w2 = "top.Weight"() : () -> tensor<32x32xf32> loc("w2")
  %a = "tpu.Slice"(%y) {offsets = [0, 0], steps = [1, 1]} : (tensor<16x64xf32>) -> tensor<16x32xf32> loc("a")
  %b = "tpu.Slice"(%y) {offsets = [0, 32], steps = [1, 1]} : (tensor<16x64xf32>) -> tensor<16x32xf32> loc("b")
  %c = "tpu.Add"(%a, %b) : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32> loc("c")
  %o = "tpu.MatMul"(%c, %w2, %none) : (tensor<16x32xf32>, tensor<32x32xf32>, none) -> tensor<16x32xf32> loc("o")
  return %o : tensor<16x32xf32>
}
