#ifndef TPUC_BACKEND_PASSES
#define TPUC_BACKEND_PASSES
include "mlir/Pass/PassBase.td"

def AssignAddress : Pass<"tpu-assign-address", "::mlir::ModuleOp"> {
  let summary = "Assign DDR addresses to weights and activations";
  let description = [{
    Lays out the DDR of a Tpu module in two regions. The weight region starts
    at 0 and holds every top.Weight a Tpu op uses, each at an aligned offset.
    The activation region follows it and holds the network inputs and every
    Tpu op result. Activation buffers are reused by linear scan over the
    entry function: a tensor lives from its definition to its last use, and
    two tensors share memory only when their lifetimes do not overlap.
    Network inputs and outputs live for the whole program, so they are never
    overwritten. An op whose CodegenInterface says it aliases an operand
    (tpu.Reshape) gets that operand's address and extends its lifetime.
    The members of a layer group (`tpu.Group`) are placed like other ops,
    a group result where the member value it yields is; the inputs and
    stored results of a group run as a loop (sliced along N or H, chunked
    by rows) live through the whole group. Values a group keeps in local
    memory (not yielded) get no DDR unless `layer-group=false`, for
    `tpu-codegen{layer-group=false}`, which emits each member on its own.

    Every placed value's defining op gets `ddr.addr` (an absolute byte
    address); the module gets `tpu.weight_size`, `tpu.activation_addr` and
    `tpu.activation_size`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
    Option<"alignment", "alignment", "int64_t", "64",
           "Byte alignment of every tensor (at least the DDR burst is best)">,
    Option<"layerGroup", "layer-group", "bool", "true",
           "Values kept inside a tpu.Group get no DDR (false: place them, "
           "to emit the members on their own)">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}

def RecomputeScaledMap : Pass<"tpu-recompute-scaled-map", "::mlir::ModuleOp"> {
  let summary = "Recompute a feature map scaled by a reduction of itself";
  let description = [{
    A squeeze-excitation block multiplies a feature map `m` by per-channel
    scales computed from a global pool of `m`: the pool needs all of `m`
    before the multiply can start, so `m` goes to DDR and is read back.
    When the chain of groupable ops producing `m` from tensors at most half
    its size (the frontier) costs fewer TIU cycles than the DDR bytes it
    saves (`m` stored and read back, against the frontier read again), the
    multiply reads a copy of that chain instead: the pool's layer group then
    keeps `m` in local memory and the multiply's group recomputes it.
    Run before tpu-layer-group.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}

def TransposeAsMatMul : Pass<"tpu-transpose-as-matmul", "::mlir::ModuleOp"> {
  let summary = "Compute small F32 2-D transposes as matmuls by an identity";
  let description = [{
    A transpose of an F32 [C, W] matrix (leading dims of 1) moves its
    elements across the lanes, which no instruction does in local memory:
    a layer group stores the matrix and loads it back transposed, a DDR
    round trip of twice the DDR latency on the critical path (a conv
    stem's [C, tokens] features turned into tokens). With W at most the
    lanes, the transpose becomes the matmul I_W x X^T (the instruction's
    transposed right operand) by a constant identity [W, W], a few TIU
    cycles that keep the matrix in the group. Exact: each result element
    is one product by 1 plus products by 0. A Concat of constants along
    the rows taking the transpose (a ViT's class token before its patch
    tokens) folds in: the identity's rows sit at the transpose's place and
    an Add of the constants (zeros elsewhere) fills the other rows, so the
    Concat, which moves rows across the lanes, leaves no DDR round trip
    either. A transpose of a tensor read as a matrix [C, W] (NCHW to NHWC:
    [C, H W]) does the same between Reshapes to and from the matrix, when
    the identity is no larger than the round trip (W at most 2 C). A
    transpose of F32 tokens [T, C] to channels whose only user is a global
    average pool (a Swin head's permute and pool) becomes the matmul of a
    constant row of 1/T by the tokens: the mean over the lanes, as the row
    [1, C] a classifier reads (not exact: each product by 1/T rounds). Run
    before tpu-layer-group; needs the module's weight file.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}

def RowGatherAsMatMul : Pass<"tpu-row-gather-as-matmul", "::mlir::ModuleOp"> {
  let summary = "Compute F32 row gathers across the lanes as matmuls by a 0/1 matrix";
  let description = [{
    A chain of Reshapes, Permutes, Slices and Concats whose result, read as
    rows of its single source's last dim C, takes every row from one row
    of the source X [R, C] (a shifted-window transformer's cyclic shift
    and window partition, and their inverses) moves the rows across the
    lanes, which no local-memory instruction does but the matmul: a layer
    group would store X and load it back reordered, a DDR round trip. It
    becomes the matmul P x X by a constant P [R', R] with one 1 per row,
    its result in the chain's shape (batches of rows when the last dim is
    C), when loading P and the matmul's TIU work cost less than that round
    trip by the target's figures. Only chains with an op that cannot
    compute in a group (its elements change lanes) are rewritten. Exact:
    each result element is one product by 1 plus products by 0. Run before
    tpu-layer-group; needs the module's weight file.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}

def MaskedWindowAttention : Pass<"tpu-masked-window-attention", "::mlir::ModuleOp"> {
  let summary = "Attend over all the rows of an F32 window attention block, masked by a constant bias";
  let description = [{
    A block that gathers its rows into windows by a 0/1 permutation (from
    tpu-row-gather-as-matmul), projects them, attends within each window
    (constant biases added to the scores), projects back and scatters the
    rows by the inverse permutation becomes the projections of the rows in
    place, attention over all of them with one constant bias [H, R, R]
    (each window's biases at its rows' pairs, -1e30 between windows, which
    the softmax makes exact zeros) and the output projection. No gather or
    scatter remains, nor any tensor held a window at a time, which a layer
    group would refold across the lanes by GDMA moves. The scores of a head
    take R lanes where the windows' took N of them B times over: the same
    work per lane. Run after tpu-row-gather-as-matmul, before
    tpu-layer-group; needs the module's weight file.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}

def FoldNormAffine : Pass<"tpu-fold-norm-affine", "::mlir::ModuleOp"> {
  let summary = "Fold an F32 LayerNorm's scale and shift into the linear layers reading it";
  let description = [{
    A LayerNorm whose every user is a linear layer by a weight (the norms
    of a pre-norm transformer) scales and shifts its result only for the
    layers' weights to multiply it: (n * gamma + beta) W + b equals
    n (diag(gamma) W) + (beta W + b). The pass computes each layer's new
    weight and bias and drops the norm's affine, so the norm runs two
    elementwise instructions fewer and loads no gamma and beta. The
    normalized tensor is renamed (`<name>_normalized`): it is no longer
    the model's. Run before tpu-transpose-linear; needs the module's
    weight file.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}

def FoldScale : Pass<"tpu-fold-scale", "::mlir::ModuleOp"> {
  let summary = "Fold F32 scales by a constant into the linear layer before them";
  let description = [{
    A Mul by a one-element constant of the result of a linear layer by a
    weight, directly or through Reshapes and Permutes (each the single user
    of the one before; attention's scaled queries and keys behind the head
    split), becomes the layer's weight and bias times the constant: one
    elementwise instruction fewer. The layer and the moves take new names
    (`<name>_scaled`): they no longer compute the model's tensors. Run
    before tpu-transpose-linear; needs the module's weight file.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}

def TransposeLinear : Pass<"tpu-transpose-linear", "::mlir::ModuleOp"> {
  let summary = "Compute F32 linear layers of few rows transposed";
  let description = [{
    The matmul instruction puts the result's rows on the lanes: a linear
    layer Y = X W + b over M tokens, M below the lanes, keeps most lanes
    idle and costs each lane N x K MACs. Where the chip's matmul cost says
    it pays, the layer computes Y^T = W^T X^T instead (the weight stored
    transposed, X read as the instruction's transposed right operand, the
    N features on the lanes, M x K MACs a lane), and the tokens return to
    the lanes through the matmul by the identity I_M, which adds the bias
    (exact: one product by 1 plus products by 0). A layer whose result
    only goes through activations into a second linear layer (an MLP)
    keeps the hidden result transposed: its bias is added as a column,
    the activations run on it and the second layer reads it as its plain
    right operand, so only the MLP's result goes back. Run before
    tpu-layer-group; needs the module's weight file.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}

def LayerGroup : Pass<"tpu-layer-group", "::mlir::ModuleOp"> {
  let summary = "Group consecutive Tpu ops whose tensors stay in local memory";
  let description = [{
    Partitions each function into layer groups: runs of consecutive Tpu
    ops that can compute on LMEM-resident tensors
    (CodegenInterface::supportsLocal: convolutions, pooling, activations,
    broadcasting binary ops on 4-D tensors; elementwise ops on tensors of
    lower rank in a rows view, chunked when too big) and whose inputs, weights,
    results and scratch fit the chip's local memory together, dead tensors'
    space being reused: whole, or else as a loop over slices of the batch
    (N, no halo) and/or of rows (H) with the halos the windows need (run
    this pass before tpu-assign-address, which keeps a sliced group's
    inputs and results apart). The ops of each group move into the region
    of a `tpu.Group`, which yields the values used after the group (its
    results replace them there) and records the plan chosen (`n_slices`,
    `h_slices`, `row_chunk`);
    groups already in the input are dissolved first. tpu-codegen then loads each group input once (per slice), computes LMEM
    to LMEM and stores only the results used after the group or returned,
    so the other results are never in DDR (and cannot be dumped). The runs
    are chosen by dynamic programming over a cost model (TIU cycles, DDR
    bytes and latency of a group against each op's own pipelined codegen);
    a run of one op is not a group.
    INT8 ops join when their codegenLocal handles the quantized form
    (CodegenInterface::localQuantized: convolutions with their requant
    epilogue, max pooling, Add/Sub/Mul).
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
    Option<"maxOps", "max-ops", "int64_t", "128",
           "Most ops in one group (0: no limit)">,
    Option<"printPlan", "print-plan", "bool", "false",
           "Report each group's plan (its LMEM buffers, the rows of every "
           "slice, the estimated cycles) as a remark on the group">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}

def Codegen : Pass<"tpu-codegen", "::mlir::ModuleOp"> {
  let summary = "Emit GDMA/TIU instructions and write a bmodel";
  let description = [{
    Builds the weight blob (reordering weights into the layouts the chip
    wants, see CodegenInterface::layoutWeight), then lets each Tpu op emit
    its instructions through CodegenInterface, tiling its tensors to fit the
    local memory and double-buffering loads against compute. The ops of a
    `tpu.Group` (formed by tpu-layer-group) are emitted together with
    LMEM-resident tensors (CodegenInterface::codegenLocal), planned as the
    group's attributes say. Every result stored to DDR
    becomes a named tensor the runtime can dump; results kept in a group's
    local memory are not. Needs the addresses
    from tpu-assign-address. The module gets `tpu.macs` (multiply-accumulates
    of the network: not those of recomputed copies or of matmuls by the
    constants a pass made to move data, `tpu.data_movement`) and the
    instruction counts.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"tpu_edge\"",
           "Target chip: a name in chips/ or a path to a description">,
    Option<"bmodel", "bmodel", "std::string", "\"\"",
           "Output .bmodel path (empty: generate and check only)">,
    Option<"layerGroup", "layer-group", "bool", "true",
           "Emit the tpu.Group ops as groups (false: every member on its "
           "own with its result stored, so every tensor can be dumped)">,
    Option<"weightPrefetch", "weight-prefetch", "bool", "true",
           "Load the first weight tiles of a DDR-bound op while the "
           "compute-bound ops before it leave the DDR idle (WeightPrefetch.h)">,
  ];
  let dependentDialects = ["::tpu::TpuDialect", "::top::TopDialect"];
}
#endif
