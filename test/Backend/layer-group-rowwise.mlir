// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge" | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_pro" | FileCheck %s

// A residual add and the LayerNorm after it compute row by row: they group
// in the rows view [1, C, H, 768] (in chunks of rows on tpu_edge, where the
// whole tensors do not fit), so the sum stays in local memory.
// CHECK-LABEL: func.func @add_norm
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.Add"
// CHECK-NEXT: "tpu.LayerNorm"
// CHECK-NEXT: tpu.Yield
func.func @add_norm(%arg0: tensor<1x128x768xf32>, %arg1: tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  %a = "top.Input"(%arg0) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> loc("a")
  %x = "top.Input"(%arg1) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> loc("x")
  %g = "top.Weight"() : () -> tensor<768xf32> loc("g")
  %be = "top.Weight"() : () -> tensor<768xf32> loc("be")
  %s = "tpu.Add"(%a, %x) : (tensor<1x128x768xf32>, tensor<1x128x768xf32>) -> tensor<1x128x768xf32> loc("s")
  %n = "tpu.LayerNorm"(%s, %g, %be) {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32> loc("n")
  return %n : tensor<1x128x768xf32>
}

// -----

// The F16 island of an INT8 attention's softmax: dequantize, softmax along
// the last axis, quantize. All three group in the rows view of the 4-D
// scores, so neither F16 tensor reaches DDR.
// CHECK-LABEL: func.func @int8_softmax_island
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.QuantCast"
// CHECK-NEXT: "tpu.Softmax"
// CHECK-NEXT: "tpu.QuantCast"
// CHECK-NEXT: tpu.Yield
func.func @int8_softmax_island(%arg0: tensor<1x12x128x128x!quant.uniform<i8:f32, 0.05>>) -> tensor<1x12x128x128x!quant.uniform<i8:f32, 0.0078125>> {
  %s = "top.Input"(%arg0) : (tensor<1x12x128x128x!quant.uniform<i8:f32, 0.05>>) -> tensor<1x12x128x128x!quant.uniform<i8:f32, 0.05>> loc("s")
  %h = "tpu.QuantCast"(%s) : (tensor<1x12x128x128x!quant.uniform<i8:f32, 0.05>>) -> tensor<1x12x128x128xf16> loc("h")
  %p = "tpu.Softmax"(%h) {axis = 3 : i64, divisor = 8.0 : f64} : (tensor<1x12x128x128xf16>) -> tensor<1x12x128x128xf16> loc("p")
  %q = "tpu.QuantCast"(%p) : (tensor<1x12x128x128xf16>) -> tensor<1x12x128x128x!quant.uniform<i8:f32, 0.0078125>> loc("q")
  return %q : tensor<1x12x128x128x!quant.uniform<i8:f32, 0.0078125>>
}

// -----

// An INT8 residual add of rank 3 and the F16 LayerNorm between casts after
// it: one rows-view group.
// CHECK-LABEL: func.func @int8_add_norm
// CHECK: tpu.Group
// CHECK-NEXT: "tpu.Add"
// CHECK-NEXT: "tpu.QuantCast"
// CHECK-NEXT: "tpu.LayerNorm"
// CHECK-NEXT: "tpu.QuantCast"
// CHECK-NEXT: tpu.Yield
func.func @int8_add_norm(%arg0: tensor<1x128x768x!quant.uniform<i8:f32, 0.03>>, %arg1: tensor<1x128x768x!quant.uniform<i8:f32, 0.04>>) -> tensor<1x128x768x!quant.uniform<i8:f32, 0.03>> {
  %a = "top.Input"(%arg0) : (tensor<1x128x768x!quant.uniform<i8:f32, 0.03>>) -> tensor<1x128x768x!quant.uniform<i8:f32, 0.03>> loc("a")
  %x = "top.Input"(%arg1) : (tensor<1x128x768x!quant.uniform<i8:f32, 0.04>>) -> tensor<1x128x768x!quant.uniform<i8:f32, 0.04>> loc("x")
  %g = "top.Weight"() : () -> tensor<768xf16> loc("g")
  %be = "top.Weight"() : () -> tensor<768xf16> loc("be")
  %s = "tpu.Add"(%a, %x) : (tensor<1x128x768x!quant.uniform<i8:f32, 0.03>>, tensor<1x128x768x!quant.uniform<i8:f32, 0.04>>) -> tensor<1x128x768x!quant.uniform<i8:f32, 0.05>> loc("s")
  %h = "tpu.QuantCast"(%s) : (tensor<1x128x768x!quant.uniform<i8:f32, 0.05>>) -> tensor<1x128x768xf16> loc("h")
  %n = "tpu.LayerNorm"(%h, %g, %be) {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<1x128x768xf16>, tensor<768xf16>, tensor<768xf16>) -> tensor<1x128x768xf16> loc("n")
  %q = "tpu.QuantCast"(%n) : (tensor<1x128x768xf16>) -> tensor<1x128x768x!quant.uniform<i8:f32, 0.03>> loc("q")
  return %q : tensor<1x128x768x!quant.uniform<i8:f32, 0.03>>
}
