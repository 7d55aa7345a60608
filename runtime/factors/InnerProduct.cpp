//===- runtime/factors/InnerProduct.cpp - the inner product factor --------===//
//
// m = a.dot(b) of MvGaussians and known vectors (regression's w.dot(x(i)),
// matrix factorisation's u(user).dot(v(item))): Infer.NET's InnerProduct
// under VMP, BayesPy's Dot. An argument's row is full ([E x, E x x^T], a
// posterior's statistics) or a known vector's D values (its second moment
// x x^T is never stored). a and b are independent under q:
//   E m = E a . E b,  E m^2 = sum_ij E[a a^T]_ij E[b b^T]_ij.
// The message to a is E_q(b)[eta0 a.b + eta1 (a.b)^2] as a function of a:
// natural parameters (eta0 E b, eta1 E[b b^T]) in the MvGaussian's layout
// [P mu, -P/2] (runtime/factors/MvGaussian.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Arithmetic.h"

#include "runtime/VecMath.h"
#include "runtime/kernels/PlateStatistics.h"

#include <cstdlib>

namespace {

/// E[x x^T]_ij of a row (full, or a known vector's values).
inline double secondMoment(const double* x, int64_t full, int64_t D, int64_t i, int64_t j) {
  return full ? x[D + i * D + j] : x[i] * x[j];
}

/// X^T X in gram[1..] (gram[0] = 1 once computed): a memo of the data.
void tabulateGram(int64_t n, int64_t D, const double* X, double* gram) {
  if (gram[0] == 1.0)
    return;
  for (int64_t k = 0; k < D * D; ++k)
    gram[1 + k] = 0.0;
  double* ones = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(n > 0 ? n : 1)));
  for (int64_t i = 0; i < n; ++i)
    ones[i] = 1.0;
  ppc_weighted_gram(n, D, ones, X, gram + 1);
  std::free(ones);
  gram[0] = 1.0;
}

/// P += w sum_i e1_i x_i x_i^T: w e1 X^T X from the table when every row's
/// e1 is e1 (`same`), else the rows' own (eta[2i + 1]) on the second-moment tiles.
void addSecondPart(int64_t n, int64_t D, const double* eta, const double* X, double w, bool same, double e1,
                   double* gram, double* P) {
  if (same) {
    tabulateGram(n, D, X, gram);
    for (int64_t k = 0; k < D * D; ++k)
      P[k] += w * e1 * gram[1 + k];
    return;
  }
  double* weights = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(n > 0 ? n : 1)));
  for (int64_t i = 0; i < n; ++i)
    weights[i] = w * eta[2 * i + 1];
  ppc_weighted_gram(n, D, weights, X, P);
  std::free(weights);
}

} // namespace

extern "C" {

void ppc_dot_forward(int64_t D, const double* a, int64_t a_full, const double* b, int64_t b_full, double* dst) {
  double mean = 0.0;
  for (int64_t i = 0; i < D; ++i)
    mean += a[i] * b[i];
  double second = 0.0;
  if (!a_full && !b_full) {
    second = mean * mean;
  } else if (!a_full || !b_full) { // x^T S x with x the known vector, S the other's second moment
    const double* x = a_full ? b : a;
    const double* S = (a_full ? a : b) + D;
    for (int64_t i = 0; i < D; ++i) {
      double row = 0.0;
      for (int64_t j = 0; j < D; ++j)
        row += S[i * D + j] * x[j];
      second += x[i] * row;
    }
  } else {
    for (int64_t k = 0; k < D * D; ++k)
      second += a[D + k] * b[D + k];
  }
  dst[0] += mean;
  dst[1] += second;
}

void ppc_dot_to_left(int64_t D, const double* eta_m, const double* b, int64_t b_full, double w, double* dst) {
  const double e0 = w * eta_m[0], e1 = w * eta_m[1];
  for (int64_t i = 0; i < D; ++i)
    dst[i] += e0 * b[i];
  double* P = dst + D;
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j)
      P[i * D + j] += e1 * secondMoment(b, b_full, D, i, j);
}

void ppc_dot_to_right(int64_t D, const double* eta_m, const double* a, int64_t a_full, double w, double* dst) {
  ppc_dot_to_left(D, eta_m, a, a_full, w, dst);
}

// The forward statistics of every row, the means X mu and the quadratic
// forms x^T E x (N D^2 / 2 multiply-adds), in one pass over the rows in the
// mixtures' register tiles sized to the vector ISA (ppc_row_forms,
// runtime/kernels/PlateStatistics.cpp).
PPC_ROW_KERNEL void ppc_dot_forward_rows(int64_t n, int64_t D, const double* a, const double* X, double* dst) {
  ppc_row_forms(n, D, X, a, a + D, dst);
}

// The message's second part is sum_i e1_i x_i x_i^T (ppc_weighted_gram, the
// mixtures' second-moment tiles); with the same e1 for every row (a Gaussian
// child with a global precision) it is e1 X^T X, tabulated once in `gram`.
PPC_ROW_KERNEL void ppc_dot_to_operand_rows(int64_t n, int64_t D, const double* eta, const double* X, double w,
                                            double* gram, double* dst) {
  double* P = dst + D;
  bool same = n > 0 && gram;
  for (int64_t i = 0; i < n && same; ++i)
    same = eta[2 * i + 1] == eta[1];
  if (same) { // the first part row by row, the second from the table
    for (int64_t i = 0; i < n; ++i) {
      const double e0 = w * eta[2 * i];
      const double* x = X + i * D;
      for (int64_t c = 0; c < D; ++c)
        dst[c] += e0 * x[c];
    }
    addSecondPart(n, D, eta, X, w, true, eta[1], gram, P);
    return;
  }
  // Each row its own e1 (a logistic link's lambda(xi_i)): both parts in one
  // pass of the second-moment tiles, whose first moments take the e0_i.
  double* weights = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(2 * (n > 0 ? n : 1))));
  double* linear = weights + (n > 0 ? n : 1);
  for (int64_t i = 0; i < n; ++i) {
    weights[i] = w * eta[2 * i + 1];
    linear[i] = w * eta[2 * i];
  }
  ppc_weighted_gram_linear(n, D, weights, linear, X, P, dst);
  std::free(weights);
}

PPC_ROW_KERNEL void ppc_dot_forward_rows_mean(int64_t n, int64_t D, const double* a, const double* X, double* dst) {
  constexpr int64_t kChunk = 256;
  double means[kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = n - i0 < kChunk ? n - i0 : kChunk;
    ppc_row_dots(m, D, X + i0 * D, a, means);
    for (int64_t i = 0; i < m; ++i) {
      dst[2 * (i0 + i)] = means[i];
      dst[2 * (i0 + i) + 1] = means[i] * means[i];
    }
  }
}

void ppc_dot_variance_sum(int64_t n, int64_t D, const double* a, const double* X, double* gram, double* snapshot,
                          double* shadow) {
  tabulateGram(n, D, X, gram);
  double total = 0.0;
  for (int64_t r = 0; r < D; ++r)
    for (int64_t c = 0; c < D; ++c)
      total += (a[D + r * D + c] - a[r] * a[c]) * gram[1 + r * D + c];
  for (int64_t k = 0; k < D + D * D; ++k)
    snapshot[k] = a[k];
  shadow[0] = 0.0;
  shadow[1] = total;
}

void ppc_dot_to_operand_affine(int64_t n, int64_t D, const double* at0, const double* at1, const double* eta,
                               const double* X, const double* y, double w, double* sums, double* gram,
                               double* dst) {
  double* ones = sums + 1;
  double* ys = ones + D;
  if (sums[0] != 1.0) {
    for (int64_t c = 0; c < D; ++c)
      ones[c] = ys[c] = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double* x = X + i * D;
      for (int64_t c = 0; c < D; ++c) {
        ones[c] += x[c];
        ys[c] += y[i] * x[c];
      }
    }
    sums[0] = 1.0;
  }
  const double a0 = at0[0], b0 = at1[0] - at0[0], a1 = at0[1], b1 = at1[1] - at0[1];
  for (int64_t c = 0; c < D; ++c)
    dst[c] += w * (a0 * ones[c] + b0 * ys[c]);
  double* P = dst + D;
  addSecondPart(n, D, eta, X, w, b1 == 0.0, a1, gram, P);
}

PPC_ROW_KERNEL void ppc_dot_add_variance_rows(int64_t n, int64_t D, const double* a, const double* X, double* dst,
                                              double* dst2) {
  constexpr int64_t kChunk = 256;
  double* cov = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(D * D)));
  for (int64_t r = 0; r < D; ++r)
    for (int64_t c = 0; c < D; ++c)
      cov[r * D + c] = a[D + r * D + c] - a[r] * a[c];
  double forms[kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = n - i0 < kChunk ? n - i0 : kChunk;
    ppc_quadratic_forms(m, D, X + i0 * D, cov, forms);
    for (int64_t i = 0; i < m; ++i)
      dst[2 * (i0 + i) + 1] += forms[i];
    for (int64_t i = 0; dst2 && i < m; ++i)
      dst2[2 * (i0 + i) + 1] += forms[i];
  }
  std::free(cov);
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/factors/ArithmeticEntry.h"

PPC_DECLARE_CLONES(ppc_dot_forward_rows)
PPC_DECLARE_CLONES(ppc_dot_to_operand_rows)
PPC_DECLARE_CLONES(ppc_dot_forward_rows_mean)
PPC_DECLARE_CLONES(ppc_dot_add_variance_rows)

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr MessageOperator kMessages[] = {{"ppc_dot_forward", "", kArithmeticForward},
                                         {"ppc_dot_to_left", "", kArithmeticToLeft},
                                         {"ppc_dot_to_right", "", kArithmeticToRight}};

// M<i>/m<i>: argument i's row (a posterior's statistics, or a known
// vector's values) and whether it is full (runtime/Catalogue.h).
constexpr KernelPattern kPatterns[] = {
    {"ppc_dot_forward", "D1 M1 m1 M2 m2 d"},
    {"ppc_dot_to_left", "D1 N0 M2 m2 w d"},
    {"ppc_dot_to_right", "D2 N0 M1 m1 w d"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_ROW_SYMBOL(ppc_dot_forward_rows),
    PPC_ROW_SYMBOL(ppc_dot_to_operand_rows),
    PPC_ROW_SYMBOL(ppc_dot_forward_rows_mean),
    PPC_ROW_SYMBOL(ppc_dot_add_variance_rows),
    PPC_SYMBOL(ppc_dot_variance_sum),
    PPC_SYMBOL(ppc_dot_to_operand_affine),
    PPC_SYMBOL(ppc_dot_forward),
    PPC_SYMBOL(ppc_dot_to_left),
    PPC_SYMBOL(ppc_dot_to_right),
};

} // namespace

extern const FactorEntry kInnerProduct = arithmeticEntry(Family::InnerProduct, kMessages, kPatterns, kSymbols);

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
