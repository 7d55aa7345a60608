//===- runtime/kernels/Schedule.h - what the schedules need ---------------===//
//
// Random initial posteriors (a counter-based generator, so that any
// element can be drawn alone on any thread or process) and the local
// sweeps' convergence test.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Schedule support =====
/// A random categorical posterior for symmetry breaking: q uniform on the
/// simplex, a pure function of (seed, stream, element) (a counter-based
/// generator, so any element can be drawn alone, in any order, on any rank).
/// stats = q, eta = log q (unless eta is null).
void ppc_random_simplex(int64_t k, int64_t seed, int64_t stream, int64_t element, double* eta, double* stats);
/// The same for a Bernoulli posterior: stats = p, eta = logit p.
/// A Gaussian (matrix = 0, k = 1) or MvGaussian (matrix = 1) posterior with
/// random means and unit precision: the symmetry breaking of products of
/// random variables (Bayesian PCA's W(d).dot(z(i))).
void ppc_random_gaussian(int64_t k, int64_t matrix, int64_t seed, int64_t stream, int64_t element, double* eta,
                         double* stats);
void ppc_random_bernoulli(int64_t seed, int64_t stream, int64_t element, double* eta, double* stats);
/// mean_i |current[i] - previous[i]|, then previous <- current (the local
/// sweeps' convergence test).
double ppc_mean_abs_change(int64_t n, const double* current, double* previous);

}  // extern "C"
