//===- runtime/kernels/PlateStatistics.cpp - Gaussian data statistics -----===//
//
// A data plate's weighted moments and the quadratic forms of every datum
// with every case's natural parameters (codegen/transforms/BatchStatistics.cpp):
// a Gaussian mixture's per-iteration dense products, about N D^2 K / 2
// multiply-adds each.
//
// The kernels are written once for any vector width W (doubles per register)
// and instantiated per vector ISA: W = 8 with AVX-512, 4 with AVX2 + FMA, 2
// with the baseline's SSE2, each tile sized to its register file (16
// accumulators of 32 registers with AVX-512, 12 of 16 with AVX2). The copy
// runs is the one of runtime/VectorIsa.h's level (ppc --cpu chooses a lower
// one). Measured against OpenBLAS's dsyrk/dtrmm/dgemm on the same products
// (bench/dense_products.cpp, docs/performance.md): faster on both the AVX2 and
// the AVX-512 paths, so the products stay here. Multiply-adds are fused
// (-ffp-contract=fast for this file): the sums round differently on each
// ISA, by about 1e-15 relative (test/unit/runtime/KernelsTest.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/PlateStatistics.h"

#include "runtime/kernels/IsaVectors.h"
#include "runtime/kernels/KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace {

using ppc::rt::isa::Lanes;
using ppc::rt::isa::sameWeights;

// Up to this dimension the plate statistics run over the data rows, one
// vector of rows at a time, on the transposed data: a register tile of the
// D x D moments would be mostly padding.
constexpr int64_t kSmallDimension = 16;

// x (n x D, row-major) transposed: D columns of n.
inline double* transposedColumns(int64_t n, int64_t D, const double* x, int64_t extra) {
  double* xt = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(D * n + extra + 1)));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t a = 0; a < D; ++a) xt[a * n + i] = x[i * D + a];
  return xt;
}

__attribute__((always_inline)) inline void weightedMomentsSmall(int64_t n, int64_t k, const double* w, int64_t ws, int64_t D, const double* x,
                                            double* means, double* totals) {
  const int64_t width = D + D * D;
  double* xt = transposedColumns(n, D, x, (D + 1) * n);
  double* yt = xt + D * n;    // the weighted columns w_j x_a
  double* wj = yt + D * n;
  for (int64_t j = 0; j < k; ++j) {
    double* m = means + j * width;
    for (int64_t i = 0; i < n; ++i) wj[i] = w[i * ws + j];
    for (int64_t a = 0; a < D; ++a)
      for (int64_t i = 0; i < n; ++i) yt[a * n + i] = wj[i] * xt[a * n + i];
    const double total = reduce8(n, [&](int64_t i) { return wj[i]; });
    for (int64_t a = 0; a < D; ++a) {
      const double* ya = yt + a * n;
      m[a] = reduce8(n, [&](int64_t i) { return ya[i]; });
      for (int64_t b = a; b < D; ++b) {
        const double* xb = xt + b * n;
        m[D + a * D + b] = m[D + b * D + a] = reduce8(n, [&](int64_t i) { return ya[i] * xb[i]; });
      }
    }
    totals[j] = total;
    if (total > 0) {
      const double inv = 1.0 / total;
      for (int64_t c = 0; c < width; ++c) m[c] *= inv;
    }
  }
  std::free(xt);
}

__attribute__((always_inline)) inline void momentProductsSmall(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                           const double* offsets, double* out, int64_t os) {
  const int64_t width = D + D * D;
  double* xt = transposedColumns(n, D, x, 2 * n);
  double* t = xt + D * n;
  double* q = t + n;
  for (int64_t j = 0; j < k; ++j) {
    const double* lin = eta + j * width;
    const double* H = lin + D;
    // x^T H x + lin^T x = sum_a x_a (lin_a + sum_{b >= a} U_ab x_b), U_ab = H_ab + H_ba (b > a), U_aa = H_aa
    for (int64_t i = 0; i < n; ++i) q[i] = offsets[j];
    for (int64_t a = 0; a < D; ++a) {
      for (int64_t i = 0; i < n; ++i) t[i] = lin[a];
      for (int64_t b = a; b < D; ++b) {
        const double u = b == a ? H[a * D + a] : H[a * D + b] + H[b * D + a];
        const double* xb = xt + b * n;
        for (int64_t i = 0; i < n; ++i) t[i] += u * xb[i];
      }
      const double* xa = xt + a * n;
      for (int64_t i = 0; i < n; ++i) q[i] += xa[i] * t[i];
    }
    for (int64_t i = 0; i < n; ++i) out[i * os + j] = q[i];
  }
  std::free(xt);
}

/// Rows of the data in a block: the block's rows of X (padded) and of the
/// weighted rows stay in L1/L2 while every tile of the moments sweeps them.
/// The sums add the rows in the same order whatever the block. 48: the GMM
/// on digits' moments (D = 64, K = 10) 2.44 ms a call against 2.65 ms with
/// 64 and 2.68 ms with 16 (one AVX2 core, AMD EPYC, 512 KiB L2); logistic
/// regression's Gram sums the same.
constexpr int64_t kBlockRows = 48;
/// The column sums' blocks are shorter: their tiles walk down the block's
/// rows column by column, and 16 rows stay 16 streams the prefetchers follow
/// (64 rows of 784 doubles fetched that way ran latency-bound from memory,
/// 2.7x slower; measured on Fashion-MNIST's 10000 x 784).
constexpr int64_t kColumnBlockRows = 16;

/// One tile of the second moments: rows [a0, a0 + R) by V vectors of W
/// columns from b0, accumulated in registers over a block's m rows (xb: the
/// rows, yt: the weighted rows in rows of Dp + R) into Sj (Dp x Dp).
template <int W, int R, int V>
__attribute__((always_inline)) inline void momentsTile(int64_t m, int64_t a0, int64_t b0, int64_t Dp, const double* xb,
                                                       const double* yt, double* Sj, bool first) {
  typename Lanes<W>::Vec acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v)
      acc[r][v] = !first && a0 + r < Dp ? PPC_VLOAD(W, Sj + (a0 + r) * Dp + b0 + v * W) : PPC_VZERO(W);
  const double* ya = yt + a0;
  for (int64_t i = 0; i < m; ++i) {
    typename Lanes<W>::Vec xv[V];
    for (int v = 0; v < V; ++v) xv[v] = PPC_VLOAD(W, xb + i * Dp + b0 + v * W);
    // A scalar times a vector broadcasts it (an FMA's memory operand with AVX-512).
    for (int r = 0; r < R; ++r) {
      const double y = ya[i * (Dp + R) + r];
      for (int v = 0; v < V; ++v) acc[r][v] += y * xv[v];
    }
  }
  for (int r = 0; r < R && a0 + r < Dp; ++r)
    for (int v = 0; v < V; ++v) PPC_VSTORE(Sj + (a0 + r) * Dp + b0 + v * W, acc[r][v]);
}

/// Second moments sum_i w_ij x_i x_i^T for every case j, upper triangle, in
/// tiles of R rows by 2W columns accumulated in registers over a block of
/// data rows at a time. S: k matrices Dp x Dp (Dp = D padded to 2W), whose
/// tiles the first block sets (n = 0: the caller's zeros); first (k x D)
/// and totals (k) the sums sum_i w_ij x_i and sum_i w_ij, zeroed by the
/// caller. The weighted rows y_i = w_ij x_i are stored in rows of Dp + R
/// (zeros past D), so that a tile's R multipliers for one datum are scalars
/// each FMA broadcasts.
template <int W, int R>
__attribute__((always_inline)) inline void secondMoments(int64_t n, int64_t k, const double* w, int64_t ws, int64_t D,
                                                         const double* x, int64_t Dp, double* S, double* first,
                                                         double* totals, double* work, const double* v = nullptr) {
  constexpr int64_t C = 2 * W;
  constexpr int G = 8; // the first moments' vectors in registers: 8 of AVX-512's 32, of AVX2's 16
  double* xp = work;                     // kBlockRows x Dp
  double* yt = work + kBlockRows * Dp;   // kBlockRows x (Dp + R) (entries a >= D stay zero)
  std::memset(yt, 0, sizeof(double) * static_cast<size_t>((Dp + R) * kBlockRows));
  for (int64_t i0 = 0; i0 < n; i0 += kBlockRows) {
    const int64_t m = std::min(kBlockRows, n - i0);
    const double* xb = D == Dp ? x + i0 * D : xp; // no copy where no padding is needed
    if (D != Dp)
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t a = 0; a < D; ++a) xp[i * Dp + a] = x[(i0 + i) * D + a];
        for (int64_t a = D; a < Dp; ++a) xp[i * Dp + a] = 0.0;
      }
    for (int64_t j = 0; j < k; ++j) {
      double wb[kBlockRows];
      for (int64_t i = 0; i < m; ++i) {
        wb[i] = w[(i0 + i) * ws + j];
        totals[j] += wb[i];
      }
      // The weighted rows, and the first moments from the same loads,
      // summed in registers down the block's rows (in memory, each row
      // would wait on the previous row's store). G vectors of columns at a
      // time, row by row: a row's columns are consecutive lines the
      // prefetchers follow, and G sums are independent. Going down the
      // rows 2W columns at a time (which the rest still does) waited on
      // each row's loads from L2, the tiles having evicted the block from
      // L1 (GMM on digits: 15% of the moments' time, about half of that
      // after). Each column's sum adds the rows in the same order: the
      // same bits.
      double* fj = first + j * D;
      int64_t a0 = 0;
      for (; a0 + G * W <= D; a0 += G * W) {
        typename Lanes<W>::Vec f[G];
        for (int g = 0; g < G; ++g) f[g] = PPC_VLOAD(W, fj + a0 + g * W);
        for (int64_t i = 0; i < m; ++i) {
          const double wi = wb[i], vi = v ? v[i0 + i] : wi;
          for (int g = 0; g < G; ++g) {
            const auto xg = PPC_VLOAD(W, xb + i * Dp + a0 + g * W);
            const auto yg = wi * xg;
            PPC_VSTORE(yt + i * (Dp + R) + a0 + g * W, yg);
            f[g] += v ? vi * xg : yg;
          }
        }
        for (int g = 0; g < G; ++g) PPC_VSTORE(fj + a0 + g * W, f[g]);
      }
      for (; a0 < Dp; a0 += C) {
        double tail[C] = {}; // the columns past D: padding, not stored
        double* f = a0 + C <= D ? fj + a0 : tail;
        if (f == tail)
          for (int64_t a = a0; a < D; ++a) tail[a - a0] = fj[a];
        auto f0 = PPC_VLOAD(W, f), f1 = PPC_VLOAD(W, f + W);
        for (int64_t i = 0; i < m; ++i) {
          const double wi = wb[i], vi = v ? v[i0 + i] : wi; // the first moments' own weights (k = 1)
          const auto x0 = PPC_VLOAD(W, xb + i * Dp + a0), x1 = PPC_VLOAD(W, xb + i * Dp + a0 + W);
          const auto y0 = wi * x0, y1 = wi * x1;
          PPC_VSTORE(yt + i * (Dp + R) + a0, y0);
          PPC_VSTORE(yt + i * (Dp + R) + a0 + W, y1);
          f0 += v ? vi * x0 : y0;
          f1 += v ? vi * x1 : y1;
        }
        PPC_VSTORE(f, f0);
        PPC_VSTORE(f + W, f1);
        if (f == tail)
          for (int64_t a = a0; a < D; ++a) fj[a] = tail[a - a0];
      }
      double* Sj = S + j * Dp * Dp;
      for (int64_t a0 = 0; a0 < D; a0 += R) {
        // b >= a: the rest by symmetry. Where the first tile's first
        // vector lies below the diagonal for all R rows, that tile is its
        // second vector alone (GMM digits: 6% of the multiply-adds).
        int64_t b0 = a0 / C * C;
        if (a0 >= b0 + W) {
          momentsTile<W, R, 1>(m, a0, b0 + W, Dp, xb, yt, Sj, i0 == 0);
          b0 += C;
        }
        for (; b0 < Dp; b0 += C)
          momentsTile<W, R, 2>(m, a0, b0, Dp, xb, yt, Sj, i0 == 0);
      }
    }
  }
}

/// U (D x D in rows of Dp) with x^T H x = x^T U x: the upper triangle of
/// H + H^T, H's diagonal once. Only what quadraticForms reads is set (not
/// the D^2 entries' worth of conditional stores there were): the rows below
/// D, each from the first column of its diagonal's block of 2W (zeros left
/// of the diagonal, which the tiles multiply), its padding columns zeros.
template <int W>
__attribute__((always_inline)) inline void doubledUpperTriangle(int64_t D, int64_t Dp, const double* H, double* U) {
  constexpr int64_t C = 2 * W;
  for (int64_t a = 0; a < D; ++a) {
    double* u = U + a * Dp;
    for (int64_t b = a / C * C; b < a; ++b) u[b] = 0.0;
    u[a] = H[a * D + a];
    for (int64_t b = a + 1; b < D; ++b) u[b] = H[a * D + b] + H[b * D + a];
    for (int64_t b = D; b < Dp; ++b) u[b] = 0.0;
  }
}

/// x_i^T U_j x_i + lin_j^T x_i for R data rows at a time and every case j,
/// U_j upper triangular (Dp x Dp, zero padded), lin_j (Dp, zero padded):
/// (x^T U + lin^T) in tiles of 2W columns accumulated in registers over the
/// rows of U, then dotted with x. Split: the linear forms lin_j^T x_i go to
/// `linear` instead (a regression's means and second moments in one pass).
template <int W, int R, bool Split = false>
__attribute__((always_inline)) inline void quadraticForms(int64_t n, int64_t k, int64_t D, const double* x,
                                                          int64_t Dp, const double* U, const double* lin,
                                                          double* quad, int64_t os, double* work,
                                                          double* linear = nullptr) {
  constexpr int64_t C = 2 * W;
  double* xp = work; // R x Dp
  for (int64_t i0 = 0; i0 < n; i0 += R) {
    const int64_t m = std::min<int64_t>(R, n - i0);
    // The next rows from memory while these are computed (a regression's
    // k = 1 would otherwise wait for each block: one GEMV's traffic).
    if (i0 + 2 * R <= n)
      for (int64_t c = 0; c < R * D; c += 8) __builtin_prefetch(x + (i0 + R) * D + c);
    for (int64_t r = 0; r < R; ++r) { // rows padded with zeros (and zero rows past the last)
      const int64_t copied = r < m ? D : 0;
      if (copied) std::memcpy(xp + r * Dp, x + (i0 + r) * D, sizeof(double) * static_cast<size_t>(D));
      std::memset(xp + r * Dp + copied, 0, sizeof(double) * static_cast<size_t>(Dp - copied));
    }
    for (int64_t j = 0; j < k; ++j) {
      const double* Uj = U + j * Dp * Dp;
      typename Lanes<W>::Vec q[R], ql[R];
      for (int r = 0; r < R; ++r) q[r] = ql[r] = PPC_VZERO(W);
      for (int64_t b0 = 0; b0 < Dp; b0 += C) {
        typename Lanes<W>::Vec acc[R][2];
        for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = PPC_VZERO(W);
        // U_ab = 0 for a > b: the rows up to the block's diagonal, and from
        // its middle on only the second vector (its first is zeros there).
        const int64_t aEnd = std::min(b0 + C, D), aBoth = std::min(b0 + W, aEnd);
        for (int64_t a = 0; a < aBoth; ++a) {
          const auto u0 = PPC_VLOAD(W, Uj + a * Dp + b0), u1 = PPC_VLOAD(W, Uj + a * Dp + b0 + W);
          for (int r = 0; r < R; ++r) {
            const double xa = xp[r * Dp + a];
            acc[r][0] += xa * u0;
            acc[r][1] += xa * u1;
          }
        }
        for (int64_t a = aBoth; a < aEnd; ++a) {
          const auto u1 = PPC_VLOAD(W, Uj + a * Dp + b0 + W);
          for (int r = 0; r < R; ++r) acc[r][1] += xp[r * Dp + a] * u1;
        }
        const auto l0 = PPC_VLOAD(W, lin + j * Dp + b0), l1 = PPC_VLOAD(W, lin + j * Dp + b0 + W);
        for (int r = 0; r < R; ++r) {
          const auto x0 = PPC_VLOAD(W, xp + r * Dp + b0), x1 = PPC_VLOAD(W, xp + r * Dp + b0 + W);
          if constexpr (Split) {
            q[r] += acc[r][0] * x0 + acc[r][1] * x1;
            ql[r] += l0 * x0 + l1 * x1;
          } else {
            q[r] += (acc[r][0] + l0) * x0 + (acc[r][1] + l1) * x1;
          }
        }
      }
      for (int64_t r = 0; r < m; ++r) {
        double s = 0.0, sl = 0.0;
        for (int c = 0; c < W; ++c) s += q[r][c];
        quad[(i0 + r) * os + j] = s;
        if constexpr (Split) {
          for (int c = 0; c < W; ++c) sl += ql[r][c];
          linear[(i0 + r) * os + j] = sl;
        }
      }
    }
  }
}

template <int W, int R>
__attribute__((always_inline)) inline void weightedMoments(int64_t n, int64_t k, const double* w, int64_t ws,
                                                           int64_t D, const double* x, double* means, double* totals) {
  if (D <= kSmallDimension) return weightedMomentsSmall(n, k, w, ws, D, x, means, totals);
  const int64_t width = D + D * D, Dp = (D + 2 * W - 1) / (2 * W) * (2 * W);
  const size_t size = static_cast<size_t>(k * Dp * Dp + k * D + kBlockRows * Dp + (Dp + R) * kBlockRows);
  double* S = static_cast<double*>(std::malloc(sizeof(double) * size));
  double* first = S + k * Dp * Dp;
  // S's tiles start from zero in the first block (no pass over its 330 KB
  // on digits); with no data, zeros.
  std::memset(n > 0 ? first : S, 0, sizeof(double) * static_cast<size_t>(n > 0 ? k * D : k * Dp * Dp + k * D));
  for (int64_t j = 0; j < k; ++j) totals[j] = 0.0;
  secondMoments<W, R>(n, k, w, ws, D, x, Dp, S, first, totals, first + k * D);
  for (int64_t j = 0; j < k; ++j) {
    double* m = means + j * width;
    const double total = totals[j];
    for (int64_t a = 0; a < D; ++a) m[a] = first[j * D + a];
    const double* Sj = S + j * Dp * Dp;
    for (int64_t a = 0; a < D; ++a)
      for (int64_t b = a; b < D; ++b) m[D + a * D + b] = m[D + b * D + a] = Sj[a * Dp + b];
    if (total > 0) {
      const double inv = 1.0 / total;
      for (int64_t c = 0; c < width; ++c) m[c] *= inv;
    }
  }
  std::free(S);
}

template <int W, int R>
__attribute__((always_inline)) inline void momentProducts(int64_t n, int64_t k, int64_t D, const double* x,
                                                          const double* eta, const double* offsets, double* out,
                                                          int64_t os) {
  if (D <= kSmallDimension) return momentProductsSmall(n, k, D, x, eta, offsets, out, os);
  const int64_t width = D + D * D, Dp = (D + 2 * W - 1) / (2 * W) * (2 * W);
  double* U = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(k * Dp * Dp + k * Dp + R * Dp)));
  double* lin = U + k * Dp * Dp;
  double* work = lin + k * Dp;
  for (int64_t j = 0; j < k; ++j) {
    const double* H = eta + j * width + D;
    double* Uj = U + j * Dp * Dp;
    doubledUpperTriangle<W>(D, Dp, H, Uj);
    for (int64_t a = 0; a < Dp; ++a) lin[j * Dp + a] = a < D ? eta[j * width + a] : 0.0;
  }
  quadraticForms<W, R>(n, k, D, x, Dp, U, lin, out, os, work);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) out[i * os + j] += offsets[j];
  std::free(U);
}

/// out[i] = x_i . v for the n rows of x: four rows at a time, each a
/// vector accumulator over its columns (a GEMV, bound by reading x).
template <int W>
__attribute__((always_inline)) inline void rowDots(int64_t n, int64_t D, const double* x, const double* v,
                                                   double* out) {
  constexpr int R = 4;
  int64_t i0 = 0;
  for (; i0 + R <= n; i0 += R) {
    typename Lanes<W>::Vec acc[R];
    for (int r = 0; r < R; ++r) acc[r] = PPC_VZERO(W);
    int64_t c = 0;
    for (; c + W <= D; c += W) {
      const auto vc = PPC_VLOAD(W, v + c);
      for (int r = 0; r < R; ++r) acc[r] += PPC_VLOAD(W, x + (i0 + r) * D + c) * vc;
    }
    for (int r = 0; r < R; ++r) {
      double t = 0.0;
      for (int l = 0; l < W; ++l) t += acc[r][l];
      for (int64_t e = c; e < D; ++e) t += x[(i0 + r) * D + e] * v[e];
      out[i0 + r] = t;
    }
  }
  for (; i0 < n; ++i0) {
    double t = 0.0;
    for (int64_t e = 0; e < D; ++e) t += x[i0 * D + e] * v[e];
    out[i0] = t;
  }
}

/// dst[2i] = x_i . mu and dst[2i + 1] = x_i^T H x_i (H symmetric): one pass
/// over the rows for both.
template <int W, int R>
__attribute__((always_inline)) inline void rowForms(int64_t n, int64_t D, const double* x, const double* mu,
                                                    const double* H, double* dst) {
  const int64_t Dp = (D + 2 * W - 1) / (2 * W) * (2 * W);
  constexpr int64_t kChunk = 256;
  double* U = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(Dp * Dp + Dp + R * Dp + 2 * kChunk)));
  double* lin = U + Dp * Dp;
  double* work = lin + Dp;
  double* quad = work + R * Dp;
  double* linear = quad + kChunk;
  doubledUpperTriangle<W>(D, Dp, H, U);
  for (int64_t a = 0; a < Dp; ++a) lin[a] = a < D ? mu[a] : 0.0;
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = std::min(kChunk, n - i0);
    quadraticForms<W, R, true>(m, 1, D, x + i0 * D, Dp, U, lin, quad, 1, work, linear);
    for (int64_t i = 0; i < m; ++i) {
      dst[2 * (i0 + i)] = linear[i];
      dst[2 * (i0 + i) + 1] = quad[i];
    }
  }
  std::free(U);
}

/// G += sum_i w_i x_i x_i^T (both triangles): the second moments' tiles for
/// one case, their upper triangle mirrored. With v, also g += sum_i v_i x_i
/// (the tiles' first moments, with their own weights: no second pass over
/// the rows).
template <int W, int R>
__attribute__((always_inline)) inline void weightedGram(int64_t n, int64_t D, const double* w, const double* x,
                                                        double* G, const double* v = nullptr, double* g = nullptr) {
  if (D <= kSmallDimension) { // a tile would be mostly padding: row by row, vectorized over a row
    for (int64_t i = 0; i < n; ++i) {
      const double* xi = x + i * D;
      if (v)
        for (int64_t a = 0; a < D; ++a) g[a] += v[i] * xi[a];
      for (int64_t a = 0; a < D; ++a) {
        const double s = w[i] * xi[a];
        for (int64_t b = 0; b < D; ++b) G[a * D + b] += s * xi[b];
      }
    }
    return;
  }
  const int64_t Dp = (D + 2 * W - 1) / (2 * W) * (2 * W);
  const size_t size = static_cast<size_t>(Dp * Dp + D + 1 + kBlockRows * Dp + (Dp + R) * kBlockRows);
  double* S = static_cast<double*>(std::malloc(sizeof(double) * size));
  double* first = S + Dp * Dp;
  double* total = first + D;
  std::memset(n > 0 ? first : S, 0, sizeof(double) * static_cast<size_t>(n > 0 ? D + 1 : Dp * Dp + D + 1));
  secondMoments<W, R>(n, 1, w, 1, D, x, Dp, S, first, total, total + 1, v);
  if (v)
    for (int64_t a = 0; a < D; ++a) g[a] += first[a];
  for (int64_t a = 0; a < D; ++a) {
    G[a * D + a] += S[a * Dp + a];
    for (int64_t b = a + 1; b < D; ++b) {
      G[a * D + b] += S[a * Dp + b];
      G[b * D + a] += S[a * Dp + b];
    }
  }
  std::free(S);
}

/// Column sums sum_i w_ij x_i for every case j (k x D into S, k x Dp zeroed
/// by the caller) and totals_j = sum_i w_ij: W^T X, in tiles of R cases by
/// 2W columns accumulated in registers over a block of data rows. The
/// block's weights are stored transposed (wt[j][i], k rounded up to R with
/// zero rows) so that a tile's R multipliers for one datum are broadcasts.
template <int W, int R>
__attribute__((always_inline)) inline void columnSums(int64_t n, int64_t k, const double* w, int64_t D,
                                                      const double* x, int64_t Dp, double* S, double* totals,
                                                      double* work) {
  constexpr int64_t C = 2 * W;
  const int64_t kp = (k + R - 1) / R * R;
  double* xp = work;                    // kColumnBlockRows x Dp
  double* wt = work + kColumnBlockRows * Dp;  // kp x kColumnBlockRows
  std::memset(wt, 0, sizeof(double) * static_cast<size_t>(kp * kColumnBlockRows));
  for (int64_t i0 = 0; i0 < n; i0 += kColumnBlockRows) {
    const int64_t m = std::min(kColumnBlockRows, n - i0);
    // The block's rows as they are where they need no padding (no copy of the data).
    const double* xb = D == Dp ? x + i0 * D : xp;
    for (int64_t i = 0; i < m; ++i) {
      if (D != Dp) {
        for (int64_t a = 0; a < D; ++a) xp[i * Dp + a] = x[(i0 + i) * D + a];
        for (int64_t a = D; a < Dp; ++a) xp[i * Dp + a] = 0.0;
      }
      for (int64_t j = 0; j < k; ++j) {
        wt[j * kColumnBlockRows + i] = w[(i0 + i) * k + j];
        totals[j] += w[(i0 + i) * k + j];
      }
    }
    for (int64_t j0 = 0; j0 < kp; j0 += R)
      for (int64_t c0 = 0; c0 < Dp; c0 += C) {
        typename Lanes<W>::Vec acc[R][2];
        for (int r = 0; r < R; ++r)
          for (int v = 0; v < 2; ++v)
            acc[r][v] = j0 + r < k ? PPC_VLOAD(W, S + (j0 + r) * Dp + c0 + v * W) : PPC_VZERO(W);
        const double* wj = wt + j0 * kColumnBlockRows;
        for (int64_t i = 0; i < m; ++i) {
          const auto x0 = PPC_VLOAD(W, xb + i * Dp + c0), x1 = PPC_VLOAD(W, xb + i * Dp + c0 + W);
          for (int r = 0; r < R; ++r) {
            const double wi = wj[r * kColumnBlockRows + i];
            acc[r][0] += wi * x0;
            acc[r][1] += wi * x1;
          }
        }
        for (int r = 0; r < R && j0 + r < k; ++r)
          for (int v = 0; v < 2; ++v) PPC_VSTORE(S + (j0 + r) * Dp + c0 + v * W, acc[r][v]);
      }
  }
}

/// out[i][j] = x_i . eta_j + offsets[j] for every datum i and case j (X H^T):
/// R data rows by C cases of dot products accumulated in registers over
/// W-wide chunks of the row, then summed across the lanes. Rows padded to
/// Dp (a multiple of W) with zeros; cases rounded up to C with zero rows.
template <int W, int R, int C>
__attribute__((always_inline)) inline void linearForms(int64_t n, int64_t k, int64_t D, const double* x,
                                                       const double* eta, const double* offsets, double* out) {
  const int64_t Dp = (D + W - 1) / W * W, kp = (k + C - 1) / C * C;
  double* ep = static_cast<double*>(std::calloc(static_cast<size_t>(kp * Dp + R * Dp), sizeof(double)));
  double* xp = ep + kp * Dp;
  for (int64_t j = 0; j < k; ++j)
    for (int64_t a = 0; a < D; ++a) ep[j * Dp + a] = eta[j * D + a];
  for (int64_t i0 = 0; i0 < n; i0 += R) {
    const int64_t m = std::min<int64_t>(R, n - i0);
    // R whole rows as they are where they need no padding (no copy of the data).
    const double* xr = D == Dp && m == R ? x + i0 * D : xp;
    if (xr == xp)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t a = 0; a < D; ++a) xp[r * Dp + a] = r < m ? x[(i0 + r) * D + a] : 0.0;
    for (int64_t j0 = 0; j0 < kp; j0 += C) {
      typename Lanes<W>::Vec acc[R][C];
      for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) acc[r][c] = PPC_VZERO(W);
      for (int64_t a = 0; a < Dp; a += W) {
        typename Lanes<W>::Vec xv[R];
        for (int r = 0; r < R; ++r) xv[r] = PPC_VLOAD(W, xr + r * Dp + a);
        for (int c = 0; c < C; ++c) {
          const auto e = PPC_VLOAD(W, ep + (j0 + c) * Dp + a);
          for (int r = 0; r < R; ++r) acc[r][c] += xv[r] * e;
        }
      }
      for (int64_t r = 0; r < m; ++r)
        for (int c = 0; c < C && j0 + c < k; ++c) {
          double sum = 0.0;
          for (int l = 0; l < W; ++l) sum += acc[r][c][l];
          out[(i0 + r) * k + j0 + c] = sum + offsets[j0 + c];
        }
    }
  }
  std::free(ep);
}

template <int W, int R>
__attribute__((always_inline)) inline void weightedColumnMeans(int64_t n, int64_t k, const double* w, int64_t D,
                                                               const double* x, double* means, double* totals) {
  const int64_t Dp = (D + 2 * W - 1) / (2 * W) * (2 * W), kp = (k + R - 1) / R * R;
  double* S = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(k * Dp + kColumnBlockRows * (Dp + kp))));
  std::memset(S, 0, sizeof(double) * static_cast<size_t>(k * Dp));
  for (int64_t j = 0; j < k; ++j) totals[j] = 0.0;
  columnSums<W, R>(n, k, w, D, x, Dp, S, totals, S + k * Dp);
  for (int64_t j = 0; j < k; ++j) {
    const double inv = totals[j] > 0 ? 1.0 / totals[j] : 0.0;
    for (int64_t a = 0; a < D; ++a) means[j * D + a] = S[j * Dp + a] * inv;
  }
  std::free(S);
}

// One copy per vector ISA (runtime/VectorIsa.h). The register tiles: R rows
// of two W-wide vectors, 2R accumulators.
#ifdef PPC_HAVE_ISA_COPIES
PPC_TARGET_AVX512 void weightedMomentsAvx512(int64_t n, int64_t k, const double* w, int64_t ws, int64_t D,
                                             const double* x, double* means, double* totals) {
  weightedMoments<8, 8>(n, k, w, ws, D, x, means, totals);
}
PPC_TARGET_AVX2 void weightedMomentsAvx2(int64_t n, int64_t k, const double* w, int64_t ws, int64_t D,
                                         const double* x, double* means, double* totals) {
  weightedMoments<4, 6>(n, k, w, ws, D, x, means, totals);
}
PPC_TARGET_AVX512 void momentProductsAvx512(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                            const double* offsets, double* out, int64_t os) {
  momentProducts<8, 8>(n, k, D, x, eta, offsets, out, os);
}
PPC_TARGET_AVX2 void momentProductsAvx2(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                        const double* offsets, double* out, int64_t os) {
  momentProducts<4, 6>(n, k, D, x, eta, offsets, out, os);
}
PPC_TARGET_AVX512 void rowFormsAvx512(int64_t n, int64_t D, const double* x, const double* mu, const double* H,
                                     double* dst) {
  rowForms<8, 8>(n, D, x, mu, H, dst);
}
PPC_TARGET_AVX2 void rowFormsAvx2(int64_t n, int64_t D, const double* x, const double* mu, const double* H,
                                 double* dst) {
  rowForms<4, 6>(n, D, x, mu, H, dst);
}
PPC_TARGET_AVX512 void rowDotsAvx512(int64_t n, int64_t D, const double* x, const double* v, double* out) {
  rowDots<8>(n, D, x, v, out);
}
PPC_TARGET_AVX2 void rowDotsAvx2(int64_t n, int64_t D, const double* x, const double* v, double* out) {
  rowDots<4>(n, D, x, v, out);
}
PPC_TARGET_AVX512 void weightedGramAvx512(int64_t n, int64_t D, const double* w, const double* x, double* G,
                                          const double* v, double* g) {
  weightedGram<8, 8>(n, D, w, x, G, v, g);
}
PPC_TARGET_AVX2 void weightedGramAvx2(int64_t n, int64_t D, const double* w, const double* x, double* G,
                                      const double* v, double* g) {
  weightedGram<4, 6>(n, D, w, x, G, v, g);
}
PPC_TARGET_AVX512 void weightedColumnMeansAvx512(int64_t n, int64_t k, const double* w, int64_t D, const double* x,
                                                 double* means, double* totals) {
  weightedColumnMeans<8, 5>(n, k, w, D, x, means, totals);
}
PPC_TARGET_AVX2 void weightedColumnMeansAvx2(int64_t n, int64_t k, const double* w, int64_t D, const double* x,
                                             double* means, double* totals) {
  weightedColumnMeans<4, 5>(n, k, w, D, x, means, totals);
}
PPC_TARGET_AVX512 void linearFormsAvx512(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                         const double* offsets, double* out) {
  linearForms<8, 4, 5>(n, k, D, x, eta, offsets, out);
}
PPC_TARGET_AVX2 void linearFormsAvx2(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                     const double* offsets, double* out) {
  linearForms<4, 2, 5>(n, k, D, x, eta, offsets, out);
}
#endif

}  // namespace

extern "C" {

namespace {

/// Cases [j0, j1) of the weighted moments: the weights' column j0 on, with
/// the row stride k.
void weightedMomentsCases(int64_t n, int64_t k, int64_t j0, int64_t j1, const double* w, int64_t D, const double* x,
                          double* means, double* totals) {
  if (j1 > k) j1 = k;
  if (j0 >= j1) return;
  const int64_t kc = j1 - j0, width = D + D * D;
  w += j0;
  means += j0 * width;
  totals += j0;
#ifdef PPC_HAVE_ISA_COPIES
  switch (ppc::rt::vectorIsa()) {
  case ppc::rt::VectorIsa::Avx512: return weightedMomentsAvx512(n, kc, w, k, D, x, means, totals);
  case ppc::rt::VectorIsa::Avx2: return weightedMomentsAvx2(n, kc, w, k, D, x, means, totals);
  case ppc::rt::VectorIsa::Baseline: break;
  }
#endif
  weightedMoments<2, 4>(n, kc, w, k, D, x, means, totals);
}

void momentProductsCases(int64_t n, int64_t k, int64_t j0, int64_t j1, int64_t D, const double* x, const double* eta,
                         const double* offsets, double* out) {
  if (j1 > k) j1 = k;
  if (j0 >= j1) return;
  const int64_t kc = j1 - j0, width = D + D * D;
  eta += j0 * width;
  offsets += j0;
  out += j0;
#ifdef PPC_HAVE_ISA_COPIES
  switch (ppc::rt::vectorIsa()) {
  case ppc::rt::VectorIsa::Avx512: return momentProductsAvx512(n, kc, D, x, eta, offsets, out, k);
  case ppc::rt::VectorIsa::Avx2: return momentProductsAvx2(n, kc, D, x, eta, offsets, out, k);
  case ppc::rt::VectorIsa::Baseline: break;
  }
#endif
  momentProducts<2, 4>(n, kc, D, x, eta, offsets, out, k);
}

} // namespace

PPC_DISPATCHED_KERNEL void ppc_gaussian_weighted_moments(int64_t n, int64_t k, const double* w, int64_t D,
                                                         const double* x, double* means, double* totals,
                                                         double* memo) {
  if (memo && sameWeights(n * k, w, memo)) return; // means and totals are still theirs
  weightedMomentsCases(n, k, 0, k, w, D, x, means, totals);
}

PPC_DISPATCHED_KERNEL void ppc_weights_changed(int64_t count, const double* w, double* memo, double* changed) {
  changed[0] = sameWeights(count, w, memo) ? 0.0 : 1.0;
}

PPC_DISPATCHED_KERNEL void ppc_gaussian_weighted_moments_cases(int64_t n, int64_t k, int64_t j0, int64_t j1,
                                                               const double* w, int64_t D, const double* x,
                                                               double* means, double* totals, const double* changed) {
  if (changed && changed[0] == 0.0) return;
  weightedMomentsCases(n, k, j0, j1, w, D, x, means, totals);
}

PPC_DISPATCHED_KERNEL void ppc_gaussian_moment_products(int64_t n, int64_t k, int64_t D, const double* x,
                                                        const double* eta, const double* offsets, double* out) {
  momentProductsCases(n, k, 0, k, D, x, eta, offsets, out);
}

PPC_DISPATCHED_KERNEL void ppc_gaussian_moment_products_cases(int64_t n, int64_t k, int64_t j0, int64_t j1, int64_t D,
                                                              const double* x, const double* eta,
                                                              const double* offsets, double* out) {
  momentProductsCases(n, k, j0, j1, D, x, eta, offsets, out);
}

PPC_DISPATCHED_KERNEL void ppc_quadratic_forms(int64_t n, int64_t D, const double* x, const double* H,
                                               double* out) {
  // <T(x), (0, H)> = x^T H x: the mixtures' moment products for one case.
  double* eta = static_cast<double*>(std::calloc(static_cast<size_t>(D + D * D), sizeof(double)));
  std::memcpy(eta + D, H, sizeof(double) * static_cast<size_t>(D * D));
  const double zero = 0.0;
  ppc_gaussian_moment_products(n, 1, D, x, eta, &zero, out);
  std::free(eta);
}

PPC_DISPATCHED_KERNEL void ppc_row_forms(int64_t n, int64_t D, const double* x, const double* mu, const double* H,
                                         double* dst) {
  if (D <= kSmallDimension) { // a tile would be mostly padding: row by row, H x as a sum of H's rows
    double y[kSmallDimension];
    for (int64_t i = 0; i < n; ++i) {
      const double* xi = x + i * D;
      double mean = 0.0, second = 0.0;
      for (int64_t c = 0; c < D; ++c) {
        mean += xi[c] * mu[c];
        y[c] = 0.0;
      }
      for (int64_t r = 0; r < D; ++r)
        for (int64_t c = 0; c < D; ++c) y[c] += xi[r] * H[r * D + c];
      for (int64_t c = 0; c < D; ++c) second += xi[c] * y[c];
      dst[2 * i] = mean;
      dst[2 * i + 1] = second;
    }
    return;
  }
#ifdef PPC_HAVE_ISA_COPIES
  switch (ppc::rt::vectorIsa()) {
  case ppc::rt::VectorIsa::Avx512: return rowFormsAvx512(n, D, x, mu, H, dst);
  case ppc::rt::VectorIsa::Avx2: return rowFormsAvx2(n, D, x, mu, H, dst);
  case ppc::rt::VectorIsa::Baseline: break;
  }
#endif
  rowForms<2, 4>(n, D, x, mu, H, dst);
}

PPC_DISPATCHED_KERNEL void ppc_row_dots(int64_t n, int64_t D, const double* x, const double* v, double* out) {
#ifdef PPC_HAVE_ISA_COPIES
  switch (ppc::rt::vectorIsa()) {
  case ppc::rt::VectorIsa::Avx512: return rowDotsAvx512(n, D, x, v, out);
  case ppc::rt::VectorIsa::Avx2: return rowDotsAvx2(n, D, x, v, out);
  case ppc::rt::VectorIsa::Baseline: break;
  }
#endif
  rowDots<2>(n, D, x, v, out);
}

PPC_DISPATCHED_KERNEL void ppc_weighted_gram_linear(int64_t n, int64_t D, const double* w, const double* v,
                                                    const double* x, double* G, double* g) {
#ifdef PPC_HAVE_ISA_COPIES
  switch (ppc::rt::vectorIsa()) {
  case ppc::rt::VectorIsa::Avx512: return weightedGramAvx512(n, D, w, x, G, v, g);
  case ppc::rt::VectorIsa::Avx2: return weightedGramAvx2(n, D, w, x, G, v, g);
  case ppc::rt::VectorIsa::Baseline: break;
  }
#endif
  weightedGram<2, 4>(n, D, w, x, G, v, g);
}

PPC_DISPATCHED_KERNEL void ppc_weighted_gram(int64_t n, int64_t D, const double* w, const double* x, double* G) {
  ppc_weighted_gram_linear(n, D, w, nullptr, x, G, nullptr);
}

PPC_DISPATCHED_KERNEL void ppc_weighted_column_means(int64_t n, int64_t k, const double* w, int64_t D,
                                                     const double* x, double* means, double* totals, double* memo) {
  if (memo && sameWeights(n * k, w, memo)) return; // means and totals are still theirs
#ifdef PPC_HAVE_ISA_COPIES
  switch (ppc::rt::vectorIsa()) {
  case ppc::rt::VectorIsa::Avx512: return weightedColumnMeansAvx512(n, k, w, D, x, means, totals);
  case ppc::rt::VectorIsa::Avx2: return weightedColumnMeansAvx2(n, k, w, D, x, means, totals);
  case ppc::rt::VectorIsa::Baseline: break;
  }
#endif
  weightedColumnMeans<2, 4>(n, k, w, D, x, means, totals);
}

PPC_DISPATCHED_KERNEL void ppc_linear_forms(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                            const double* offsets, double* out) {
#ifdef PPC_HAVE_ISA_COPIES
  switch (ppc::rt::vectorIsa()) {
  case ppc::rt::VectorIsa::Avx512: return linearFormsAvx512(n, k, D, x, eta, offsets, out);
  case ppc::rt::VectorIsa::Avx2: return linearFormsAvx2(n, k, D, x, eta, offsets, out);
  case ppc::rt::VectorIsa::Baseline: break;
  }
#endif
  linearForms<2, 2, 4>(n, k, D, x, eta, offsets, out);
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

namespace ppc::rt::factors {

namespace {
const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_gaussian_weighted_moments),
    PPC_SYMBOL(ppc_gaussian_moment_products),
    PPC_SYMBOL(ppc_weights_changed),
    PPC_SYMBOL(ppc_gaussian_weighted_moments_cases),
    PPC_SYMBOL(ppc_gaussian_moment_products_cases),
    PPC_SYMBOL(ppc_weighted_column_means),
    PPC_SYMBOL(ppc_linear_forms),
    PPC_SYMBOL(ppc_quadratic_forms),
    PPC_SYMBOL(ppc_row_forms),
    PPC_SYMBOL(ppc_row_dots),
    PPC_SYMBOL(ppc_weighted_gram),
    PPC_SYMBOL(ppc_weighted_gram_linear),
};
} // namespace

extern const KernelGroup kPlateStatisticsKernels = {"PlateStatistics", kSymbols};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
