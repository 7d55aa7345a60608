//===- runtime/kernels/KernelSupport.h - what the kernels share (private) --===//
//
// The pieces several kernel files use: reductions in a fixed tree, padded
// row tails of special functions, small dense SPD algebra, Wishart and
// Dirichlet helpers, scratch for the multivariate kernels. All inline (or
// vector-cloned) in an anonymous namespace, so that each kernel inlines them
// as when they lived in one file. Include it only from runtime/factors/ and
// runtime/kernels/ sources.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/VecMath.h"
#include "runtime/VectorIsa.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

/// Scratch size (doubles) of the MvGaussian/Wishart kernels of dimension D.
#ifndef PPC_MV_SCRATCH
#define PPC_MV_SCRATCH(D) (3 * (D) * (D) + 2 * (D) + 1)
#endif

// A kernel's body that its per-ISA copies inline (a function the kernels of
// a file share, kept out of the symbol table): always inlined, so that each
// copy of a PPC_ROW_KERNEL runs it with that copy's vector instructions.
#define PPC_KERNEL_INLINE static inline __attribute__((always_inline))

namespace {

namespace vm = ppc::rt::vm;

[[maybe_unused]] constexpr double kLog2 = 0.69314718055994530942;
[[maybe_unused]] constexpr double kLog2Pi = 1.8378770664093454836;
[[maybe_unused]] constexpr double kLogPi = 1.1447298858494001741;

// Reductions with 8 independent partial sums combined in a fixed tree: the
// loop vectorizes without -ffast-math and the result does not depend on the
// vector width. Always inlined: only inside a kernel's AVX-512/AVX2 clone
// does it run wide (GCC's unit-growth limits would otherwise leave some
// copies out of line, compiled for the baseline).
template <class F>
__attribute__((always_inline)) inline double reduce8(int64_t n, F f) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += f(i + j);
  double s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += f(i);
  return s;
}

// A row's last partial block of 8 entries as one 8-lane vector, padded: a
// special function in a scalar remainder loop costs about as much as 8
// lanes (LDA's documents, 20 topics: 2 vectors and 4 scalar digammas
// before, 3 vectors now). Lane for lane the same arithmetic as the
// vector loop, so the results do not change.
constexpr int64_t kLanes = 8;

/// e[k] = digamma(a[k] + offset) - digamma(s) over a row of K entries;
/// digamma(s) runs in the padded block's first spare lane.
__attribute__((always_inline)) inline void digammaRowMinus(int64_t K, const double* a, double offset, double s,
                                                           double* e) {
  if (K <= 0) return;
  const int64_t full = K - K % kLanes, rest = K - full;
  double in[kLanes], out[kLanes];
  for (int64_t j = 0; j < kLanes; ++j) in[j] = j < rest ? a[full + j] + offset : (j == rest ? s : 1.0);
  for (int64_t j = 0; j < kLanes; ++j) out[j] = vm::digamma_pos(in[j]);
  const double ds = out[rest];
  for (int64_t k = 0; k < full; ++k) e[k] = vm::digamma_pos(a[k] + offset) - ds;
  for (int64_t j = 0; j < rest; ++j) e[full + j] = out[j] - ds;
}

/// digammaRowMinus, and returns sum_k lgamma(a[k] + offset) - lgamma(s) (a
/// Dirichlet's log normalizer): the lgamma shares each entry's shift and
/// log with its digamma, and lgamma(s) runs in the padded lane with
/// digamma(s).
__attribute__((always_inline)) inline double digammaLgammaRowMinus(int64_t K, const double* a, double offset, double s,
                                                                  double* e) {
  if (K <= 0) return -vm::lgamma_pos(s);
  const int64_t full = K - K % kLanes, rest = K - full;
  double in[kLanes], out[kLanes], lg[kLanes];
  for (int64_t j = 0; j < kLanes; ++j) in[j] = j < rest ? a[full + j] + offset : (j == rest ? s : 1.0);
  for (int64_t j = 0; j < kLanes; ++j) out[j] = vm::digamma_lgamma_pos(in[j], lg[j]);
  const double ds = out[rest];
  // The entries in blocks, each in three loops: the shifts, the logarithms,
  // the series. One loop over digamma_lgamma_pos runs at the latency of its
  // chain (llvm-mca on znver3: 125 cycles a vector of 4, 51.5 of work); the
  // shorter loops overlap their iterations (LDA's 20 x 10473 topics: 1.96 ->
  // 1.62 ms, one AVX2 core). The same operations: the same bits.
  constexpr int64_t kBlock = 64;
  static_assert(kBlock % kLanes == 0, "each block starts at accumulator 0");
  double y[kBlock], corr[kBlock], den[kBlock], logy[kBlock], logden[kBlock];
  double acc[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t k0 = 0; k0 < full; k0 += kBlock) {
    const int64_t m = full - k0 < kBlock ? full - k0 : kBlock;  // a multiple of kLanes
    for (int64_t j = 0; j < m; ++j) vm::digammaLgammaShift(a[k0 + j] + offset, y[j], corr[j], den[j]);
    for (int64_t j = 0; j < m; ++j) {
      logy[j] = vm::log(y[j]);
      logden[j] = vm::log(den[j]);
    }
    for (int64_t j0 = 0; j0 < m; j0 += kLanes)
      for (int64_t j = 0; j < kLanes; ++j) {
        double l;
        const int64_t k = k0 + j0 + j;
        e[k] = vm::digammaLgammaFinish(a[k] + offset, y[j0 + j], corr[j0 + j], logy[j0 + j], logden[j0 + j], l) - ds;
        acc[j] += l;
      }
  }
  double sum = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
  for (int64_t j = 0; j < rest; ++j) {
    e[full + j] = out[j] - ds;
    sum += lg[j];
  }
  return sum - lg[rest];
}

/// max_i f(i) over i < n (-inf for n = 0), in 8 accumulators (8 short chains
/// of comparisons, not one long one). For code compiled for the baseline
/// ISA; the vector ISAs' clones use maxOfLanes.
template <class F>
__attribute__((always_inline)) inline double maxOf8(int64_t n, F f) {
  double acc[8] = {-vm::kInf, -vm::kInf, -vm::kInf, -vm::kInf, -vm::kInf, -vm::kInf, -vm::kInf, -vm::kInf};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) {
      const double v = f(i + j);
      acc[j] = v > acc[j] ? v : acc[j];
    }
  double m = acc[0];
  for (int j = 1; j < 8; ++j) m = acc[j] > m ? acc[j] : m;
  for (; i < n; ++i) {
    const double v = f(i);
    m = v > m ? v : m;
  }
  return m;
}

/// maxOf8's value with its 8 accumulators held as two vectors of 4, for the
/// kernels with copies per vector ISA (PPC_ROW_KERNEL). Written on scalars,
/// GCC compiles the comparisons of the AVX2 copy to integer conditional
/// moves, one lane at a time: ppc_dirichlet_exp_stats at K = 20 spent 35 ns
/// of its 170 on its maximum (BM_DocExpStats/20: 42.4 -> 39 us). The
/// baseline copy of this form is slower than maxOf8 (SSE2 has no blend).
/// A maximum does not depend on the order of its comparisons: the same
/// value as maxOf8.
template <class F>
__attribute__((always_inline)) inline double maxOfLanes(int64_t n, F f) {
  typedef double Lanes4 __attribute__((vector_size(4 * sizeof(double))));
  const Lanes4 none = {-vm::kInf, -vm::kInf, -vm::kInf, -vm::kInf};
  Lanes4 a = none, b = none;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const Lanes4 x = {f(i), f(i + 1), f(i + 2), f(i + 3)}, y = {f(i + 4), f(i + 5), f(i + 6), f(i + 7)};
    a = x > a ? x : a;
    b = y > b ? y : b;
  }
  if (i + 4 <= n) {
    const Lanes4 x = {f(i), f(i + 1), f(i + 2), f(i + 3)};
    a = x > a ? x : a;
    i += 4;
  }
  a = b > a ? b : a;
  const double m01 = a[1] > a[0] ? a[1] : a[0], m23 = a[3] > a[2] ? a[3] : a[2];
  double m = m23 > m01 ? m23 : m01;
  for (; i < n; ++i) {
    const double v = f(i);
    m = v > m ? v : m;
  }
  return m;
}

__attribute__((always_inline)) inline double max8(int64_t n, const double* x) {
  return maxOf8(n, [&](int64_t i) { return x[i]; });
}

inline int64_t row(const int64_t* pidx, int64_t i) { return pidx ? pidx[i] : 0; }
inline double weight(const double* w, int64_t i) { return w ? w[i] : 1.0; }

// ---- small dense SPD algebra (row-major) ----

// Vectors of four doubles for the SPD algebra below (one AVX2 register, two
// SSE2 ones): loads and stores through memcpy (rows are not aligned), and
// no function takes or returns one (that ABI would depend on the ISA).
typedef double SpdVec __attribute__((vector_size(4 * sizeof(double))));
#define PPC_SPD_LOAD(p) ({ SpdVec v_; __builtin_memcpy(&v_, (p), sizeof v_); v_; })
#define PPC_SPD_STORE(p, v) do { SpdVec v_ = (v); __builtin_memcpy((p), &v_, sizeof v_); } while (0)

/// One triangle of the D x D row-major A copied onto the other (the lower
/// onto the upper, or the upper onto the lower), the source cleared to +0
/// if asked: 4 x 4 blocks transposed in registers, where entry by entry one
/// side is a strided walk down the columns (a sixth of an SPD inverse's
/// time at D = 64).
template <bool LowerToUpper, bool ClearSource>
__attribute__((always_inline)) inline void mirrorTriangle(int64_t D, double* A) {
  const auto copy = [&](int64_t i, int64_t j) { // i > j: A_ij below the diagonal, A_ji above
    double& lower = A[i * D + j];
    double& upper = A[j * D + i];
    double& source = LowerToUpper ? lower : upper;
    (LowerToUpper ? upper : lower) = source;
    if (ClearSource) source = 0.0;
  };
  const int64_t D4 = D - D % 4;
  for (int64_t I = 0; I < D4; I += 4) {
    for (int64_t J = 0; J < I; J += 4) {
      const int64_t row = LowerToUpper ? I : J, col = LowerToUpper ? J : I; // the source block
      SpdVec r[4];
      for (int k = 0; k < 4; ++k) r[k] = PPC_SPD_LOAD(A + (row + k) * D + col);
      const SpdVec t0 = __builtin_shufflevector(r[0], r[1], 0, 4, 2, 6), t1 = __builtin_shufflevector(r[0], r[1], 1, 5, 3, 7);
      const SpdVec t2 = __builtin_shufflevector(r[2], r[3], 0, 4, 2, 6), t3 = __builtin_shufflevector(r[2], r[3], 1, 5, 3, 7);
      PPC_SPD_STORE(A + col * D + row, __builtin_shufflevector(t0, t2, 0, 1, 4, 5));
      PPC_SPD_STORE(A + (col + 1) * D + row, __builtin_shufflevector(t1, t3, 0, 1, 4, 5));
      PPC_SPD_STORE(A + (col + 2) * D + row, __builtin_shufflevector(t0, t2, 2, 3, 6, 7));
      PPC_SPD_STORE(A + (col + 3) * D + row, __builtin_shufflevector(t1, t3, 2, 3, 6, 7));
      if (ClearSource)
        for (int k = 0; k < 4; ++k) PPC_SPD_STORE(A + (row + k) * D + col, SpdVec{});
    }
    for (int64_t i = I + 1; i < I + 4; ++i)
      for (int64_t j = I; j < i; ++j) copy(i, j);
  }
  for (int64_t i = D4; i < D; ++i)
    for (int64_t j = 0; j < i; ++j) copy(i, j);
}

/// Where columnSums puts its sums: P rows at once (1 or 2), each its own
/// initial values (or none: +0) and output row.
template <int P> struct SpdRows {
  const double* init[P];
  double* out[P];
};

/// Vectors of L doubles for columnSums (4: one AVX2 register; 8: one
/// AVX-512 register). The blocks' widths do not change the results (below),
/// so a kernel may take either: BM_SpdInverse/64 9.2 us with L = 8 against
/// 10.7 us with L = 4 on AVX-512 (Zen 5); the others' copies would spill.
template <int L> struct SpdLanes {
  typedef double Vec __attribute__((vector_size(L * sizeof(double))));
};

/// columnSums' N vectors of L columns from c for each of its P rows, summed
/// side by side: M's rows are loaded once for all P.
template <bool Subtract, int L, int N, int P, class First, class Coef>
__attribute__((always_inline)) inline void columnVectors(const double* M, int64_t D, int64_t c, const SpdRows<P>& rows,
                                                         First first, int64_t last, Coef coef) {
  using Vec = typename SpdLanes<L>::Vec;
  Vec a[P][N] = {};
  for (int p = 0; p < P; ++p)
    if (rows.init[p])
      for (int v = 0; v < N; ++v) __builtin_memcpy(&a[p][v], rows.init[p] + c + L * v, sizeof(Vec));
  for (int64_t r = first(c); r < last; ++r) {
    double f[P];
    for (int p = 0; p < P; ++p) f[p] = coef(p, r);
    for (int v = 0; v < N; ++v) {
      Vec m;
      __builtin_memcpy(&m, M + r * D + c + L * v, sizeof(Vec));
      for (int p = 0; p < P; ++p) a[p][v] = Subtract ? a[p][v] - f[p] * m : a[p][v] + f[p] * m;
    }
  }
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < N; ++v) __builtin_memcpy(rows.out[p] + c + L * v, &a[p][v], sizeof(Vec));
}

/// columnSums' last N (< 4) columns from c, summed side by side.
template <bool Subtract, int N, int P, class First, class Coef>
__attribute__((always_inline)) inline void columnScalars(const double* M, int64_t D, int64_t c, const SpdRows<P>& rows,
                                                         First first, int64_t last, Coef coef) {
  double x[P][N];
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < N; ++j) x[p][j] = rows.init[p] ? rows.init[p][c + j] : 0.0;
  for (int64_t r = first(c); r < last; ++r)
    for (int p = 0; p < P; ++p) {
      const double f = coef(p, r);
      for (int j = 0; j < N; ++j)
        x[p][j] = Subtract ? x[p][j] - f * M[r * D + c + j] : x[p][j] + f * M[r * D + c + j];
    }
  for (int p = 0; p < P; ++p)
    for (int j = 0; j < N; ++j) rows.out[p][c + j] = x[p][j];
}

/// out_p[c] = init_p[c] (or +0 without init) -/+ sum_r coef(p, r) M[r D + c]
/// for the columns c in [c0, c1) of each of the P rows, each entry's sum in
/// increasing r from first(b) to last - 1, b the first column of the block
/// it is computed in (4 vectors of L columns in registers, then the rest's
/// vectors together, then its last columns together): the rows before an
/// entry's own first must hold zeros there (they add +0 to a sum at +0), so
/// the blocks' widths do not change the results.
template <bool Subtract, int P, int L = 4, class First, class Coef>
__attribute__((always_inline)) inline void columnSums(const double* M, int64_t D, int64_t c0, int64_t c1,
                                                      const SpdRows<P>& rows, First first, int64_t last, Coef coef) {
  // Passes of N vectors, P N accumulators in registers with a row's N
  // vectors and P coefficients: 4 rows by 4 vectors fit AVX-512's 32, and
  // AVX2's 16 take 4 rows by 2 vectors (or 2 rows by 4).
  constexpr int N = L == 4 && P > 2 ? 2 : 4;
  int64_t c = c0;
  for (; c + N * L <= c1; c += N * L) columnVectors<Subtract, L, N>(M, D, c, rows, first, last, coef);
  // The rest (under N L columns): its vectors in one pass, then its last
  // columns in one pass, so that their sums' chains of dependent additions
  // run side by side (one chain alone waits an addition's latency per row).
  switch ((c1 - c) / L) {
  case 3: columnVectors<Subtract, L, 3>(M, D, c, rows, first, last, coef); c += 3 * L; break;
  case 2: columnVectors<Subtract, L, 2>(M, D, c, rows, first, last, coef); c += 2 * L; break;
  case 1: columnVectors<Subtract, L, 1>(M, D, c, rows, first, last, coef); c += L; break;
  default: break;
  }
  if constexpr (L > 4) {
    if (c1 - c >= 4) {
      columnVectors<Subtract, 4, 1>(M, D, c, rows, first, last, coef);
      c += 4;
    }
  }
  switch (c1 - c) {
  case 3: columnScalars<Subtract, 3>(M, D, c, rows, first, last, coef); break;
  case 2: columnScalars<Subtract, 2>(M, D, c, rows, first, last, coef); break;
  case 1: columnScalars<Subtract, 1>(M, D, c, rows, first, last, coef); break;
  default: break;
  }
}

// In-place lower Cholesky factor of A (D x D, its lower triangle is read);
// returns false if not PD. On U = L^T, kept in the upper triangle, row by
// row (left-looking): row k's tail loses U_jk times row j's tail for every
// j < k, in that order, accumulated in registers 4 vectors at a time, then
// is divided by its pivot's square root. Every entry sees the same
// operations in the same order as the right-looking form (row j's tail
// subtracted from every later row once row j is final), so the results are
// the same bits, on every ISA (no fused multiply-adds in the runtime).
//
// P rows at a time (choleskyRows): rows k to k + P - 1 together lose rows
// j < k (each row of U loaded once for all P: P times the independent sums
// in registers), then each in turn is final and the block's later rows lose
// it, their last terms. A later row's columns left of its diagonal,
// computed on the way, lie in the lower triangle, which only such entries
// read and which is overwritten at the end.
template <int P, int Lanes>
__attribute__((always_inline)) inline bool choleskyRows(int64_t D, double* L, int64_t k) {
  SpdRows<P> rows;
  for (int p = 0; p < P; ++p) rows.init[p] = rows.out[p] = L + (k + p) * D;
  columnSums<true, P, Lanes>(L, D, k, D, rows, [](int64_t) { return int64_t(0); }, k,
                             [&](int p, int64_t j) { return L[j * D + k + p]; });
  for (int q = 0; q < P; ++q) {
    double* uq = L + (k + q) * D;
    const double d = uq[k + q];
    if (!(d > 0.0)) return false;  // also rejects NaN
    const double r = __builtin_sqrt(d);
    uq[k + q] = r;
    for (int64_t t = k + q + 1; t < D; ++t) uq[t] /= r;
    for (int q2 = q + 1; q2 < P; ++q2) {
      double* u2 = L + (k + q2) * D;
      const double f = uq[k + q2];
      for (int64_t t = k + q + 1; t < D; ++t) u2[t] = u2[t] - f * uq[t];
    }
  }
  return true;
}

/// Whether the SPD algebra's sums take 4 rows at a time rather than 2: from
/// D = 24 (a small matrix is a few blocks: D = 16 with 8 lanes was 10%
/// slower). A D = 64 Cholesky factor and inverse on Zen 5: 9.9 to 7.2 us
/// in 8-lane vectors (4 vectors a pass), 11.9 to 9.7 us in 4-lane ones
/// (2 vectors a pass: AVX2 has 16 registers).
inline bool spdFourRows(int64_t D) { return D >= 24; }

template <int Lanes>
__attribute__((always_inline)) inline bool choleskyLanes(int64_t D, double* L) {
  mirrorTriangle<true, false>(D, L);
  int64_t k = 0;
  if (spdFourRows(D))
    for (; k + 4 <= D; k += 4)
      if (!choleskyRows<4, Lanes>(D, L, k)) return false;
  for (; k + 2 <= D; k += 2)
    if (!choleskyRows<2, Lanes>(D, L, k)) return false;
  if (k < D && !choleskyRows<1, Lanes>(D, L, k)) return false;
  mirrorTriangle<false, true>(D, L); // U^T into the lower triangle, the upper cleared
  return true;
}

// inv = (L L^T)^-1 from the Cholesky factor L, which is overwritten with L^-1:
//   row i of L^-1 = (e_i - sum_{k<i} L_ik row k of L^-1) / L_ii   (inv's row i as the accumulator)
//   inv_ab = sum_{k >= max(a,b)} L^-1_ka L^-1_kb                  (upper half, then mirrored)
// Each sum in increasing k, 4 vectors at a time in registers; a block's
// columns left of the diagonal of row k read L^-1's zeros there, which add
// +0 to a sum still at +0: the same bits as summing each entry alone.
// P rows at a time, as the Cholesky factor: rows i to i + P - 1 of L^-1
// together over k < i (inverseRows; then each in turn is final and the
// block's later rows get their terms k = i.. from it; their columns on the
// way are scratch), and rows a to a + P - 1 of inv together over every k
// (productRows; their columns left of the diagonal lie in the lower
// triangle, mirrored over at the end).
template <int P, int Lanes>
__attribute__((always_inline)) inline void inverseRows(int64_t D, double* L, double* inv, int64_t i) {
  SpdRows<P> rows;
  for (int p = 0; p < P; ++p) {
    rows.init[p] = nullptr;
    rows.out[p] = inv + (i + p) * D;
  }
  columnSums<true, P, Lanes>(L, D, 0, i + P - 1, rows, [](int64_t b) { return b; }, i,
                             [&](int p, int64_t k) { return L[(i + p) * D + k]; });
  for (int q = 0; q < P; ++q) {
    double* lq = L + (i + q) * D;
    const double* acc = inv + (i + q) * D;
    const double r = 1.0 / lq[i + q];
    for (int64_t t = 0; t < i + q; ++t) lq[t] = acc[t] * r;
    lq[i + q] = r;
    for (int q2 = q + 1; q2 < P; ++q2) {
      double* acc2 = inv + (i + q2) * D;
      const double f = L[(i + q2) * D + i + q];
      for (int64_t t = 0; t <= i + q; ++t) acc2[t] = acc2[t] - f * lq[t];
    }
  }
}

template <int P, int Lanes>
__attribute__((always_inline)) inline void productRows(int64_t D, const double* L, double* inv, int64_t a) {
  SpdRows<P> rows;
  for (int p = 0; p < P; ++p) {
    rows.init[p] = nullptr;
    rows.out[p] = inv + (a + p) * D;
  }
  columnSums<false, P, Lanes>(L, D, a, D, rows, [](int64_t b) { return b; }, D,
                              [&](int p, int64_t k) { return L[k * D + a + p]; });
}

template <int Lanes>
__attribute__((always_inline)) inline void choleskyInverseLanes(int64_t D, double* L, double* inv) {
  const bool four = spdFourRows(D);
  int64_t i = 0;
  if (four)
    for (; i + 4 <= D; i += 4) inverseRows<4, Lanes>(D, L, inv, i);
  for (; i + 2 <= D; i += 2) inverseRows<2, Lanes>(D, L, inv, i);
  if (i < D) inverseRows<1, Lanes>(D, L, inv, i);
  int64_t a = 0;
  if (four)
    for (; a + 4 <= D; a += 4) productRows<4, Lanes>(D, L, inv, a);
  for (; a + 2 <= D; a += 2) productRows<2, Lanes>(D, L, inv, a);
  if (a < D) productRows<1, Lanes>(D, L, inv, a);
  mirrorTriangle<false, false>(D, inv);
}

/// The SPD algebra in vectors of 8 lanes, for the copies that run on
/// AVX-512: choleskyLanes<8> and choleskyInverseLanes<8>, compiled once for
/// AVX-512 (runtime/kernels/DenseAlgebra.cpp) rather than in every copy of
/// every kernel that inlines the algebra. The same bits as 4 lanes.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PPC_RUNTIME_BITCODE)
#define PPC_SPD_WIDE 1
#endif
}  // namespace
namespace ppc::rt::spd {
bool choleskyWide(int64_t D, double* L);
void choleskyInverseWide(int64_t D, double* L, double* inv);
}  // namespace ppc::rt::spd
namespace {

/// Whether this copy runs on AVX-512 (the wide SPD algebra's ISA).
inline bool spdWide() {
#ifdef PPC_SPD_WIDE
  return ppc::rt::vectorIsa() == ppc::rt::VectorIsa::Avx512;
#else
  return false;
#endif
}

/// The lower Cholesky factor in place (choleskyLanes): 8 lanes on AVX-512
/// (BM_SpdInverse/64 7.7 against 10.7 us on Zen 5), else 4, inlined.
__attribute__((always_inline)) inline bool cholesky(int64_t D, double* L) {
#ifdef PPC_SPD_WIDE
  if (spdWide()) return ppc::rt::spd::choleskyWide(D, L);
#endif
  return choleskyLanes<4>(D, L);
}

/// The inverse from the Cholesky factor (choleskyInverseLanes), as cholesky.
__attribute__((always_inline)) inline void choleskyInverse(int64_t D, double* L, double* inv) {
#ifdef PPC_SPD_WIDE
  if (spdWide()) return ppc::rt::spd::choleskyInverseWide(D, L, inv);
#endif
  choleskyInverseLanes<4>(D, L, inv);
}

__attribute__((always_inline)) inline double logdetFromCholesky(int64_t D, const double* L) {
  double s = 0.0;
  for (int64_t i = 0; i < D; ++i) s += vm::log(L[i * D + i]);
  return 2.0 * s;
}

inline double lmvgamma(int64_t D, double a) {
  double r = 0.25 * static_cast<double>(D * (D - 1)) * kLogPi;
  for (int64_t i = 1; i <= D; ++i) r += vm::lgamma_pos(a + 0.5 * static_cast<double>(1 - i));
  return r;
}

inline double mvdigamma(int64_t D, double a) {
  double r = 0.0;
  for (int64_t i = 1; i <= D; ++i) r += vm::digamma_pos(a + 0.5 * static_cast<double>(1 - i));
  return r;
}

// Dirichlet pieces on one row of alpha.
inline double dirichletLogB(int64_t K, const double* alpha) {
  const double s = reduce8(K, [&](int64_t k) { return alpha[k]; });
  const double lg = reduce8(K, [&](int64_t k) { return vm::lgamma_pos(alpha[k]); });
  return lg - vm::lgamma_pos(s);
}

// Wishart: from eta (D*D + 1) compute S^-1 (=-2 eta1) Cholesky and nu.
struct WishartParts {
  double nu;
  double logdetS;  // log |S| = -log |S^-1|
  bool ok;
};

// Always inlined: out of line it would be compiled for the baseline ISA, and
// the Cholesky factor in it with it (GCC stopped inlining it once
// columnSums grew: 2x the Wishart's time on AVX2).
__attribute__((always_inline)) inline WishartParts wishartParts(int64_t D, const double* eta, double* L) {
  for (int64_t i = 0; i < D * D; ++i) L[i] = -2.0 * eta[i];
  WishartParts p;
  p.nu = 2.0 * eta[D * D] + static_cast<double>(D + 1);
  p.ok = cholesky(D, L) && p.nu > static_cast<double>(D - 1);
  p.logdetS = p.ok ? -logdetFromCholesky(D, L) : vm::kNaN;
  return p;
}

inline double wishartElogdet(int64_t D, double nu, double logdetS) {
  return mvdigamma(D, 0.5 * nu) + static_cast<double>(D) * kLog2 + logdetS;
}

// Scratch for the row kernels below: PPC_MV_SCRATCH(D) doubles, freed on return.
struct MvScratch {
  double* p;
  explicit MvScratch(int64_t D)
      : p(static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(PPC_MV_SCRATCH(D) + D * D + 1)))) {}
  ~MvScratch() { std::free(p); }
};
/// The Jaakkola-Jordan bound's lambda(xi) = tanh(xi / 2) / (4 xi) for xi >= 0,
/// 1/8 at xi = 0: the logistic and softmax links (runtime/factors/Sigmoid.cpp,
/// Softmax.cpp). tanh(y) / y (y = xi / 2) by its Taylor series below y = 1/8
/// (the first term left out is below 1e-17), else (1 - e) / (1 + e) / y with
/// e = exp(-xi) (1 - e >= 0.22: no cancellation), on the runtime's exp
/// rather than libm's tanh, which cost a third of a logistic regression's
/// per-row work.
inline double jaakkolaLambda(double xi) {
  const double y = 0.5 * xi;
  if (y < 0.125) {
    const double z = y * y;
    const double t = 1.0 + z * (-1.0 / 3 + z * (2.0 / 15 + z * (-17.0 / 315 + z * (62.0 / 2835 + z * (-1382.0 / 155925 +
                     z * (21844.0 / 6081075 + z * (-929569.0 / 638512875)))))));
    return 0.125 * t;
  }
  const double e = vm::exp(-xi);
  return (1.0 - e) / ((1.0 + e) * 4.0 * xi);
}

}  // namespace
