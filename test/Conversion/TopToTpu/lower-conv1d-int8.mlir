// RUN: %python -c "import numpy as np; np.savez('%t.npz', w=np.ones((4, 2, 3), np.float32), b=np.zeros(4, np.float32))"
// RUN: printf "x 1.27 -1.27 1.27\nconv 2.54 -2.54 2.54\n" > %t.table
// RUN: sed s@WEIGHTS@%t.npz@ %s > %t.mlir
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table" | FileCheck %s
// The chip convolves in 2-D: a 1-D conv's input is viewed at height 1 by a
// reshape no calibration saw, which takes its operand's calibrated type.
// CHECK-LABEL: func.func @conv1d
// CHECK: %[[R:.*]] = "tpu.Reshape"(%{{.*}}) : (tensor<1x2x8xf32>) -> tensor<1x2x1x8xf32>
// CHECK: %[[Q:.*]] = "tpu.QuantCast"(%[[R]]) : (tensor<1x2x1x8xf32>) -> tensor<1x2x1x8x!quant.uniform<i8:f32, 1.000000e-02>>
// CHECK: "tpu.Conv"(%[[Q]], {{.*}} -> tensor<1x4x1x8x!quant.uniform<i8:f32, 2.000000e-02>>
module attributes {top.weight_file = "WEIGHTS"} {
  func.func @conv1d(%arg0: tensor<1x2x8xf32>) -> tensor<1x4x8xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x2x8xf32>) -> tensor<1x2x8xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<4x2x3xf32> loc("w")
    %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
    %1 = "top.Conv"(%0, %w, %b) {kernel_shape = [3], strides = [1], pads = [1, 1], dilations = [1]} : (tensor<1x2x8xf32>, tensor<4x2x3xf32>, tensor<4xf32>) -> tensor<1x4x8xf32> loc("conv")
    return %1 : tensor<1x4x8xf32>
  }
}
