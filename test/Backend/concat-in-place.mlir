// RUN: tpuc-opt %s -split-input-file -tpu-assign-address="chip=tpu_edge" -tpu-codegen="chip=tpu_edge" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s
// Activations of 1x4x2x2xf32 are 64 bytes; the activation region starts at 4096.

// The operands of a channel Concat are placed inside its result, and a
// channel Slice of it is a view at its offset: neither copies anything.
// Each Active loads and stores once (6 GDMA, 3 TIU instructions in all).
// CHECK-LABEL: module attributes
// CHECK-SAME: tpu.gdma_instructions = 6
// CHECK-SAME: tpu.tiu_instructions = 3
// CHECK: top.Input{{.*}}ddr.addr = 4096 {{.*}}loc("x")
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// CHECK: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("b")
// CHECK: tpu.Concat{{.*}}ddr.addr = 4160 {{.*}}loc("c")
// CHECK: tpu.Slice{{.*}}ddr.addr = 4192 {{.*}}loc("s")
// CHECK: tpu.Active{{.*}}ddr.addr = 4288 {{.*}}loc("d")
func.func @main(%arg0: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("a")
  %b = "tpu.Active"(%x) {mode = "exp"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("b")
  %c = "tpu.Concat"(%a, %b) {axis = 1 : i64} : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x8x2x2xf32> loc("c")
  %s = "tpu.Slice"(%c) {offsets = [0, 2, 0, 0], steps = [1, 1, 1, 1]} : (tensor<1x8x2x2xf32>) -> tensor<1x4x2x2xf32> loc("s")
  %d = "tpu.Active"(%s) {mode = "tanh"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("d")
  return %d : tensor<1x4x2x2xf32>
}

// -----

// The input keeps its own buffer, so %c copies it (one GDMA move); %c sits
// inside %e with %b nested at 64 + 64; %a sits at %e's first position only
// and is copied to its last. A Concat with a fused ReLU would change its
// operands in place, so %r copies both (2 moves, then a load and a store
// for the ReLU). With two GDMA moves per Active: 12 in all.
// CHECK-LABEL: module attributes
// CHECK-SAME: tpu.gdma_instructions = 12
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// CHECK: tpu.Active{{.*}}ddr.addr = 4288 {{.*}}loc("b")
// CHECK: tpu.Concat{{.*}}ddr.addr = 4224 {{.*}}loc("c")
// CHECK: tpu.Concat{{.*}}ddr.addr = 4160 {{.*}}loc("e")
// CHECK: tpu.Active{{.*}}ddr.addr = 4416 {{.*}}loc("t")
// CHECK: tpu.Concat{{.*}}ddr.addr = 4480 {{.*}}loc("r")
func.func @main(%arg0: tensor<1x4x2x2xf32>) -> (tensor<1x16x2x2xf32>, tensor<1x8x2x2xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("a")
  %b = "tpu.Active"(%x) {mode = "exp"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("b")
  %c = "tpu.Concat"(%x, %b) {axis = 1 : i64} : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x8x2x2xf32> loc("c")
  %e = "tpu.Concat"(%a, %c, %a) {axis = 1 : i64} : (tensor<1x4x2x2xf32>, tensor<1x8x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x16x2x2xf32> loc("e")
  %t = "tpu.Active"(%x) {mode = "tanh"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("t")
  %r = "tpu.Concat"(%t, %t) {axis = 1 : i64, do_relu = true} : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x8x2x2xf32> loc("r")
  return %e, %r : tensor<1x16x2x2xf32>, tensor<1x8x2x2xf32>
}

// -----

// Each Concat repeats the operands of the one before it (DenseNet's
// feature concatenation): %c1 and %c2 are the leading ranges of %c3, which
// holds %a, %b and %d, so no Concat copies anything. Each of the four
// Actives loads and stores once: 8 GDMA, 4 TIU instructions in all.
// CHECK-LABEL: module attributes
// CHECK-SAME: tpu.gdma_instructions = 8
// CHECK-SAME: tpu.tiu_instructions = 4
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// CHECK: tpu.Concat{{.*}}ddr.addr = 4160 {{.*}}loc("c1")
// CHECK: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("b")
// CHECK: tpu.Concat{{.*}}ddr.addr = 4160 {{.*}}loc("c2")
// CHECK: tpu.Active{{.*}}ddr.addr = 4288 {{.*}}loc("d")
// CHECK: tpu.Concat{{.*}}ddr.addr = 4160 {{.*}}loc("c3")
func.func @main(%arg0: tensor<1x4x2x2xf32>) -> tensor<1x12x2x2xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("a")
  %c1 = "tpu.Concat"(%a) {axis = 1 : i64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("c1")
  %b = "tpu.Active"(%c1) {mode = "exp"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("b")
  %c2 = "tpu.Concat"(%a, %b) {axis = 1 : i64} : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x8x2x2xf32> loc("c2")
  %s = "tpu.Slice"(%c2) {offsets = [0, 2, 0, 0], steps = [1, 1, 1, 1]} : (tensor<1x8x2x2xf32>) -> tensor<1x4x2x2xf32> loc("s")
  %d = "tpu.Active"(%s) {mode = "tanh"} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("d")
  %c3 = "tpu.Concat"(%a, %b, %d) {axis = 1 : i64} : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x12x2x2xf32> loc("c3")
  %y = "tpu.Active"(%c3) {mode = "abs"} : (tensor<1x12x2x2xf32>) -> tensor<1x12x2x2xf32> loc("y")
  return %y : tensor<1x12x2x2xf32>
}
