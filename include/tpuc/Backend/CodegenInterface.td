#ifndef TPUC_BACKEND_CODEGENINTERFACE
#define TPUC_BACKEND_CODEGENINTERFACE
include "mlir/IR/OpBase.td"

def CodegenInterface : OpInterface<"CodegenInterface"> {
  let description = [{
    How a Tpu op becomes chip instructions. Implemented for Tpu ops as
    external models registered by the Backend library, so the Tpu dialect
    does not depend on it.
  }];
  let cppNamespace = "::tpuc::backend";
  let methods = [
    InterfaceMethod<[{
        Emits the GDMA/TIU instructions computing the op's result from its
        operands' DDR addresses into its own. Errors are op diagnostics.
      }], "::mlir::LogicalResult", "codegen",
      (ins "::tpuc::backend::CodegenContext &":$ctx)>,
    InterfaceMethod<[{
        Rearranges the elements of constant operand `operandIndex` into the
        layout the op's instructions read: `data` holds the row-major
        element indices (the operand's type shape) and is permuted as the
        data would be; the blob then stores element data[i] at position i,
        whatever the element type. `target` is the chip the blob is for
        (a layout may follow its lanes).
      }], "::mlir::LogicalResult", "layoutWeight",
      (ins "unsigned":$operandIndex, "std::vector<int64_t> &":$data,
           "const ::tpuc::chip::Target &":$target), "",
      [{ return ::mlir::success(); }]>,
    InterfaceMethod<[{
        Index of the operand whose DDR buffer the result shares (no copy),
        or -1 when the result needs its own buffer.
      }], "int", "aliasedOperand", (ins), "", [{ return -1; }]>,
    InterfaceMethod<[{
        Byte offset of the result inside the aliased operand's buffer (a
        contiguous view such as a channel range of an NCHW tensor).
      }], "int64_t", "aliasedByteOffset", (ins), "", [{ return 0; }]>,
    InterfaceMethod<[{
        Whether codegen (outside a layer group) writes the result in the
        strided blocks tpu-assign-address places it in (kBlockStrideAttr:
        runs of `block` elements `stride` apart), so a Concat with dims
        before its axis may hold it in place.
      }], "bool", "writesBlocks", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{ Multiply-accumulates the op performs (roofline). }],
      "int64_t", "getMacs", (ins), "", [{ return 0; }]>,
    InterfaceMethod<[{
        Whether the op can compute on whole LMEM-resident tensors (the
        canonical channels-across-lanes layout) inside a layer group.
      }], "bool", "supportsLocal", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{
        Whether codegenLocal is purely elementwise (operands broadcasting
        against the result), so a group may hold the op's tensors in any
        common 4-D view of their row-major data, not only as NCHW.
      }], "bool", "localElementwise", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{
        Whether codegenLocal may write its result over operand
        `operandIndex` when that operand has the result's local shape and
        type and dies at this op: every element of the result reads only
        the element of the operand at its own position (an instruction
        reads its operands at its start, so a group then needs no second
        buffer for the pair).
      }], "bool", "localInPlace", (ins "unsigned":$operandIndex), "",
      [{ return ::llvm::cast<::tpuc::backend::CodegenInterface>(
                   $_op.getOperation()).localElementwise(); }]>,
    InterfaceMethod<[{
        Whether codegenLocal computes each row of the innermost dim on its
        own (elementwise ops, and reductions or normalizations along the
        last axis), so a group may hold the op's tensors in the rows view
        [1, C, H, W] (rows of W spread over the lanes) and cut them into
        chunks of rows; operands of the row's size are [1, 1, 1, W].
      }], "bool", "localRowwise", (ins), "",
      [{ return ::llvm::cast<::tpuc::backend::CodegenInterface>(
                   $_op.getOperation()).localElementwise(); }]>,
    InterfaceMethod<[{
        Whether codegenLocal, in the matrix view [batch, rows, 1, cols],
        computes each row of the result from the same row of its operands
        of the result's batch and from operands shared by every row (a
        weight without batch dims, a row-broadcast bias or a scalar), so a
        group whose ops all do may fold the batch into the rows, [1,
        batch * rows, 1, cols]: the same row-major data on more lanes.
      }], "bool", "localFoldsBatch", (ins), "",
      [{ return ::llvm::cast<::tpuc::backend::CodegenInterface>(
                   $_op.getOperation()).localRowwise(); }]>,
    InterfaceMethod<[{
        The 4-D shape operand `operandIndex` has in LMEM inside a group (its
        DDR buffer holds it densely in this shape). Empty: the type's shape
        with leading 1s.
      }], "::llvm::SmallVector<int64_t, 4>", "localShape",
      (ins "unsigned":$operandIndex), "", [{ return {}; }]>,
    InterfaceMethod<[{
        The 4-D shape the result has in LMEM inside a group (stored densely
        in this shape). Empty: the type's shape, which must be 4-D.
      }], "::llvm::SmallVector<int64_t, 4>", "localResultShape", (ins), "",
      [{ return {}; }]>,
    InterfaceMethod<[{
        Whether codegenLocal takes, in the matrix view [batch, rows, 1,
        cols], an operand broadcast over a split of the batch dims (see
        batchBroadcast) held as [its batches, rows, 1, cols], beside an
        operand of the result's size.
      }], "bool", "localBatchBroadcast", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{
        Whether codegenLocal also handles the op's INT8 (quantized) form,
        whose operands (filters, INT32 biases, requant tables) need not
        share the result's element type.
      }], "bool", "localQuantized", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{
        Scratch tensors of the result's shape that codegenLocal needs.
      }], "unsigned", "localTemps", (ins), "", [{ return 0; }]>,
    InterfaceMethod<[{
        On `target`: over how many times the lanes of its result's channels
        codegenLocal can spread its work (a conv to few channels computing
        partial sums over parts of its input channels on the idle lanes),
        1 for none, when the partial sums are added by LMEM moves of their
        upper half and an add per halving (`moves`; the adds wait for the
        GDMA) or by a 1x1 conv. The group records its choice
        (GroupPlan::lanes, LocalOperands::lanes); above 1 part the op has
        one more scratch tensor of the result's shape beyond localTemps.
      }], "unsigned", "localLaneParts",
      (ins "const ::tpuc::chip::Target &":$target, "bool":$moves), "",
      [{ return 1; }]>,
    InterfaceMethod<[{
        On a chip of `lanes` lanes: the TIU work codegenLocal issues per
        lane (element operations, so cycles times the execution units),
        when it is not the MACs (or result elements) spread over the lanes
        of the result's channels, as for an op reading across the lanes;
        0: that spread.
      }], "int64_t", "localLaneWork", (ins "unsigned":$lanes), "",
      [{ return 0; }]>,
    InterfaceMethod<[{
        On a chip of `lanes` lanes: how many GDMA moves from local memory to
        local memory codegenLocal issues (elements moving to other lanes,
        which only the GDMA does); 0: none. They queue behind the loads the
        group issues up front.
      }], "unsigned", "localGdmaMoves", (ins "unsigned":$lanes), "",
      [{ return 0; }]>,
    InterfaceMethod<[{
        In a group of whole tensors: how many equal parts of its columns
        (W, a multiple of it) weight operand `index` is loaded in, each by
        its own GDMA instruction into its own dense block, so codegenLocal
        can start on the first part while the rest arrive
        (LocalTensor::partLoads). 1: one load in the usual layout.
      }], "unsigned", "localColumnParts", (ins "unsigned":$index), "",
      [{ return 1; }]>,
    InterfaceMethod<[{
        On a chip of `lanes` lanes, in a group of whole tensors: how many
        equal parts of its rows (C, whole slots of the lanes) weight
        operand `index` is loaded in, each by its own GDMA instruction in
        the usual layout (part p at p times its bytes per lane,
        LocalTensor::partLoads), so codegenLocal can start on the first
        part while the rest arrive. 1: one load. Only asked when
        localColumnParts is 1.
      }], "unsigned", "localRowParts", (ins "unsigned":$index, "unsigned":$lanes), "",
      [{ return 1; }]>,
    InterfaceMethod<[{
        Element type of scratch tensor `index` (null: the result's), e.g.
        the INT32 accumulator of a quantized op.
      }], "::mlir::Type", "localTempType", (ins "unsigned":$index), "",
      [{ return {}; }]>,
    InterfaceMethod<[{
        Rows [inLo, inHi) of NCHW operand `operandIndex` (not a weight)
        that computing rows [lo, hi) of the result reads, for layer groups
        sliced along H; false when the op cannot compute a slice of rows.
        Elementwise ops read the same rows (one row when broadcast along H).
      }], "bool", "localInputRows",
      (ins "unsigned":$operandIndex, "int64_t":$lo, "int64_t":$hi,
           "int64_t &":$inLo, "int64_t &":$inHi), "",
      [{ return ::tpuc::backend::elementwiseInputRows(
             $_op.getOperation(), operandIndex, lo, hi, inLo, inHi); }]>,
    InterfaceMethod<[{
        In a group of whole tensors: whether the op computes runs of its
        output channels from the matching runs of its filter (operand 1,
        channels on the lanes) on their own, so a large filter loads in
        runs of whole lane slots and each run computes once it is in
        (codegenLocal called per run, on channel views of the filter, bias
        and result).
      }], "bool", "localChannelRuns", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{
        Whether a group that does not compute the op's first operand
        computes the op by loading its result straight from that operand's
        DDR buffer (codegenLocalLoad), holding no copy of the operand: a
        transpose whose elements change lanes, which no instruction does
        in LMEM. supportsLocal() also holds for such ops.
      }], "bool", "localLoad", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{
        Estimated GDMA cycles of codegenLocalLoad, DDR latency included
        (its moves may read short runs of whole bursts); 0: a dense load
        of the result. Only asked when localLoad() holds.
      }], "double", "localLoadCycles",
      (ins "const ::tpuc::chip::Target &":$target), "",
      [{ return 0; }]>,
    InterfaceMethod<[{
        Whether codegenLocal computes the op from an operand held in the
        group (false: only localLoad can).
      }], "bool", "localCompute", (ins), "", [{ return true; }]>,
    InterfaceMethod<[{
        Whether, inside a group, the result is a run of operand 0's bytes
        in each lane, held in operand 0's local layout (a Reshape, a
        transpose of unit dims, the split of a matrix's columns into a
        batch of heads, or a Slice of whole images, when the channels take
        one slot of each of the `lanes`), so the group lets the result
        share the operand's buffer and emits no instruction for it: the
        run's offset in elements, nothing when it is not a view.
      }], "std::optional<int64_t>", "localView", (ins "int64_t":$lanes), "",
      [{ return std::nullopt; }]>,
    InterfaceMethod<[{
        Emits the GDMA moves loading the result, in its local layout
        `dst` (in buffer `buf`), from the first operand's DDR buffer at
        `src`. Only called when localLoad() holds.
      }], "::mlir::LogicalResult", "codegenLocalLoad",
      (ins "::tpuc::backend::CodegenContext &":$ctx,
           "::tpuc::backend::LBuf &":$buf,
           "const ::tpuc::chip::Operand &":$dst, "uint64_t":$src), "",
      [{ return ::mlir::failure(); }]>,
    InterfaceMethod<[{
        Called once after the group loads weight operand `index` into `buf`
        (held as `lmem`): GDMA work laying it out for codegenLocal, queued
        right behind the load rather than behind the group's later loads
        (a conv spreading over idle lanes as `lanes` says moves its filter
        parts there).
      }], "void", "codegenLocalWeightLayout",
      (ins "::tpuc::backend::CodegenContext &":$ctx, "unsigned":$index,
           "::tpuc::backend::LBuf &":$buf,
           "const ::tpuc::chip::Operand &":$lmem,
           "::tpuc::backend::LaneSplit":$lanes), "",
      [{ return; }]>,
    InterfaceMethod<[{
        Whether the op's own tiled code can apply `epilogue` (the ops after
        it, each reading the previous one's result as its first operand) to
        each of its output tiles in LMEM before the store, so that only the
        last one's result reaches DDR (a tile epilogue group).
      }], "bool", "takesTileEpilogue",
      (ins "::llvm::ArrayRef<::mlir::Operation *>":$epilogue), "",
      [{ return false; }]>,
    InterfaceMethod<[{
        Whether the op's own tiled code can apply `prologue` (the op
        defining its first operand, which has no other user) to each input
        tile in LMEM right after its load, so that the prologue's result
        never reaches DDR (the head of a tile epilogue group).
      }], "bool", "takesTilePrologue",
      (ins "::mlir::Operation *":$prologue), "",
      [{ return false; }]>,
    InterfaceMethod<[{
        Emits the op's tiled code applying `prologue` (null for none; only
        one takesTilePrologue accepts) to every input tile and `epilogue`
        (possibly empty after a prologue) to every output tile, storing the
        tiles to the last epilogue op's result (the op's own without one).
        Only called when takesTileEpilogue(epilogue) holds or the epilogue
        is empty.
      }], "::mlir::LogicalResult", "codegenTileEpilogue",
      (ins "::tpuc::backend::CodegenContext &":$ctx,
           "::mlir::Operation *":$prologue,
           "::llvm::ArrayRef<::mlir::Operation *>":$epilogue), "",
      [{ return ::mlir::failure(); }]>,
    InterfaceMethod<[{
        Emits the TIU instructions computing the result in LMEM from
        LMEM-resident operands (see LocalOperands). Only called when
        supportsLocal() holds.
      }], "::mlir::LogicalResult", "codegenLocal",
      (ins "::tpuc::backend::CodegenContext &":$ctx,
           "::tpuc::backend::LocalOperands &":$operands), "",
      [{ return ::mlir::failure(); }]>,
  ];
}
#endif
