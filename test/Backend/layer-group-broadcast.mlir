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

// -----

// A mask built as a column times a row ([8, 1] * [B, 1, 8], a BERT
// extended attention mask) broadcasts both operands in the matrix view of
// its result: the column on the rows' lanes, the row across the lanes.
// The Mul joins the group of the scores it is added to.
// CHECK-LABEL: func.func @mask_outer_product
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Mul"
// CHECK-NEXT: "tpu.Add"
// PLAN: remark: {{.*}}layer group plan: 3 ops
// PLAN: input 'c' [1, 8, 1, 1] f32
// PLAN: input 'r' [2, 1, 1, 8] f32
// PLAN: result 'm' [2, 8, 1, 8] f32
func.func @mask_outer_product(%arg0: tensor<2x2x8x16xf32>, %arg1: tensor<1x1x8x1xf32>, %arg2: tensor<2x1x1x8xf32>) -> tensor<2x2x8x8xf32> {
  %q = "top.Input"(%arg0) : (tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32> loc("q")
  %c = "top.Input"(%arg1) : (tensor<1x1x8x1xf32>) -> tensor<1x1x8x1xf32> loc("c")
  %r = "top.Input"(%arg2) : (tensor<2x1x1x8xf32>) -> tensor<2x1x1x8xf32> loc("r")
  %none = "top.None"() : () -> none
  %kt = "top.Weight"() : () -> tensor<2x2x16x8xf32> loc("kt")
  %s = "tpu.MatMul"(%q, %kt, %none) : (tensor<2x2x8x16xf32>, tensor<2x2x16x8xf32>, none) -> tensor<2x2x8x8xf32> loc("s")
  %m = "tpu.Mul"(%c, %r) : (tensor<1x1x8x1xf32>, tensor<2x1x1x8xf32>) -> tensor<2x1x8x8xf32> loc("m")
  %a = "tpu.Add"(%s, %m) : (tensor<2x2x8x8xf32>, tensor<2x1x8x8xf32>) -> tensor<2x2x8x8xf32> loc("a")
  %p = "tpu.Softmax"(%a) {axis = 3 : i64} : (tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32> loc("p")
  return %p : tensor<2x2x8x8xf32>
}

// -----

// The first token of a sequence (a classifier's input) sits on lane 0 of
// its rows: the Slice is a copy within lanes of the result the group
// computes, not a reload of it from DDR; the Reshape is a view of its
// buffer.
// CHECK-LABEL: func.func @first_token
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Slice"
// CHECK-NEXT: "tpu.Reshape"
// CHECK-NEXT: "tpu.Active"
// PLAN: remark: {{.*}}layer group plan: 4 ops
// PLAN: result 'y' [1, 17, 1, 32] f32
// PLAN: result 't' [1, 1, 1, 32] f32 at [[T:[0-9]+]]
// PLAN: result 'f' [1, 1, 1, 32] f32 at [[T]] (128 bytes), ops 2-3, view of 't'
func.func @first_token(%arg0: tensor<1x17x32xf32>) -> (tensor<1x17x32xf32>, tensor<1x32xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x17x32xf32>) -> tensor<1x17x32xf32> loc("x")
  %none = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<32x32xf32> loc("w")
  %y = "tpu.MatMul"(%x, %w, %none) : (tensor<1x17x32xf32>, tensor<32x32xf32>, none) -> tensor<1x17x32xf32> loc("y")
  %t = "tpu.Slice"(%y) {offsets = [0, 0, 0], steps = [1, 1, 1]} : (tensor<1x17x32xf32>) -> tensor<1x1x32xf32> loc("t")
  %f = "tpu.Reshape"(%t) : (tensor<1x1x32xf32>) -> tensor<1x32xf32> loc("f")
  %o = "tpu.Active"(%f) {mode = "tanh"} : (tensor<1x32xf32>) -> tensor<1x32xf32> loc("o")
  return %y, %o : tensor<1x17x32xf32>, tensor<1x32xf32>
}

// -----

// A classifier head on the first token: the single row times a weight
// reads the weight as its tiled code lays it out, transposed ([10, 32],
// the outputs on lanes), so it stays in the group with the slice.
// CHECK-LABEL: func.func @first_token_head
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Slice"
// CHECK-NEXT: "tpu.Reshape"
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: tpu.Yield
// PLAN: remark: {{.*}}layer group plan: 4 ops
// PLAN: weight 'h' [1, 10, 1, 32] f32
func.func @first_token_head(%arg0: tensor<1x17x32xf32>) -> (tensor<1x17x32xf32>, tensor<1x10xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x17x32xf32>) -> tensor<1x17x32xf32> loc("x")
  %none = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<32x32xf32> loc("w")
  %h = "top.Weight"() : () -> tensor<32x10xf32> loc("h")
  %y = "tpu.MatMul"(%x, %w, %none) : (tensor<1x17x32xf32>, tensor<32x32xf32>, none) -> tensor<1x17x32xf32> loc("y")
  %t = "tpu.Slice"(%y) {offsets = [0, 0, 0], steps = [1, 1, 1]} : (tensor<1x17x32xf32>) -> tensor<1x1x32xf32> loc("t")
  %f = "tpu.Reshape"(%t) : (tensor<1x1x32xf32>) -> tensor<1x32xf32> loc("f")
  %o = "tpu.MatMul"(%f, %h, %none) : (tensor<1x32xf32>, tensor<32x10xf32>, none) -> tensor<1x10xf32> loc("o")
  return %y, %o : tensor<1x17x32xf32>, tensor<1x10xf32>
}
