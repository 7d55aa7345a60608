//===- runtime/kernels/Vector.h - vector helpers --------------------------===//
//
// Sums and products over rows of doubles, in a fixed summation order so that
// results do not depend on the vector width the loop was compiled for.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Vector helpers (K-vectors; fixed summation order, so results do not
// depend on the vector width the loop was compiled for) =====
/// y[i] = x[i]
void ppc_copy(int64_t n, const double* x, double* y);
/// y[i] = a[i] + b[i] (the same numbers as zeroing y and adding a, then b)
void ppc_add(int64_t n, const double* a, const double* b, double* y);
/// y[i] += w * x[i]
void ppc_axpy(int64_t n, double w, const double* x, double* y);
/// dst[c][r] = src[r][c] (rows x cols to cols x rows)
void ppc_transpose(int64_t rows, int64_t cols, const double* src, double* dst);
/// y[i] += w * x[i * stride] (a column of a row-major array)
void ppc_axpy_strided(int64_t n, int64_t stride, double w, const double* x, double* y);
/// dst[r][c] += w * src[c][r] for columns c in [begin, min(begin + count,
/// cols)) of a rows x cols array, from its cols x rows (datum-major) form:
/// every column of a datum-major sum at once (codegen/ColumnFission.cpp).
void ppc_axpy_transposed(int64_t rows, int64_t cols, int64_t begin, int64_t count, double w, const double* src,
                         double* dst);
/// sum_i x[i] * y[i]
double ppc_dot(int64_t n, const double* x, const double* y);
/// log sum_i exp(x[i]); -inf for n == 0
double ppc_logsumexp(int64_t n, const double* x);
/// x <- softmax(x); returns logsumexp of the input
double ppc_softmax_inplace(int64_t n, double* x);

}  // extern "C"
