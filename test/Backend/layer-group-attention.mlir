// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge" | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_pro" | FileCheck %s

// The core of attention (batched scores, softmax along the last axis, the
// weighted sum of values) stays in local memory in the matmul layout
// [heads, rows, 1, cols]: one group, whose only stored tensor is the result.
// CHECK-LABEL: func.func @attention
// CHECK: tpu.Group -> (tensor<1x4x12x16xf32>) {
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Softmax"
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: tpu.Yield
func.func @attention(%arg0: tensor<1x4x12x16xf32>, %arg1: tensor<1x4x16x12xf32>,
                     %arg2: tensor<1x4x12x16xf32>) -> tensor<1x4x12x16xf32> {
  %q = "top.Input"(%arg0) : (tensor<1x4x12x16xf32>) -> tensor<1x4x12x16xf32> loc("q")
  %k = "top.Input"(%arg1) : (tensor<1x4x16x12xf32>) -> tensor<1x4x16x12xf32> loc("k")
  %v = "top.Input"(%arg2) : (tensor<1x4x12x16xf32>) -> tensor<1x4x12x16xf32> loc("v")
  %none = "top.None"() : () -> none
  %s = "tpu.MatMul"(%q, %k, %none) : (tensor<1x4x12x16xf32>, tensor<1x4x16x12xf32>, none) -> tensor<1x4x12x12xf32> loc("s")
  %p = "tpu.Softmax"(%s) {axis = 3 : i64, divisor = 4.0 : f64} : (tensor<1x4x12x12xf32>) -> tensor<1x4x12x12xf32> loc("p")
  %o = "tpu.MatMul"(%p, %v, %none) : (tensor<1x4x12x12xf32>, tensor<1x4x12x16xf32>, none) -> tensor<1x4x12x16xf32> loc("o")
  return %o : tensor<1x4x12x16xf32>
}

// -----

// The output projection, residual add and LayerNorm of a transformer layer
// on [1, 12, 64]: the add follows the matmul's layout [1, 12, 1, 64] and
// the LayerNorm reduces along W.
// CHECK-LABEL: func.func @proj_add_norm
// CHECK: tpu.Group -> (tensor<1x12x64xf32>) {
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Add"
// CHECK-NEXT: "tpu.LayerNorm"
// CHECK-NEXT: tpu.Yield
func.func @proj_add_norm(%arg0: tensor<1x12x64xf32>, %arg1: tensor<1x12x64xf32>) -> tensor<1x12x64xf32> {
  %a = "top.Input"(%arg0) : (tensor<1x12x64xf32>) -> tensor<1x12x64xf32> loc("a")
  %x = "top.Input"(%arg1) : (tensor<1x12x64xf32>) -> tensor<1x12x64xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<64x64xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<64xf32> loc("b")
  %g = "top.Weight"() : () -> tensor<64xf32> loc("g")
  %be = "top.Weight"() : () -> tensor<64xf32> loc("be")
  %p = "tpu.MatMul"(%a, %w, %b) : (tensor<1x12x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<1x12x64xf32> loc("p")
  %s = "tpu.Add"(%p, %x) : (tensor<1x12x64xf32>, tensor<1x12x64xf32>) -> tensor<1x12x64xf32> loc("s")
  %n = "tpu.LayerNorm"(%s, %g, %be) {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<1x12x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x12x64xf32> loc("n")
  return %n : tensor<1x12x64xf32>
}

// -----

// The same core in F16: one matmul instruction sums all of K, so F16
// results round once, as the tiled code's do.
// CHECK-LABEL: func.func @attention_f16
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Softmax"
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: tpu.Yield
func.func @attention_f16(%arg0: tensor<1x4x12x16xf16>, %arg1: tensor<1x4x16x12xf16>,
                         %arg2: tensor<1x4x12x16xf16>) -> tensor<1x4x12x16xf16> {
  %q = "top.Input"(%arg0) : (tensor<1x4x12x16xf16>) -> tensor<1x4x12x16xf16> loc("q")
  %k = "top.Input"(%arg1) : (tensor<1x4x16x12xf16>) -> tensor<1x4x16x12xf16> loc("k")
  %v = "top.Input"(%arg2) : (tensor<1x4x12x16xf16>) -> tensor<1x4x12x16xf16> loc("v")
  %none = "top.None"() : () -> none
  %s = "tpu.MatMul"(%q, %k, %none) : (tensor<1x4x12x16xf16>, tensor<1x4x16x12xf16>, none) -> tensor<1x4x12x12xf16> loc("s")
  %p = "tpu.Softmax"(%s) {axis = 3 : i64, divisor = 4.0 : f64} : (tensor<1x4x12x12xf16>) -> tensor<1x4x12x12xf16> loc("p")
  %o = "tpu.MatMul"(%p, %v, %none) : (tensor<1x4x12x12xf16>, tensor<1x4x12x16xf16>, none) -> tensor<1x4x12x16xf16> loc("o")
  return %o : tensor<1x4x12x16xf16>
}

// -----

// In INT8: the matmuls accumulate in INT32 scratch and requantize per
// tensor; the casts around the F16 softmax follow the matmul layout.
// CHECK-LABEL: func.func @attention_int8
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.QuantCast"
// CHECK-NEXT: "tpu.Softmax"
// CHECK-NEXT: "tpu.QuantCast"
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: tpu.Yield
func.func @attention_int8(%arg0: tensor<1x4x12x16x!quant.uniform<i8:f32, 0.04>>, %arg1: tensor<1x4x16x12x!quant.uniform<i8:f32, 0.05>>,
                          %arg2: tensor<1x4x12x16x!quant.uniform<i8:f32, 0.03>>) -> tensor<1x4x12x16x!quant.uniform<i8:f32, 0.05>> {
  %q = "top.Input"(%arg0) : (tensor<1x4x12x16x!quant.uniform<i8:f32, 0.04>>) -> tensor<1x4x12x16x!quant.uniform<i8:f32, 0.04>> loc("q")
  %k = "top.Input"(%arg1) : (tensor<1x4x16x12x!quant.uniform<i8:f32, 0.05>>) -> tensor<1x4x16x12x!quant.uniform<i8:f32, 0.05>> loc("k")
  %v = "top.Input"(%arg2) : (tensor<1x4x12x16x!quant.uniform<i8:f32, 0.03>>) -> tensor<1x4x12x16x!quant.uniform<i8:f32, 0.03>> loc("v")
  %none = "top.None"() : () -> none
  %m0 = "top.Weight"() : () -> tensor<1x2xi32> loc("m0")
  %m1 = "top.Weight"() : () -> tensor<1x2xi32> loc("m1")
  %s = "tpu.MatMul"(%q, %k, %none, %m0) : (tensor<1x4x12x16x!quant.uniform<i8:f32, 0.04>>, tensor<1x4x16x12x!quant.uniform<i8:f32, 0.05>>, none, tensor<1x2xi32>) -> tensor<1x4x12x12x!quant.uniform<i8:f32, 0.2>> loc("s")
  %h = "tpu.QuantCast"(%s) : (tensor<1x4x12x12x!quant.uniform<i8:f32, 0.2>>) -> tensor<1x4x12x12xf16> loc("h")
  %p = "tpu.Softmax"(%h) {axis = 3 : i64, divisor = 4.0 : f64} : (tensor<1x4x12x12xf16>) -> tensor<1x4x12x12xf16> loc("p")
  %pq = "tpu.QuantCast"(%p) : (tensor<1x4x12x12xf16>) -> tensor<1x4x12x12x!quant.uniform<i8:f32, 0.0078125>> loc("pq")
  %o = "tpu.MatMul"(%pq, %v, %none, %m1) : (tensor<1x4x12x12x!quant.uniform<i8:f32, 0.0078125>>, tensor<1x4x12x16x!quant.uniform<i8:f32, 0.03>>, none, tensor<1x2xi32>) -> tensor<1x4x12x16x!quant.uniform<i8:f32, 0.05>> loc("o")
  return %o : tensor<1x4x12x16x!quant.uniform<i8:f32, 0.05>>
}
