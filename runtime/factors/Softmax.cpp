//===- runtime/factors/Softmax.cpp - the softmax link ---------------------===//
//
// p = softmax(e_0, ..., e_{K-1}) of K real values (a Gaussian each, or
// arithmetic on Gaussians and data: multinomial logistic regression's
// W(k).dot(x(i))), the probabilities of a Categorical. VMP has no conjugate
// message through log sum_j exp(e_j); ppc uses Bouchard's bound (Bouchard
// 2007, "Efficient bounds for the softmax function"): for every alpha and
// xi_k,
//
//   log sum_j exp(e_j) <= alpha + sum_j log(1 + exp(e_j - alpha))
//                      <= alpha + sum_j [(e_j - alpha - xi_j) / 2 + log(1 + exp(xi_j))
//                                        + lambda(xi_j) ((e_j - alpha)^2 - xi_j^2)],
//
// lambda(xi) = tanh(xi / 2) / (4 xi) (the Jaakkola-Jordan bound on each
// softplus), quadratic in each e_j. Each observation's local variational
// parameters are optimized in closed form where they can be: xi_j^2 =
// E (e_j - alpha)^2 for a given alpha, and then the bound is a convex
// function of alpha alone,
//
//   f(alpha) = alpha + sum_j [(E e_j - alpha) / 2 + log(2 cosh(phi_j / 2))],
//   phi_j = sqrt(Var e_j + (E e_j - alpha)^2),
//
// (log 2cosh(r/2) is convex and increasing for r >= 0 and phi_j convex in
// alpha), minimized by bisection on its increasing derivative
// f'(alpha) = 1 - K/2 - 2 sum_j lambda(phi_j) (E e_j - alpha). The bound is
// thus the tightest of its family for the q(e) it is evaluated at, with no
// state: coordinate ascent over (q, alpha, xi) keeps the ELBO monotone.
//
//   forward:  E log p_k >= E e_k - f(alpha*)
//   to e_k:   from (a_0, ..., a_{K-1}) on (log p_0, ...), a_k >= 0, A = sum a:
//             (a_k - A / 2 + 2 A lambda_k alpha*, -A lambda_k) on (e_k, e_k^2).
//
// e is a plate of K values read whole: K rows of (E e, E e^2).
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Arithmetic.h"

#include "runtime/kernels/KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

/// log(2 cosh(r / 2)) for r >= 0, without overflow.
inline double logTwoCosh(double r) { return 0.5 * r + std::log1p(std::exp(-r)); }

struct Bound {
  double alpha = 0, value = 0;
};

/// The alpha that minimizes f, and f there; e holds K rows of (E e, E e^2).
Bound bouchard(int64_t K, const double* e) {
  auto phi = [&](int64_t j, double alpha) {
    const double m = e[2 * j], v = std::max(0.0, e[2 * j + 1] - m * m), d = m - alpha;
    return std::sqrt(v + d * d);
  };
  auto slope = [&](double alpha) {
    double s = 1.0 - 0.5 * double(K);
    for (int64_t j = 0; j < K; ++j)
      s -= 2.0 * jaakkolaLambda(phi(j, alpha)) * (e[2 * j] - alpha);
    return s;
  };
  double lo = e[0], hi = e[0];
  for (int64_t j = 1; j < K; ++j) {
    lo = std::min(lo, e[2 * j]);
    hi = std::max(hi, e[2 * j]);
  }
  // f' < 0 far below the means and > 0 far above them (K >= 2).
  for (double step = 1.0; slope(lo) > 0 && step < 1e6; step *= 2)
    lo -= step;
  for (double step = 1.0; slope(hi) < 0 && step < 1e6; step *= 2)
    hi += step;
  for (int it = 0; it < 200 && hi - lo > 1e-13 * (1.0 + std::fabs(lo) + std::fabs(hi)); ++it) {
    const double mid = 0.5 * (lo + hi);
    (slope(mid) < 0 ? lo : hi) = mid;
  }
  Bound b;
  b.alpha = 0.5 * (lo + hi);
  b.value = b.alpha;
  for (int64_t j = 0; j < K; ++j)
    b.value += 0.5 * (e[2 * j] - b.alpha) + logTwoCosh(phi(j, b.alpha));
  return b;
}

} // namespace

extern "C" {

void ppc_softmax_forward(int64_t K, const double* stats_e, double* dst) {
  if (K == 1) { // p = 1
    return;
  }
  const Bound b = bouchard(K, stats_e);
  for (int64_t k = 0; k < K; ++k)
    dst[k] += stats_e[2 * k] - b.value;
}

void ppc_softmax_to_logodds(int64_t K, const double* eta_p, const double* stats_e, double w, double* dst) {
  double A = 0.0;
  for (int64_t k = 0; k < K; ++k)
    A += eta_p[k];
  if (K == 1 || A == 0.0)
    return;
  const Bound b = bouchard(K, stats_e);
  for (int64_t k = 0; k < K; ++k) {
    const double m = stats_e[2 * k], v = std::max(0.0, stats_e[2 * k + 1] - m * m), d = m - b.alpha;
    const double lambda = jaakkolaLambda(std::sqrt(v + d * d));
    dst[2 * k] += w * (eta_p[k] - 0.5 * A + 2.0 * A * lambda * b.alpha);
    dst[2 * k + 1] -= w * A * lambda;
  }
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/factors/ArithmeticEntry.h"

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr OperatorInput kForward[] = {{1, DepKind::Required}};
// The message to e reads e's own statistics too: the bound's alpha and xi.
constexpr OperatorInput kToLogOdds[] = {{0, DepKind::Required}, {1, DepKind::Required}};

constexpr MessageOperator kMessages[] = {{"ppc_softmax_forward", "", kForward},
                                         {"ppc_softmax_to_logodds", "", kToLogOdds}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_softmax_forward", "D0 S1 d"},
    {"ppc_softmax_to_logodds", "D0 N0 S1 w d"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_softmax_forward),
    PPC_SYMBOL(ppc_softmax_to_logodds),
};

int64_t width(int64_t k) { return k; }
// Written out as the plug-in probabilities softmax(E e): exp of the bounded
// E log p, normalized (the bound's f(alpha*) cancels).
std::vector<std::string> columns(int64_t k) { return catalogue::indexedColumns("p_at_mean_", k); }
void parameters(int64_t k, const double *, const double *stats, std::vector<double> &out) {
  double m = stats[0];
  for (int64_t i = 1; i < k; ++i)
    m = std::max(m, stats[i]);
  double total = 0.0;
  for (int64_t i = 0; i < k; ++i)
    total += std::exp(stats[i] - m);
  for (int64_t i = 0; i < k; ++i)
    out.push_back(std::exp(stats[i] - m) / total);
}
std::vector<double> pointMass(double c, int64_t k) { return std::vector<double>(size_t(k), std::log(c)); }

} // namespace

extern const FactorEntry kSoftmax = [] {
  FactorEntry e = arithmeticEntry(Family::Softmax, kMessages, kPatterns, kSymbols);
  e.width = width;
  e.outputColumns = columns;
  e.standardParameters = parameters;
  e.pointMass = pointMass;
  return e;
}();

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
