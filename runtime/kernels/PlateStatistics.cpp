//===- runtime/kernels/PlateStatistics.cpp - Gaussian data statistics -----===//
//
// A data plate's weighted moments and the quadratic forms of every datum
// with every case's natural parameters (codegen/transforms/BatchStatistics.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/PlateStatistics.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ---- Gaussian statistics of a whole data plate ----
// Loops ordered for the cache: the D x D accumulator (or matrix) row is the
// vectorized inner loop, the data rows (n x D, small) are streamed.

namespace {
// Up to this dimension the plate statistics run over the data rows, 8 rows
// per vector, on the transposed data: a register tile of the D x D moments
// (16 columns wide) would be mostly padding.
constexpr int64_t kSmallDimension = 16;

// x (n x D, row-major) transposed: D columns of n.
double* transposedColumns(int64_t n, int64_t D, const double* x, int64_t extra) {
  double* xt = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(D * n + extra + 1)));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t a = 0; a < D; ++a) xt[a * n + i] = x[i * D + a];
  return xt;
}

PPC_VECTOR_CLONES void weightedMomentsSmall(int64_t n, int64_t k, const double* w, int64_t D, const double* x,
                                            double* means, double* totals) {
  const int64_t width = D + D * D;
  double* xt = transposedColumns(n, D, x, (D + 1) * n);
  double* yt = xt + D * n;    // the weighted columns w_j x_a
  double* wj = yt + D * n;
  for (int64_t j = 0; j < k; ++j) {
    double* m = means + j * width;
    for (int64_t i = 0; i < n; ++i) wj[i] = w[i * k + j];
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

PPC_VECTOR_CLONES void momentProductsSmall(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                           const double* offsets, double* out) {
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
    for (int64_t i = 0; i < n; ++i) out[i * k + j] = q[i];
  }
  std::free(xt);
}
}  // namespace

PPC_ROW_KERNEL void ppc_gaussian_weighted_moments(int64_t n, int64_t k, const double* w, int64_t D, const double* x,
                                                  double* means, double* totals, double* memo) {
  if (memo) {  // the same weights as last time (bitwise): means and totals are still theirs
    if (memo[0] == 1.0 && std::memcmp(memo + 1, w, sizeof(double) * static_cast<size_t>(n * k)) == 0) return;
    std::memcpy(memo + 1, w, sizeof(double) * static_cast<size_t>(n * k));
    memo[0] = 1.0;
  }
  if (D <= kSmallDimension) return weightedMomentsSmall(n, k, w, D, x, means, totals);
  // The second moments are Y_j^T X with Y_j = diag(w_j) X: 8 x 16 tiles of the
  // upper half accumulate in registers over the data rows (16 sums per row,
  // the 8 multipliers read straight from Y), the rest by symmetry. X and Y
  // are copied once into rows padded to 16 columns (zeros).
  typedef double v8d __attribute__((vector_size(64)));
  constexpr int64_t kRows = 8, kCols = 16;
  const int64_t width = D + D * D;
  const int64_t Dp = (D + kCols - 1) / kCols * kCols;
  double* xp = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(2 * n * Dp + 1)));
  double* yp = xp + n * Dp;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t a = 0; a < D; ++a) xp[i * Dp + a] = x[i * D + a];
    for (int64_t a = D; a < Dp; ++a) xp[i * Dp + a] = 0.0;
  }
  for (int64_t j = 0; j < k; ++j) {
    double* m = means + j * width;
    double total = 0.0;
    for (int64_t a = 0; a < D; ++a) m[a] = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double wi = w[i * k + j];
      total += wi;
      const double* xi = xp + i * Dp;
      double* yi = yp + i * Dp;
      for (int64_t a = 0; a < Dp; ++a) yi[a] = wi * xi[a];
      for (int64_t a = 0; a < D; ++a) m[a] += yi[a];
    }
    for (int64_t a0 = 0; a0 < D; a0 += kRows)
      for (int64_t b0 = a0 / kCols * kCols; b0 < Dp; b0 += kCols) {  // b >= a: the rest by symmetry
        v8d acc[kRows][2] = {};
        // a0 + 8 <= Dp (a0 is a multiple of 8, Dp of 16): the padded rows of Y are zeros
        for (int64_t i = 0; i < n; ++i) {
          const double* xi = xp + i * Dp + b0;
          const double* yi = yp + i * Dp + a0;
          v8d lo, hi;
          __builtin_memcpy(&lo, xi, sizeof lo);
          __builtin_memcpy(&hi, xi + 8, sizeof hi);
          for (int64_t r = 0; r < kRows; ++r) {
            acc[r][0] += yi[r] * lo;
            acc[r][1] += yi[r] * hi;
          }
        }
        for (int64_t r = 0; r < kRows && a0 + r < D; ++r)
          for (int64_t c = 0; c < kCols && b0 + c < D; ++c)
            if (b0 + c >= a0 + r) {
              m[D + (a0 + r) * D + b0 + c] = acc[r][c / 8][c % 8];
              m[D + (b0 + c) * D + a0 + r] = acc[r][c / 8][c % 8];
            }
      }
    totals[j] = total;
    if (total > 0) {
      const double inv = 1.0 / total;
      for (int64_t c = 0; c < width; ++c) m[c] *= inv;
    }
  }
  std::free(xp);
}

PPC_ROW_KERNEL void ppc_gaussian_moment_products(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                                 const double* offsets, double* out) {
  // x_i^T H_j x_i = x_i^T U_j x_i with U_j the upper triangle of H_j, its
  // off-diagonal entries doubled: half the products of the full form. For 8
  // rows i at a time, (x^T U) in 16-wide column tiles accumulates in
  // registers (only the a <= b rows of U), then is dotted with x. Rows and U
  // are padded to 16 columns (zeros).
  if (D <= kSmallDimension) return momentProductsSmall(n, k, D, x, eta, offsets, out);
  typedef double v8d __attribute__((vector_size(64)));
  constexpr int64_t kRows = 8, kCols = 16;
  const int64_t width = D + D * D;
  const int64_t Dp = (D + kCols - 1) / kCols * kCols, np = (n + kRows - 1) / kRows * kRows;
  double* xp = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(np * Dp + Dp * Dp + np)));
  double* Up = xp + np * Dp;
  double* quad = Up + Dp * Dp;
  for (int64_t i = 0; i < np; ++i)
    for (int64_t a = 0; a < Dp; ++a) xp[i * Dp + a] = i < n && a < D ? x[i * D + a] : 0.0;
  for (int64_t j = 0; j < k; ++j) {
    const double* lin = eta + j * width;
    const double* H = lin + D;
    for (int64_t a = 0; a < Dp; ++a)
      for (int64_t b = 0; b < Dp; ++b)
        Up[a * Dp + b] = a >= D || b >= D || b < a ? 0.0 : (b == a ? H[a * D + a] : H[a * D + b] + H[b * D + a]);
    for (int64_t i0 = 0; i0 < np; i0 += kRows) {
      v8d q[kRows] = {};
      for (int64_t b0 = 0; b0 < Dp; b0 += kCols) {
        v8d acc[kRows][2] = {};
        const int64_t aEnd = b0 + kCols < D ? b0 + kCols : D;  // U_ab = 0 for a > b
        for (int64_t a = 0; a < aEnd; ++a) {
          v8d lo, hi;
          __builtin_memcpy(&lo, Up + a * Dp + b0, sizeof lo);
          __builtin_memcpy(&hi, Up + a * Dp + b0 + 8, sizeof hi);
          for (int64_t r = 0; r < kRows; ++r) {
            const double xa = xp[(i0 + r) * Dp + a];
            acc[r][0] += xa * lo;
            acc[r][1] += xa * hi;
          }
        }
        for (int64_t r = 0; r < kRows; ++r) {
          v8d lo, hi;
          __builtin_memcpy(&lo, xp + (i0 + r) * Dp + b0, sizeof lo);
          __builtin_memcpy(&hi, xp + (i0 + r) * Dp + b0 + 8, sizeof hi);
          q[r] += acc[r][0] * lo + acc[r][1] * hi;
        }
      }
      for (int64_t r = 0; r < kRows; ++r) {
        double s = 0.0;
        for (int c = 0; c < 8; ++c) s += q[r][c];
        quad[i0 + r] = s;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      double s = quad[i];
      for (int64_t a = 0; a < D; ++a) s += lin[a] * x[i * D + a];
      out[i * k + j] = s + offsets[j];
    }
  }
  std::free(xp);
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
};
} // namespace

extern const KernelGroup kPlateStatisticsKernels = {"PlateStatistics", kSymbols};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
