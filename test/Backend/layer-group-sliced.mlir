// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge" -tpu-assign-address="chip=tpu_edge" -tpu-codegen="chip=tpu_edge" | FileCheck %s

// Two activations on a tensor larger than a lane's local memory (too large
// whole even with each result written over its operand) run as 8 slices of
// rows: each loads its rows of the input and stores its rows of the result,
// and computes both ops (no halo for elementwise ops).
// CHECK: tpu.gdma_instructions = 16
// CHECK-SAME: tpu.tiu_instructions = 16
// CHECK-NEXT: func.func @chain
func.func @chain(%arg0: tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "abs"} : (tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32> loc("b")
  return %b : tensor<1x16x128x129xf32>
}

