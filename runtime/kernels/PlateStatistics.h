//===- runtime/kernels/PlateStatistics.h - Gaussian data statistics -------===//
//
// A data plate's weighted moments and the quadratic forms of every datum
// with every case's natural parameters (codegen/transforms/BatchStatistics.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Gaussian statistics of a whole data plate (codegen/BatchStatistics.cpp) =====
// T(x) = (x, x x^T) for the n rows x_i of D doubles (D = 1: the Gaussian's (x, x^2)).
/// means[j] = sum_i w[i][j] T(x_i) / totals[j], totals[j] = sum_i w[i][j], for the
/// n x k weights w (a zero row where totals[j] = 0). Rows of means: D + D*D.
/// memo (nullable, 1 + n*k doubles, zeros at first): returns at once when w
/// equals the weights memo holds (bitwise), the means and totals being theirs;
/// otherwise computes them and keeps a copy of w in memo.
void ppc_gaussian_weighted_moments(int64_t n, int64_t k, const double* w, int64_t D, const double* x, double* means,
                                   double* totals, double* memo);
/// changed[0] = 0 when w (count doubles) equals what memo (1 + count doubles,
/// zeros at first) holds, bitwise; else 1, and memo keeps a copy of w.
void ppc_weights_changed(int64_t count, const double* w, double* memo, double* changed);
/// ppc_gaussian_weighted_moments for cases [j0, min(j1, k)) only (their
/// means and totals), nothing when changed (nullable) holds 0: the same
/// numbers as the whole call, so calls on disjoint cases may run at once
/// (codegen/transforms/CaseSplitting.cpp).
void ppc_gaussian_weighted_moments_cases(int64_t n, int64_t k, int64_t j0, int64_t j1, const double* w, int64_t D,
                                         const double* x, double* means, double* totals, const double* changed);
/// out[i][j] = <T(x_i), eta[j]> + offsets[j] for the k rows eta[j] of D + D*D doubles.
void ppc_gaussian_moment_products(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                  const double* offsets, double* out);
/// The same for cases [j0, min(j1, k)) only (out keeps its row stride k).
void ppc_gaussian_moment_products_cases(int64_t n, int64_t k, int64_t j0, int64_t j1, int64_t D, const double* x,
                                        const double* eta, const double* offsets, double* out);

/// means[j][c] = sum_i w[i][j] x[i][c] / totals[j] and totals[j] = sum_i w[i][j]
/// for the n x D data x and n x k weights w (a zero row where totals[j] = 0):
/// a data plate of scalars' weighted means per case and column (W^T X). memo
/// as for ppc_gaussian_weighted_moments.
void ppc_weighted_column_means(int64_t n, int64_t k, const double* w, int64_t D, const double* x, double* means,
                               double* totals, double* memo);
/// out[i][j] = sum_c x[i][c] eta[j][c] + offsets[j] (X H^T plus a constant per
/// case): every datum's evidence for every case of a factor linear in x.
void ppc_linear_forms(int64_t n, int64_t k, int64_t D, const double* x, const double* eta, const double* offsets,
                      double* out);

// ===== Dense products of a regression's known rows (runtime/factors/InnerProduct.cpp) =====
/// out[i] = x_i^T H x_i for the n rows x_i of D doubles and H symmetric (D x D, row-major).
void ppc_quadratic_forms(int64_t n, int64_t D, const double* x, const double* H, double* out);
/// dst[2i] = x_i . mu and dst[2i + 1] = x_i^T H x_i (H symmetric): an inner
/// product's forward statistics for known rows, in one pass over them.
void ppc_row_forms(int64_t n, int64_t D, const double* x, const double* mu, const double* H, double* dst);
/// out[i] = x_i . v for the n rows x_i of D doubles (a GEMV).
void ppc_row_dots(int64_t n, int64_t D, const double* x, const double* v, double* out);
/// G += sum_i w[i] x_i x_i^T (D x D, row-major, both triangles) for the n rows x_i of D doubles.
void ppc_weighted_gram(int64_t n, int64_t D, const double* w, const double* x, double* G);
/// The same, and g += sum_i v[i] x_i (D) in the same pass over the rows (v null: G alone).
void ppc_weighted_gram_linear(int64_t n, int64_t D, const double* w, const double* v, const double* x, double* G,
                              double* g);

}  // extern "C"
