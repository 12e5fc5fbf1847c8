// RUN: tpuc-opt %s -split-input-file -tpu-assign-address="chip=tpu_edge" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -tpu-assign-address="chip=tpu_edge layer-group=false" -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s --check-prefix=MEMBERS
// Activations are 64-byte tensors here; the activation region starts at 4096.

// A chain: %a dies when %b is made from it, so %c reuses %a's buffer; %b is
// alive while %c is computed, so they never share. The input lives forever.
// CHECK-LABEL: func.func @chain
// CHECK: top.Input{{.*}}ddr.addr = 4096
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// CHECK: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("b")
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("c")
func.func @chain(%arg0: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "exp"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("b")
  %c = "tpu.Active"(%b) {mode = "tanh"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("c")
  return %c : tensor<1x16xf32>
}

// -----

// %a is still read by the last op, so nothing may take its buffer; the
// input is never overwritten even after its last use.
// CHECK-LABEL: func.func @long_lived
// CHECK: top.Input{{.*}}ddr.addr = 4096
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// CHECK: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("b")
// CHECK: tpu.Active{{.*}}ddr.addr = 4288 {{.*}}loc("c")
// CHECK: tpu.Add{{.*}}ddr.addr = 4224 {{.*}}loc("d")
func.func @long_lived(%arg0: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "exp"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("b")
  %c = "tpu.Active"(%b) {mode = "tanh"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("c")
  %d = "tpu.Add"(%a, %c) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32> loc("d")
  return %d : tensor<1x16xf32>
}

// -----

// Outputs are never overwritten: %a is returned, so %c cannot reuse it.
// CHECK-LABEL: func.func @outputs
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// CHECK: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("b")
// CHECK: tpu.Active{{.*}}ddr.addr = 4288 {{.*}}loc("c")
func.func @outputs(%arg0: tensor<1x16xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "exp"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("b")
  %c = "tpu.Active"(%b) {mode = "tanh"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("c")
  return %a, %c : tensor<1x16xf32>, tensor<1x16xf32>
}

// -----

// A reshape shares its input's buffer and keeps it alive for its own uses
// (%c may not take it, %s may); a reshaped weight stays in the weight
// region. Weights are 64-aligned.
// CHECK-LABEL: module attributes
// CHECK-SAME: tpu.activation_addr = 4096
// CHECK-SAME: tpu.activation_size = 256
// CHECK-SAME: tpu.weight_size = 128
// CHECK: top.Weight{{.*}}ddr.addr = 0 {{.*}}loc("w0")
// CHECK: top.Weight{{.*}}ddr.addr = 64 {{.*}}loc("w1")
// CHECK: tpu.Reshape{{.*}}ddr.addr = 64 {{.*}}loc("w1r")
// CHECK: tpu.Add{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// CHECK: tpu.Reshape{{.*}}ddr.addr = 4160 {{.*}}loc("r")
// CHECK: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("b")
// CHECK: tpu.Add{{.*}}ddr.addr = 4288 {{.*}}loc("c")
// CHECK: tpu.Gather{{.*}}ddr.addr = 4160 {{.*}}loc("s")
// CHECK: tpu.Pad{{.*}}ddr.addr = 4224 {{.*}}loc("p")
module attributes {top.weight_file = "unused.npz"} {
func.func @main(%arg0: tensor<1x16xf32>) -> tensor<16xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("x")
  %w0 = "top.Weight"() : () -> tensor<3xf32> loc("w0")
  %w1 = "top.Weight"() : () -> tensor<16xf32> loc("w1")
  %w1r = "tpu.Reshape"(%w1) : (tensor<16xf32>) -> tensor<1x16xf32> loc("w1r")
  %a = "tpu.Add"(%x, %w1r) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32> loc("a")
  %r = "tpu.Reshape"(%a) : (tensor<1x16xf32>) -> tensor<16xf32> loc("r")
  %b = "tpu.Active"(%r) {mode = "exp"} : (tensor<16xf32>) -> tensor<16xf32> loc("b")
  %u = "tpu.Add"(%b, %r) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> loc("c")
  %s = "tpu.Gather"(%u, %w0) {axis = 0 : i64} : (tensor<16xf32>, tensor<3xf32>) -> tensor<3xf32> loc("s")
  %p = "tpu.Pad"(%s) {pads = [0, 13], mode = "constant", value = 0.0 : f64} : (tensor<3xf32>) -> tensor<16xf32> loc("p")
  return %p : tensor<16xf32>
}
}

// -----

// %b and %c form a group sliced along H: later slices still read %a after
// earlier ones stored %c, so %c does not take %a's buffer; %d may. %b stays
// in local memory: it gets no DDR.
// CHECK-LABEL: func.func @sliced_group
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// CHECK: <{mode = "exp"}> : {{.*}}loc("b")
// CHECK: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("c")
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("d")
func.func @sliced_group(%arg0: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("a")
  %g = tpu.Group -> (tensor<1x16xf32>) attributes {h_slices = 2 : i64} {
    %b = "tpu.Active"(%a) {mode = "exp"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("b")
    %c = "tpu.Active"(%b) {mode = "tanh"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("c")
    tpu.Yield %c : tensor<1x16xf32>
  }
  %d = "tpu.Active"(%g) {mode = "abs"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("d")
  return %d : tensor<1x16xf32>
}

// -----

// The same for a group that runs as a loop over chunks of rows: it loads
// later chunks of %a after storing earlier chunks of %c.
// CHECK-LABEL: func.func @chunked_group
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// CHECK: <{mode = "exp"}> : {{.*}}loc("b")
// CHECK: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("c")
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("d")
func.func @chunked_group(%arg0: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("a")
  %g = tpu.Group -> (tensor<1x16xf32>) attributes {row_chunk = 1 : i64} {
    %b = "tpu.Active"(%a) {mode = "exp"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("b")
    %c = "tpu.Active"(%b) {mode = "tanh"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("c")
    tpu.Yield %c : tensor<1x16xf32>
  }
  %d = "tpu.Active"(%g) {mode = "abs"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("d")
  return %d : tensor<1x16xf32>
}

// -----

// A group sliced along N loads the later images of %a after storing the
// earlier ones of %c: they keep apart too.
// CHECK-LABEL: func.func @batch_sliced_group
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// CHECK: <{mode = "exp"}> : {{.*}}loc("b")
// CHECK: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("c")
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("d")
func.func @batch_sliced_group(%arg0: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("a")
  %g = tpu.Group -> (tensor<2x8xf32>) attributes {n_slices = 2 : i64} {
    %b = "tpu.Active"(%a) {mode = "exp"} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("b")
    %c = "tpu.Active"(%b) {mode = "tanh"} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("c")
    tpu.Yield %c : tensor<2x8xf32>
  }
  %d = "tpu.Active"(%g) {mode = "abs"} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("d")
  return %d : tensor<2x8xf32>
}

// -----

// A group of whole tensors loads all its inputs before its first store, so
// its values live as the ops' own would: %c takes %a's buffer, which %b
// read (loaded) before %c is stored. With layer-group=false (to emit each
// member on its own) %b is placed too, and %d takes its buffer.
// CHECK-LABEL: func.func @whole_group
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// CHECK: <{mode = "exp"}> : {{.*}}loc("b")
// CHECK: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("c")
// CHECK: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("d")
// MEMBERS-LABEL: func.func @whole_group
// MEMBERS: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("a")
// MEMBERS: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("b")
// MEMBERS: tpu.Active{{.*}}ddr.addr = 4160 {{.*}}loc("c")
// MEMBERS: tpu.Active{{.*}}ddr.addr = 4224 {{.*}}loc("d")
func.func @whole_group(%arg0: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("a")
  %g = tpu.Group -> (tensor<1x16xf32>) {
    %b = "tpu.Active"(%a) {mode = "exp"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("b")
    %c = "tpu.Active"(%b) {mode = "tanh"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("c")
    tpu.Yield %c : tensor<1x16xf32>
  }
  %d = "tpu.Active"(%g) {mode = "abs"} : (tensor<1x16xf32>) -> tensor<1x16xf32> loc("d")
  return %d : tensor<1x16xf32>
}
