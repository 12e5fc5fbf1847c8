// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge" | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_pro" | FileCheck %s --check-prefix=PRO
// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge" -tpu-layer-group="chip=tpu_edge" | FileCheck %s

// A conv block (conv, depthwise conv with relu, pool, add, per-channel
// scale) is one group.
// The group yields only the value used after it, which replaces it there.
// CHECK-LABEL: func.func @block
// CHECK: %[[G:.*]] = tpu.Group -> (tensor<1x16x8x8xf32>) {
// CHECK-NEXT: "tpu.Conv"
// CHECK-NEXT: "tpu.Conv"
// CHECK-NEXT: "tpu.MaxPool"
// CHECK-NEXT: "tpu.Add"
// CHECK-NEXT: %[[M:.*]] = "tpu.Mul"
// CHECK-NEXT: tpu.Yield %[[M]] : tensor<1x16x8x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]
func.func @block(%arg0: tensor<1x8x16x16xf32>) -> tensor<1x16x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> loc("x")
  %none = "top.None"() : () -> none
  %w0 = "top.Weight"() : () -> tensor<16x8x1x1xf32> loc("w0")
  %b0 = "top.Weight"() : () -> tensor<16xf32> loc("b0")
  %w1 = "top.Weight"() : () -> tensor<16x1x3x3xf32> loc("w1")
  %s = "top.Weight"() : () -> tensor<1x16x1x1xf32> loc("s")
  %c0 = "tpu.Conv"(%x, %w0, %b0) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x8x16x16xf32>, tensor<16x8x1x1xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32> loc("c0")
  %c1 = "tpu.Conv"(%c0, %w1, %none) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1], group = 16 : i64, do_relu = true, relu_limit = 6.0 : f64} : (tensor<1x16x16x16xf32>, tensor<16x1x3x3xf32>, none) -> tensor<1x16x16x16xf32> loc("c1")
  %p = "tpu.MaxPool"(%c1) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0]} : (tensor<1x16x16x16xf32>) -> tensor<1x16x8x8xf32> loc("p")
  %a = "tpu.Add"(%p, %p) : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("a")
  %m = "tpu.Mul"(%a, %s) : (tensor<1x16x8x8xf32>, tensor<1x16x1x1xf32>) -> tensor<1x16x8x8xf32> loc("m")
  return %m : tensor<1x16x8x8xf32>
}

// -----

// Two tensors of exactly half a lane fit (the input's space is reused by the
// second result); one more element per row does not.
// CHECK-LABEL: func.func @exact_fit
// CHECK: tpu.Group -> (tensor<1x16x64x128xf32>) {
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: tpu.Yield
func.func @exact_fit(%arg0: tensor<1x16x64x128xf32>) -> tensor<1x16x64x128xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16x64x128xf32>) -> tensor<1x16x64x128xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16x64x128xf32>) -> tensor<1x16x64x128xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "sigmoid"} : (tensor<1x16x64x128xf32>) -> tensor<1x16x64x128xf32> loc("b")
  return %b : tensor<1x16x64x128xf32>
}

// -----

// Whole tensors do not fit the small chip, even with each result written
// over its operand: the group runs as a loop over
// slices of rows (two input and two result slots of 16 rows, each op's
// tensors starting in different LMEM banks).
// CHECK-LABEL: func.func @too_big
// CHECK: tpu.Group -> (tensor<1x16x128x129xf32>) attributes {h_slices = 8 : i64} {
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: tpu.Yield
// The larger chip has room for both.
// PRO-LABEL: func.func @too_big
// PRO: tpu.Group -> (tensor<1x16x128x129xf32>) {
// PRO-NEXT: "tpu.Active"
// PRO-NEXT: "tpu.Active"
// PRO-NEXT: tpu.Yield
func.func @too_big(%arg0: tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "sigmoid"} : (tensor<1x16x128x129xf32>) -> tensor<1x16x128x129xf32> loc("b")
  return %b : tensor<1x16x128x129xf32>
}

// -----

// An op that cannot run in a group ends a run: here a Reshape from a
// conv's NCHW (channels on lanes) to rows (rows on lanes), which would move
// elements across lanes. A Reshape that keeps the bytes of the matmul's
// rows joins the matmul and the elementwise ops after it, which follow its
// layout; runs of one op are not groups.
// CHECK-LABEL: func.func @unsupported
// CHECK: %[[G:.*]] = tpu.Group -> (tensor<1x4x8x8xf32>) {
// CHECK-NEXT: "tpu.Conv"
// CHECK-NEXT: "tpu.Conv"
// CHECK-NEXT: tpu.Yield
// CHECK-NEXT: }
// CHECK-NEXT: "tpu.Reshape"(%[[G]])
// CHECK-NEXT: tpu.Group -> (tensor<1x4x8x8xf32>) {
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Reshape"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: tpu.Yield
func.func @unsupported(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %none = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<8x8xf32> loc("w")
  %f = "top.Weight"() : () -> tensor<4x4x1x1xf32> loc("f")
  %a = "tpu.Conv"(%x, %f, %none) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>, none) -> tensor<1x4x8x8xf32> loc("a")
  %b = "tpu.Conv"(%a, %f, %none) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>, none) -> tensor<1x4x8x8xf32> loc("b")
  %r = "tpu.Reshape"(%b) : (tensor<1x4x8x8xf32>) -> tensor<32x8xf32> loc("r")
  %m = "tpu.MatMul"(%r, %w, %none) : (tensor<32x8xf32>, tensor<8x8xf32>, none) -> tensor<32x8xf32> loc("m")
  %r2 = "tpu.Reshape"(%m) : (tensor<32x8xf32>) -> tensor<1x4x8x8xf32> loc("r2")
  %c = "tpu.Active"(%r2) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("c")
  %d = "tpu.Active"(%c) {mode = "abs"} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("d")
  %e = "tpu.Reduce"(%d) {mode = "mean", axes = [1], keepdims = true} : (tensor<1x4x8x8xf32>) -> tensor<1x1x8x8xf32> loc("e")
  return %e : tensor<1x1x8x8xf32>
}

// -----

// Elementwise ops hold [1, 2, 8, 8] as two matrices of 8 rows, which fold
// into the 16 rows the matmul reads (one slot of tpu_edge's lanes): the
// Reshape views them folded, and the whole run is one group.
// CHECK-LABEL: func.func @folded_view
// CHECK: tpu.Group -> (tensor<16x8xf32>) {
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: "tpu.Reshape"
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: tpu.Yield
func.func @folded_view(%arg0: tensor<1x2x8x8xf32>) -> tensor<16x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> loc("x")
  %none = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<8x8xf32> loc("w")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "abs"} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32> loc("b")
  %r = "tpu.Reshape"(%b) : (tensor<1x2x8x8xf32>) -> tensor<16x8xf32> loc("r")
  %m = "tpu.MatMul"(%r, %w, %none) : (tensor<16x8xf32>, tensor<8x8xf32>, none) -> tensor<16x8xf32> loc("m")
  return %m : tensor<16x8xf32>
}

// -----

// Elementwise ops on 3-D tensors group in the rows view: a bias add and the
// five ops of an exact GELU (scalar and row-broadcast weights) are one group.
// CHECK-LABEL: func.func @gelu_3d
// CHECK: tpu.Group -> (tensor<1x32x256xf32>) {
// CHECK-NEXT: "tpu.Add"
// CHECK-NEXT: "tpu.Div"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: "tpu.Add"
// CHECK-NEXT: "tpu.Mul"
// CHECK-NEXT: "tpu.Mul"
// CHECK-NEXT: tpu.Yield
// CHECK-NOT: tpu.Group
// CHECK: return
// PRO-LABEL: func.func @gelu_3d
// PRO: tpu.Group -> (tensor<1x32x256xf32>) {
// PRO-COUNT-6: "tpu.
// PRO-NEXT: tpu.Yield
func.func @gelu_3d(%arg0: tensor<1x32x256xf32>) -> tensor<1x32x256xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x32x256xf32>) -> tensor<1x32x256xf32> loc("x")
  %b = "top.Weight"() : () -> tensor<256xf32> loc("b")
  %s = "top.Weight"() : () -> tensor<1xf32> loc("s")
  %one = "top.Weight"() : () -> tensor<1xf32> loc("one")
  %h = "top.Weight"() : () -> tensor<1xf32> loc("h")
  %y = "tpu.Add"(%b, %x) : (tensor<256xf32>, tensor<1x32x256xf32>) -> tensor<1x32x256xf32> loc("y")
  %d = "tpu.Div"(%y, %s) : (tensor<1x32x256xf32>, tensor<1xf32>) -> tensor<1x32x256xf32> loc("d")
  %e = "tpu.Active"(%d) {mode = "erf"} : (tensor<1x32x256xf32>) -> tensor<1x32x256xf32> loc("e")
  %a = "tpu.Add"(%e, %one) : (tensor<1x32x256xf32>, tensor<1xf32>) -> tensor<1x32x256xf32> loc("a")
  %m = "tpu.Mul"(%y, %a) : (tensor<1x32x256xf32>, tensor<1x32x256xf32>) -> tensor<1x32x256xf32> loc("m")
  %o = "tpu.Mul"(%m, %h) : (tensor<1x32x256xf32>, tensor<1xf32>) -> tensor<1x32x256xf32> loc("o")
  return %o : tensor<1x32x256xf32>
}

// -----

// A Reshape between 3-D and 2-D elementwise ops keeps the bytes of the
// matrix view they follow ([4, 8, 1, 16]): one group holds all five.
// CHECK-LABEL: func.func @rows_shape_change
// CHECK: tpu.Group -> (tensor<32x16xf32>) {
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: "tpu.Reshape"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: tpu.Yield
func.func @rows_shape_change(%arg0: tensor<4x8x16xf32>) -> tensor<32x16xf32> {
  %x = "top.Input"(%arg0) : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "sigmoid"} : (tensor<4x8x16xf32>) -> tensor<4x8x16xf32> loc("b")
  %r = "tpu.Reshape"(%b) : (tensor<4x8x16xf32>) -> tensor<32x16xf32> loc("r")
  %c = "tpu.Active"(%r) {mode = "abs"} : (tensor<32x16xf32>) -> tensor<32x16xf32> loc("c")
  %d = "tpu.Active"(%c) {mode = "sigmoid"} : (tensor<32x16xf32>) -> tensor<32x16xf32> loc("d")
  return %d : tensor<32x16xf32>
}

// -----

// Too big to fit whole (96 KiB per lane per tensor on tpu_edge), a rows
// group still forms: it runs as a loop over chunks of 2 rows per lane.
// CHECK-LABEL: func.func @rows_chunked
// CHECK: tpu.Group -> (tensor<1x128x3072xf32>) attributes {row_chunk = 2 : i64} {
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: tpu.Yield
// PRO-LABEL: func.func @rows_chunked
// PRO: tpu.Group -> (tensor<1x128x3072xf32>) {
func.func @rows_chunked(%arg0: tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "sigmoid"} : (tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32> loc("b")
  return %b : tensor<1x128x3072xf32>
}

// -----

// 127 rows (prime) would run on one lane: no group.
// CHECK-LABEL: func.func @rows_one_lane
// CHECK-NOT: tpu.Group
// CHECK: return
func.func @rows_one_lane(%arg0: tensor<127x64xf32>) -> tensor<127x64xf32> {
  %x = "top.Input"(%arg0) : (tensor<127x64xf32>) -> tensor<127x64xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<127x64xf32>) -> tensor<127x64xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "sigmoid"} : (tensor<127x64xf32>) -> tensor<127x64xf32> loc("b")
  return %b : tensor<127x64xf32>
}

// -----

// A residual block whose 56x56 feature maps do not fit the small chip's
// local memory: the whole block runs sliced along H, each slice carrying
// the first conv's halo rows over from the previous one (not recomputing
// them). On the larger chip whole tensors fit, but the first conv on its
// own and the rest sliced is estimated faster: slices overlap the input's
// load and the result's store with compute, where a whole-tensor group
// waits for the whole input first.
// CHECK-LABEL: func.func @sliced_block
// CHECK: tpu.Group -> (tensor<1x64x56x56xf32>) attributes {h_slices = 29 : i64} {
// CHECK-NEXT: "tpu.Conv"
// CHECK-NEXT: "tpu.Conv"
// CHECK-NEXT: "tpu.Add"
// CHECK-NEXT: tpu.Yield
// PRO-LABEL: func.func @sliced_block
// PRO: %[[C0:.*]] = "tpu.Conv"
// PRO-NEXT: tpu.Group -> (tensor<1x64x56x56xf32>) attributes {h_slices = {{[0-9]+}} : i64} {
// PRO-NEXT: "tpu.Conv"(%[[C0]],
// PRO-NEXT: "tpu.Add"
// PRO-NEXT: tpu.Yield
func.func @sliced_block(%arg0: tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> loc("x")
  %w0 = "top.Weight"() : () -> tensor<64x64x3x3xf32> loc("w0")
  %b0 = "top.Weight"() : () -> tensor<64xf32> loc("b0")
  %w1 = "top.Weight"() : () -> tensor<64x64x3x3xf32> loc("w1")
  %b1 = "top.Weight"() : () -> tensor<64xf32> loc("b1")
  %c0 = "tpu.Conv"(%x, %w0, %b0) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1], do_relu = true} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32> loc("c0")
  %c1 = "tpu.Conv"(%c0, %w1, %b1) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1]} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32> loc("c1")
  %a = "tpu.Add"(%c1, %x) {do_relu = true} : (tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> loc("a")
  return %a : tensor<1x64x56x56xf32>
}

// -----

// A 3x3 conv, a 3x3/2 max pool and a 1x1 conv on 64x128 maps sliced along H:
// pool rows need conv rows with the conv's halo, all in one group.
// CHECK-LABEL: func.func @windows
// CHECK: tpu.Group -> (tensor<1x32x32x64xf32>) attributes {h_slices = {{[0-9]+}} : i64} {
// CHECK-NEXT: "tpu.Conv"
// CHECK-NEXT: "tpu.MaxPool"
// CHECK-NEXT: "tpu.Conv"
// CHECK-NEXT: tpu.Yield
func.func @windows(%arg0: tensor<1x16x64x128xf32>) -> tensor<1x32x32x64xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16x64x128xf32>) -> tensor<1x16x64x128xf32> loc("x")
  %none = "top.None"() : () -> none
  %w0 = "top.Weight"() : () -> tensor<32x16x3x3xf32> loc("w0")
  %w1 = "top.Weight"() : () -> tensor<32x32x1x1xf32> loc("w1")
  %c0 = "tpu.Conv"(%x, %w0, %none) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1], do_relu = true} : (tensor<1x16x64x128xf32>, tensor<32x16x3x3xf32>, none) -> tensor<1x32x64x128xf32> loc("c0")
  %p = "tpu.MaxPool"(%c0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x32x64x128xf32>) -> tensor<1x32x32x64xf32> loc("p")
  %c1 = "tpu.Conv"(%p, %w1, %none) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x32x32x64xf32>, tensor<32x32x1x1xf32>, none) -> tensor<1x32x32x64xf32> loc("c1")
  return %c1 : tensor<1x32x32x64xf32>
}

// -----

// Every function of a module is partitioned, not only an entry named main.
// CHECK-LABEL: func.func @first
// CHECK: tpu.Group
// CHECK-LABEL: func.func @second
// CHECK: tpu.Group
func.func @first(%arg0: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("a")
  %b = "tpu.Active"(%a) {mode = "sigmoid"} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("b")
  return %b : tensor<1x16x8x8xf32>
}
func.func @second(%arg0: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("y")
  %a = "tpu.Active"(%x) {mode = "abs"} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("c")
  %b = "tpu.Active"(%a) {mode = "sigmoid"} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("d")
  return %b : tensor<1x16x8x8xf32>
}
