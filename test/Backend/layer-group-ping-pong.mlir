// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge print-plan=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: tpuc-opt %s -split-input-file -tpu-assign-address="chip=tpu_edge" -tpu-layer-group="chip=tpu_edge" -tpu-codegen="chip=tpu_edge" | FileCheck %s

// Rows too many for local memory (16 rows per lane of 6 KiB per tensor on
// tpu_edge): 5 rows per lane fit once, 2 fit twice. The group takes chunks
// of 2, which alternate between two halves of the space, so each chunk's
// load overlaps the previous one's compute.
// PLAN: layer group plan: 2 ops, 24576 bytes per lane, chunks of 2 of 16 rows per lane
// PLAN: chunks alternate between two halves of 24576 bytes per lane
// CHECK: tpu.gdma_instructions = 16
// CHECK-SAME: tpu.tiu_instructions = 16
// CHECK: func.func @rows_ping_pong
// CHECK: tpu.Group -> (tensor<1x256x1536xf32>) attributes {row_chunk = 2 : i64}
func.func @rows_ping_pong(%arg0: tensor<1x256x1536xf32>) -> tensor<1x256x1536xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x256x1536xf32>) -> tensor<1x256x1536xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x256x1536xf32>) -> tensor<1x256x1536xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "sigmoid"} : (tensor<1x256x1536xf32>) -> tensor<1x256x1536xf32> loc("b")
  return %b : tensor<1x256x1536xf32>
}

// -----

// Only one row per lane would fit twice (12 KiB per row and tensor): the
// group keeps the 2 rows per lane that fit once, in one set of buffers.
// PLAN: layer group plan: 2 ops, {{[0-9]+}} bytes per lane, chunks of 2 of 8 rows per lane
// PLAN-NOT: alternate
// PLAN: estimated
// CHECK: func.func @rows_one_set
// CHECK: tpu.Group -> (tensor<1x128x3072xf32>) attributes {row_chunk = 2 : i64}
func.func @rows_one_set(%arg0: tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "sigmoid"} : (tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32> loc("b")
  return %b : tensor<1x128x3072xf32>
}
