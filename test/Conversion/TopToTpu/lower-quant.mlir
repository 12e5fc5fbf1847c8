// RUN: %python %S/Inputs/quant_inputs.py %t.npz %t.table
// RUN: sed s@WEIGHTS@%t.npz@ %s > %t.mlir
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=F16" | FileCheck %s --check-prefix=F16
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=BF16" | FileCheck %s --check-prefix=BF16
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table" -mlir-print-debuginfo | FileCheck %s --check-prefix=INT8
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table asymmetric=true" | FileCheck %s --check-prefix=ASYM
// RUN: not tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8" 2>&1 | FileCheck %s --check-prefix=NOTABLE
// RUN: not tpuc-opt %t.mlir -convert-top-to-tpu="mode=F16 calibration-table=%t.table" 2>&1 | FileCheck %s --check-prefix=NOTINT8
// RUN: grep -v "^pool" %t.table > %t.missing
// RUN: not tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.missing" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo "other 1.0 0 1" > %t.other
// RUN: not tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.other" 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: echo "conv F32" > %t.qtable
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table quantize-table=%t.qtable" | FileCheck %s --check-prefix=QTABLE

// F16: module attributes {{.*}}tpu.mode = #tpu.mode<F16>
// Float modes: weights converted, f32 edges cast once, indices untouched.
// F16: %[[X:.*]] = "tpu.QuantCast"(%{{.*}}) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf16>
// F16: "top.Weight"() : () -> tensor<2x2x1x1xf16>
// F16: "tpu.Conv"(%[[X]], %{{.*}}, %{{.*}}) {{.*}} : (tensor<1x2x4x4xf16>, tensor<2x2x1x1xf16>, tensor<2xf16>) -> tensor<1x2x6x6xf16>
// F16: "tpu.Add"{{.*}} -> tensor<1x2x4x4xf16>
// F16: "tpu.Active"{{.*}}sigmoid{{.*}} -> tensor<1x2x4x4xf16>
// F16: "tpu.AvgPool"{{.*}} -> tensor<1x2x1x1xf16>
// F16: "tpu.MatMul"{{.*}} : (tensor<1x2xf16>, tensor<2x3xf16>, none) -> tensor<1x3xf16>
// F16: "tpu.LayerNorm"{{.*}} -> tensor<1x3xf16>
// F16: "tpu.QuantCast"{{.*}} : (tensor<1x3xf16>) -> tensor<1x3xf32>
// F16: return {{.*}} : tensor<1x3xf32>
// BF16: "tpu.Conv"{{.*}} : (tensor<1x2x4x4xbf16>, tensor<2x2x1x1xbf16>, tensor<2xbf16>) -> tensor<1x2x6x6xbf16>
// BF16: "tpu.LayerNorm"{{.*}} -> tensor<1x3xbf16>

// In INT8 the conv gets a per-channel i8 filter, an i32 bias and a
// (multiplier, shift) table; Add rescales; Sigmoid is a table; LayerNorm
// falls back to F16 between casts.
// INT8: module attributes {{.*}}tpu.fallback_ops = ["ln (tpu.LayerNorm)"], tpu.mode = #tpu.mode<INT8>
// INT8: %[[XQ:.*]] = "tpu.QuantCast"(%{{.*}}) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 1.000000e-02>>
// INT8-DAG: "top.Weight"() : () -> tensor<2x2x1x1x!quant.uniform<i8:f32:0, {0.0099{{[0-9]+}},0.00100{{[0-9]+}}}>> loc(#[[LF:loc[0-9]*]])
// INT8-DAG: "top.Weight"() : () -> tensor<2xi32> loc(#[[LB:loc[0-9]*]])
// INT8-DAG: "top.Weight"() : () -> tensor<2x2xi32> loc(#[[LQ:loc[0-9]*]])
// INT8: "tpu.Conv"(%[[XQ]], %{{.*}}, %{{.*}}, %{{.*}}) {{.*}} -> tensor<1x2x6x6x!quant.uniform<i8:f32, 2.000000e-02>>
// INT8: "tpu.Add"{{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 2.000000e-02>>
// INT8: "tpu.Lut"{{.*}} : (tensor<1x2x4x4x!quant.uniform<i8:f32, 2.000000e-02>>, tensor<256xi8>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.0078740157480314959>>
// INT8: "tpu.AvgPool"{{.*}} -> tensor<1x2x1x1x!quant.uniform<i8:f32, 1.000000e-02>>
// INT8: "tpu.Reshape"{{.*}} -> tensor<1x2x!quant.uniform<i8:f32, 1.000000e-02>>
// INT8: "tpu.MatMul"{{.*}} : (tensor<1x2x!quant.uniform<i8:f32, 1.000000e-02>>, tensor<2x3x!quant.uniform<i8:f32, 0.003937007874015748>>, none, tensor<1x2xi32>) -> tensor<1x3x!quant.uniform<i8:f32, 4.000000e-02>>
// INT8: "tpu.QuantCast"{{.*}} -> tensor<1x3xf16>
// INT8: "tpu.LayerNorm"{{.*}} -> tensor<1x3xf16>
// INT8: "tpu.QuantCast"{{.*}} : (tensor<1x3xf16>) -> tensor<1x3xf32>
// INT8-DAG: #[[LF]] = loc("conv_filter_i8")
// INT8-DAG: #[[LB]] = loc("conv_bias_i32")
// INT8-DAG: #[[LQ]] = loc("conv_requant")

// Asymmetric: zero points from min/max; the padded conv keeps its pads (it
// pads with the input's zero point itself) and takes the cast input directly.
// ASYM: %[[AX:.*]] = "tpu.QuantCast"{{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.0074705882352941178:-43>>
// ASYM-NOT: "tpu.Pad"
// ASYM: "tpu.Conv"(%[[AX]], {{.*}}pads = [1, 1, 1, 1]

// NOTABLE: mode INT8 needs a calibration table
// NOTINT8: a calibration table is only used by mode INT8, not F16
// MISSING: error: loc("pool"): 'tpu.AvgPool' op calibration table '{{.*}}' has no tensor 'pool'
// OTHER: names none of this model's tensors
// QTABLE: "tpu.Conv"{{.*}} -> tensor<1x2x6x6xf32>
// QTABLE: "tpu.Slice"{{.*}} -> tensor<1x2x4x4xf32>
// QTABLE: "tpu.QuantCast"{{.*}} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 2.000000e-02>>
// QTABLE: "tpu.Add"
module attributes {top.weight_file = "WEIGHTS"} {
func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x3xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<2x2x1x1xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<2xf32> loc("b")
  %c = "top.Conv"(%x, %w, %b) {kernel_shape = [1, 1], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1]} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x6x6xf32> loc("conv")
  %s = "top.Slice"(%c) {starts = [0, 0, 1, 1], ends = [1, 2, 5, 5], axes = [0, 1, 2, 3], steps = [1, 1, 1, 1]} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> loc("conv_s")
  %a = "top.Add"(%s, %x) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("add")
  %g = "top.Sigmoid"(%a) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("sig")
  %p = "top.AvgPool"(%g) {kernel_shape = [4, 4], strides = [1, 1], pads = [0, 0, 0, 0]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> loc("pool")
  %f = "top.Reshape"(%p) {shape = [1, 2]} : (tensor<1x2x1x1xf32>) -> tensor<1x2xf32> loc("flat")
  %fcw = "top.Weight"() : () -> tensor<2x3xf32> loc("fc")
  %n = "top.None"() : () -> none
  %m = "top.MatMul"(%f, %fcw, %n) : (tensor<1x2xf32>, tensor<2x3xf32>, none) -> tensor<1x3xf32> loc("fc")
  %gw = "top.Weight"() : () -> tensor<3xf32> loc("g")
  %l = "top.LayerNorm"(%m, %gw, %n) {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<1x3xf32>, tensor<3xf32>, none) -> tensor<1x3xf32> loc("ln")
  return %l : tensor<1x3xf32>
}
}
