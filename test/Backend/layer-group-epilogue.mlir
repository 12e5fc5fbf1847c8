// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge" | FileCheck %s
// RUN: tpuc-opt %s -split-input-file -tpu-layer-group="chip=tpu_edge print-plan=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN

// The FFN input projection of a BERT-base layer on the small chip: its
// 768x3072 F32 weight does not fit local memory with the GELU, so the GELU
// becomes the matmul's epilogue, applied to each output tile before its
// store; the matmul's own result never reaches DDR.
// CHECK-LABEL: func.func @ffn_gelu
// CHECK: tpu.Group -> (tensor<1x128x3072xf32>) attributes {tile_epilogue = true} {
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: tpu.Yield
// PLAN: layer group plan: 2 ops, the first one's tiled code with the rest applied to each output tile
// PLAN-NEXT: {{^}}  estimated {{[0-9]+}} cycles
func.func @ffn_gelu(%arg0: tensor<1x128x768xf32>) -> tensor<1x128x3072xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<768x3072xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<3072xf32> loc("b")
  %m = "tpu.MatMul"(%x, %w, %b) : (tensor<1x128x768xf32>, tensor<768x3072xf32>, tensor<3072xf32>) -> tensor<1x128x3072xf32> loc("m")
  %g = "tpu.Active"(%m) {mode = "gelu"} : (tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32> loc("g")
  return %g : tensor<1x128x3072xf32>
}

// -----

// A matmul result used twice keeps its own store: no epilogue group.
// CHECK-LABEL: func.func @two_users
// CHECK-NOT: tile_epilogue
// CHECK: return
func.func @two_users(%arg0: tensor<1x128x768xf32>) -> (tensor<1x128x3072xf32>, tensor<1x128x3072xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x128x768xf32>) -> tensor<1x128x768xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<768x3072xf32> loc("w")
  %none = "top.None"() : () -> none
  %m = "tpu.MatMul"(%x, %w, %none) : (tensor<1x128x768xf32>, tensor<768x3072xf32>, none) -> tensor<1x128x3072xf32> loc("m")
  %g = "tpu.Active"(%m) {mode = "gelu"} : (tensor<1x128x3072xf32>) -> tensor<1x128x3072xf32> loc("g")
  return %m, %g : tensor<1x128x3072xf32>, tensor<1x128x3072xf32>
}

// -----

// A ResNet layer3 conv on the small chip: its 256x256x3x3 F32 filter does
// not fit local memory, so the residual Add (with its ReLU) becomes the
// conv's epilogue: each output tile adds the residual's tile, loaded next
// to it, before its store.
// CHECK-LABEL: func.func @conv_residual
// CHECK: tpu.Group -> (tensor<1x256x14x14xf32>) attributes {tile_epilogue = true} {
// CHECK-NEXT: "tpu.Conv"
// CHECK-NEXT: "tpu.Add"
// CHECK-NEXT: tpu.Yield
// PLAN: layer group plan: 2 ops, the first one's tiled code with the rest applied to each output tile
func.func @conv_residual(%arg0: tensor<1x256x14x14xf32>, %arg1: tensor<1x256x14x14xf32>) -> tensor<1x256x14x14xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x256x14x14xf32>) -> tensor<1x256x14x14xf32> loc("x")
  %r = "top.Input"(%arg1) : (tensor<1x256x14x14xf32>) -> tensor<1x256x14x14xf32> loc("r")
  %w = "top.Weight"() : () -> tensor<256x256x3x3xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<256xf32> loc("b")
  %none = "top.None"() : () -> none
  %c = "tpu.Conv"(%x, %w, %b) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1]} : (tensor<1x256x14x14xf32>, tensor<256x256x3x3xf32>, tensor<256xf32>) -> tensor<1x256x14x14xf32> loc("c")
  %a = "tpu.Add"(%c, %r) {do_relu = true} : (tensor<1x256x14x14xf32>, tensor<1x256x14x14xf32>) -> tensor<1x256x14x14xf32> loc("a")
  return %a : tensor<1x256x14x14xf32>
}

// -----

// The whole FFN of a BERT-base layer in F16 on the small chip: the chain
// closes with the second matmul, so the pair fuses and runs in chunks of
// the 3072 hidden columns; the GELU's result never reaches DDR and each
// weight is read once.
// CHECK-LABEL: func.func @ffn_pair
// CHECK: tpu.Group -> (tensor<1x128x768xf16>) attributes {tile_epilogue = true} {
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: tpu.Yield
// PLAN: layer group plan: 3 ops, a fused matmul pair in chunks of 64 hidden columns
// PLAN-NEXT: {{^}}  estimated {{[0-9]+}} cycles
func.func @ffn_pair(%arg0: tensor<1x128x768xf16>) -> tensor<1x128x768xf16> {
  %x = "top.Input"(%arg0) : (tensor<1x128x768xf16>) -> tensor<1x128x768xf16> loc("x")
  %w = "top.Weight"() : () -> tensor<768x3072xf16> loc("w")
  %b = "top.Weight"() : () -> tensor<3072xf16> loc("b")
  %m = "tpu.MatMul"(%x, %w, %b) : (tensor<1x128x768xf16>, tensor<768x3072xf16>, tensor<3072xf16>) -> tensor<1x128x3072xf16> loc("m")
  %g = "tpu.Active"(%m) {mode = "gelu"} : (tensor<1x128x3072xf16>) -> tensor<1x128x3072xf16> loc("g")
  %w2 = "top.Weight"() : () -> tensor<3072x768xf16> loc("w2")
  %b2 = "top.Weight"() : () -> tensor<768xf16> loc("b2")
  %y = "tpu.MatMul"(%g, %w2, %b2) : (tensor<1x128x3072xf16>, tensor<3072x768xf16>, tensor<768xf16>) -> tensor<1x128x768xf16> loc("y")
  return %y : tensor<1x128x768xf16>
}

// -----

// The residual broadcast along H is no tile of the result: no epilogue.
// CHECK-LABEL: func.func @conv_broadcast
// CHECK-NOT: tile_epilogue
// CHECK: return
func.func @conv_broadcast(%arg0: tensor<1x256x14x14xf32>, %arg1: tensor<1x256x1x14xf32>) -> tensor<1x256x14x14xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x256x14x14xf32>) -> tensor<1x256x14x14xf32> loc("x")
  %r = "top.Input"(%arg1) : (tensor<1x256x1x14xf32>) -> tensor<1x256x1x14xf32> loc("r")
  %w = "top.Weight"() : () -> tensor<256x256x3x3xf32> loc("w")
  %none = "top.None"() : () -> none
  %c = "tpu.Conv"(%x, %w, %none) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1]} : (tensor<1x256x14x14xf32>, tensor<256x256x3x3xf32>, none) -> tensor<1x256x14x14xf32> loc("c")
  %a = "tpu.Add"(%c, %r) : (tensor<1x256x14x14xf32>, tensor<1x256x1x14xf32>) -> tensor<1x256x14x14xf32> loc("a")
  return %a : tensor<1x256x14x14xf32>
}

// -----

// The GELU's result also returned: the second matmul cannot take it from
// local memory, so only the GELU joins the first matmul as its epilogue.
// CHECK-LABEL: func.func @pair_hidden_used
// CHECK: tpu.Group -> (tensor<1x128x3072xf16>) attributes {tile_epilogue = true} {
// CHECK-NEXT: "tpu.MatMul"
// CHECK-NEXT: "tpu.Active"
// CHECK-NEXT: tpu.Yield
// CHECK: "tpu.MatMul"
// CHECK: return
func.func @pair_hidden_used(%arg0: tensor<1x128x768xf16>) -> (tensor<1x128x768xf16>, tensor<1x128x3072xf16>) {
  %x = "top.Input"(%arg0) : (tensor<1x128x768xf16>) -> tensor<1x128x768xf16> loc("x")
  %w = "top.Weight"() : () -> tensor<768x3072xf16> loc("w")
  %b = "top.Weight"() : () -> tensor<3072xf16> loc("b")
  %m = "tpu.MatMul"(%x, %w, %b) : (tensor<1x128x768xf16>, tensor<768x3072xf16>, tensor<3072xf16>) -> tensor<1x128x3072xf16> loc("m")
  %g = "tpu.Active"(%m) {mode = "gelu"} : (tensor<1x128x3072xf16>) -> tensor<1x128x3072xf16> loc("g")
  %w2 = "top.Weight"() : () -> tensor<3072x768xf16> loc("w2")
  %b2 = "top.Weight"() : () -> tensor<768xf16> loc("b2")
  %y = "tpu.MatMul"(%g, %w2, %b2) : (tensor<1x128x3072xf16>, tensor<3072x768xf16>, tensor<768xf16>) -> tensor<1x128x768xf16> loc("y")
  return %y, %g : tensor<1x128x768xf16>, tensor<1x128x3072xf16>
}

// -----

// A DenseNet transition on the small chip: the BatchNorm and ReLU (a
// per-channel 1x1 conv) feed only a 1024->512 1x1 conv whose 2 MiB F32
// filter does not fit local memory with it, so they become the conv's
// prologue, applied to each input tile after its load; the normalized
// feature map never reaches DDR.
// CHECK-LABEL: func.func @transition_prologue
// CHECK: tpu.Group -> (tensor<1x512x14x14xf32>) attributes {tile_epilogue = true} {
// CHECK-NEXT: "tpu.Conv"{{.*}}group = 1024
// CHECK-NEXT: "tpu.Conv"{{.*}}group = 1 :
// CHECK-NEXT: tpu.Yield
// PLAN: layer group plan: 2 ops, the second one's tiled code with the first applied to each input tile
func.func @transition_prologue(%arg0: tensor<1x1024x14x14xf32>) -> tensor<1x512x14x14xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x1024x14x14xf32>) -> tensor<1x1024x14x14xf32> loc("x")
  %s = "top.Weight"() : () -> tensor<1024x1x1x1xf32> loc("s")
  %b = "top.Weight"() : () -> tensor<1024xf32> loc("b")
  %w = "top.Weight"() : () -> tensor<512x1024x1x1xf32> loc("w")
  %none = "top.None"() : () -> none
  %n = "tpu.Conv"(%x, %s, %b) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 1024 : i64, do_relu = true} : (tensor<1x1024x14x14xf32>, tensor<1024x1x1x1xf32>, tensor<1024xf32>) -> tensor<1x1024x14x14xf32> loc("n")
  %c = "tpu.Conv"(%n, %w, %none) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x1024x14x14xf32>, tensor<512x1024x1x1xf32>, none) -> tensor<1x512x14x14xf32> loc("c")
  return %c : tensor<1x512x14x14xf32>
}

// -----

// The same BatchNorm with a second user (returned too) must reach DDR: no
// prologue.
// CHECK-LABEL: func.func @shared_bn_no_prologue
// CHECK-NOT: tile_epilogue
func.func @shared_bn_no_prologue(%arg0: tensor<1x1024x14x14xf32>) -> (tensor<1x1024x14x14xf32>, tensor<1x512x14x14xf32>) {
  %x = "top.Input"(%arg0) : (tensor<1x1024x14x14xf32>) -> tensor<1x1024x14x14xf32> loc("x")
  %s = "top.Weight"() : () -> tensor<1024x1x1x1xf32> loc("s")
  %b = "top.Weight"() : () -> tensor<1024xf32> loc("b")
  %w = "top.Weight"() : () -> tensor<512x1024x1x1xf32> loc("w")
  %none = "top.None"() : () -> none
  %n = "tpu.Conv"(%x, %s, %b) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 1024 : i64, do_relu = true} : (tensor<1x1024x14x14xf32>, tensor<1024x1x1x1xf32>, tensor<1024xf32>) -> tensor<1x1024x14x14xf32> loc("n")
  %c = "tpu.Conv"(%n, %w, %none) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x1024x14x14xf32>, tensor<512x1024x1x1xf32>, none) -> tensor<1x512x14x14xf32> loc("c")
  return %n, %c : tensor<1x1024x14x14xf32>, tensor<1x512x14x14xf32>
}
