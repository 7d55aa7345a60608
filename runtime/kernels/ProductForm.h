//===- runtime/kernels/ProductForm.h - categorical posteriors as products ---===//
//
// q(z) = normalize(prod_j exp(m_j)): exponential tables of the parents and
// the per-datum products, normalizations and messages that read them
// (codegen/plan/ProductForm.cpp, codegen/transforms/ProductNormalizerFusion.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Categorical posteriors in the exponential domain =====
// q(z) = softmax(sum_j m_j) = normalize(prod_j exp(m_j)): when every message
// m_j is a row or an entry of a parent's E log statistics, the exponentials
// are tables refreshed with the parents, and a categorical update costs K
// products instead of K exponentials (codegen/Plan.cpp, "product form").
/// dst[i] = value
void ppc_fill(int64_t n, double value, double* dst);
/// dst[i] *= src[i]
void ppc_mul_n(int64_t n, const double* src, double* dst);
/// dst[i] = a[i] * b[i]: the identity, then two factors, in one pass (the
/// plan folds `fill 1; mul a; mul b` into it).
void ppc_mul2_n(int64_t n, const double* a, const double* b, double* dst);
/// dst[i] = src[i]: the identity times one factor.
void ppc_copy_n(int64_t n, const double* src, double* dst);
/// dst[i] = exp(src[i] - max_j src[j]) (a row: the shift cancels in q);
/// *shift = max_j src[j], for the log normalizer below.
void ppc_exp_shifted_n(int64_t n, const double* src, double* dst, double* shift);
/// dst[c][r] = exp(src[r][c] - shifts[c]) with shifts[c] = max_r src[r][c]:
/// a rows x cols array (a parent indexed by the condition's case r and a
/// datum c) as a cols x rows table, so that a datum's row of factors is
/// contiguous; the shift of column c cancels in q for every datum c. Only
/// columns [begin, min(begin + count, cols)): blocks of columns are independent.
void ppc_exp_shifted_transposed(int64_t rows, int64_t cols, int64_t begin, int64_t count, const double* src,
                                double* dst, double* shifts);
/// probs = prod / sum(prod); eta = log(probs) unless null. An all-zero
/// product (every case underflowed even after the shifts) gives NaN, which
/// the run reports as a non-finite ELBO.
void ppc_categorical_stats_from_product(int64_t K, const double* prod, double* eta, double* probs);
/// The same, and returns log sum(prod) + shift: with `shift` the sum of the
/// tables' shifts, that is log sum_k exp(sum_j m_j[k]), the categorical's
/// log normalizer. Right after q(z) is updated from its messages m_j, it
/// equals z's entropy plus the expected log factors z is in (each
/// sum_k q(z=k) m_j[k] when the factor is linear in z's indicator): the
/// code generator's collapsed ELBO term for z.
double ppc_categorical_stats_from_product_lognorm(int64_t K, const double* prod, double shift, double* eta,
                                                  double* probs);
/// The categorical's normalized product, consumed where it is computed
/// (codegen/ProductNormalizerFusion.cpp): no row of products or
/// probabilities is stored.
/// acc[k] += w b[k] / sum_j a[j] b[j]: a message sum_i w_i q_i to a parent
/// that is the same for every i (LDA: the tokens' counts to their document's
/// topic mix) is a[k] times sum_i w_i b_i[k] / s_i, so the loop over i
/// accumulates that and ppc_mul_add_n multiplies a in once after it.
void ppc_dot_inverse_axpy(int64_t K, const double* a, const double* b, double w, double* acc);
/// ppc_dot_inverse_axpy for n data whose rows b_i are rows rows[i] of a
/// table of rows of K doubles, with weights w[i] (w null: `weight` for
/// every datum): the same values, added in the same order, as n calls
/// (codegen/transforms/GatherDots.cpp).
void ppc_dot_inverse_axpy_gather(int64_t n, int64_t K, const double* a, const double* table, const int64_t* rows,
                                 const double* w, double weight, double* acc);
/// The same with the data's rows stored one after another in `rows` (n x K):
/// an element's rows copied out of the table once for all its sweeps
/// (codegen/transforms/LocalRows.cpp).
void ppc_dot_inverse_axpy_rows(int64_t n, int64_t K, const double* a, const double* rows, const double* w,
                               double weight, double* acc);
/// dst[i] = table[rows[i]] for n rows of K doubles.
void ppc_gather_rows(int64_t n, int64_t K, const double* table, const int64_t* rows, double* dst);
/// dst[k] += w a[k] b[k] / s with s = sum_j a[j] b[j] (a message to a parent
/// row that changes with i: the tokens' counts to their word's topics);
/// returns log s + shift, as ppc_categorical_stats_from_product_lognorm.
double ppc_product_axpy_lognorm(int64_t K, const double* a, const double* b, double shift, double w, double* dst);
/// The same, storing s in *norm and returning the shift alone: the ELBO
/// takes sum_i w_i log s_i from ppc_weighted_log_sum after the loop.
double ppc_product_axpy_norm(int64_t K, const double* a, const double* b, double shift, double w, double* dst,
                             double* norm);
/// sum_i w[i] log x[i] (w null: weights 1), vectorized.
double ppc_weighted_log_sum(int64_t n, const double* x, const double* w);
/// The same without the normalizer.
void ppc_product_axpy(int64_t K, const double* a, const double* b, double w, double* dst);
/// Prefetches row idx[i + ahead] of a table of rows of `width` doubles
/// when i + ahead < n (codegen/RowPrefetch.cpp); no effect on any value.
void ppc_prefetch_row(const int64_t* idx, int64_t i, int64_t n, int64_t ahead, const double* table, int64_t width);
/// dst[i] += a[i] * b[i]
void ppc_mul_add_n(int64_t n, const double* a, const double* b, double* dst);

}  // extern "C"
