// The named pipelines expand to the passes the Python flow runs.
// RUN: tpuc-opt %s --pass-pipeline="builtin.module(top-transform-pipeline)" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOPPM
// RUN: tpuc-opt %s -top-transform-pipeline -mlir-print-debuginfo | tpuc-opt --pass-pipeline="builtin.module(top-to-tpu-pipeline{mode=F16 chip=tpu_pro})" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOWERPM
// RUN: tpuc-opt %s -top-transform-pipeline -top-to-tpu-pipeline="chip=tpu_pro" -mlir-print-debuginfo | tpuc-opt --pass-pipeline="builtin.module(tpu-codegen-pipeline{chip=tpu_pro layer-group=false})" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=CODEGENPM
// RUN: tpuc-opt %s -top-transform-pipeline -top-to-tpu-pipeline="mode=BF16 chip=tpu_pro" | FileCheck %s --check-prefix=LOWER
// RUN: tpuc-opt %s -top-transform-pipeline -top-to-tpu-pipeline="mode=F32" -tpu-codegen-pipeline | FileCheck %s --check-prefix=CODEGEN
// RUN: not tpuc-opt %s -top-to-tpu-pipeline="mode=F64" 2>&1 | FileCheck %s --check-prefix=BADMODE

// TOPPM: top-shape-infer
// TOPPM-NEXT: canonicalize
// LOWERPM: convert-top-to-tpu{asymmetric=false calibration-table= chip=tpu_pro fallback=F16 mode=F16 quantize-table=}
// LOWERPM-NEXT: canonicalize
// CODEGENPM: tpu-assign-address{alignment=64 chip=tpu_pro layer-group=false}
// CODEGENPM-NOT: tpu-layer-group
// CODEGENPM-NEXT: tpu-codegen{bmodel= chip=tpu_pro layer-group=false weight-prefetch=true}

// LOWER: module attributes {tpu.chip = "tpu_pro", tpu.mode = #tpu.mode<BF16>}
// LOWER: "tpu.Active"(%{{.*}}) <{mode = "relu"}> : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
// CODEGEN: tpu.macs = 0
// CODEGEN-SAME: tpu.tiu_instructions =
// BADMODE: Cannot find option named 'F64'

func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %1 = "top.Relu"(%0) : (tensor<2x3xf32>) -> tensor<*xf32> loc("relu")
  %2 = "top.Relu"(%1) : (tensor<*xf32>) -> tensor<2x3xf32> loc("relu2")
  return %2 : tensor<2x3xf32>
}
