// RUN: %python -c "import numpy as np; np.savez('%t.npz', c=np.full(1, 0.5, np.float32), pos=np.linspace(-1, 1, 24, dtype=np.float32).reshape(6, 4))"
// RUN: printf "x 1.27 -1.27 1.27\nscaled 0.635 -0.635 0.635\nadded 2.54 -2.54 2.54\n" > %t.table
// RUN: sed s@WEIGHTS@%t.npz@ %s > %t.mlir
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table" | FileCheck %s
// A tensor times one number (attention's scale of Q and K) is a function
// of its 256 INT8 values: one tpu.Lut, which joins layer groups.
// A constant with the result's elements (a position embedding) is
// quantized in the result's shape, so the INT8 Add has same-shape operands.
// CHECK-LABEL: func.func @binary_const
// CHECK: %[[X:.*]] = "tpu.QuantCast"(%{{.*}}) : (tensor<1x6x4xf32>) -> tensor<1x6x4x!quant.uniform<i8:f32, 1.000000e-02>>
// CHECK: %[[S:.*]] = "tpu.Lut"(%[[X]], %{{.*}}) : (tensor<1x6x4x!quant.uniform<i8:f32, 1.000000e-02>>, tensor<256xi8>) -> tensor<1x6x4x!quant.uniform<i8:f32, 5.000000e-03>>
// CHECK-NOT: "tpu.Mul"
// CHECK: %[[P:.*]] = "top.Weight"() : () -> tensor<1x6x4x!quant.uniform<i8:f32, {{.*}}>>
// CHECK: "tpu.Add"(%[[S]], %[[P]]) {{.*}} -> tensor<1x6x4x!quant.uniform<i8:f32, 2.000000e-02>>
module attributes {top.weight_file = "WEIGHTS"} {
  func.func @binary_const(%arg0: tensor<1x6x4xf32>) -> tensor<1x6x4xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x6x4xf32>) -> tensor<1x6x4xf32> loc("x")
    %c = "top.Weight"() : () -> tensor<1xf32> loc("c")
    %pos = "top.Weight"() : () -> tensor<6x4xf32> loc("pos")
    %1 = "top.Mul"(%0, %c) : (tensor<1x6x4xf32>, tensor<1xf32>) -> tensor<1x6x4xf32> loc("scaled")
    %2 = "top.Add"(%1, %pos) : (tensor<1x6x4xf32>, tensor<6x4xf32>) -> tensor<1x6x4xf32> loc("added")
    return %2 : tensor<1x6x4xf32>
  }
}
