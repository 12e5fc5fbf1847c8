// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge" -tpu-assign-address="chip=tpu_edge" -tpu-codegen="chip=tpu_edge" | FileCheck %s
// Activations of 1x4x2x2xf32 are 64 bytes; the activation region starts at 4096.

// A Concat interleaving two layer-group results ([N, C, 1, H, W] parts on
// axis 2) places them in its result in strided blocks: each plane of %b and
// %c lands 8 elements after the previous one, the group's stores write them
// there and the Concat copies nothing (one load, two stores in all).
// CHECK-LABEL: module attributes
// CHECK-SAME: tpu.gdma_instructions = 3
// CHECK: tpu.Group
// CHECK: tpu.Active{{.*}}mode = "exp"{{.*}}ddr.addr = 4160 : i64, ddr.block_stride = [4, 8]
// CHECK: tpu.Active{{.*}}mode = "tanh"{{.*}}ddr.addr = 4176 : i64, ddr.block_stride = [4, 8]
// CHECK: tpu.Concat{{.*}}ddr.addr = 4160 : i64
func.func @main(%arg0: tensor<1x4x2x2xf32>) -> tensor<1x8x2x2xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "exp"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("b")
  %c = "tpu.Active"(%a) {mode = "tanh"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("c")
  %rb = "tpu.Reshape"(%b) : (tensor<1x4x2x2xf32>) -> tensor<1x4x1x2x2xf32> loc("rb")
  %rc = "tpu.Reshape"(%c) : (tensor<1x4x2x2xf32>) -> tensor<1x4x1x2x2xf32> loc("rc")
  %i = "tpu.Concat"(%rb, %rc) {axis = 2 : i64} : (tensor<1x4x1x2x2xf32>, tensor<1x4x1x2x2xf32>) -> tensor<1x4x2x2x2xf32> loc("i")
  %y = "tpu.Reshape"(%i) : (tensor<1x4x2x2x2xf32>) -> tensor<1x8x2x2xf32> loc("y")
  return %y : tensor<1x8x2x2xf32>
}

// -----

// %c is also returned, so it keeps its own dense buffer and the Concat
// copies it (one more GDMA move); %b still goes in place.
// CHECK-LABEL: module attributes
// CHECK-SAME: tpu.gdma_instructions = 4
// CHECK: tpu.Active{{.*}}mode = "exp"{{.*}}ddr.block_stride = [4, 8]
// CHECK-NOT: block_stride
// CHECK: tpu.Yield
// CHECK: tpu.Reshape{{.*}}ddr.block_stride = [4, 8]
// CHECK-NOT: block_stride
// CHECK: return
func.func @main(%arg0: tensor<1x4x2x2xf32>) -> (tensor<1x8x2x2xf32>, tensor<1x4x2x2xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "exp"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("b")
  %c = "tpu.Active"(%a) {mode = "tanh"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("c")
  %rb = "tpu.Reshape"(%b) : (tensor<1x4x2x2xf32>) -> tensor<1x4x1x2x2xf32> loc("rb")
  %rc = "tpu.Reshape"(%c) : (tensor<1x4x2x2xf32>) -> tensor<1x4x1x2x2xf32> loc("rc")
  %i = "tpu.Concat"(%rb, %rc) {axis = 2 : i64} : (tensor<1x4x1x2x2xf32>, tensor<1x4x1x2x2xf32>) -> tensor<1x4x2x2x2xf32> loc("i")
  %y = "tpu.Reshape"(%i) : (tensor<1x4x2x2x2xf32>) -> tensor<1x8x2x2xf32> loc("y")
  return %y, %c : tensor<1x8x2x2xf32>, tensor<1x4x2x2xf32>
}

// -----

// A roll along W (Swin's shifted windows): two Slices along W and their
// Concat. The Slices copy DDR to DDR straight into the Concat's result, in
// strided blocks (a group that only loads and stores them would pay the DDR
// latency twice): two moves in all, no layer group.
// CHECK-LABEL: module attributes
// CHECK-SAME: tpu.gdma_instructions = 2
// CHECK-NOT: tpu.Group
// CHECK: tpu.Slice{{.*}}ddr.addr = 4224 : i64, ddr.block_stride = [6, 8]
// CHECK: tpu.Slice{{.*}}ddr.addr = 4248 : i64, ddr.block_stride = [2, 8]
// CHECK: tpu.Concat{{.*}}ddr.addr = 4224 : i64
func.func @main(%arg0: tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32> loc("x")
  %a = "tpu.Slice"(%x) {offsets = [0, 0, 2, 0], steps = [1, 1, 1, 1]} : (tensor<1x4x8x1xf32>) -> tensor<1x4x6x1xf32> loc("a")
  %b = "tpu.Slice"(%x) {offsets = [0, 0, 0, 0], steps = [1, 1, 1, 1]} : (tensor<1x4x8x1xf32>) -> tensor<1x4x2x1xf32> loc("b")
  %r = "tpu.Concat"(%a, %b) {axis = 2 : i64} : (tensor<1x4x6x1xf32>, tensor<1x4x2x1xf32>) -> tensor<1x4x8x1xf32> loc("r")
  return %r : tensor<1x4x8x1xf32>
}
