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
