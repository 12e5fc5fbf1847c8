// RUN: tpuc-opt %s -convert-top-to-tpu="mode=F32 chip=tpu_cloud" | FileCheck %s
// RUN: tpuc-opt %s -convert-top-to-tpu="mode=F16" | FileCheck %s --check-prefix=F16
// RUN: not tpuc-opt %s -convert-top-to-tpu="mode=INT8" 2>&1 | FileCheck %s --check-prefix=INT8
// RUN: not tpuc-opt %s -convert-top-to-tpu="mode=F64" 2>&1 | FileCheck %s --check-prefix=BADMODE

// CHECK: module attributes {tpu.chip = "tpu_cloud", tpu.mode = #tpu.mode<F32>}
// CHECK: "tpu.Active"(%{{.*}}) <{mode = "relu"}>
// F16: "tpu.Active"(%{{.*}}) <{mode = "relu"}> : (tensor<2x3xf16>) -> tensor<2x3xf16>
// INT8: error: convert-top-to-tpu: mode INT8 needs a calibration table
// BADMODE: Cannot find option named 'F64'

module {
func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %1 = "top.Relu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu")
  return %1 : tensor<2x3xf32>
}
}
