// RUN: tpuc-opt %s -split-input-file -tpu-assign-address="chip=tpu_edge" -tpu-layer-group="chip=tpu_edge" -tpu-codegen="chip=tpu_edge" | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -tpu-assign-address="chip=tpu_edge" -tpu-layer-group="chip=tpu_edge" -tpu-codegen="chip=tpu_edge layer-group=false" | FileCheck %s --check-prefix=NOGRP

// A group loads its input once and stores only the returned result; without
// groups every op loads and stores.
// CHECK: tpu.gdma_instructions = 2
// CHECK-SAME: tpu.tiu_instructions = 3
// CHECK-NEXT: func.func @chain
// NOGRP: tpu.gdma_instructions = 7
// NOGRP-NEXT: func.func @chain
func.func @chain(%arg0: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "sigmoid"} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("b")
  %c = "tpu.Add"(%b, %x) : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("c")
  return %c : tensor<1x16x8x8xf32>
}

// -----

// A result used after the group (here returned) is stored too.
// CHECK: tpu.gdma_instructions = 3
// CHECK-NEXT: func.func @used_outside
func.func @used_outside(%arg0: tensor<1x16x8x8xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "sigmoid"} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("b")
  return %a, %b : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>
}
