//===- runtime/kernels/BinaryStatistics.h - sums over 0/1 data's ones -----===//
//
// A plate of 0/1 data's products with a case's weights or parameters as sums
// over each row's ones (codegen/transforms/LinearStatistics.cpp): the
// Bernoulli mixture's W^T X and X H^T.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

/// ppc_weighted_column_means (runtime/kernels/PlateStatistics.h) for 0/1 data given twice: as the columns of each
/// row's ones (CSR: row i's are columns[rows[i] .. rows[i + 1]]) and as bits (row i's are the (D + 63) / 64 words
/// from bits[i * ((D + 63) / 64)], column c at bit c % 64 of word c / 64, the bits past D zero; or null: the
/// sums over the ones on every ISA).
void ppc_binary_column_means(int64_t n, int64_t k, const double* w, int64_t D, const int64_t* rows,
                             const int64_t* columns, const int64_t* bits, double* means, double* totals, double* memo);
/// ppc_binary_column_means for the cases [j0, j1) alone (their columns of w, rows of means, totals), unless
/// changed is given and holds 0 (ppc_weights_changed: the weights are those of the last call).
void ppc_binary_column_means_cases(int64_t n, int64_t k, int64_t j0, int64_t j1, const double* w, int64_t D,
                                   const int64_t* rows, const int64_t* columns, const int64_t* bits, double* means,
                                   double* totals, const double* changed);
/// ppc_linear_forms for 0/1 data given as for ppc_binary_column_means.
void ppc_binary_linear_forms(int64_t n, int64_t k, int64_t D, const int64_t* rows, const int64_t* columns,
                             const int64_t* bits, const double* eta, const double* offsets, double* out);
/// ppc_binary_linear_forms for the cases [j0, j1) alone (their rows of eta, entries of offsets, columns of out).
void ppc_binary_linear_forms_cases(int64_t n, int64_t k, int64_t j0, int64_t j1, int64_t D, const int64_t* rows,
                                   const int64_t* columns, const int64_t* bits, const double* eta,
                                   const double* offsets, double* out);

}  // extern "C"
