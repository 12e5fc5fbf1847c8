// RUN: tpuc-opt %s -split-input-file -verify-diagnostics
// The verifier of tpu.Group: members that can run in a group, results that
// match what the body yields, no nesting, a valid plan.

// A transpose that moves elements across lanes (channels of the NCHW input
// become batches) into the layout its user reads, which no strided load
// can fill (the matmul's matrix view merges the two swapped dims).
func.func @not_local(%arg0: tensor<2x3x4x5xf32>) -> tensor<3x2x4x5xf32> {
  %none = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<5x5xf32> loc("w")
  %g = tpu.Group -> (tensor<3x2x4x5xf32>) {
    // expected-error @+1 {{cannot run inside a layer group}}
    %r = "tpu.Permute"(%arg0) {order = [1, 0, 2, 3]} : (tensor<2x3x4x5xf32>) -> tensor<3x2x4x5xf32>
    %m = "tpu.MatMul"(%r, %w, %none) : (tensor<3x2x4x5xf32>, tensor<5x5xf32>, none) -> tensor<3x2x4x5xf32>
    tpu.Yield %m : tensor<3x2x4x5xf32>
  }
  return %g : tensor<3x2x4x5xf32>
}

// -----

func.func @yield_type(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf16> {
  // expected-error @+1 {{result #0 has type 'tensor<1x4x8x8xf16>' but the body yields 'tensor<1x4x8x8xf32>'}}
  %g = tpu.Group -> (tensor<1x4x8x8xf16>) {
    %a = "tpu.Active"(%arg0) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    tpu.Yield %a : tensor<1x4x8x8xf32>
  }
  return %g : tensor<1x4x8x8xf16>
}

// -----

func.func @yield_count(%arg0: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{yields 1 values but has 0 results}}
  tpu.Group {
    %a = "tpu.Active"(%arg0) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    tpu.Yield %a : tensor<1x4x8x8xf32>
  }
  return
}

// -----

func.func @yield_outside(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{yields value #0 not computed in the group}}
  %g = tpu.Group -> (tensor<1x4x8x8xf32>) {
    %a = "tpu.Active"(%arg0) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    tpu.Yield %arg0 : tensor<1x4x8x8xf32>
  }
  return %g : tensor<1x4x8x8xf32>
}

// -----

func.func @nested(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %g = tpu.Group -> (tensor<1x4x8x8xf32>) {
    // expected-error @+1 {{cannot be nested in another tpu.Group}}
    %h = tpu.Group -> (tensor<1x4x8x8xf32>) {
      %a = "tpu.Active"(%arg0) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
      tpu.Yield %a : tensor<1x4x8x8xf32>
    }
    tpu.Yield %h : tensor<1x4x8x8xf32>
  }
  return %g : tensor<1x4x8x8xf32>
}

// -----

func.func @empty(%arg0: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{has no ops}}
  tpu.Group {
    tpu.Yield
  }
  return
}

// -----

func.func @slices(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{h_slices must be at least 1, got 0}}
  %g = tpu.Group -> (tensor<1x4x8x8xf32>) attributes {h_slices = 0 : i64} {
    %a = "tpu.Active"(%arg0) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    tpu.Yield %a : tensor<1x4x8x8xf32>
  }
  return %g : tensor<1x4x8x8xf32>
}

// -----

func.func @both(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{cannot be sliced along H and chunked by rows}}
  %g = tpu.Group -> (tensor<1x4x8x8xf32>) attributes {h_slices = 2 : i64, row_chunk = 2 : i64} {
    %a = "tpu.Active"(%arg0) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    tpu.Yield %a : tensor<1x4x8x8xf32>
  }
  return %g : tensor<1x4x8x8xf32>
}

// -----

func.func @top_member(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %g = tpu.Group -> (tensor<1x4x8x8xf32>) {
    // expected-error @+1 {{cannot be in a tpu.Group: members are Tpu ops with one result}}
    %a = "top.Abs"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    tpu.Yield %a : tensor<1x4x8x8xf32>
  }
  return %g : tensor<1x4x8x8xf32>
}

// -----

func.func @terminator(%arg0: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{body must end with tpu.Yield}}
  tpu.Group {
    %a = "tpu.Active"(%arg0) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  }
  return
}

// -----

func.func @n_slices_zero(%arg0: tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32> {
  // expected-error @+1 {{n_slices must be at least 1, got 0}}
  %g = tpu.Group -> (tensor<4x4x8x8xf32>) attributes {n_slices = 0 : i64} {
    %a = "tpu.Active"(%arg0) {mode = "abs"} : (tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32>
    tpu.Yield %a : tensor<4x4x8x8xf32>
  }
  return %g : tensor<4x4x8x8xf32>
}

// -----

func.func @epilogue_no_matmul(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{a tile epilogue group starts with a tpu.MatMul or tpu.Conv followed by at least one op}}
  %g = tpu.Group -> (tensor<1x4x8x8xf32>) attributes {tile_epilogue = true} {
    %a = "tpu.Active"(%arg0) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    %b = "tpu.Active"(%a) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    tpu.Yield %b : tensor<1x4x8x8xf32>
  }
  return %g : tensor<1x4x8x8xf32>
}

// -----

func.func @n_slices_batch(%arg0: tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32> {
  // expected-error @+1 {{result #0 of type 'tensor<4x4x8x8xf32>' has no batch that 3 slices along N divide}}
  %g = tpu.Group -> (tensor<4x4x8x8xf32>) attributes {n_slices = 3 : i64} {
    %a = "tpu.Active"(%arg0) {mode = "abs"} : (tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32>
    tpu.Yield %a : tensor<4x4x8x8xf32>
  }
  return %g : tensor<4x4x8x8xf32>
}

// -----

func.func @epilogue_not_chain(%arg0: tensor<1x8x16xf32>, %arg1: tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  %none = "top.None"() : () -> none
  %g = tpu.Group -> (tensor<1x8x16xf32>) attributes {tile_epilogue = true} {
    %m = "tpu.MatMul"(%arg0, %arg1, %none) : (tensor<1x8x16xf32>, tensor<16x16xf32>, none) -> tensor<1x8x16xf32>
    // expected-error @+1 {{in a tile epilogue group must be the only user of the previous member's result, as its first operand}}
    %a = "tpu.Active"(%arg0) {mode = "gelu"} : (tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
    tpu.Yield %a : tensor<1x8x16xf32>
  }
  return %g : tensor<1x8x16xf32>
}

// -----

func.func @n_slices_chunk(%arg0: tensor<4x32xf32>) -> tensor<4x32xf32> {
  // expected-error @+1 {{cannot be sliced along N and chunked by rows}}
  %g = tpu.Group -> (tensor<4x32xf32>) attributes {n_slices = 2 : i64, row_chunk = 1 : i64} {
    %a = "tpu.Active"(%arg0) {mode = "abs"} : (tensor<4x32xf32>) -> tensor<4x32xf32>
    tpu.Yield %a : tensor<4x32xf32>
  }
  return %g : tensor<4x32xf32>
}

// -----

func.func @epilogue_sliced(%arg0: tensor<1x8x16xf32>, %arg1: tensor<16x16xf32>) -> tensor<1x8x16xf32> {
  %none = "top.None"() : () -> none
  // expected-error @+1 {{a tile epilogue group is neither sliced nor chunked}}
  %g = tpu.Group -> (tensor<1x8x16xf32>) attributes {tile_epilogue = true, row_chunk = 2 : i64} {
    %m = "tpu.MatMul"(%arg0, %arg1, %none) : (tensor<1x8x16xf32>, tensor<16x16xf32>, none) -> tensor<1x8x16xf32>
    %a = "tpu.Active"(%m) {mode = "gelu"} : (tensor<1x8x16xf32>) -> tensor<1x8x16xf32>
    tpu.Yield %a : tensor<1x8x16xf32>
  }
  return %g : tensor<1x8x16xf32>
}
