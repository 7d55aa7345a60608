//===- runtime/factors/Arithmetic.h - deterministic factors ---------------===//
//
// Arithmetic on random variables under VMP (mean-field; Winn & Bishop's
// deterministic nodes): m = a + b, a - b, a * b of scalars (Sum.cpp,
// Product.cpp) and m = a.dot(b) of vectors (InnerProduct.cpp). Each factor
// has three kernels:
//   forward   the statistics (E m, E m^2) of m from its arguments' statistics
//             (the arguments are independent under q);
//   to a, b   the message to an argument from m's natural parameters (eta0,
//             eta1: the sum of m's children's messages, eta0 m + eta1 m^2)
//             and the other argument's statistics: E_q(other)[eta0 m + eta1 m^2]
//             as a function of the argument.
// A scalar argument's statistics are (E x, E x^2); a vector argument's row is
// "full" ([E x, E x x^T], a posterior or a point mass) or a known vector's D
// values (full = 0: its second moment is x x^T).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Sum and Difference =====
/// dst += (E a + E b, E (a + b)^2)
void ppc_sum_forward(const double* stats_a, const double* stats_b, double* dst);
/// to a: dst += w (eta0 + 2 eta1 E b, eta1); to b the same with E a
void ppc_sum_to_left(const double* eta_m, const double* stats_b, double w, double* dst);
void ppc_sum_to_right(const double* eta_m, const double* stats_a, double w, double* dst);
/// dst += (E a - E b, E (a - b)^2)
void ppc_difference_forward(const double* stats_a, const double* stats_b, double* dst);
/// to a: dst += w (eta0 - 2 eta1 E b, eta1)
void ppc_difference_to_left(const double* eta_m, const double* stats_b, double w, double* dst);
/// to b: dst += w (-eta0 - 2 eta1 E a, eta1)
void ppc_difference_to_right(const double* eta_m, const double* stats_a, double w, double* dst);

// ===== Product =====
/// dst += (E a E b, E a^2 E b^2)
void ppc_product_forward(const double* stats_a, const double* stats_b, double* dst);
/// to a: dst += w (eta0 E b, eta1 E b^2); to b the same with a
void ppc_product_to_left(const double* eta_m, const double* stats_b, double w, double* dst);
void ppc_product_to_right(const double* eta_m, const double* stats_a, double w, double* dst);

// ===== Inner product =====
/// dst += (E a . E b, E (a . b)^2); rows of D values or full [E x, E x x^T]
void ppc_dot_forward(int64_t D, const double* a, int64_t a_full, const double* b, int64_t b_full, double* dst);
/// to a vector (D + D^2 natural parameters [P mu, -P/2]):
///   dst += w (eta0 E other, eta1 E other other^T)
void ppc_dot_to_left(int64_t D, const double* eta_m, const double* b, int64_t b_full, double w, double* dst);
void ppc_dot_to_right(int64_t D, const double* eta_m, const double* a, int64_t a_full, double w, double* dst);

// ===== Scale (a Gamma times a known s > 0) =====
/// dst += (s E tau, log s + E log tau)
void ppc_scale_forward(const double* stats_v, double s, double* dst);
/// to tau: dst += w (s eta0, eta1)
void ppc_scale_to_variable(const double* eta_m, double s, double w, double* dst);

// ===== Sigmoid (the logistic link, Sigmoid.cpp) =====
/// dst += (E log s(e), E log s(-e)) under the Jaakkola-Jordan bound at
/// xi = sqrt(E e^2): (log s(xi) + (E e - xi) / 2, log s(xi) - (E e + xi) / 2)
void ppc_sigmoid_forward(const double* stats_e, double* dst);
/// to e, from (a, b) on (log p, log(1 - p)), a, b >= 0:
///   dst += w ((a - b) / 2, -(a + b) lambda(xi)), lambda(xi) = tanh(xi / 2) / (4 xi)
void ppc_sigmoid_to_logodds(const double* eta_m, const double* stats_e, double w, double* dst);

// ===== Softmax (Softmax.cpp; Bouchard's bound) =====
/// dst[k] += E e_k - min_alpha f(alpha) (a lower bound of E log p_k); K rows of (E e, E e^2)
void ppc_softmax_forward(int64_t K, const double* stats_e, double* dst);
/// to e (K rows of 2), from (a_k) on (log p_k): dst[k] += w (a_k - A/2 + 2 A lambda_k alpha, -A lambda_k)
void ppc_softmax_to_logodds(int64_t K, const double* eta_p, const double* stats_e, double w, double* dst);

// ===== Stack (Stack.cpp: element k of a plate is operand k) =====
/// dst += (E v, E v^2) of the operand of this element
void ppc_stack_forward(const double* stats_v, double* dst);
/// to the operand: dst += w eta of its element
void ppc_stack_to_value(const double* eta_m, double w, double* dst);

// Whole-plate forms for a known operand's rows (codegen/transforms/BatchDot.cpp):
/// dst[i] = (x_i . mu, x_i^T E x_i) for the n rows x_i of X (n x D), a's full
/// statistics [mu, E] (assigned, not added)
void ppc_dot_forward_rows(int64_t n, int64_t D, const double* a, const double* X, double* dst);
/// dst += w sum_i (e0_i x_i, e1_i x_i x_i^T), e_i = eta rows (n x 2). When every
/// e1_i is the same, the second part is w e1 X^T X from `gram` (a memo of
/// 1 + D*D doubles: a flag, then X^T X, computed at the first such call).
void ppc_dot_to_operand_rows(int64_t n, int64_t D, const double* eta, const double* X, double w, double* gram,
                             double* dst);

// The same forward statistics with the variances deferred to a sum
// (codegen/transforms/VarianceSums.cpp): where every reader of the rows'
// second moments is affine in them with the same coefficient for every row,
// only sum_i x_i^T Cov x_i = tr(Cov X^T X) is needed, from a table of X^T X.
/// dst[i] = (x_i . mu, (x_i . mu)^2): the rows' moments without their variances.
void ppc_dot_forward_rows_mean(int64_t n, int64_t D, const double* a, const double* X, double* dst);
/// shadow = (0, sum_i x_i^T (E - mu mu^T) x_i) over the n rows of X, from
/// `gram` (a memo as for ppc_dot_to_operand_rows); snapshot = a (the
/// statistics the rows' variances are of, for ppc_dot_add_variance_rows).
void ppc_dot_variance_sum(int64_t n, int64_t D, const double* a, const double* X, double* gram, double* snapshot,
                          double* shadow);
/// ppc_dot_to_operand_rows (weight w, into dst) for rows eta_i affine in a
/// data column y (codegen/transforms/AffineRows.cpp): eta_i = at0 + (at1 -
/// at0) y_i, at0 and at1 the rows at y = 0 and 1. The sums come from
/// `sums` (a memo of 1 + 2D doubles: a flag, X^T 1, X^T y) and `gram` (X^T
/// X, a memo as for ppc_dot_to_operand_rows);
/// where e1 varies with y, its part from the rows eta themselves.
void ppc_dot_to_operand_affine(int64_t n, int64_t D, const double* at0, const double* at1, const double* eta,
                               const double* X, const double* y, double w, double* sums, double* gram,
                               double* dst);
/// dst[2i + 1] += x_i^T (E - mu mu^T) x_i: the deferred variances put back;
/// the same to dst2 (nullable), from the same quadratic forms.
void ppc_dot_add_variance_rows(int64_t n, int64_t D, const double* a, const double* X, double* dst, double* dst2);

}  // extern "C"
