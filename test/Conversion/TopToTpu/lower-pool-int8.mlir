// RUN: printf "x 1.27 -1.27 1.27\ngap 0.254 -0.254 0.254\n" > %t.table
// RUN: tpuc-opt %s -convert-top-to-tpu="mode=INT8 calibration-table=%t.table" | FileCheck %s
// A large plane's global average pools its rows first; the row means are
// no tensor of the model (not in the calibration table) and keep the
// input's type, as their range is within the input's.
// CHECK-LABEL: func.func @global_avgpool_large
// CHECK: %[[X:.*]] = "tpu.QuantCast"(%{{.*}}) : (tensor<1x2x72x72xf32>) -> tensor<1x2x72x72x!quant.uniform<i8:f32, 1.000000e-02>>
// CHECK: %[[R:.*]] = "tpu.AvgPool"(%[[X]]) {{.*}} -> tensor<1x2x72x1x!quant.uniform<i8:f32, 1.000000e-02>>
// CHECK: "tpu.AvgPool"(%[[R]]) {{.*}} -> tensor<1x2x1x1x!quant.uniform<i8:f32, 2.000000e-03>>
func.func @global_avgpool_large(%arg0: tensor<1x2x72x72xf32>) -> tensor<1x2x1x1xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x2x72x72xf32>) -> tensor<1x2x72x72xf32> loc("x")
  %1 = "top.GlobalAvgPool"(%0) : (tensor<1x2x72x72xf32>) -> tensor<1x2x1x1xf32> loc("gap")
  return %1 : tensor<1x2x1x1xf32>
}
