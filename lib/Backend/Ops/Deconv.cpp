//===- Deconv.cpp - Transposed convolution --------------------------------===//
//
// A transposed convolution is a stride-1 convolution over the input with
// stride-1 zeros inserted between pixels and padded by dilation*(K-1) minus
// the deconv's pads (a negative amount crops), with the filter flipped in
// H/W and its in/out channels swapped within each group. The weight blob
// holds that conv filter in the conv instruction's [IC/g, OC, KH, KW]
// layout (layoutWeight), so only the input needs work at run time: each
// tile's input rows/columns are moved into every stride-th cell of its
// buffer by one strided load and the cells around them are zero-filled.
//
// Tiling: output channels in tiles of whole groups (or part of one group),
// output rows in tiles (the buffer holds the dilated-kernel halo), one image
// at a time; input channels are split into accumulated slices when a
// filter tile does not fit, as for Conv. Output-channel tiles are the
// outer loop so a tile's filter is loaded once.
//
//===----------------------------------------------------------------------===//
#include "ConvTiling.h"

using namespace mlir;
using namespace tpuc::chip;

namespace tpuc {
namespace backend {
namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// Cells of an [R, WP] plane the strided input load writes: rows r0 + k*sh
/// (k < nh) crossed with columns c0 + j*sw (j < nw). nh == 0: none.
struct Lattice {
  int64_t r0 = 0, nh = 0, sh = 1, c0 = 0, nw = 0, sw = 1;
};

/// Zero-fills every cell of the [1, c, R, WP] LMEM buffer outside `lat`
/// (at most six GDMA fills). The load of the lattice may be in flight with
/// them, and writes in flight must not overlap.
void fillAroundLattice(CodegenContext &ctx, LBuf &buf, int64_t c, int64_t R,
                       int64_t WP, DType t, const Lattice &lat) {
  Operand whole =
      lmemTensor(buf.addr, 1, uint32_t(c), uint32_t(R), uint32_t(WP), t);
  if (lat.nh == 0) {
    ctx.fillLocal(buf, whole, 0.0);
    return;
  }
  const int64_t es = dtypeSize(t);
  // One fill of [bn, c, bh, bw] cells from (row, col); N steps sn elements
  // (repeating the box along the plane), H steps shh.
  auto box = [&](int64_t row, int64_t col, int64_t bn, int64_t sn, int64_t bh,
                 int64_t shh, int64_t bw) {
    if (bn <= 0 || bh <= 0 || bw <= 0)
      return;
    Operand o = whole;
    o.addr += uint64_t((row * WP + col) * es);
    o.shape[0] = uint32_t(bn), o.shape[2] = uint32_t(bh);
    o.shape[3] = uint32_t(bw);
    o.stride[0] = int32_t(sn), o.stride[2] = int32_t(shh);
    ctx.fillLocal(buf, o, 0.0);
  };
  const int64_t rL = lat.r0 + (lat.nh - 1) * lat.sh;
  const int64_t cL = lat.c0 + (lat.nw - 1) * lat.sw;
  // Whole rows above, below and between the lattice rows.
  box(0, 0, 1, 0, lat.r0, WP, WP);
  box(rL + 1, 0, 1, 0, R - rL - 1, WP, WP);
  box(lat.r0 + 1, 0, lat.nh - 1, lat.sh * WP, lat.sh - 1, WP, WP);
  // In the lattice rows: the columns left of, right of and between them.
  box(lat.r0, 0, 1, 0, lat.nh, lat.sh * WP, lat.c0);
  box(lat.r0, cL + 1, 1, 0, lat.nh, lat.sh * WP, WP - cL - 1);
  box(lat.r0, lat.c0 + 1, lat.nw - 1, lat.sw, lat.nh, lat.sh * WP,
      lat.sw - 1);
}

struct DeconvModel
    : public CodegenInterface::ExternalModel<DeconvModel, tpu::DeconvOp> {
  LogicalResult layoutWeight(Operation *op, unsigned index,
                             std::vector<int64_t> &data,
                             const chip::Target &) const {
    if (index != 1)
      return success();
    auto deconv = cast<tpu::DeconvOp>(op);
    auto f = getShape(deconv.getFilter()); // [IC, OC/g, KH, KW]
    const int64_t G = deconv.getGroup(), IC = f[0], ocg = f[1],
                  KH = f[2], KW = f[3], OC = ocg * G, icg = IC / G;
    std::vector<int64_t> out(data.size());
    for (int64_t g = 0; g < G; ++g)
      for (int64_t i = 0; i < icg; ++i)
        for (int64_t o = 0; o < ocg; ++o)
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw)
              out[((i * OC + g * ocg + o) * KH + kh) * KW + kw] =
                  data[(((g * icg + i) * ocg + o) * KH + KH - 1 - kh) * KW +
                       KW - 1 - kw];
    data = std::move(out);
    return success();
  }

  int64_t getMacs(Operation *op) const {
    auto f = getShape(op->getOperand(1));
    return numElements(getShape(op->getOperand(0))) * f[1] * f[2] * f[3];
  }

  LogicalResult codegen(Operation *op, CodegenContext &ctx) const;
};

LogicalResult DeconvModel::codegen(Operation *operation,
                                   CodegenContext &ctx) const {
  auto op = cast<tpu::DeconvOp>(operation);
  auto operands = getConvOperands(op, ctx);
  if (failed(operands))
    return failure();
  if (!operands->filterInBlob)
    return ctx.error() << "codegen needs a constant filter (top.Weight)";
  if (operands->types.quantized())
    return ctx.error() << "INT8 transposed convolution is not supported by "
                       << "the codegen";
  // Pointers keep the `*dtype` / `in->` spelling of the code below.
  const DType *dtype = &operands->types.out;
  const Tensor *in = &operands->in, *fl = &operands->filter,
               *out = &operands->out;
  std::optional<uint64_t> bias = operands->bias;
  bool hasBias = bias.has_value();
  const int64_t N = in->shape[0], IC = in->shape[1], H = in->shape[2],
                W = in->shape[3];
  const int64_t KH = fl->shape[2], KW = fl->shape[3];
  const int64_t OC = out->shape[1], OH = out->shape[2], OW = out->shape[3];
  const int64_t G = op.getGroup(), ICg = IC / G;
  auto s = getI64s(op.getStrides()), d = getI64s(op.getDilations()),
       pads = getI64s(op.getPads());
  const int64_t sh = s[0], sw = s[1], dh = d[0], dw = d[1];
  // Where input pixel (0, 0) lands in the zero-inserted, padded input.
  const int64_t PT = dh * (KH - 1) - pads[0], PL = dw * (KW - 1) - pads[1];
  const int64_t WP = OW + dw * (KW - 1);
  const int64_t L = ctx.lanes();
  const int64_t LB = ctx.lmemFree();

  auto ocTiles = [&](int64_t ocT) { return makeOcTiles(OC, IC, G, ocT); };
  auto rowsFor = [&](int64_t ohT) { return ohT + dh * (KH - 1); };

  // The largest output-channel tile, then row tile, that fits with double
  // buffering; input channels are sliced only when nothing else fits.
  SmallVector<int64_t> cands = ocTileCandidates(OC, L);
  int64_t icT = ICg, bestOc = 0, bestOh = 0;
  for (;;) {
    const bool split = icT < ICg;
    for (int64_t ocT : cands) {
      SmallVector<OcTile> tiles = ocTiles(ocT);
      int64_t ocMax = 0, icMax = 0;
      bool single = true;
      for (const OcTile &t : tiles)
        ocMax = std::max(ocMax, t.oc), icMax = std::max(icMax, t.ic),
        single &= t.groups == 1;
      if (split && !single)
        continue;
      int64_t ic = split ? icT : icMax;
      int64_t fixed = 2 * ctx.lmemBytes({icT, ocMax, KH, KW}, *dtype) +
                      2 * ctx.lmemBytes({1, ocMax, 1, 1}, *dtype) + 8 * 64;
      for (int64_t ohT = OH; ohT >= 1; ohT = ohT > 8 ? ohT * 3 / 4 : ohT - 1)
        if (fixed + 2 * ctx.lmemBytes({1, ic, rowsFor(ohT), WP}, *dtype) +
                2 * ctx.lmemBytes({1, ocMax, ohT, OW}, *dtype) <=
            uint64_t(LB)) {
          bestOc = ocT, bestOh = ohT;
          break;
        }
      if (bestOc)
        break;
    }
    if (bestOc || icT == 1)
      break;
    icT = ceilDiv(icT, 2);
  }
  if (!bestOc)
    return ctx.error() << "does not fit local memory even with one output "
                       << "row and one input channel per slice";
  const bool split = icT < ICg;
  const int64_t nIc = ceilDiv(ICg, icT);
  SmallVector<OcTile> tiles = ocTiles(bestOc);
  int64_t ocMax = 0, icMax = 0;
  for (const OcTile &t : tiles)
    ocMax = std::max(ocMax, t.oc), icMax = std::max(icMax, t.ic);
  if (split)
    icMax = icT;

  struct Step {
    int64_t o, n, oh0, ohT, c;
  };
  SmallVector<Step> steps;
  for (int64_t o = 0; o < int64_t(tiles.size()); ++o)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oh = 0; oh < OH; oh += bestOh)
        for (int64_t c = 0; c < nIc; ++c)
          steps.push_back({o, n, oh, std::min(bestOh, OH - oh), c});

  Pipeline pipe;
  enum { kW, kB, kIn, kOut };
  if (failed(pipe.addGroup(ctx, ctx.lmemBytes({icT, ocMax, KH, KW}, *dtype),
                           2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, ocMax, 1, 1}, *dtype), 2)) ||
      failed(pipe.addGroup(
          ctx, ctx.lmemBytes({1, icMax, rowsFor(bestOh), WP}, *dtype), 2)) ||
      failed(pipe.addGroup(ctx, ctx.lmemBytes({1, ocMax, bestOh, OW}, *dtype),
                           2)))
    return failure();

  const int64_t es = dtypeSize(*dtype);
  SmallVector<std::array<LBuf *, 4>> bufs(steps.size());
  auto loadStep = [&](size_t i) {
    const Step &st = steps[i];
    const OcTile &t = tiles[st.o];
    auto [ic0, ic, wi0, wic] = icSlice(t, st.c, icT, ICg);
    auto [w, newW] = pipe.acquire(kW, st.o * nIc + st.c);
    auto [b, newB] = pipe.acquire(kB, st.o);
    loadFilterAndBias(ctx, operands->types, fl->addr, bias, OC, KH, KW, t,
                      {ic0, ic, wi0, wic}, *w, newW, *b, newB);
    // Input buffer: rows [r0, r0 + R) of the zero-inserted, padded input.
    auto [x, newX] = pipe.acquire(kIn, i);
    (void)newX;
    const int64_t R = rowsFor(st.ohT), r0 = st.oh0;
    int64_t h0 = std::max<int64_t>(0, -floorDiv(PT - r0, sh));
    int64_t h1 = std::min<int64_t>(H, floorDiv(r0 + R - 1 - PT, sh) + 1);
    int64_t w0 = std::max<int64_t>(0, -floorDiv(PL, sw));
    int64_t w1 = std::min<int64_t>(W, floorDiv(WP - 1 - PL, sw) + 1);
    fillAroundLattice(ctx, *x, ic, R, WP, *dtype,
                      h1 > h0 && w1 > w0
                          ? Lattice{h0 * sh + PT - r0, h1 - h0, sh,
                                    w0 * sw + PL, w1 - w0, sw}
                          : Lattice{});
    if (h1 > h0 && w1 > w0) {
      Operand dst = lmemTensor(
          x->addr + ((h0 * sh + PT - r0) * WP + w0 * sw + PL) * es, 1, ic,
          h1 - h0, w1 - w0, *dtype);
      // Channels sharing a lane keep the whole buffer's per-channel stride.
      dst.stride[0] = dst.stride[1] = int32_t(R * WP);
      dst.stride[2] = int32_t(sh * WP);
      dst.stride[3] = int32_t(sw);
      ctx.load(*x, dst,
               ddrOperand(in->addr + ((st.n * IC + ic0) * H + h0) * W * es,
                          {1, ic, h1 - h0, w1 - w0}, {IC * H * W, H * W, W, 1},
                          *dtype));
    }
    // The output tile stays put while its slices accumulate.
    auto [o, unused] = pipe.acquire(
        kOut, (st.o * N + st.n) * ceilDiv(OH, bestOh) + st.oh0 / bestOh);
    (void)unused;
    bufs[i] = {w, b, x, o};
  };

  loadStep(0);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i + 1 < steps.size())
      loadStep(i + 1);
    const Step &st = steps[i];
    const OcTile &t = tiles[st.o];
    auto [w, b, x, o] = bufs[i];
    auto [ic0, ic, wi0, wic] = icSlice(t, st.c, icT, ICg);
    bool first = st.c == 0, last = st.c == nIc - 1;
    chip::ConvParams cp;
    cp.stride_h = 1, cp.stride_w = 1;
    cp.dilation_h = int(dh), cp.dilation_w = int(dw);
    cp.groups = int(t.groups);
    cp.accumulate = !first;
    Operand outL = lmemTensor(o->addr, 1, t.oc, st.ohT, OW, *dtype);
    Operand biasL;
    if (hasBias && first)
      biasL = lmemTensor(b->addr, 1, t.oc, 1, 1, *dtype);
    ctx.tiu(makeConv(outL,
                     lmemTensor(x->addr, 1, ic, rowsFor(st.ohT), WP, *dtype),
                     lmemTensor(w->addr, wic, t.oc, KH, KW, *dtype), biasL, cp),
            {w, b, x, o});
    if (!last)
      continue;
    ctx.store(ddrOperand(out->addr +
                             ((st.n * OC + t.o0) * OH + st.oh0) * OW * es,
                         {1, t.oc, st.ohT, OW}, {OC * OH * OW, OH * OW, OW, 1},
                         *dtype),
              *o, outL);
  }
  return success();
}

} // namespace

void attachDeconvModels(MLIRContext *ctx) {
  tpu::DeconvOp::attachInterface<DeconvModel>(*ctx);
}

} // namespace backend
} // namespace tpuc
