// RUN: tpuc-opt %s -split-input-file -tpu-assign-address="chip=tpu_edge" -tpu-codegen="chip=tpu_edge" -verify-diagnostics
// Codegen errors are diagnostics on the op, never aborts.

func.func @reduce_gap(%arg0: tensor<2x3x4xf32>) -> tensor<1x3x1xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  // expected-error @+1 {{codegen supports reducing adjacent axes only}}
  %r = "tpu.Reduce"(%x) {mode = "sum", axes = [0, 2], keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  return %r : tensor<1x3x1xf32>
}

// -----

// dma_gather reads f32 or int32 indices only.
func.func @gather_runtime_i8_indices(%arg0: tensor<4x8xf32>, %arg1: tensor<3xi8>) -> tensor<3x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("x")
  %i = "top.Input"(%arg1) : (tensor<3xi8>) -> tensor<3xi8> loc("i")
  // expected-error @+1 {{run-time gather indices must be f32 or i32, got 'tensor<3xi8>'}}
  %g = "tpu.Gather"(%x, %i) {axis = 0 : i64} : (tensor<4x8xf32>, tensor<3xi8>) -> tensor<3x8xf32>
  return %g : tensor<3x8xf32>
}

// -----

func.func @int_tensors(%arg0: tensor<1x16xi32>) -> tensor<1x16xi32> {
  %x = "top.Input"(%arg0) : (tensor<1x16xi32>) -> tensor<1x16xi32> loc("x")
  // expected-error @+1 {{codegen supports float tensors only here}}
  %a = "tpu.Add"(%x, %x) : (tensor<1x16xi32>, tensor<1x16xi32>) -> tensor<1x16xi32>
  return %a : tensor<1x16xi32>
}

// -----

// A conv reads an activation filter (OIHW in DDR); a deconv does not yet.
func.func @deconv_activation_filter(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
  %w = "top.Input"(%arg1) : (tensor<2x2x1x1xf32>) -> tensor<2x2x1x1xf32> loc("w")
  %n = "top.None"() : () -> none
  // expected-error @+1 {{codegen needs a constant filter (top.Weight)}}
  %c = "tpu.Deconv"(%x, %w, %n) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  return %c : tensor<1x2x4x4xf32>
}

// -----

// Pooling does not split rows: one row of 100000 elements exceeds a lane.
func.func @too_big(%arg0: tensor<1x1x1x100000xf32>) -> tensor<1x1x1x50000xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x1x1x100000xf32>) -> tensor<1x1x1x100000xf32> loc("x")
  // expected-error @+1 {{does not fit local memory: one output row needs}}
  %p = "tpu.MaxPool"(%x) {kernel_shape = [1, 2], strides = [1, 2], pads = [0, 0, 0, 0]} : (tensor<1x1x1x100000xf32>) -> tensor<1x1x1x50000xf32>
  return %p : tensor<1x1x1x50000xf32>
}

// -----

// Hand-written groups the codegen cannot place are diagnostics: one row
// per lane does not fit even sliced along H.
func.func @bad_group(%arg0: tensor<1x16x4x20000xf32>) -> tensor<1x16x4x20000xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16x4x20000xf32>) -> tensor<1x16x4x20000xf32> loc("x")
  %g = tpu.Group -> (tensor<1x16x4x20000xf32>) attributes {h_slices = 4 : i64} {
    // expected-error @+1 {{starts a layer group of 2 ops that does not fit local memory}}
    %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16x4x20000xf32>) -> tensor<1x16x4x20000xf32>
    %b = "tpu.Active"(%a) {mode = "abs"} : (tensor<1x16x4x20000xf32>) -> tensor<1x16x4x20000xf32> loc("b")
    tpu.Yield %b : tensor<1x16x4x20000xf32>
  }
  return %g : tensor<1x16x4x20000xf32>
}

// -----

// A group whose recorded plan (whole tensors) does not fit, though slices
// along H would: the codegen follows the plan, it does not search another.
func.func @plan_does_not_fit(%arg0: tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32> loc("x")
  %g = tpu.Group -> (tensor<1x16x128x129xf32>) {
    // expected-error @+1 {{starts a layer group of 2 ops that does not fit local memory}}
    %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32>
    %b = "tpu.Active"(%a) {mode = "abs"} : (tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32> loc("b")
    tpu.Yield %b : tensor<1x16x128x129xf32>
  }
  return %g : tensor<1x16x128x129xf32>
}

// -----

func.func @bad_member(%arg0: tensor<1x2x2x2x8xf32>) -> tensor<1x2x2x2x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x2x2x2x8xf32>) -> tensor<1x2x2x2x8xf32> loc("x")
  %g = tpu.Group -> (tensor<1x2x2x2x8xf32>) {
    // expected-error @+1 {{cannot run inside a layer group}}
    %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x2x2x2x8xf32>) -> tensor<1x2x2x2x8xf32>
    tpu.Yield %a : tensor<1x2x2x2x8xf32>
  }
  %b = "tpu.Active"(%g) {mode = "abs"} : (tensor<1x2x2x2x8xf32>) -> tensor<1x2x2x2x8xf32> loc("b")
  return %b : tensor<1x2x2x2x8xf32>
}
