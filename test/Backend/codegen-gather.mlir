// RUN: tpuc-opt %s -tpu-assign-address="chip=tpu_edge" -tpu-codegen="chip=tpu_edge" | FileCheck %s

// Run-time indices (an input here) need no TIU work: one dma_gather moves
// the selected rows DDR to DDR.
// CHECK: tpu.gdma_instructions = 1
// CHECK-SAME: tpu.tiu_instructions = 0
func.func @main(%arg0: tensor<2x4x8xf32>, %arg1: tensor<3xf32>) -> tensor<2x3x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("x")
  %i = "top.Input"(%arg1) : (tensor<3xf32>) -> tensor<3xf32> loc("i")
  %g = "tpu.Gather"(%x, %i) {axis = 1 : i64} : (tensor<2x4x8xf32>, tensor<3xf32>) -> tensor<2x3x8xf32> loc("g")
  return %g : tensor<2x3x8xf32>
}
