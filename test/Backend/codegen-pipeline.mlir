// RUN: not tpuc-opt %s -tpu-codegen="chip=tpu_edge" 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: not tpuc-opt %s -tpu-assign-address="chip=no_such_chip" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: tpuc-opt %s -tpu-assign-address="chip=tpu_pro" -tpu-codegen="chip=tpu_pro" | FileCheck %s

// PLAN: module has no DDR plan; run tpu-assign-address first
// CHIP: chip 'no_such_chip'
// CHECK: tpu.gdma_instructions = 2
// CHECK-SAME: tpu.macs = 0
// CHECK-SAME: tpu.tiu_instructions = 1
func.func @main(%arg0: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("a")
  return %a : tensor<1x16xf32>
}
