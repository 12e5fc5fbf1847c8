// RUN: tpuc-opt %s -tpu-codegen="chip=tpu_edge" -verify-diagnostics
// A group sliced along H whose DDR plan was not made for it (here by hand):
// the second member's stored result lies over the DDR buffer of the group's
// input, which later slices still read.

module attributes {tpu.weight_size = 0 : i64, tpu.activation_addr = 4096 : i64, tpu.activation_size = 2113536 : i64} {
func.func @sliced_group_reuse(%arg0: tensor<1x16x64x129xf32>) -> tensor<1x16x64x129xf32> {
  %x = "top.Input"(%arg0) {ddr.addr = 4096 : i64} : (tensor<1x16x64x129xf32>) -> tensor<1x16x64x129xf32> loc("x")
  %a = "tpu.Active"(%x) {mode = "abs", ddr.addr = 532480 : i64} : (tensor<1x16x64x129xf32>) -> tensor<1x16x64x129xf32> loc("a")
  %g = tpu.Group -> (tensor<1x16x64x129xf32>) attributes {h_slices = 4 : i64} {
    %b = "tpu.Active"(%a) {mode = "abs", ddr.addr = 1060864 : i64} : (tensor<1x16x64x129xf32>) -> tensor<1x16x64x129xf32> loc("b")
    // expected-error @+1 {{is stored by a sliced layer group over the DDR buffer of one of the group's inputs}}
    %c = "tpu.Active"(%b) {mode = "abs", ddr.addr = 532480 : i64} : (tensor<1x16x64x129xf32>) -> tensor<1x16x64x129xf32>
    tpu.Yield %c : tensor<1x16x64x129xf32>
  }
  %d = "tpu.Active"(%g) {mode = "abs", ddr.addr = 1589248 : i64} : (tensor<1x16x64x129xf32>) -> tensor<1x16x64x129xf32> loc("d")
  return %d : tensor<1x16x64x129xf32>
}
}
