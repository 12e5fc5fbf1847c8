// RUN: tpuc-opt %s -split-input-file -canonicalize -mlir-print-debuginfo | FileCheck %s
// An INT8 tensor dequantized, activated in float and quantized again is one
// tpu.Lut of the input (its table a new weight), named as the last cast.

!qi = !quant.uniform<i8:f32, 0.05>
!qo = !quant.uniform<i8:f32, 0.04:-3>
module attributes {top.weight_file = "island_weights.npz"} {
// CHECK-LABEL: func.func @gelu_island
// CHECK: %[[T:.*]] = "top.Weight"() : () -> tensor<256xi8> loc(#[[LT:loc[0-9]*]])
// CHECK-NEXT: %[[L:.*]] = "tpu.Lut"(%arg0, %[[T]]) {{.*}} loc(#[[LL:loc[0-9]*]])
// CHECK-NEXT: return %[[L]]
// CHECK-DAG: #[[LT]] = loc("out_table")
// CHECK-DAG: #[[LL]] = loc("out")
func.func @gelu_island(%x: tensor<2x8x!qi>) -> tensor<2x8x!qo> {
  %0 = "tpu.QuantCast"(%x) : (tensor<2x8x!qi>) -> tensor<2x8xf16> loc("deq")
  %1 = "tpu.Active"(%0) <{mode = "gelu"}> : (tensor<2x8xf16>) -> tensor<2x8xf16> loc("gelu")
  %2 = "tpu.QuantCast"(%1) : (tensor<2x8xf16>) -> tensor<2x8x!qo> loc("out")
  return %2 : tensor<2x8x!qo>
}
}

// -----
!qi = !quant.uniform<i8:f32, 0.05>
module attributes {top.weight_file = "island_weights.npz"} {
// The float activation is used elsewhere too: the island stays.
// CHECK-LABEL: func.func @shared_island
// CHECK-NOT: tpu.Lut
// CHECK: tpu.Active
func.func @shared_island(%x: tensor<2x8x!qi>) -> (tensor<2x8x!qi>, tensor<2x8xf16>) {
  %0 = "tpu.QuantCast"(%x) : (tensor<2x8x!qi>) -> tensor<2x8xf16> loc("deq")
  %1 = "tpu.Active"(%0) <{mode = "gelu"}> : (tensor<2x8xf16>) -> tensor<2x8xf16> loc("gelu")
  %2 = "tpu.QuantCast"(%1) : (tensor<2x8xf16>) -> tensor<2x8x!qi> loc("out")
  return %2, %1 : tensor<2x8x!qi>, tensor<2x8xf16>
}
}

// -----
!qi = !quant.uniform<i8:f32, 0.05>
!qo = !quant.uniform<i8:f32, 0.04:-3>
module attributes {top.weight_file = "island_weights.npz"} {
// A quantizing cast moves before a reshape or permute of its float input,
// so the island with a layout change after its activation is a table too
// and the movement carries INT8 bytes.
// CHECK-LABEL: func.func @island_then_permute
// CHECK: %[[L:.*]] = "tpu.Lut"(%arg0, %{{.*}}) : (tensor<1x8x4x!quant.uniform<i8:f32, 5.000000e-02>>, tensor<256xi8>) -> tensor<1x8x4x!quant.uniform<i8:f32, 4.000000e-02:-3>>
// CHECK-NEXT: %[[R:.*]] = "tpu.Reshape"(%[[L]]) : (tensor<1x8x4x!quant.uniform<i8:f32, 4.000000e-02:-3>>) -> tensor<1x8x1x4x!quant.uniform<i8:f32, 4.000000e-02:-3>>
// CHECK-NEXT: %[[P:.*]] = "tpu.Permute"(%[[R]]) {{.*}} -> tensor<1x4x1x8x!quant.uniform<i8:f32, 4.000000e-02:-3>>
// CHECK-NEXT: return %[[P]]
func.func @island_then_permute(%x: tensor<1x8x4x!qi>) -> tensor<1x4x1x8x!qo> {
  %0 = "tpu.QuantCast"(%x) : (tensor<1x8x4x!qi>) -> tensor<1x8x4xf16> loc("deq")
  %1 = "tpu.Active"(%0) <{mode = "gelu"}> : (tensor<1x8x4xf16>) -> tensor<1x8x4xf16> loc("gelu")
  %2 = "tpu.Reshape"(%1) : (tensor<1x8x4xf16>) -> tensor<1x8x1x4xf16> loc("r")
  %3 = "tpu.Permute"(%2) <{order = [0, 3, 2, 1]}> : (tensor<1x8x1x4xf16>) -> tensor<1x4x1x8xf16> loc("p")
  %4 = "tpu.QuantCast"(%3) : (tensor<1x4x1x8xf16>) -> tensor<1x4x1x8x!qo> loc("out")
  return %4 : tensor<1x4x1x8x!qo>
}
}

// -----
!q = !quant.uniform<i8:f32, 0.05>
// A network input's reshape (a view in DDR) is cast before it, so the cast
// joins the group of the reshape's users; a reshape of a computed float
// value keeps its cast after it.
// CHECK-LABEL: func.func @input_view
// CHECK: %[[X:.*]] = "top.Input"
// CHECK-NEXT: %[[C:.*]] = "tpu.QuantCast"(%[[X]]) : (tensor<1x8x4xf32>) -> tensor<1x8x4x!quant.uniform<i8:f32, 5.000000e-02>>
// CHECK-NEXT: "tpu.Reshape"(%[[C]])
// CHECK: %[[A:.*]] = "tpu.Active"
// CHECK-NEXT: %[[R:.*]] = "tpu.Reshape"(%[[A]]) : (tensor<1x8x4xf32>) -> tensor<1x8x1x4xf32>
// CHECK-NEXT: "tpu.QuantCast"(%[[R]])
func.func @input_view(%arg0: tensor<1x8x4xf32>) -> (tensor<1x8x1x4x!q>, tensor<1x8x1x4x!q>) {
  %x = "top.Input"(%arg0) : (tensor<1x8x4xf32>) -> tensor<1x8x4xf32> loc("x")
  %0 = "tpu.Reshape"(%x) : (tensor<1x8x4xf32>) -> tensor<1x8x1x4xf32> loc("x_2d")
  %1 = "tpu.QuantCast"(%0) : (tensor<1x8x1x4xf32>) -> tensor<1x8x1x4x!q> loc("x_2d_i8")
  %2 = "tpu.Active"(%x) <{mode = "abs"}> : (tensor<1x8x4xf32>) -> tensor<1x8x4xf32> loc("abs")
  %3 = "tpu.Reshape"(%2) : (tensor<1x8x4xf32>) -> tensor<1x8x1x4xf32> loc("abs_2d")
  %4 = "tpu.QuantCast"(%3) : (tensor<1x8x1x4xf32>) -> tensor<1x8x1x4x!q> loc("abs_2d_i8")
  return %1, %4 : tensor<1x8x1x4x!q>, tensor<1x8x1x4x!q>
}
