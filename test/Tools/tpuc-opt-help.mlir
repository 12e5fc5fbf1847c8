// RUN: tpuc-opt --help | FileCheck %s
// Every tpuc pass is registered with the driver.

// CHECK-DAG: --convert-top-to-tpu
// CHECK-DAG: --top-shape-infer
// CHECK-DAG: --tpu-assign-address
// CHECK-DAG: --tpu-codegen
// CHECK-DAG: --tpu-layer-group
