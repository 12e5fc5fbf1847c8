//===- Execute.cpp - Functional execution of one instruction --------------===//
//
// Operands are read where they live (DDR or the lanes of local memory)
// through MemView; a kernel converts one row at a time into a float or
// int64 buffer, computes, and converts the row into the dense result.
// Convolution (via im2col) and matmul are GEMMs on OpenBLAS. Integer GEMMs
// stay exact: operands are small integers held in floats and K is cut into
// slices whose partial sums stay below 2^24, where every float is an
// integer, and the slices add up in int64.
//
//===----------------------------------------------------------------------===//
#include "Execute.h"

#include "tpuc/Chip/Float16.h"
#include "tpuc/Chip/QuantMath.h"

#include <cblas.h>

#ifdef __linux__
#include <sched.h>
#endif

#include <algorithm>
#include <atomic>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>
#include <utility>

// Hot loops are compiled for several x86-64 levels and picked when the
// library loads, so they use the CPU's vector width while the build stays
// portable. Floating-point contraction is off (CMakeLists.txt), so every
// version computes the same bits.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define TPUC_KERNEL __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TPUC_KERNEL
#endif

namespace tpuc {
namespace chip {

void moveDirect(const MemView &m, const Instruction &inst);

namespace {

// --- Rows of one element type -------------------------------------------------

template <typename S> inline S rd(const uint8_t *p) {
  S v;
  std::memcpy(&v, p, sizeof(S));
  return v;
}
template <typename S> inline void wr(uint8_t *p, S v) { std::memcpy(p, &v, sizeof(S)); }

/// out[i] = cvt(element i of the row at p, `step` bytes apart).
template <typename S, typename Out, typename Cvt>
inline void loadT(const uint8_t *p, int64_t step, uint64_t len, Out *out, Cvt cvt) {
  if (step == int64_t(sizeof(S))) {
    for (uint64_t i = 0; i < len; ++i)
      out[i] = cvt(rd<S>(p + i * sizeof(S)));
  } else {
    for (uint64_t i = 0; i < len; ++i)
      out[i] = cvt(rd<S>(p + int64_t(i) * step));
  }
}

/// Loads a row as float (Out = float) or as integer (Out = int64_t).
template <typename Out>
TPUC_KERNEL void loadRow(const uint8_t *p, int64_t step, DType t, uint64_t len, Out *out) {
  switch (t) {
  case DType::F32:
    return loadT<float>(p, step, len, out, [](float v) { return static_cast<Out>(v); });
  case DType::F16:
    return loadT<uint16_t>(p, step, len, out, [](uint16_t h) { return static_cast<Out>(f16ToF32(h)); });
  case DType::BF16:
    return loadT<uint16_t>(p, step, len, out, [](uint16_t h) { return static_cast<Out>(bf16ToF32(h)); });
  case DType::INT8:
    return loadT<int8_t>(p, step, len, out, [](int8_t v) { return static_cast<Out>(v); });
  case DType::UINT8:
    return loadT<uint8_t>(p, step, len, out, [](uint8_t v) { return static_cast<Out>(v); });
  case DType::INT32:
    return loadT<int32_t>(p, step, len, out, [](int32_t v) { return static_cast<Out>(v); });
  default:
    std::fill(out, out + len, Out(0));
  }
}

/// roundToInt(x, RM) into bytes for 8-bit types (bounds lo, hi), as
/// selects that vectorise: nearbyint in the default rounding mode rounds
/// halves to even; trunc plus the sign where the dropped part is at least a
/// half rounds them away from zero (v - trunc(v) is exact). The clamped
/// result converts exactly.
template <RoundMode RM>
TPUC_KERNEL void roundRow8(uint8_t *p, uint64_t len, const float *in, float lo, float hi) {
  for (uint64_t i = 0; i < len; ++i) {
    const float v = in[i];
    float r;
    if (RM == RoundMode::HalfToEven) {
      r = std::nearbyint(v);
    } else {
      const float t = std::trunc(v), d = v - t;
      r = d >= 0.5f ? t + 1.f : (d <= -0.5f ? t - 1.f : t);
    }
    r = r < lo ? lo : (r > hi ? hi : r);
    p[i] = uint8_t(int8_t(int32_t(v != v ? 0.f : r)));
  }
}

/// Whether roundRow8 covers mode; it stores x's row if so.
bool roundRow8(uint8_t *p, uint64_t len, const float *in, RoundMode mode, float lo, float hi) {
  if (mode == RoundMode::HalfToEven)
    roundRow8<RoundMode::HalfToEven>(p, len, in, lo, hi);
  else if (mode == RoundMode::HalfAwayFromZero)
    roundRow8<RoundMode::HalfAwayFromZero>(p, len, in, lo, hi);
  else
    return false;
  return true;
}

/// Stores float results densely; float -> int rounds with `mode` and saturates.
TPUC_KERNEL void storeRowF(uint8_t *p, DType t, uint64_t len, const float *in, RoundMode mode) {
  switch (t) {
  case DType::F32:
    std::memcpy(p, in, len * 4);
    return;
  case DType::F16:
    for (uint64_t i = 0; i < len; ++i)
      wr<uint16_t>(p + 2 * i, f32ToF16(in[i]));
    return;
  case DType::BF16:
    for (uint64_t i = 0; i < len; ++i)
      wr<uint16_t>(p + 2 * i, f32ToBF16(in[i]));
    return;
  case DType::INT8:
    if (roundRow8(p, len, in, mode, -128.f, 127.f))
      return;
    for (uint64_t i = 0; i < len; ++i)
      p[i] = uint8_t(int8_t(roundToInt(in[i], mode, t)));
    return;
  case DType::UINT8:
    if (roundRow8(p, len, in, mode, 0.f, 255.f))
      return;
    for (uint64_t i = 0; i < len; ++i)
      p[i] = uint8_t(roundToInt(in[i], mode, t));
    return;
  case DType::INT32:
    for (uint64_t i = 0; i < len; ++i)
      wr<int32_t>(p + 4 * i, int32_t(roundToInt(in[i], mode, t)));
    return;
  default:
    return;
  }
}

/// Stores integer results densely, saturating to integer types.
TPUC_KERNEL void storeRowI(uint8_t *p, DType t, uint64_t len, const int64_t *in) {
  switch (t) {
  case DType::INT8:
    for (uint64_t i = 0; i < len; ++i)
      p[i] = uint8_t(int8_t(std::min<int64_t>(std::max<int64_t>(in[i], -128), 127)));
    return;
  case DType::UINT8:
    for (uint64_t i = 0; i < len; ++i)
      p[i] = uint8_t(std::min<int64_t>(std::max<int64_t>(in[i], 0), 255));
    return;
  case DType::INT32:
    for (uint64_t i = 0; i < len; ++i)
      wr<int32_t>(p + 4 * i, int32_t(std::min<int64_t>(std::max<int64_t>(in[i], INT32_MIN), INT32_MAX)));
    return;
  case DType::F32:
    for (uint64_t i = 0; i < len; ++i)
      wr<float>(p + 4 * i, float(in[i]));
    return;
  case DType::F16:
    for (uint64_t i = 0; i < len; ++i)
      wr<uint16_t>(p + 2 * i, f32ToF16(float(in[i])));
    return;
  case DType::BF16:
    for (uint64_t i = 0; i < len; ++i)
      wr<uint16_t>(p + 2 * i, f32ToBF16(float(in[i])));
    return;
  default:
    return;
  }
}

inline void storeRow(uint8_t *p, DType t, uint64_t len, const float *in,
                     RoundMode mode = RoundMode::HalfToEven) {
  storeRowF(p, t, len, in, mode);
}
inline void storeRow(uint8_t *p, DType t, uint64_t len, const int64_t *in,
                     RoundMode = RoundMode::HalfToEven) {
  storeRowI(p, t, len, in);
}

// --- Where results go ---------------------------------------------------------

/// A kernel's result: the dense NCHW buffer, or the destination operand
/// itself (in place), whose (n, c) planes are then dense runs.
struct Result {
  const MemView *m;
  const Operand *dst;
  uint8_t *dense; // null: in place
  uint64_t C, HW;
  size_t es;

  Result(const MemView &mv, const Operand &d, uint8_t *buf)
      : m(&mv), dst(&d), dense(buf), C(d.shape[1]), HW(uint64_t(d.shape[2]) * d.shape[3]),
        es(dtypeSize(d.dtype)) {}
  uint8_t *plane(uint64_t n, uint64_t c) const {
    return dense ? dense + (n * C + c) * HW * es : m->plane(*dst, n, c);
  }
  /// Bytes from channel c's plane to the next one's, and how many channels
  /// from c follow each other at that pitch (the rest of c's lane row).
  uint64_t pitchRun(uint64_t c, int64_t &pitch) const {
    if (dense) {
      pitch = int64_t(HW * es);
      return C - c;
    }
    return m->channelRun(*dst, c, pitch);
  }
  /// Calls put(ptr, k, len) for the pieces of the dense elements
  /// [idx, idx + len): ptr addresses element idx + k, len elements on.
  template <typename F> void pieces(uint64_t idx, uint64_t len, F put) const {
    if (dense)
      return put(dense + idx * es, uint64_t(0), len);
    for (uint64_t k = 0; k < len;) {
      const uint64_t nc = (idx + k) / HW, off = (idx + k) % HW;
      const uint64_t piece = std::min(len - k, HW - off);
      put(m->plane(*dst, nc / C, nc % C) + off * es, k, piece);
      k += piece;
    }
  }
  /// Converts and stores len result values for dense elements from idx.
  template <typename T>
  void store(uint64_t idx, uint64_t len, const T *v, RoundMode rm = RoundMode::HalfToEven) const {
    pieces(idx, len, [&](uint8_t *p, uint64_t k, uint64_t n) { storeRow(p, dst->dtype, n, v + k, rm); });
  }
};

// --- Walking operands row by row ----------------------------------------------

/// One operand read with broadcasting over a result shape.
struct RowSrc {
  const Operand *o;
  int64_t sh = 0, sw = 0; // byte strides of h and w, 0 where broadcast
};

/// Calls fn(n, c, h, ptrs, steps, len, dense_index) for each row of `shape`;
/// ptrs[k]/steps[k] address operand k's elements of the row. Whole (n, c)
/// planes form one row when every operand allows it.
template <size_t K, typename F>
void forRows(const MemView &m, const uint32_t *shape, const Operand *const (&ops)[K], F fn) {
  RowSrc src[K];
  bool flat = true, allDdr = true;
  for (size_t k = 0; k < K; ++k) {
    const Operand &o = *ops[k];
    int64_t es = int64_t(dtypeSize(o.dtype));
    src[k].o = &o;
    src[k].sh = o.shape[2] == 1 ? 0 : o.stride[2] * es;
    src[k].sw = o.shape[3] == 1 ? 0 : o.stride[3] * es;
    flat = flat && src[k].sh == int64_t(shape[3]) * src[k].sw;
    allDdr = allDdr && o.space == Space::DDR;
  }
  if (shape[2] == 1)
    flat = true;
  const uint64_t HW = uint64_t(shape[2]) * shape[3];
  const uint8_t *ptr[K];
  int64_t step[K], sn[K];
  for (size_t k = 0; k < K; ++k) {
    step[k] = src[k].sw;
    const Operand &o = *src[k].o;
    sn[k] = o.shape[0] == 1 ? 0 : o.stride[0] * int64_t(dtypeSize(o.dtype));
  }
  // DDR operands whose channels follow each other like their elements
  // (dense NCHW) give one row per image.
  bool channelsFlat = flat && allDdr && shape[1] > 1;
  for (size_t k = 0; k < K && channelsFlat; ++k) {
    const Operand &o = *src[k].o;
    int64_t sc = o.shape[1] == 1 ? 0 : o.stride[1] * int64_t(dtypeSize(o.dtype));
    channelsFlat = sc == int64_t(HW) * src[k].sw;
  }
  if (channelsFlat) {
    for (uint64_t n = 0; n < shape[0]; ++n) {
      for (size_t k = 0; k < K; ++k)
        ptr[k] = m.plane(*src[k].o, 0, 0) + int64_t(n) * sn[k];
      fn(n, 0, 0, ptr, step, shape[1] * HW, n * shape[1] * HW);
    }
    return;
  }
  const uint64_t rows = flat ? 1 : shape[2], len = flat ? HW : shape[3];
  auto visit = [&](uint64_t n, uint64_t c, const uint8_t *const *base) {
    uint64_t idx = (n * shape[1] + c) * HW;
    for (uint64_t h = 0; h < rows; ++h, idx += len) {
      for (size_t k = 0; k < K; ++k)
        ptr[k] = base[k] + int64_t(n) * sn[k] + int64_t(h) * src[k].sh;
      fn(n, c, h, ptr, step, len, idx);
    }
  };
  const uint8_t *base[K];
  if (allDdr) { // images outermost: DDR order
    for (uint64_t n = 0; n < shape[0]; ++n)
      for (uint64_t c = 0; c < shape[1]; ++c) {
        for (size_t k = 0; k < K; ++k)
          base[k] = m.plane(*src[k].o, 0, src[k].o->shape[1] == 1 ? 0 : c);
        visit(n, c, base);
      }
    return;
  }
  // Channels outermost: the lane arithmetic runs once per channel, which
  // matters when planes are single elements (filters, biases).
  for (uint64_t c = 0; c < shape[1]; ++c) {
    for (size_t k = 0; k < K; ++k)
      base[k] = m.plane(*src[k].o, 0, src[k].o->shape[1] == 1 ? 0 : c);
    for (uint64_t n = 0; n < shape[0]; ++n)
      visit(n, c, base);
  }
}

/// Operand o as dense NCHW values (float or int64).
template <typename T> std::vector<T> loadDense(const MemView &m, const Operand &o) {
  std::vector<T> v(o.numElements());
  const Operand *ops[1] = {&o};
  forRows(m, o.shape, ops, [&](uint64_t, uint64_t, uint64_t, const uint8_t *const *p,
                              const int64_t *s, uint64_t len, uint64_t idx) {
    loadRow(p[0], s[0], o.dtype, len, v.data() + idx);
  });
  return v;
}

/// The (n, c) plane [H][W] of o as dense values.
template <typename T>
void loadPlane(const MemView &m, const Operand &o, uint64_t n, uint64_t c, T *out) {
  int64_t es = int64_t(dtypeSize(o.dtype));
  const uint8_t *base = m.plane(o, n, c);
  const uint64_t H = o.shape[2], W = o.shape[3];
  if (o.stride[2] == int64_t(W) * o.stride[3] || H == 1)
    return loadRow(base, o.stride[3] * es, o.dtype, H * W, out);
  for (uint64_t h = 0; h < H; ++h)
    loadRow(base + int64_t(h) * o.stride[2] * es, o.stride[3] * es, o.dtype, W, out + h * W);
}

template <typename T> T loadScalar(const MemView &m, const Operand &o, uint64_t n, uint64_t c) {
  T v;
  loadRow(m.plane(o, n, c), 0, o.dtype, 1, &v);
  return v;
}

/// All N*H*W elements of channel c of o in (n, h, w) order: one run when
/// the channel's block is dense, as in the canonical local-memory layout.
template <typename T>
void loadChannel(const MemView &m, const Operand &o, uint64_t c, T *out) {
  const uint64_t N = o.shape[0], HW = uint64_t(o.shape[2]) * o.shape[3];
  const bool planeDense = (o.stride[3] == 1 || o.shape[3] == 1) &&
                          (o.stride[2] == int64_t(o.shape[3]) || o.shape[2] == 1);
  if (planeDense && (N == 1 || o.stride[0] == int64_t(HW)))
    return loadRow(m.plane(o, 0, c), int64_t(dtypeSize(o.dtype)), o.dtype, N * HW, out);
  for (uint64_t n = 0; n < N; ++n)
    loadPlane(m, o, n, c, out + n * HW);
}

/// Per-thread scratch buffers, kept between instructions so that large
/// temporaries are not allocated (and page-faulted in) every time.
template <typename T> T *scratch(int slot, size_t n) {
  thread_local std::vector<T> bufs[8];
  std::vector<T> &b = bufs[slot];
  if (b.size() < n)
    b.resize(n);
  return b.data();
}
enum ScratchSlot { kFilter, kCol, kPlane, kResult, kOld, kPart, kOut };

// --- GEMM ---------------------------------------------------------------------

/// Cores this process may run on.
int availableCores() {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return std::max(1, CPU_COUNT(&set));
#endif
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

/// Cores not busy with other work: all of them less the one-minute load
/// average of everything else (taken as the load less this thread's one),
/// looked up at most once a second. A GEMM split over threads waits for
/// the slowest, and OpenBLAS's threads spin while they wait, so threads
/// competing with other processes for a core make it several times slower
/// than one thread.
int freeCores(int cores) {
#ifdef __linux__
  using Clock = std::chrono::steady_clock;
  thread_local Clock::time_point checked;
  thread_local int free = cores;
  const Clock::time_point now = Clock::now();
  if (checked.time_since_epoch().count() == 0 || now - checked > std::chrono::seconds(1)) {
    checked = now;
    double load = 0;
    if (FILE *f = std::fopen("/proc/loadavg", "r")) {
      if (std::fscanf(f, "%lf", &load) != 1)
        load = 0;
      std::fclose(f);
    }
    free = std::max(1, std::min(cores, cores - int(std::lround(load - 1.0))));
  }
  return free;
#else
  return cores;
#endif
}

/// Threads of one GEMM: TPUC_CMODEL_THREADS, by default (or 0) every core
/// that other work leaves free, and one for GEMMs too small to gain from
/// waking threads. Only exact integer GEMMs ask for more than one (float
/// ones take other bits on several): their results do not depend on the
/// count (which is why runs on several host threads may race on it
/// harmlessly).
void setGemmThreads(uint64_t macs) {
  static std::atomic<int> current{-1};
  static const int cores = availableCores();
  int want = 1;
  if (macs >= (uint64_t(1) << 22)) {
    const char *s = std::getenv("TPUC_CMODEL_THREADS");
    want = s && *s ? std::atoi(s) : 0;
    if (want <= 0)
      want = freeCores(cores);
  }
  if (current.exchange(want) != want)
    scipy_openblas_set_num_threads(want);
}

/// C[M][N] = A[M][K] * B[K][N] + beta * C, row-major with leading
/// dimensions lda, ldb, ldc.
void gemm(uint64_t M, uint64_t N, uint64_t K, const float *A, uint64_t lda, const float *B,
          uint64_t ldb, float *C, uint64_t ldc, float beta) {
  if (M == 0 || N == 0)
    return;
  if (K == 0) {
    for (uint64_t i = 0; i < M; ++i)
      for (uint64_t j = 0; j < N; ++j)
        C[i * ldc + j] = beta == 0.f ? 0.f : C[i * ldc + j];
    return;
  }
  // One thread: OpenBLAS on two threads gives other float bits than on
  // one for some shapes (a 128x512 by 512x128 GEMM on this project's CI
  // machines), and a simulator's results must not depend on the host.
  // The exact integer GEMM (gemmExact) still runs on several.
  setGemmThreads(0);
  scipy_cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(M), blasint(N), blasint(K), 1.f,
                    A, blasint(lda), B, blasint(ldb), beta, C, blasint(ldc));
}

/// C[M][N] = A[M][K] * B[K][N], all dense row-major.
void gemm(uint64_t M, uint64_t N, uint64_t K, const float *A, const float *B, float *C) {
  gemm(M, N, K, A, K, B, N, C, N, 0.f);
}

/// Largest magnitude of an integer dtype.
int64_t maxAbs(DType t) {
  switch (t) {
  case DType::INT8:
    return 128;
  case DType::UINT8:
    return 255;
  default:
    return int64_t(1) << 31;
  }
}

/// Exact integer GEMM of integers held in floats whose products are at most
/// `maxProd` in magnitude: slices of K with |partial sum| <= 2^24 are exact
/// in float, and int64 adds the slices.
TPUC_KERNEL void gemmExact(uint64_t M, uint64_t N, uint64_t K, const float *A, const float *B,
               int64_t *C, int64_t maxProd) {
  const uint64_t slice = std::max<uint64_t>(1, (uint64_t(1) << 24) / uint64_t(maxProd));
  std::fill(C, C + M * N, int64_t(0));
  if (K == 0 || M == 0 || N == 0)
    return;
  setGemmThreads(M * N * std::min(K, slice));
  float *part = scratch<float>(kPart, M * N);
  for (uint64_t k0 = 0; k0 < K; k0 += slice) {
    uint64_t kn = std::min(slice, K - k0);
    scipy_cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(M), blasint(N), blasint(kn),
                1.f, A + k0, blasint(K), B + k0 * N, blasint(N), 0.f, part, blasint(N));
    for (uint64_t i = 0; i < M * N; ++i)
      C[i] += int64_t(part[i]);
  }
}

/// int64 GEMM for operands too wide for gemmExact (INT32 sources).
void gemm(uint64_t M, uint64_t N, uint64_t K, const int64_t *A, const int64_t *B, int64_t *C) {
  std::fill(C, C + M * N, int64_t(0));
  for (uint64_t i = 0; i < M; ++i)
    for (uint64_t k = 0; k < K; ++k) {
      int64_t a = A[i * K + k];
      const int64_t *b = B + k * N;
      int64_t *c = C + i * N;
      for (uint64_t j = 0; j < N; ++j)
        c[j] += a * b[j];
    }
}

/// C = A x B in a MAC kernel's types: float, integers held in float
/// (exact by slices of K, products at most `maxProd`) or int64.
template <typename T, typename E>
void gemmAs(uint64_t M, uint64_t N, uint64_t K, const E *A, const E *B, T *C, int64_t maxProd) {
  if constexpr (std::is_same<T, int64_t>::value && std::is_same<E, float>::value)
    gemmExact(M, N, K, A, B, C, maxProd);
  else
    gemm(M, N, K, A, B, C);
}

/// Integer operands that fit gemmExact, and their largest product.
bool exactInFloat(DType a, DType b, int64_t &maxProd) {
  if (a == DType::INT32 || b == DType::INT32)
    return false;
  maxProd = maxAbs(a) * maxAbs(b);
  return true;
}

// --- Conv ---------------------------------------------------------------------

struct ConvShape {
  uint64_t N, IC, H, W, OC, OH, OW, G, ICG, OCG, KH, KW;
  int64_t sh, sw, dh, dw, pt, pl;
};

/// Input column offset of kernel column kw and the outputs [lo, hi) whose
/// input column ow * stride + off lies inside the image.
inline void validColumns(const ConvShape &s, uint64_t kw, int64_t &off, int64_t &lo, int64_t &hi) {
  off = int64_t(kw) * s.dw - s.pl;
  lo = off >= 0 ? 0 : (-off + s.sw - 1) / s.sw;
  hi = int64_t(s.W) - off <= 0 ? 0 : (int64_t(s.W) - off + s.sw - 1) / s.sw;
  lo = std::min<int64_t>(lo, int64_t(s.OW));
  hi = std::max(lo, std::min<int64_t>(hi, int64_t(s.OW)));
}

/// Column matrix [ICG*KH*KW][OH*OW] of group g of image n, padding as 0.
template <typename E>
TPUC_KERNEL void im2col(const MemView &m, const Operand &a, const ConvShape &s, uint64_t n, uint64_t g,
            E *col) {
  const uint64_t P = s.OH * s.OW;
  if (s.KH == 1 && s.KW == 1 && s.sh == 1 && s.sw == 1 && s.pt == 0 && s.pl == 0 &&
      s.OH == s.H && s.OW == s.W) { // pointwise: the columns are the input planes
    for (uint64_t icg = 0; icg < s.ICG; ++icg)
      loadPlane(m, a, n, g * s.ICG + icg, col + icg * P);
    return;
  }
  E *plane = scratch<E>(kPlane, s.H * s.W);
  for (uint64_t icg = 0; icg < s.ICG; ++icg) {
    loadPlane(m, a, n, g * s.ICG + icg, plane);
    for (uint64_t kh = 0; kh < s.KH; ++kh)
      for (uint64_t kw = 0; kw < s.KW; ++kw) {
        E *row = col + ((icg * s.KH + kh) * s.KW + kw) * P;
        int64_t off, lo, hi;
        validColumns(s, kw, off, lo, hi);
        for (uint64_t oh = 0; oh < s.OH; ++oh) {
          E *r = row + oh * s.OW;
          int64_t ih = int64_t(oh) * s.sh + int64_t(kh) * s.dh - s.pt;
          if (ih < 0 || ih >= int64_t(s.H)) {
            std::fill(r, r + s.OW, E(0));
            continue;
          }
          const E *x = plane + ih * int64_t(s.W) + off;
          std::fill(r, r + lo, E(0));
          if (s.sw == 1)
            std::copy(x + lo, x + hi, r + lo);
          else
            for (int64_t ow = lo; ow < hi; ++ow)
              r[ow] = x[ow * s.sw];
          std::fill(r + hi, r + s.OW, E(0));
        }
      }
  }
}

/// Convolutions with one input channel per group (depthwise): each output
/// sums its window in (kh, kw) order, as a sliding multiply-add over rows.
template <typename E, typename T>
TPUC_KERNEL void convDirect(const MemView &m, const Operand &a, const ConvShape &s, uint64_t n, uint64_t g,
                const E *filter, T *res) {
  const uint64_t P = s.OH * s.OW;
  T *plane = scratch<T>(kPlane, s.H * s.W);
  loadPlane(m, a, n, g, plane);
  for (uint64_t ocg = 0; ocg < s.OCG; ++ocg) {
    T *r = res + ocg * P;
    std::fill(r, r + P, T(0));
    const E *f = filter + ocg * s.KH * s.KW;
    for (uint64_t kh = 0; kh < s.KH; ++kh)
      for (uint64_t kw = 0; kw < s.KW; ++kw) {
        const T w = T(f[kh * s.KW + kw]);
        int64_t off, lo, hi;
        validColumns(s, kw, off, lo, hi);
        for (uint64_t oh = 0; oh < s.OH; ++oh) {
          int64_t ih = int64_t(oh) * s.sh + int64_t(kh) * s.dh - s.pt;
          if (ih < 0 || ih >= int64_t(s.H))
            continue;
          const T *x = plane + ih * int64_t(s.W) + off;
          T *o = r + oh * s.OW;
          if (s.sw == 1)
            for (int64_t ow = lo; ow < hi; ++ow)
              o[ow] += w * x[ow];
          else
            for (int64_t ow = lo; ow < hi; ++ow)
              o[ow] += w * x[ow * s.sw];
        }
      }
  }
}

/// Whether an F32 operand's channels can be GEMM rows where they live:
/// each channel's [N][H][W] block dense and the elements aligned.
bool floatRows(const Operand &o) {
  return o.dtype == DType::F32 && o.addr % 4 == 0 && (o.shape[3] == 1 || o.stride[3] == 1) &&
         (o.shape[2] == 1 || o.stride[2] == int32_t(o.shape[3])) &&
         (o.shape[0] == 1 || o.stride[0] == int32_t(o.shape[2] * o.shape[3]));
}

/// Bias, accumulation and relu of rows result planes (P values, `pitch`
/// floats apart) of output channels from oc.
TPUC_KERNEL void finishRows(const Instruction &inst, const MemView &m, uint64_t n, uint64_t oc, uint64_t rows,
                uint64_t P, float *C, uint64_t pitch) {
  const bool relu = inst.flags & kFlagRelu, bias = inst.flags & kFlagBias;
  for (uint64_t r = 0; r < rows; ++r) {
    float *x = C + r * pitch;
    if (bias) {
      const float bv = loadScalar<float>(m, inst.src[2], 0, oc + r);
      for (uint64_t i = 0; i < P; ++i)
        x[i] += bv;
    }
    if (relu)
      for (uint64_t i = 0; i < P; ++i)
        x[i] = x[i] < 0.f ? 0.f : x[i];
  }
}

/// F32 convolution as GEMMs that read the filter where it lives (the output
/// channels of a row of lanes are rows one lane apart) and write the result
/// planes where they go; accumulation is GEMM's beta. One GEMM per output
/// row: the host BLAS picks its kernels (and so each sum's rounding) by the
/// GEMM's size, and an output's value must not depend on how many rows the
/// instruction computes (the compiler's row tiles and bands).
void convFloat(const Instruction &inst, const MemView &m, const Result &out, const ConvShape &s) {
  const Operand &d = inst.dst, &a = inst.src[0], &b = inst.src[1];
  const bool acc = inst.flags & kFlagAccumulate;
  const uint64_t K = s.ICG * s.KH * s.KW, P = s.OH * s.OW;
  float *col = scratch<float>(kCol, K * P);
  for (uint64_t n = 0; n < s.N; ++n)
    for (uint64_t g = 0; g < s.G; ++g) {
      im2col(m, a, s, n, g, col);
      for (uint64_t oc = g * s.OCG, end = oc + s.OCG; oc < end;) {
        int64_t pa, pc;
        const uint64_t rows = std::min({m.channelRun(b, oc, pa), out.pitchRun(oc, pc), end - oc});
        const float *A = reinterpret_cast<const float *>(m.plane(b, 0, oc));
        float *C = reinterpret_cast<float *>(out.plane(n, oc));
        if (acc && out.dense)
          for (uint64_t r = 0; r < rows; ++r)
            loadPlane(m, d, n, oc + r, C + r * uint64_t(pc / 4));
        for (uint64_t oh = 0; oh < s.OH; ++oh)
          gemm(rows, s.OW, K, A, uint64_t(pa / 4), col + oh * s.OW, P, C + oh * s.OW,
               uint64_t(pc / 4), acc ? 1.f : 0.f);
        finishRows(inst, m, n, oc, rows, P, C, uint64_t(pc / 4));
        oc += rows;
      }
    }
}

/// One output plane of a depthwise convolution: the input plane x (rows
/// xPitch elements apart), f the KH x KW filter, o the dense OH x OW
/// result. Row by row, each output summing its window in (kh, kw) order; SW
/// is the column stride when the compiler should know it.
template <int SW, typename V>
TPUC_KERNEL void depthwisePlane(const ConvShape &s, const V *x, int64_t xPitch, const V *f, V *o) {
  const int64_t sw = SW ? SW : s.sw;
  int64_t off[16], lo[16], hi[16];
  for (uint64_t kw = 0; kw < s.KW; ++kw)
    validColumns(s, kw, off[kw], lo[kw], hi[kw]);
  for (uint64_t oh = 0; oh < s.OH; ++oh) {
    V *r = o + oh * s.OW;
    std::fill(r, r + s.OW, V(0));
    for (uint64_t kh = 0; kh < s.KH; ++kh) {
      const int64_t ih = int64_t(oh) * s.sh + int64_t(kh) * s.dh - s.pt;
      if (ih < 0 || ih >= int64_t(s.H))
        continue;
      for (uint64_t kw = 0; kw < s.KW; ++kw) {
        const V w = f[kh * s.KW + kw];
        const V *xr = x + ih * xPitch + off[kw];
        for (int64_t ow = lo[kw]; ow < hi[kw]; ++ow)
          r[ow] += w * xr[ow * sw];
      }
    }
  }
}

template <typename V>
void depthwise(const ConvShape &s, const V *x, int64_t xPitch, const V *f, V *o) {
  if (s.sw == 1)
    depthwisePlane<1>(s, x, xPitch, f, o);
  else if (s.sw == 2)
    depthwisePlane<2>(s, x, xPitch, f, o);
  else
    depthwisePlane<0>(s, x, xPitch, f, o);
}

/// Depthwise convolution of 8-bit operands for the planes of group g of
/// image n: in int32, exact (a window of 128 * 255 products stays far
/// below 2^31), into res as int64.
template <typename E>
void depthwiseNarrow(const MemView &m, const Operand &a, const ConvShape &s, uint64_t n, uint64_t g,
                     const E *filter, int64_t *res) {
  const uint64_t KK = s.KH * s.KW, P = s.OH * s.OW;
  int32_t *x = scratch<int32_t>(kPlane, s.H * s.W), *f = scratch<int32_t>(kFilter, KK),
          *o = scratch<int32_t>(kOut, P);
  loadPlane(m, a, n, g, x);
  for (uint64_t ocg = 0; ocg < s.OCG; ++ocg) {
    for (uint64_t k = 0; k < KK; ++k)
      f[k] = int32_t(filter[ocg * KK + k]);
    depthwise(s, x, int64_t(s.W), f, o);
    std::copy(o, o + P, res + ocg * P);
  }
}

/// F32 depthwise convolution reading its input and writing its result in
/// place.
void depthwiseFloat(const Instruction &inst, const MemView &m, const Result &out, const ConvShape &s) {
  const Operand &a = inst.src[0], &b = inst.src[1];
  const uint64_t KK = s.KH * s.KW, P = s.OH * s.OW;
  float *f = scratch<float>(kFilter, s.OC * KK);
  for (uint64_t oc = 0; oc < s.OC; ++oc)
    loadChannel(m, b, oc, f + oc * KK);
  for (uint64_t n = 0; n < s.N; ++n)
    for (uint64_t g = 0; g < s.G; ++g) {
      const float *x = reinterpret_cast<const float *>(m.plane(a, n, g));
      for (uint64_t ocg = 0; ocg < s.OCG; ++ocg) {
        const uint64_t oc = g * s.OCG + ocg;
        float *o = reinterpret_cast<float *>(out.plane(n, oc));
        depthwise(s, x, a.stride[2], f + oc * KK, o);
        finishRows(inst, m, n, oc, 1, P, o, P);
      }
    }
}

/// Adds what padding holding `pad` (instead of the kernels' zeros)
/// contributes to the output planes of one group: each output gains pad times
/// the sum of the filter taps whose input cell lies outside the image. Only
/// border outputs have such taps.
template <typename E, typename T>
void addPadTaps(const ConvShape &s, const E *filter, T pad, T *res) {
  const uint64_t K = s.ICG * s.KH * s.KW, P = s.OH * s.OW;
  for (uint64_t ocg = 0; ocg < s.OCG; ++ocg) {
    const E *f = filter + ocg * K;
    T *r = res + ocg * P;
    for (uint64_t kh = 0; kh < s.KH; ++kh)
      for (uint64_t kw = 0; kw < s.KW; ++kw) {
        T sum = 0;
        for (uint64_t icg = 0; icg < s.ICG; ++icg)
          sum += T(f[(icg * s.KH + kh) * s.KW + kw]);
        if (sum == 0)
          continue;
        const T v = pad * sum;
        int64_t off, lo, hi;
        validColumns(s, kw, off, lo, hi);
        for (uint64_t oh = 0; oh < s.OH; ++oh) {
          T *o = r + oh * s.OW;
          const int64_t ih = int64_t(oh) * s.sh + int64_t(kh) * s.dh - s.pt;
          const bool outside = ih < 0 || ih >= int64_t(s.H);
          const int64_t a = outside ? int64_t(s.OW) : lo, b = outside ? a : hi;
          for (int64_t ow = 0; ow < a; ++ow)
            o[ow] += v;
          for (int64_t ow = b; ow < int64_t(s.OW); ++ow)
            o[ow] += v;
        }
      }
  }
}

/// Result element type of the kernels: float for float operands, int64 for
/// integer ones; E is the GEMM operand type (float unless INT32 operands).
template <typename T, typename E>
TPUC_KERNEL Status conv(const Instruction &inst, const MemView &m, const Result &out) {
  using namespace conv_param;
  const Operand &d = inst.dst, &a = inst.src[0], &b = inst.src[1], &c = inst.src[2];
  const int32_t *q = inst.iparam;
  ConvShape s{a.shape[0], a.shape[1], a.shape[2], a.shape[3], d.shape[1], d.shape[2], d.shape[3],
              uint64_t(q[Groups]), 0, 0, b.shape[2], b.shape[3],
              q[StrideH], q[StrideW], q[DilH], q[DilW], q[PadTop], q[PadLeft]};
  s.ICG = s.IC / s.G;
  s.OCG = s.OC / s.G;
  const bool relu = inst.flags & kFlagRelu, bias = inst.flags & kFlagBias,
             acc = inst.flags & kFlagAccumulate;
  const uint64_t K = s.ICG * s.KH * s.KW, P = s.OH * s.OW;
  const size_t es = dtypeSize(d.dtype);
  int64_t maxProd = 0;
  const bool exact = std::is_same<T, int64_t>::value && std::is_same<E, float>::value &&
                     exactInFloat(a.dtype, b.dtype, maxProd);
  if (std::is_same<T, float>::value && s.ICG > 1 && a.dtype == DType::F32 &&
      d.dtype == DType::F32 && floatRows(b) && d.addr % 4 == 0) {
    convFloat(inst, m, out, s);
    return Status::OK();
  }
  if (std::is_same<T, float>::value && s.ICG == 1 && a.dtype == DType::F32 &&
      d.dtype == DType::F32 && a.addr % 4 == 0 && d.addr % 4 == 0 && s.KW <= 16 &&
      (a.stride[3] == 1 || s.W == 1) && !(inst.flags & kFlagAccumulate)) {
    depthwiseFloat(inst, m, out, s);
    return Status::OK();
  }

  const bool narrow = std::is_same<T, int64_t>::value && dtypeSize(a.dtype) == 1 &&
                     dtypeSize(b.dtype) == 1 && !isFloat(a.dtype) && !isFloat(b.dtype) &&
                     s.KH * s.KW <= 4096 && s.KW <= 16;

  // Filter of each group as A[OCG][K], k = (icg, kh, kw).
  E *A = scratch<E>(kFilter, s.OC * K);
  for (uint64_t oc = 0; oc < s.OC; ++oc)
    loadChannel(m, b, oc, A + oc * K);
  E *col = s.ICG == 1 ? nullptr : scratch<E>(kCol, K * P);
  T *res = scratch<T>(kResult, s.OCG * P), *old = scratch<T>(kOld, P);
  for (uint64_t n = 0; n < s.N; ++n)
    for (uint64_t g = 0; g < s.G; ++g) {
      const E *Ag = A + g * s.OCG * K;
      if (s.ICG == 1) {
        if constexpr (std::is_same<T, int64_t>::value) {
          if (narrow)
            depthwiseNarrow(m, a, s, n, g, Ag, res);
          else
            convDirect(m, a, s, n, g, Ag, res);
        } else {
          convDirect(m, a, s, n, g, Ag, res);
        }
      } else {
        im2col(m, a, s, n, g, col);
        if constexpr (std::is_same<T, float>::value)
          for (uint64_t oh = 0; oh < s.OH; ++oh) // see convFloat
            gemm(s.OCG, s.OW, K, Ag, K, col + oh * s.OW, P, res + oh * s.OW, P, 0.f);
        else
          gemmAs(s.OCG, P, K, Ag, col, res, exact ? maxProd : 1);
      }
      if constexpr (std::is_same<T, int64_t>::value)
        if (q[PadValue] != 0) // validated: integer inputs only
          addPadTaps(s, Ag, T(q[PadValue]), res);
      for (uint64_t ocg = 0; ocg < s.OCG; ++ocg) {
        const uint64_t oc = g * s.OCG + ocg;
        T *r = res + ocg * P;
        if (bias) {
          T bv = loadScalar<T>(m, c, 0, oc);
          for (uint64_t i = 0; i < P; ++i)
            r[i] += bv;
        }
        if (acc) {
          loadPlane(m, d, n, oc, old);
          for (uint64_t i = 0; i < P; ++i)
            r[i] += old[i];
        }
        if (relu)
          for (uint64_t i = 0; i < P; ++i)
            r[i] = r[i] < T(0) ? T(0) : r[i];
        storeRow(out.plane(n, oc), d.dtype, P, r);
      }
    }
  return Status::OK();
}

// --- MatMul -------------------------------------------------------------------

template <typename T, typename E>
TPUC_KERNEL Status matmul(const Instruction &inst, const MemView &m, const Result &out) {
  const Operand &d = inst.dst, &a = inst.src[0], &b = inst.src[1], &c = inst.src[2];
  const uint64_t B = d.shape[0], M = d.shape[1], K = a.shape[3], N = d.shape[3];
  const bool relu = inst.flags & kFlagRelu, bias = inst.flags & kFlagBias,
             acc = inst.flags & kFlagAccumulate, trans = inst.flags & kFlagRightTrans;
  const size_t es = dtypeSize(d.dtype);
  std::vector<E> row(trans ? K : 0);
  int64_t maxProd = 1;
  if constexpr (std::is_same<T, int64_t>::value && std::is_same<E, float>::value)
    exactInFloat(a.dtype, b.dtype, maxProd);
  E *L = scratch<E>(kCol, M * K), *R = scratch<E>(kFilter, K * N);
  T *res = scratch<T>(kResult, M * N), *old = scratch<T>(kOld, N);
  std::vector<T> bv(bias ? N : 0);
  const int64_t as = a.stride[3] * int64_t(dtypeSize(a.dtype)),
                bs = b.stride[3] * int64_t(dtypeSize(b.dtype));
  if (bias)
    loadRow(m.plane(c, 0, 0), c.stride[3] * int64_t(dtypeSize(c.dtype)), c.dtype, N, bv.data());
  for (uint64_t bb = 0; bb < B; ++bb) {
    if (bb == 0 || a.shape[0] != 1)
      for (uint64_t i = 0; i < M; ++i)
        loadRow(m.plane(a, a.shape[0] == 1 ? 0 : bb, i), as, a.dtype, K, L + i * K);
    if ((bb == 0 || b.shape[0] != 1) && trans) {
      // Right operand rows are the N outputs: [N,1,K], read row by row.
      for (uint64_t n = 0; n < N; ++n) {
        loadRow(m.plane(b, b.shape[0] == 1 ? 0 : bb, n), bs, b.dtype, K, row.data());
        for (uint64_t k = 0; k < K; ++k)
          R[k * N + n] = row[k];
      }
    } else if (bb == 0 || b.shape[0] != 1) {
      for (uint64_t k = 0; k < K; ++k)
        loadRow(m.plane(b, b.shape[0] == 1 ? 0 : bb, k), bs, b.dtype, N, R + k * N);
    }
    gemmAs(M, N, K, L, R, res, maxProd);
    for (uint64_t i = 0; i < M; ++i) {
      T *r = res + i * N;
      if (bias)
        for (uint64_t j = 0; j < N; ++j)
          r[j] += bv[j];
      if (acc) {
        loadRow(m.plane(d, bb, i), d.stride[3] * int64_t(es), d.dtype, N, old);
        for (uint64_t j = 0; j < N; ++j)
          r[j] += old[j];
      }
      if (relu)
        for (uint64_t j = 0; j < N; ++j)
          r[j] = r[j] < T(0) ? T(0) : r[j];
      storeRow(out.plane(bb, i), d.dtype, N, r);
    }
  }
  return Status::OK();
}

/// Calls `kernel(T{}, E{})` with a MAC instruction's types: float operands
/// run in float; integer ones exactly, in float slices unless an INT32
/// operand needs int64.
template <typename F> Status byMacTypes(const Instruction &inst, F kernel) {
  const DType a = inst.src[0].dtype, b = inst.src[1].dtype;
  if (isFloat(a))
    return kernel(float{}, float{});
  if (a == DType::INT32 || b == DType::INT32)
    return kernel(int64_t{}, int64_t{});
  return kernel(int64_t{}, float{});
}
Status dispatchConv(const Instruction &inst, const MemView &m, const Result &out) {
  return byMacTypes(inst, [&](auto t, auto e) {
    return conv<decltype(t), decltype(e)>(inst, m, out);
  });
}
Status dispatchMatMul(const Instruction &inst, const MemView &m, const Result &out) {
  return byMacTypes(inst, [&](auto t, auto e) {
    return matmul<decltype(t), decltype(e)>(inst, m, out);
  });
}

// --- Elementwise --------------------------------------------------------------

template <typename T, typename F> inline void map2(T *x, const T *y, uint64_t n, F f) {
  for (uint64_t i = 0; i < n; ++i)
    x[i] = f(x[i], y[i]);
}

TPUC_KERNEL void binaryRow(BinaryOp op, float *x, const float *y, uint64_t n) {
  switch (op) {
  case BinaryOp::Add:
    return map2(x, y, n, [](float a, float b) { return a + b; });
  case BinaryOp::Sub:
    return map2(x, y, n, [](float a, float b) { return a - b; });
  case BinaryOp::Mul:
    return map2(x, y, n, [](float a, float b) { return a * b; });
  case BinaryOp::Div:
    return map2(x, y, n, [](float a, float b) { return a / b; });
  // NaN if either is: written as selects, which vectorise.
  case BinaryOp::Max:
    return map2(x, y, n, [](float a, float b) {
      const float r = a < b ? b : a;
      return a != a || b != b ? std::numeric_limits<float>::quiet_NaN() : r;
    });
  case BinaryOp::Min:
    return map2(x, y, n, [](float a, float b) {
      const float r = b < a ? b : a;
      return a != a || b != b ? std::numeric_limits<float>::quiet_NaN() : r;
    });
  }
}

TPUC_KERNEL void binaryRow(BinaryOp op, int64_t *x, const int64_t *y, uint64_t n) {
  switch (op) {
  case BinaryOp::Add:
    return map2(x, y, n, [](int64_t a, int64_t b) { return a + b; });
  case BinaryOp::Sub:
    return map2(x, y, n, [](int64_t a, int64_t b) { return a - b; });
  case BinaryOp::Mul:
    return map2(x, y, n, [](int64_t a, int64_t b) { return a * b; });
  case BinaryOp::Max:
    return map2(x, y, n, [](int64_t a, int64_t b) { return std::max(a, b); });
  case BinaryOp::Min:
    return map2(x, y, n, [](int64_t a, int64_t b) { return std::min(a, b); });
  default:
    std::fill(x, x + n, int64_t(0));
  }
}

template <typename T>
Status binary(const Instruction &inst, const MemView &m, const Result &out, T scalar) {
  const Operand &d = inst.dst, &a = inst.src[0], &b = inst.src[1];
  const BinaryOp op = static_cast<BinaryOp>(inst.sub_op);
  const bool isScalar = inst.flags & kFlagScalar, first = inst.flags & kFlagScalarFirst;
  const bool relu = inst.flags & kFlagRelu;
  const size_t es = dtypeSize(d.dtype);
  std::vector<T> x, y;
  auto finish = [&](T *v, uint64_t len, uint64_t idx) {
    if (relu)
      for (uint64_t i = 0; i < len; ++i)
        v[i] = v[i] < T(0) ? T(0) : v[i];
    out.store(idx, len, v);
  };
  if (isScalar) {
    const Operand *ops[1] = {&a};
    forRows(m, d.shape, ops, [&](uint64_t, uint64_t, uint64_t, const uint8_t *const *p,
                                 const int64_t *s, uint64_t len, uint64_t idx) {
      x.resize(len);
      y.assign(len, scalar);
      loadRow(p[0], s[0], a.dtype, len, x.data());
      if (first) {
        binaryRow(op, y.data(), x.data(), len);
        finish(y.data(), len, idx);
      } else {
        binaryRow(op, x.data(), y.data(), len);
        finish(x.data(), len, idx);
      }
    });
    return Status::OK();
  }
  const Operand *ops[2] = {&a, &b};
  forRows(m, d.shape, ops, [&](uint64_t, uint64_t, uint64_t, const uint8_t *const *p,
                               const int64_t *s, uint64_t len, uint64_t idx) {
    x.resize(len);
    y.resize(len);
    loadRow(p[0], s[0], a.dtype, len, x.data());
    loadRow(p[1], s[1], b.dtype, len, y.data());
    binaryRow(op, x.data(), y.data(), len);
    finish(x.data(), len, idx);
  });
  return Status::OK();
}

template <ActOp OP> inline float act(float x, float alpha, float beta) {
  switch (OP) {
  case ActOp::Relu:
    return x > 0.f ? x : (std::isnan(x) ? x : 0.f);
  case ActOp::LeakyRelu:
    return x >= 0.f ? x : alpha * x;
  case ActOp::Sigmoid:
    return 1.f / (1.f + std::exp(-x));
  case ActOp::Tanh:
    return std::tanh(x);
  case ActOp::Gelu:
    return 0.5f * x * (1.f + std::erf(x * 0.70710678118654752f));
  case ActOp::Silu:
    return x / (1.f + std::exp(-x));
  case ActOp::Exp:
    return std::exp(x);
  case ActOp::Log:
    return std::log(x);
  case ActOp::Sqrt:
    return std::sqrt(x);
  case ActOp::Rsqrt:
    return 1.f / std::sqrt(x);
  case ActOp::Erf:
    return std::erf(x);
  case ActOp::Abs:
    return std::fabs(x);
  case ActOp::Neg:
    return -x;
  case ActOp::Reciprocal:
    return 1.f / x;
  case ActOp::Square:
    return x * x;
  case ActOp::Clip:
    return std::min(std::max(x, alpha), beta);
  case ActOp::HardSigmoid:
    return std::min(std::max(alpha * x + beta, 0.f), 1.f);
  case ActOp::Softplus:
    return x > 20.f ? x : std::log1p(std::exp(x));
  case ActOp::GeluTanh: {
    const float k = 0.7978845608028654f; // sqrt(2/pi)
    return 0.5f * x * (1.f + std::tanh(k * (x + 0.044715f * x * x * x)));
  }
  }
  return x;
}

using ActRow = void (*)(float *, uint64_t, float, float);
template <ActOp OP> TPUC_KERNEL void actRow(float *x, uint64_t n, float alpha, float beta) {
  for (uint64_t i = 0; i < n; ++i)
    x[i] = act<OP>(x[i], alpha, beta);
}
template <size_t... I> constexpr auto actTable(std::index_sequence<I...>) {
  return std::array<ActRow, sizeof...(I)>{&actRow<static_cast<ActOp>(I)>...};
}
constexpr auto kActRows = actTable(std::make_index_sequence<kNumActOps>());

Status active(const Instruction &inst, const MemView &m, const Result &out) {
  const Operand &d = inst.dst, &a = inst.src[0];
  const ActRow fn = kActRows[inst.sub_op];
  const size_t es = dtypeSize(d.dtype);
  std::vector<float> x;
  const Operand *ops[1] = {&a};
  forRows(m, d.shape, ops, [&](uint64_t, uint64_t, uint64_t, const uint8_t *const *p,
                               const int64_t *s, uint64_t len, uint64_t idx) {
    x.resize(len);
    loadRow(p[0], s[0], a.dtype, len, x.data());
    fn(x.data(), len, inst.fparam[0], inst.fparam[1]);
    out.store(idx, len, x.data());
  });
  return Status::OK();
}

/// len elements of es bytes from src (step srcStep) to dst (step dstStep).
inline void copyElems(uint8_t *dst, int64_t dstStep, const uint8_t *src, int64_t srcStep,
                      uint64_t len, int64_t es) {
  if (dstStep == es && srcStep == es) {
    uint64_t bytes = len * uint64_t(es);
    if (bytes > 64) {
      std::memcpy(dst, src, bytes);
      return;
    }
    // Short runs (rows of small filters) in fixed-size pieces the compiler
    // inlines, instead of a library call each.
    for (; bytes >= 16; bytes -= 16, dst += 16, src += 16)
      std::memcpy(dst, src, 16);
    for (; bytes >= 4; bytes -= 4, dst += 4, src += 4)
      std::memcpy(dst, src, 4);
    for (; bytes; --bytes)
      *dst++ = *src++;
    return;
  }
  switch (es) {
  case 1:
    for (uint64_t i = 0; i < len; ++i)
      dst[int64_t(i) * dstStep] = src[int64_t(i) * srcStep];
    return;
  case 2:
    for (uint64_t i = 0; i < len; ++i)
      wr<uint16_t>(dst + int64_t(i) * dstStep, rd<uint16_t>(src + int64_t(i) * srcStep));
    return;
  default:
    for (uint64_t i = 0; i < len; ++i)
      wr<uint32_t>(dst + int64_t(i) * dstStep, rd<uint32_t>(src + int64_t(i) * srcStep));
  }
}

/// DmaMove (src may broadcast) and Cast: float sources round with `rm`.
Status convert(const Instruction &inst, const MemView &m, const Result &out, RoundMode rm) {
  const Operand &d = inst.dst, &a = inst.src[0];
  const size_t es = dtypeSize(d.dtype);
  const Operand *ops[1] = {&a};
  if (a.dtype == d.dtype) { // bit-exact copy
    if (!out.dense) {
      moveDirect(m, inst);
      return Status::OK();
    }
    forRows(m, d.shape, ops, [&](uint64_t, uint64_t, uint64_t, const uint8_t *const *p,
                                 const int64_t *s, uint64_t len, uint64_t idx) {
      copyElems(out.dense + idx * es, int64_t(es), p[0], s[0], len, int64_t(es));
    });
    return Status::OK();
  }
  std::vector<float> xf;
  std::vector<int64_t> xi;
  const bool fl = isFloat(a.dtype);
  forRows(m, d.shape, ops, [&](uint64_t, uint64_t, uint64_t, const uint8_t *const *p,
                               const int64_t *s, uint64_t len, uint64_t idx) {
    if (fl) {
      xf.resize(len);
      loadRow(p[0], s[0], a.dtype, len, xf.data());
      out.store(idx, len, xf.data(), rm);
    } else {
      xi.resize(len);
      loadRow(p[0], s[0], a.dtype, len, xi.data());
      out.store(idx, len, xi.data());
    }
  });
  return Status::OK();
}

Status fill(const Instruction &inst, const Result &out) {
  const Operand &d = inst.dst;
  const size_t es = dtypeSize(d.dtype);
  uint8_t v[8];
  if (isFloat(d.dtype)) {
    float f = inst.fparam[0];
    storeRowF(v, d.dtype, 1, &f, RoundMode::HalfToEven);
  } else {
    int64_t i = inst.iparam[0];
    storeRowI(v, d.dtype, 1, &i);
  }
  for (uint64_t n = 0; n < d.shape[0]; ++n)
    for (uint64_t c = 0; c < d.shape[1]; ++c) {
      uint8_t *p = out.plane(n, c);
      for (uint64_t i = 0; i < out.HW; ++i)
        std::memcpy(p + i * es, v, es);
    }
  return Status::OK();
}

Status lut(const Instruction &inst, const MemView &m, const Result &out) {
  const Operand &d = inst.dst, &a = inst.src[0], &b = inst.src[1];
  const size_t es = dtypeSize(d.dtype);
  std::vector<uint8_t> table(b.numElements() * es);
  {
    const Operand *ops[1] = {&b};
    forRows(m, b.shape, ops, [&](uint64_t, uint64_t, uint64_t, const uint8_t *const *p,
                                 const int64_t *s, uint64_t len, uint64_t idx) {
      for (uint64_t i = 0; i < len; ++i)
        std::memcpy(&table[(idx + i) * es], p[0] + int64_t(i) * s[0], es);
    });
  }
  // An int8 index addresses the table by its two's-complement byte.
  const Operand *ops[1] = {&a};
  forRows(m, d.shape, ops, [&](uint64_t, uint64_t, uint64_t, const uint8_t *const *p,
                               const int64_t *s, uint64_t len, uint64_t idx) {
    out.pieces(idx, len, [&](uint8_t *q, uint64_t k, uint64_t n) {
      for (uint64_t i = k; i < k + n; ++i)
        std::memcpy(q + (i - k) * es, &table[size_t(p[0][int64_t(i) * s[0]]) * es], es);
    });
  });
  return Status::OK();
}

/// requantize() of a row for shift >= 0, with the rounding rule as selects
/// the compiler vectorises.
template <RoundMode RM>
TPUC_KERNEL void requantRowAs(int64_t *x, uint64_t len, int64_t mult, int sh, int64_t zp,
                              int64_t lo, int64_t hi) {
  const uint64_t den = uint64_t(1) << sh;
  for (uint64_t i = 0; i < len; ++i) {
    const int64_t prod = int64_t(int32_t(x[i])) * mult;
    const int64_t q = prod >> sh;
    const uint64_t r = uint64_t(prod) & (den - 1), twice = r * 2;
    const bool neg = prod < 0;
    bool up = false;
    switch (RM) {
    case RoundMode::HalfAwayFromZero:
      up = twice > den || (twice == den && !neg);
      break;
    case RoundMode::HalfUp:
      up = r != 0 && twice >= den;
      break;
    case RoundMode::HalfToEven:
      up = twice > den || (twice == den && (q & 1));
      break;
    case RoundMode::TowardZero:
      up = r != 0 && neg;
      break;
    case RoundMode::Down:
      break;
    case RoundMode::Up:
      up = r != 0;
      break;
    }
    int64_t v = q + int64_t(up);
    v = v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : v);
    v += zp;
    x[i] = v > hi ? hi : (v < lo ? lo : v);
  }
}

using RequantRow = void (*)(int64_t *, uint64_t, int64_t, int, int64_t, int64_t, int64_t);
template <size_t... I> constexpr auto requantTable(std::index_sequence<I...>) {
  return std::array<RequantRow, sizeof...(I)>{&requantRowAs<static_cast<RoundMode>(I)>...};
}
constexpr auto kRequantRows = requantTable(std::make_index_sequence<6>());

void requantRow(int64_t *x, uint64_t len, int32_t mult, int sh, int32_t zp, RoundMode rm, DType t) {
  if (isValidRoundMode(int(rm)))
    return kRequantRows[size_t(rm)](x, len, mult, sh, zp, intMin(t), intMax(t));
  for (uint64_t i = 0; i < len; ++i)
    x[i] = requantize(int32_t(x[i]), mult, sh, zp, rm, t);
}

/// Per-channel (multiplier, shift) pairs of a requant, its shifts checked.
Status checkShifts(const Instruction &inst, const MemView &m, std::vector<int64_t> *pairs) {
  const std::vector<int64_t> pc = loadDense<int64_t>(m, inst.src[1]);
  for (uint64_t ch = 0; ch < inst.dst.shape[1]; ++ch)
    if (pc[ch * 2 + 1] < -31 || pc[ch * 2 + 1] > 62)
      return Status::error("src1: per-channel shift " + std::to_string(pc[ch * 2 + 1]) +
                           " of channel " + std::to_string(ch) + " is outside [-31, 62]");
  if (pairs)
    *pairs = std::move(pc);
  return Status::OK();
}

Status requant(const Instruction &inst, const MemView &m, const Result &out) {
  using namespace requant_param;
  const Operand &d = inst.dst, &a = inst.src[0], &b = inst.src[1];
  const int32_t *q = inst.iparam;
  const RoundMode rm = static_cast<RoundMode>(q[Round]);
  const bool perChannel = inst.flags & kFlagPerChannel;
  std::vector<int64_t> pc;
  if (perChannel)
    TPUC_RETURN_IF_ERROR(checkShifts(inst, m, &pc));
  const size_t es = dtypeSize(d.dtype);
  std::vector<int64_t> x;
  const Operand *ops[1] = {&a};
  forRows(m, d.shape, ops, [&](uint64_t, uint64_t ch, uint64_t, const uint8_t *const *p,
                               const int64_t *s, uint64_t len, uint64_t idx) {
    int32_t mult = q[Multiplier], sh = q[Shift];
    if (perChannel) {
      mult = int32_t(pc[ch * 2]);
      sh = int32_t(pc[ch * 2 + 1]);
    }
    x.resize(len);
    loadRow(p[0], s[0], a.dtype, len, x.data());
    if (sh >= 0)
      requantRow(x.data(), len, mult, sh, q[ZeroPoint], rm, d.dtype);
    else
      for (uint64_t i = 0; i < len; ++i)
        x[i] = requantize(int32_t(x[i]), mult, sh, q[ZeroPoint], rm, d.dtype);
    out.store(idx, len, x.data());
  });
  return Status::OK();
}

// --- Pool and Reduce ----------------------------------------------------------

/// Window cells [lo, hi) of output position o inside an input of size n
/// (kernel k, stride s, leading pad p), and `frame` cells inside the padded
/// frame (trailing pad pe) that count_include_pad counts.
struct Window {
  int64_t lo, hi, frame;
};
inline Window window(int64_t o, int64_t k, int64_t s, int64_t p, int64_t pe, int64_t n) {
  int64_t i0 = o * s - p;
  Window w;
  w.lo = std::min(k, std::max<int64_t>(0, -i0));
  w.hi = std::max(w.lo, std::min(k, n - i0));
  w.frame = std::max<int64_t>(0, std::min(k, n + pe - i0));
  return w;
}

template <typename T>
TPUC_KERNEL Status pool(const Instruction &inst, const MemView &m, const Result &out) {
  using namespace pool_param;
  const Operand &d = inst.dst, &a = inst.src[0];
  const int32_t *q = inst.iparam;
  const bool avg = inst.sub_op == uint8_t(PoolMode::Avg);
  const bool countPad = inst.flags & kFlagCountPad;
  const uint64_t N = a.shape[0], C = a.shape[1], H = a.shape[2], W = a.shape[3];
  const uint64_t OH = d.shape[2], OW = d.shape[3];
  const size_t es = dtypeSize(d.dtype);
  std::vector<T> x(H * W), o(OH * OW);
  std::vector<Window> cols(OW);
  for (uint64_t ow = 0; ow < OW; ++ow)
    cols[ow] = window(int64_t(ow), q[KW], q[StrideW], q[PadLeft], q[PadRight], int64_t(W));
  const T init = avg ? T(0)
                     : (std::is_same<T, float>::value ? T(-std::numeric_limits<float>::infinity())
                                                      : T(INT64_MIN));
  for (uint64_t n = 0; n < N; ++n)
    for (uint64_t ch = 0; ch < C; ++ch) {
      loadPlane(m, a, n, ch, x.data());
      for (uint64_t oh = 0; oh < OH; ++oh) {
        Window r = window(int64_t(oh), q[KH], q[StrideH], q[PadTop], q[PadBottom], int64_t(H));
        const int64_t ih0 = int64_t(oh) * q[StrideH] - q[PadTop];
        for (uint64_t ow = 0; ow < OW; ++ow) {
          const Window &c = cols[ow];
          const int64_t iw0 = int64_t(ow) * q[StrideW] - q[PadLeft];
          T s = init;
          for (int64_t kh = r.lo; kh < r.hi; ++kh) {
            const T *row = x.data() + (ih0 + kh) * int64_t(W) + iw0;
            if (avg)
              for (int64_t kw = c.lo; kw < c.hi; ++kw)
                s = s + row[kw];
            else
              for (int64_t kw = c.lo; kw < c.hi; ++kw)
                s = std::max(s, row[kw]);
          }
          if (avg) {
            int64_t count = countPad ? r.frame * c.frame : (r.hi - r.lo) * (c.hi - c.lo);
            if constexpr (std::is_same<T, float>::value)
              s = s / float(std::max<int64_t>(count, 1));
            else
              s = divRound(s, std::max<int64_t>(count, 1), static_cast<RoundMode>(q[Round]));
          }
          o[oh * OW + ow] = s;
        }
      }
      storeRow(out.plane(n, ch), d.dtype, OH * OW, o.data());
    }
  return Status::OK();
}

template <typename T>
TPUC_KERNEL Status reduce(const Instruction &inst, const MemView &m, const Result &out) {
  const Operand &d = inst.dst, &a = inst.src[0];
  const ReduceMode mode = static_cast<ReduceMode>(inst.sub_op);
  const int axis = inst.iparam[0];
  const RoundMode rm = static_cast<RoundMode>(inst.iparam[1]);
  const uint64_t L = a.shape[axis];
  uint64_t inner = 1;
  for (int k = axis + 1; k < 4; ++k)
    inner *= a.shape[k];
  const uint64_t outer = d.numElements() / inner;
  const std::vector<T> x = loadDense<T>(m, a);
  std::vector<T> r(outer * inner);
  for (uint64_t o = 0; o < outer; ++o) {
    const T *base = x.data() + o * L * inner;
    T *acc = r.data() + o * inner;
    std::copy(base, base + inner, acc);
    for (uint64_t k = 1; k < L; ++k) {
      const T *v = base + k * inner;
      if (mode == ReduceMode::Max)
        for (uint64_t i = 0; i < inner; ++i)
          acc[i] = std::max(acc[i], v[i]);
      else if (mode == ReduceMode::Min)
        for (uint64_t i = 0; i < inner; ++i)
          acc[i] = std::min(acc[i], v[i]);
      else
        for (uint64_t i = 0; i < inner; ++i)
          acc[i] += v[i];
    }
    if (mode == ReduceMode::Mean)
      for (uint64_t i = 0; i < inner; ++i) {
        if constexpr (std::is_same<T, float>::value)
          acc[i] /= float(L);
        else
          acc[i] = divRound(acc[i], int64_t(L), rm);
      }
  }
  out.store(0, r.size(), r.data());
  return Status::OK();
}

Status gather(const Instruction &inst, const MemView &m, uint8_t *out) {
  const Operand &d = inst.dst, &a = inst.src[0], &b = inst.src[1];
  const int axis = inst.iparam[gather_param::Axis];
  const int64_t dim = a.shape[axis];
  // Resolve every index before moving anything: a bad one stops the
  // instruction with nothing written.
  std::vector<double> vals(b.numElements());
  if (b.dtype == DType::F32) {
    std::vector<float> f = loadDense<float>(m, b);
    std::copy(f.begin(), f.end(), vals.begin());
  } else {
    std::vector<int64_t> v = loadDense<int64_t>(m, b);
    std::copy(v.begin(), v.end(), vals.begin());
  }
  std::vector<uint64_t> rows(vals.size());
  for (size_t i = 0; i < vals.size(); ++i) {
    double v = vals[i];
    bool integral = std::isfinite(v) && std::trunc(v) == v;
    if (!integral || v < -double(dim) || v >= double(dim)) {
      char text[48];
      if (integral && std::fabs(v) < 9.0e15)
        std::snprintf(text, sizeof(text), "%lld", (long long)v);
      else
        std::snprintf(text, sizeof(text), "%.9g", v);
      return Status::error(
          std::string("src1: index ") + text + " at position " + std::to_string(i) +
          (integral ? " is outside [" + std::to_string(-dim) + ", " + std::to_string(dim) +
                          ") for axis " + std::to_string(axis)
                    : std::string(" is not an integer")));
    }
    rows[i] = uint64_t(v < 0 ? int64_t(v) + dim : int64_t(v));
  }
  size_t es = dtypeSize(d.dtype);
  uint64_t i = 0, co[4];
  for (co[0] = 0; co[0] < d.shape[0]; ++co[0])
    for (co[1] = 0; co[1] < d.shape[1]; ++co[1])
      for (co[2] = 0; co[2] < d.shape[2]; ++co[2])
        for (co[3] = 0; co[3] < d.shape[3]; ++co[3], ++i) {
          uint64_t s[4] = {co[0], co[1], co[2], co[3]};
          s[axis] = rows[co[axis]];
          std::memcpy(out + i * es, m.at(a, s[0], s[1], s[2], s[3]), es);
        }
  return Status::OK();
}

} // namespace

namespace {

Status dispatch(const Instruction &inst, const MemView &m, const Result &out) {
  const Operand &d = inst.dst;
  const bool fl = isFloat(inst.src[0].valid() ? inst.src[0].dtype : d.dtype);
  switch (inst.op) {
  case Opcode::DmaMove:
    return convert(inst, m, out, static_cast<RoundMode>(inst.iparam[0]));
  case Opcode::DmaGather:
    return gather(inst, m, out.dense);
  case Opcode::DmaFill:
    return fill(inst, out);
  case Opcode::Conv:
    return dispatchConv(inst, m, out);
  case Opcode::MatMul:
    return dispatchMatMul(inst, m, out);
  case Opcode::Binary:
    if (isFloat(d.dtype))
      return binary<float>(inst, m, out, inst.fparam[0]);
    return binary<int64_t>(inst, m, out, inst.iparam[0]);
  case Opcode::Pool:
    return fl ? pool<float>(inst, m, out) : pool<int64_t>(inst, m, out);
  case Opcode::Reduce:
    return fl ? reduce<float>(inst, m, out) : reduce<int64_t>(inst, m, out);
  case Opcode::Active:
    return active(inst, m, out);
  case Opcode::Lut:
    return lut(inst, m, out);
  case Opcode::Cast:
    return convert(inst, m, out, static_cast<RoundMode>(inst.iparam[0]));
  case Opcode::Requant:
    return requant(inst, m, out);
  }
  return Status::error("unknown opcode");
}

} // namespace

Status executeInstruction(const Instruction &inst, const MemView &m, std::vector<uint8_t> &buf) {
  buf.resize(inst.dst.numElements() * dtypeSize(inst.dst.dtype));
  return dispatch(inst, m, Result(m, inst.dst, buf.data()));
}

bool runsInPlace(const Instruction &inst) {
  const Operand &d = inst.dst;
  if (inst.op == Opcode::DmaGather)
    return false;
  if (inst.op == Opcode::DmaMove && inst.src[0].dtype == d.dtype)
    return true;
  return (d.shape[3] == 1 || d.stride[3] == 1) &&
         (d.shape[2] == 1 || d.stride[2] == int32_t(d.shape[3]));
}

Status checkData(const Instruction &inst, const MemView &m) {
  if (inst.op == Opcode::Requant && (inst.flags & kFlagPerChannel))
    return checkShifts(inst, m, nullptr);
  return Status::OK();
}

Status executeInPlace(const Instruction &inst, const MemView &m) {
  return dispatch(inst, m, Result(m, inst.dst, nullptr));
}

namespace {

/// dPlane[c][n] = word n of source plane c (n words sStep bytes apart), in
/// 16 x 16 tiles: a [N][C] matrix (1x1 filters) is transposed from rows in
/// DDR to a contiguous run of N per channel.
void transposeWords(uint64_t N, uint64_t C, uint8_t *const *dPlane, const uint8_t *const *sPlane,
                    int64_t sStep) {
  constexpr uint64_t T = 16;
  uint32_t tile[T][T];
  for (uint64_t n0 = 0; n0 < N; n0 += T) {
    const uint64_t nn = std::min(T, N - n0);
    for (uint64_t c0 = 0; c0 < C; c0 += T) {
      const uint64_t cc = std::min(T, C - c0);
      for (uint64_t j = 0; j < cc; ++j) {
        const uint8_t *src = sPlane[c0 + j] + int64_t(n0) * sStep;
        for (uint64_t i = 0; i < nn; ++i)
          tile[j][i] = rd<uint32_t>(src + int64_t(i) * sStep);
      }
      for (uint64_t j = 0; j < cc; ++j)
        std::memcpy(dPlane[c0 + j] + n0 * 4, tile[j], nn * 4);
    }
  }
}

/// Copies the [N][C][H][W] elements of es bytes between two strided
/// layouts. Channel c starts at dPlane[c] / sPlane[c]; d[k] / s[k] are the
/// byte strides of n, h and w (index 1 unused). Small planes (filters,
/// biases) are copied in blocks of images with the channels inside, so the
/// rows of a source with the channel in the middle ([IC, OC, KH, KW]) stay
/// in cache while each channel's destination block is written in order.
void copyPlanes(const uint32_t *shape, int64_t es, uint8_t *const *dPlane, const int64_t *d,
                const uint8_t *const *sPlane, const int64_t *s) {
  const uint64_t N = shape[0], C = shape[1], H = shape[2], W = shape[3];
  const bool flat = H == 1 || (s[2] == int64_t(W) * s[3] && d[2] == int64_t(W) * d[3]);
  const uint64_t rows = flat ? 1 : H, len = flat ? H * W : W;
  if (H * W == 1 && es == 4 && d[0] == 4)
    return transposeWords(N, C, dPlane, sPlane, s[0]);
  const uint64_t run = len * uint64_t(es);
  if (rows == 1 && d[3] == es && s[3] == es && H * W > 1 && run <= 512) {
    // Planes of a few contiguous bytes (3x3 filters): copies of a size
    // the compiler knows where it is a common one.
    auto runs = [&](auto bytes, uint64_t n0, uint64_t n1) {
      for (uint64_t c = 0; c < C; ++c) {
        uint8_t *dp = dPlane[c] + int64_t(n0) * d[0];
        const uint8_t *sp = sPlane[c] + int64_t(n0) * s[0];
        for (uint64_t n = n0; n < n1; ++n, dp += d[0], sp += s[0])
          std::memcpy(dp, sp, decltype(bytes)::value);
      }
    };
    for (uint64_t n0 = 0; n0 < N; n0 += 64) {
      const uint64_t n1 = std::min(N, n0 + 64);
      if (run == 36)
        runs(std::integral_constant<size_t, 36>(), n0, n1);
      else if (run == 9)
        runs(std::integral_constant<size_t, 9>(), n0, n1);
      else
        for (uint64_t c = 0; c < C; ++c)
          for (uint64_t n = n0; n < n1; ++n)
            copyElems(dPlane[c] + int64_t(n) * d[0], es, sPlane[c] + int64_t(n) * s[0], es, len, es);
    }
    return;
  }
  const uint64_t block = H * W * uint64_t(es) <= 512 ? 64 : 1;
  for (uint64_t n0 = 0; n0 < N; n0 += block) {
    const uint64_t n1 = std::min(N, n0 + block);
    for (uint64_t c = 0; c < C; ++c) {
      uint8_t *dp = dPlane[c];
      const uint8_t *sp = sPlane[c];
      if (H * W == 1) { // one element per plane: along n
        copyElems(dp + int64_t(n0) * d[0], d[0], sp + int64_t(n0) * s[0], s[0], n1 - n0, es);
        continue;
      }
      for (uint64_t n = n0; n < n1; ++n)
        for (uint64_t h = 0; h < rows; ++h)
          copyElems(dp + int64_t(n) * d[0] + int64_t(h) * d[2], d[3],
                    sp + int64_t(n) * s[0] + int64_t(h) * s[2], s[3], len, es);
    }
  }
}

/// Byte strides of n, h, w of o (0 where the dimension is 1: broadcast).
void byteStrides(const Operand &o, int64_t st[4]) {
  const int64_t es = int64_t(dtypeSize(o.dtype));
  for (int k = 0; k < 4; ++k)
    st[k] = o.shape[k] == 1 ? 0 : o.stride[k] * es;
}

/// Base pointers of the planes (0, c) of o for the C channels of a result.
uint8_t *const *planePointers(const MemView &m, const Operand &o, uint64_t C, int slot) {
  thread_local std::vector<uint8_t *> bufs[2];
  std::vector<uint8_t *> &v = bufs[slot];
  v.resize(C);
  for (uint64_t c = 0; c < C; ++c)
    v[c] = m.plane(o, 0, o.shape[1] == 1 ? 0 : c);
  return v.data();
}

} // namespace

void moveDirect(const MemView &m, const Instruction &inst) {
  const Operand &d = inst.dst, &a = inst.src[0];
  int64_t sa[4], sd[4];
  byteStrides(a, sa);
  byteStrides(d, sd);
  copyPlanes(d.shape, int64_t(dtypeSize(d.dtype)), planePointers(m, d, d.shape[1], 0), sd,
             planePointers(m, a, d.shape[1], 1), sa);
}

void storeDense(const MemView &m, const Operand &dst, const uint8_t *data) {
  const int64_t es = int64_t(dtypeSize(dst.dtype));
  const uint64_t C = dst.shape[1], HW = uint64_t(dst.shape[2]) * dst.shape[3];
  int64_t sd[4], ss[4] = {int64_t(C * HW) * es, 0, int64_t(dst.shape[3]) * es, es};
  byteStrides(dst, sd);
  thread_local std::vector<const uint8_t *> src;
  src.resize(C);
  for (uint64_t c = 0; c < C; ++c)
    src[c] = data + c * HW * es;
  copyPlanes(dst.shape, es, planePointers(m, dst, C, 0), sd, src.data(), ss);
}

} // namespace chip
} // namespace tpuc
