//===- ConvTiling.h - Tiling shared by Conv and Deconv ----------*- C++ -*-===//
//
// Both run as the chip's conv instruction with the filter in the
// [IC/groups, OC, KH, KW] layout, so they split output channels, slice input
// channels and load filters and biases the same way.
//
//===----------------------------------------------------------------------===//
#ifndef TPUC_LIB_BACKEND_OPS_CONVTILING_H
#define TPUC_LIB_BACKEND_OPS_CONVTILING_H
#include "Common.h"

namespace tpuc {
namespace backend {

/// The DDR tensors of a conv-like op (filter, optional bias) and its
/// operand types. A constant filter sits in the weight blob in the
/// instruction's [IC/g, OC, KH, KW] layout (layoutWeight); a filter computed
/// at run time (a graph input, e.g. a parameter being trained) is an
/// ordinary OIHW activation, transposed by the strided GDMA load that
/// brings it into local memory.
struct ConvOperands {
  MacTypes types;
  Tensor in, filter, out;
  std::optional<uint64_t> bias; // DDR address when the op has a bias
  bool filterInBlob = true;
};

template <typename OpTy>
mlir::FailureOr<ConvOperands>
getConvOperands(OpTy op, CodegenContext &ctx,
                std::optional<uint64_t> outAddr = std::nullopt,
                mlir::Value input = {}) {
  auto types = macTypes(ctx, op.getFilter(), op.getBias());
  if (mlir::failed(types))
    return mlir::failure();
  // A result a tile epilogue transforms is stored where the last epilogue
  // op's result lives.
  // A tile prologue's input stands for the op's own, which has no DDR.
  auto in = getTensor(ctx, input ? input : op.getInput()), fl = getTensor(ctx, op.getFilter()),
       out = outAddr ? mlir::FailureOr<Tensor>(tensorAt(op.getOutput(), *outAddr))
                     : getTensor(ctx, op.getOutput());
  if (mlir::failed(in) || mlir::failed(fl) || mlir::failed(out))
    return mlir::failure();
  ConvOperands r{*types, *in, *fl, *out, std::nullopt,
                 bool(op.getFilter().template getDefiningOp<top::WeightOp>())};
  if (!isNone(op.getBias())) {
    auto b = getTensor(ctx, op.getBias());
    if (mlir::failed(b))
      return mlir::failure();
    r.bias = b->addr;
  }
  return r;
}

/// Output channels [o0, o0 + oc) reading input channels [ic0, ic0 + ic) as
/// `groups` conv groups.
struct OcTile {
  int64_t o0, oc, ic0, ic, groups;
};

/// Output-channel tiles of about `ocT` channels: whole groups when a tile
/// spans several, else parts of one group.
inline llvm::SmallVector<OcTile> makeOcTiles(int64_t OC, int64_t IC,
                                             int64_t G, int64_t ocT) {
  const int64_t ocg = OC / G, ICg = IC / G;
  llvm::SmallVector<OcTile> t;
  if (G == 1) {
    for (int64_t o = 0; o < OC; o += ocT)
      t.push_back({o, std::min(ocT, OC - o), 0, IC, 1});
  } else if (ocT >= ocg) {
    int64_t step = ocT / ocg * ocg;
    for (int64_t o = 0; o < OC; o += step) {
      int64_t oc = std::min(step, OC - o);
      t.push_back({o, oc, o / ocg * ICg, oc / ocg * ICg, oc / ocg});
    }
  } else {
    for (int64_t g = 0; g < G; ++g)
      for (int64_t o = g * ocg; o < (g + 1) * ocg; o += ocT)
        t.push_back({o, std::min(ocT, (g + 1) * ocg - o), g * ICg, ICg, 1});
  }
  return t;
}

/// Output-channel tile sizes to try, largest first: multiples of the lane
/// count, then fractions of it.
inline llvm::SmallVector<int64_t> ocTileCandidates(int64_t OC, int64_t lanes) {
  llvm::SmallVector<int64_t> cands;
  for (int64_t k = ceilDiv(OC, lanes); k >= 1; --k)
    cands.push_back(std::min(OC, k * lanes));
  for (int64_t c = lanes / 2; c >= 1; c /= 2)
    if (c < OC)
      cands.push_back(c);
  return cands;
}

/// Input-channel slice `c` (of `icT` channels) of tile `t`: input channels
/// [ic0, ic0 + ic) and filter rows [wi0, wi0 + wic).
struct IcSlice {
  int64_t ic0, ic, wi0, wic;
};
inline IcSlice icSlice(const OcTile &t, int64_t c, int64_t icT, int64_t ICg) {
  IcSlice s;
  s.wi0 = c * icT;
  s.wic = std::min(icT, ICg - s.wi0);
  s.ic = icT < ICg ? s.wic : t.ic;
  s.ic0 = t.ic0 + s.wi0;
  return s;
}

/// Position of element (o, i, k) of a [OC, ICg, K] filter in the blob's
/// layout for a conv's own tiled code: [IC/g, OC, KH, KW] when `block` is 0,
/// else blocks of `block` output channels one after the other, each block's
/// [IC/g, its channels, KH, KW] contiguous (blockedFilterLayout).
inline int64_t filterBlobIndex(int64_t o, int64_t i, int64_t k, int64_t OC,
                               int64_t ICg, int64_t K, int64_t block) {
  if (!block)
    return (i * OC + o) * K + k;
  const int64_t j = o / block, lb = std::min(block, OC - j * block);
  return (j * block * ICg + i * lb + (o - j * block)) * K + k;
}

/// Loads the filter rows of slice `s` of tile `t` into `w` (when `newW`) and
/// the tile's bias into `b` (when `newB` and there is one). The filter is
/// read from the blob's [IC/g, OC, KH, KW] layout (or its blocks of
/// `block` output channels, one load per block the tile spans), or, when
/// not `filterInBlob`, from an OIHW tensor of `ICg` input channels per
/// group (the same local layout, other DDR strides).
inline void loadFilterAndBias(CodegenContext &ctx, const MacTypes &types,
                              uint64_t filterAddr, std::optional<uint64_t> bias,
                              int64_t OC, int64_t KH, int64_t KW,
                              const OcTile &t, const IcSlice &s, LBuf &w,
                              bool newW, LBuf &b, bool newB,
                              bool filterInBlob = true, int64_t ICg = 0,
                              int64_t block = 0) {
  const int64_t es = chip::dtypeSize(types.weight),
                bes = chip::dtypeSize(types.bias), K = KH * KW;
  const chip::Operand whole =
      chip::lmemTensor(w.addr, s.wic, t.oc, KH, KW, types.weight);
  if (newW && filterInBlob && block) {
    const int64_t L = ctx.lanes();
    for (int64_t a = t.o0; a < t.o0 + t.oc;) {
      const int64_t j = a / block, lb = std::min(block, OC - j * block),
                    e = std::min(t.o0 + t.oc, j * block + lb);
      // Channels [a, e) of the tile: their lane slots of the local tile.
      const chip::Operand to = lmemChannels(whole, uint32_t(a - t.o0),
                                            uint32_t(e - a), uint32_t(L));
      ctx.load(w, to,
               ddrOperand(filterAddr + filterBlobIndex(a, s.wi0, 0, OC, ICg,
                                                       K, block) * es,
                          {s.wic, e - a, KH, KW}, {lb * K, K, KW, 1},
                          types.weight));
      a = e;
    }
  } else if (newW && filterInBlob)
    ctx.load(w, whole,
             ddrOperand(filterAddr + (s.wi0 * OC + t.o0) * K * es,
                        {s.wic, t.oc, KH, KW}, {OC * K, K, KW, 1},
                        types.weight));
  else if (newW)
    ctx.load(w, chip::lmemTensor(w.addr, s.wic, t.oc, KH, KW, types.weight),
             ddrOperand(filterAddr + (t.o0 * ICg + s.wi0) * K * es,
                        {s.wic, t.oc, KH, KW}, {K, ICg * K, KW, 1},
                        types.weight));
  if (newB && bias)
    ctx.load(b, chip::lmemTensor(b.addr, 1, t.oc, 1, 1, types.bias),
             ddrOperand(*bias + t.o0 * bes, {1, t.oc, 1, 1}, {OC, 1, 1, 1},
                        types.bias));
}

/// Adds to `pipe` a group of `numSlots` buffers of `bytes` per lane, each
/// starting in an LMEM bank none of group `other`'s buffers starts in (a TIU
/// instruction reading two sources that start in one bank is slower): a slot
/// skips ahead when that still leaves `reserve` bytes per lane for the
/// buffers allocated after the group.
inline mlir::LogicalResult addGroupInOtherBanks(CodegenContext &ctx,
                                                Pipeline &pipe, uint64_t bytes,
                                                unsigned numSlots,
                                                unsigned other,
                                                uint64_t reserve) {
  const uint64_t bank = ctx.target().bankBytes(), align = 64;
  llvm::SmallVector<uint64_t, 4> taken;
  for (const LBuf &b : pipe.groups[other].slots)
    taken.push_back(b.addr / bank);
  Pipeline::Group g;
  for (unsigned i = 0; i < numSlots; ++i) {
    uint64_t need = (numSlots - i) * (bytes + align) + reserve;
    uint64_t gap = 0;
    for (uint64_t c = 0; c <= 2 * bank && c + need <= ctx.lmemFree();
         c += align)
      if (!llvm::is_contained(taken, ctx.allocStart(bytes, c) / bank)) {
        gap = c;
        break;
      }
    if (gap)
      (void)ctx.alloc(gap);
    auto b = ctx.alloc(bytes);
    if (!b)
      return ctx.error() << "local memory exhausted (needs " << bytes
                         << " more bytes per lane)";
    g.slots.push_back(*b);
  }
  pipe.groups.push_back(g);
  return mlir::success();
}

} // namespace backend
} // namespace tpuc
#endif
