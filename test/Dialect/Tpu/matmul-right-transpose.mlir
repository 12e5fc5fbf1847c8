// RUN: tpuc-opt %s -split-input-file -canonicalize | FileCheck %s

// Attention's K^T: the head split's Permute [0, 2, 3, 1] becomes [0, 2, 1, 3]
// (each token's row stays in its lane) and the scores read K through the
// matmul's transposed right operand.
// CHECK-LABEL: func.func @scores
// CHECK: %[[KT:.*]] = "tpu.Permute"(%{{.*}}) <{order = [0, 2, 1, 3]}> : (tensor<1x12x4x16xf32>) -> tensor<1x4x12x16xf32>
// CHECK: "tpu.MatMul"(%{{.*}}, %[[KT]], %{{.*}}) <{do_relu = false, right_transpose = true}> : (tensor<1x4x12x16xf32>, tensor<1x4x12x16xf32>, none) -> tensor<1x4x12x12xf32>
// CHECK-NOT: order = [0, 2, 3, 1]
func.func @scores(%arg0: tensor<1x4x12x16xf32>, %arg1: tensor<1x12x4x16xf32>) -> tensor<1x4x12x12xf32> {
  %q = "top.Input"(%arg0) : (tensor<1x4x12x16xf32>) -> tensor<1x4x12x16xf32>
  %k = "top.Input"(%arg1) : (tensor<1x12x4x16xf32>) -> tensor<1x12x4x16xf32>
  %none = "top.None"() : () -> none
  %kt = "tpu.Permute"(%k) {order = [0, 2, 3, 1]} : (tensor<1x12x4x16xf32>) -> tensor<1x4x16x12xf32>
  %s = "tpu.MatMul"(%q, %kt, %none) : (tensor<1x4x12x16xf32>, tensor<1x4x16x12xf32>, none) -> tensor<1x4x12x12xf32>
  return %s : tensor<1x4x12x12xf32>
}

// -----

// A plain swap of the last two dims vanishes.
// CHECK-LABEL: func.func @swap
// CHECK-NOT: tpu.Permute
// CHECK: "tpu.MatMul"(%{{.*}}, %{{.*}}, %{{.*}}) <{do_relu = false, right_transpose = true}> : (tensor<2x12x16xf32>, tensor<2x12x16xf32>, none) -> tensor<2x12x12xf32>
func.func @swap(%arg0: tensor<2x12x16xf32>, %arg1: tensor<2x12x16xf32>) -> tensor<2x12x12xf32> {
  %q = "top.Input"(%arg0) : (tensor<2x12x16xf32>) -> tensor<2x12x16xf32>
  %k = "top.Input"(%arg1) : (tensor<2x12x16xf32>) -> tensor<2x12x16xf32>
  %none = "top.None"() : () -> none
  %kt = "tpu.Permute"(%k) {order = [0, 2, 1]} : (tensor<2x12x16xf32>) -> tensor<2x16x12xf32>
  %s = "tpu.MatMul"(%q, %kt, %none) : (tensor<2x12x16xf32>, tensor<2x16x12xf32>, none) -> tensor<2x12x12xf32>
  return %s : tensor<2x12x12xf32>
}

// -----

// A Permute keeping the innermost dim in place stays: folding it would move
// that dim instead.
// CHECK-LABEL: func.func @outer
// CHECK: "tpu.Permute"{{.*}}order = [0, 2, 1, 3]
// CHECK: "tpu.MatMul"{{.*}}right_transpose = false
func.func @outer(%arg0: tensor<1x4x12x16xf32>, %arg1: tensor<1x16x4x12xf32>) -> tensor<1x4x12x12xf32> {
  %q = "top.Input"(%arg0) : (tensor<1x4x12x16xf32>) -> tensor<1x4x12x16xf32>
  %k = "top.Input"(%arg1) : (tensor<1x16x4x12xf32>) -> tensor<1x16x4x12xf32>
  %none = "top.None"() : () -> none
  %kt = "tpu.Permute"(%k) {order = [0, 2, 1, 3]} : (tensor<1x16x4x12xf32>) -> tensor<1x4x16x12xf32>
  %s = "tpu.MatMul"(%q, %kt, %none) : (tensor<1x4x12x16xf32>, tensor<1x4x16x12xf32>, none) -> tensor<1x4x12x12xf32>
  return %s : tensor<1x4x12x12xf32>
}

// -----

// Scaled dot-product attention scales K^T by one number: the scale moves
// before the transpose, which then folds.
// CHECK-LABEL: func.func @scaled
// CHECK-NOT: tpu.Permute
// CHECK: %[[S:.*]] = "tpu.Mul"(%{{.*}}, %{{.*}}) <{do_relu = false}> : (tensor<1x2x17x16xf32>, tensor<1xf32>) -> tensor<1x2x17x16xf32>
// CHECK: "tpu.MatMul"(%{{.*}}, %[[S]], %{{.*}}) <{do_relu = false, right_transpose = true}>
func.func @scaled(%arg0: tensor<1x2x17x16xf32>, %arg1: tensor<1x2x17x16xf32>) -> tensor<1x2x17x17xf32> {
  %q = "top.Input"(%arg0) : (tensor<1x2x17x16xf32>) -> tensor<1x2x17x16xf32>
  %k = "top.Input"(%arg1) : (tensor<1x2x17x16xf32>) -> tensor<1x2x17x16xf32>
  %c = "top.Weight"() : () -> tensor<1xf32> loc("c")
  %none = "top.None"() : () -> none
  %kt = "tpu.Permute"(%k) {order = [0, 1, 3, 2]} : (tensor<1x2x17x16xf32>) -> tensor<1x2x16x17xf32>
  %ks = "tpu.Mul"(%kt, %c) : (tensor<1x2x16x17xf32>, tensor<1xf32>) -> tensor<1x2x16x17xf32>
  %s = "tpu.MatMul"(%q, %ks, %none) : (tensor<1x2x17x16xf32>, tensor<1x2x16x17xf32>, none) -> tensor<1x2x17x17xf32>
  return %s : tensor<1x2x17x17xf32>
}

// -----

// With a head split left, the scale stays after it, computing in the
// layout the scores read (a layer group holds a scale before the split in
// a layout the split cannot take).
// CHECK-LABEL: func.func @scaled_heads
// CHECK: %[[KT:.*]] = "tpu.Permute"(%{{.*}}) <{order = [0, 2, 1, 3]}> : (tensor<1x12x4x16xf32>) -> tensor<1x4x12x16xf32>
// CHECK: %[[S:.*]] = "tpu.Mul"(%[[KT]], %{{.*}}) <{do_relu = false}> : (tensor<1x4x12x16xf32>, tensor<f32>) -> tensor<1x4x12x16xf32>
// CHECK: "tpu.MatMul"(%{{.*}}, %[[S]], %{{.*}}) <{do_relu = false, right_transpose = true}>
// CHECK-NOT: order = [0, 2, 3, 1]
func.func @scaled_heads(%arg0: tensor<1x4x12x16xf32>, %arg1: tensor<1x12x4x16xf32>) -> tensor<1x4x12x12xf32> {
  %q = "top.Input"(%arg0) : (tensor<1x4x12x16xf32>) -> tensor<1x4x12x16xf32>
  %k = "top.Input"(%arg1) : (tensor<1x12x4x16xf32>) -> tensor<1x12x4x16xf32>
  %c = "top.Weight"() : () -> tensor<f32> loc("c")
  %none = "top.None"() : () -> none
  %kt = "tpu.Permute"(%k) {order = [0, 2, 3, 1]} : (tensor<1x12x4x16xf32>) -> tensor<1x4x16x12xf32>
  %ks = "tpu.Mul"(%kt, %c) : (tensor<1x4x16x12xf32>, tensor<f32>) -> tensor<1x4x16x12xf32>
  %s = "tpu.MatMul"(%q, %ks, %none) : (tensor<1x4x12x16xf32>, tensor<1x4x16x12xf32>, none) -> tensor<1x4x12x12xf32>
  return %s : tensor<1x4x12x12xf32>
}

// -----

// INT8 attention whose scores compute in F16 casts K after its head split:
// the per-tensor cast commutes with the Permute too, so it stays after the
// split that remains and the scores read K transposed.
// CHECK-LABEL: func.func @cast_heads
// CHECK: %[[KT:.*]] = "tpu.Permute"(%{{.*}}) <{order = [0, 2, 1, 3]}> : (tensor<1x12x4x16x!quant.uniform<i8:f32, 1.250000e-01:3>>) -> tensor<1x4x12x16x!quant.uniform<i8:f32, 1.250000e-01:3>>
// CHECK: %[[C:.*]] = "tpu.QuantCast"(%[[KT]]) : (tensor<1x4x12x16x!quant.uniform<i8:f32, 1.250000e-01:3>>) -> tensor<1x4x12x16xf16>
// CHECK: "tpu.MatMul"(%{{.*}}, %[[C]], %{{.*}}) <{do_relu = false, right_transpose = true}>
// CHECK-NOT: order = [0, 2, 3, 1]
func.func @cast_heads(%arg0: tensor<1x4x12x16xf16>, %arg1: tensor<1x12x4x16x!quant.uniform<i8:f32, 0.125:3>>) -> tensor<1x4x12x12xf16> {
  %q = "top.Input"(%arg0) : (tensor<1x4x12x16xf16>) -> tensor<1x4x12x16xf16>
  %k = "top.Input"(%arg1) : (tensor<1x12x4x16x!quant.uniform<i8:f32, 0.125:3>>) -> tensor<1x12x4x16x!quant.uniform<i8:f32, 0.125:3>>
  %none = "top.None"() : () -> none
  %kt = "tpu.Permute"(%k) {order = [0, 2, 3, 1]} : (tensor<1x12x4x16x!quant.uniform<i8:f32, 0.125:3>>) -> tensor<1x4x16x12x!quant.uniform<i8:f32, 0.125:3>>
  %kf = "tpu.QuantCast"(%kt) : (tensor<1x4x16x12x!quant.uniform<i8:f32, 0.125:3>>) -> tensor<1x4x16x12xf16>
  %s = "tpu.MatMul"(%q, %kf, %none) : (tensor<1x4x12x16xf16>, tensor<1x4x16x12xf16>, none) -> tensor<1x4x12x12xf16>
  return %s : tensor<1x4x12x12xf16>
}

// -----

// In INT8 the scale is a table lookup, which commutes with the Permute as
// the Mul does.
!q = !quant.uniform<i8:f32, 0.05>
!s = !quant.uniform<i8:f32, 0.02>
!o = !quant.uniform<i8:f32, 0.1>
// CHECK-LABEL: func.func @scaled_lut
// CHECK-NOT: tpu.Permute
// CHECK: %[[S:.*]] = "tpu.Lut"(%{{.*}}, %{{.*}}) : (tensor<1x2x17x16x!quant.uniform<i8:f32, 5.000000e-02>>, tensor<256xi8>) -> tensor<1x2x17x16x!quant.uniform<i8:f32, 2.000000e-02>>
// CHECK: "tpu.MatMul"(%{{.*}}, %[[S]], %{{.*}}, %{{.*}}) <{do_relu = false, right_transpose = true}>
func.func @scaled_lut(%q: tensor<1x2x17x16x!q>, %k: tensor<1x2x17x16x!q>) -> tensor<1x2x17x17x!o> {
  %t = "top.Weight"() : () -> tensor<256xi8> loc("t")
  %rq = "top.Weight"() : () -> tensor<1x2xi32> loc("rq")
  %none = "top.None"() : () -> none
  %kt = "tpu.Permute"(%k) {order = [0, 1, 3, 2]} : (tensor<1x2x17x16x!q>) -> tensor<1x2x16x17x!q>
  %ks = "tpu.Lut"(%kt, %t) : (tensor<1x2x16x17x!q>, tensor<256xi8>) -> tensor<1x2x16x17x!s>
  %s = "tpu.MatMul"(%q, %ks, %none, %rq) : (tensor<1x2x17x16x!q>, tensor<1x2x16x17x!s>, none, tensor<1x2xi32>) -> tensor<1x2x17x17x!o>
  return %s : tensor<1x2x17x17x!o>
}
