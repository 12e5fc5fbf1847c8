// tpu-mlir's quantize table format: `op_name MODE` per line (tabs or
// spaces), `#` comments and blank lines; modes in any case. Listed ops run
// in their float mode, the rest in INT8, with one cast per changed edge.
// RUN: %python %S/Inputs/quant_inputs.py %t.npz %t.table
// RUN: sed s@WEIGHTS@%t.npz@ %S/lower-quant.mlir > %t.mlir
// RUN: printf "# quantize table\n\n# op_name mode\nconv F16\nadd\tf16\npool BF16\n" > %t.qtable
// RUN: tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table quantize-table=%t.qtable" | FileCheck %s
// RUN: printf "conv F16\nconvv F16\n" > %t.typo
// RUN: not tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table quantize-table=%t.typo" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: printf "conv F8\n" > %t.mode
// RUN: not tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table quantize-table=%t.mode" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: printf "conv\n" > %t.fields
// RUN: not tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table quantize-table=%t.fields" 2>&1 | FileCheck %s --check-prefix=FIELDS
// RUN: printf "encoder.0 F16\nencoder.1 F16\n" > %t.other
// RUN: not tpuc-opt %t.mlir -convert-top-to-tpu="mode=INT8 calibration-table=%t.table quantize-table=%t.other" 2>&1 | FileCheck %s --check-prefix=OTHER

// One cast into the F16 run; the slice between two F16 ops stays F16 (no
// F16 -> INT8 -> F16 round trip) and so does the input shared by conv and add.
// CHECK: %[[X:.*]] = "tpu.QuantCast"(%{{.*}}) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf16>
// CHECK: %[[C:.*]] = "tpu.Conv"(%[[X]], {{.*}} -> tensor<1x2x6x6xf16>
// CHECK-NEXT: %[[S:.*]] = "tpu.Slice"(%[[C]]) {{.*}} -> tensor<1x2x4x4xf16>
// CHECK-NEXT: %[[A:.*]] = "tpu.Add"(%[[S]], %[[X]]) {{.*}} -> tensor<1x2x4x4xf16>
// CHECK-NEXT: "tpu.QuantCast"(%[[A]]) : (tensor<1x2x4x4xf16>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 2.000000e-02>>
// CHECK: "tpu.Lut"
// CHECK-NEXT: "tpu.QuantCast"{{.*}} -> tensor<1x2x4x4xbf16>
// CHECK-NEXT: "tpu.AvgPool"{{.*}} -> tensor<1x2x1x1xbf16>
// CHECK-NEXT: "tpu.Reshape"{{.*}} -> tensor<1x2xbf16>
// CHECK-NEXT: "tpu.QuantCast"{{.*}} : (tensor<1x2xbf16>) -> tensor<1x2x!quant.uniform<i8:f32, 1.000000e-02>>
// CHECK: "tpu.MatMul"{{.*}} -> tensor<1x3x!quant.uniform<i8:f32, 4.000000e-02>>

// UNKNOWN: error: {{.*}}.typo:2: no op named 'convv' in the model
// MODE: error: {{.*}}.mode:1: unknown mode 'F8' for op 'conv' (one of F32, F16, BF16, INT8)
// FIELDS: error: {{.*}}.fields:1: expected 'op_name MODE'
// OTHER: error: quantize table '{{.*}}.other' names none of this model's ops (is it another model's?)
