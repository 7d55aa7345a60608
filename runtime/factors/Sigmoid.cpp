//===- runtime/factors/Sigmoid.cpp - the logistic link --------------------===//
//
// p = sigmoid(e) = 1 / (1 + exp(-e)) of a real value e (a Gaussian, or
// arithmetic on Gaussians and data: logistic regression's w.dot(x(i)) + b),
// the probability of a Bernoulli or Binomial. VMP has no conjugate message
// through the sigmoid; the Jaakkola-Jordan bound (Bishop, PRML §10.6) makes
// one: for every xi,
//
//   log s(e) >= log s(xi) + (e - xi) / 2 - lambda(xi) (e^2 - xi^2),
//   lambda(xi) = tanh(xi / 2) / (4 xi)       (1/8 at xi = 0),
//
// and log s(-e) the same with -e. p is Beta-like: its children read its
// statistics (E log p, E log(1 - p)) and send (a, b) on them, a, b >= 0 (a
// Bernoulli's y and 1 - y, a Binomial's successes and failures, times case
// weights). The local variational parameter xi of each observation is
// updated in closed form, xi^2 = E e^2 (the bound's optimum for the current
// q(e)), each time a kernel reads e's statistics: it needs no state, the
// bound is tight for the q(e) it is evaluated at, and coordinate ascent over
// (q, xi) keeps the ELBO monotone. So
//
//   forward:  (E log p, E log(1 - p)) >= (log s(xi) + (E e - xi) / 2,
//                                          log s(xi) - (E e + xi) / 2),
//   to e:     a log p + b log(1 - p) >= ((a - b) / 2) e - (a + b) lambda(xi) e^2 + const,
//
// a Gaussian message (natural parameters on (e, e^2)). The two statistics'
// difference is E e exactly (log s(e) - log s(-e) = e): a latent Bernoulli's
// message, and the posterior predictive of a missing one reads it.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Arithmetic.h"

#include "runtime/kernels/KernelSupport.h"

#include <algorithm>
#include <cmath>

namespace {

/// xi = sqrt(E e^2), never below |E e| (rounding).
inline double boundPoint(const double* stats_e) {
  return std::sqrt(std::max(stats_e[1], stats_e[0] * stats_e[0]));
}

} // namespace

extern "C" {

// Called once per observation in the model's row loops: inlined there (the
// exp makes them too large for the JIT's size limit), the loops vectorize.
PPC_TOKEN_KERNEL void ppc_sigmoid_forward(const double* stats_e, double* dst) {
  const double mu = stats_e[0], xi = boundPoint(stats_e);
  const double logSigmoidXi = -vm::softplus(-xi);
  dst[0] += logSigmoidXi + 0.5 * (mu - xi);
  dst[1] += logSigmoidXi - 0.5 * (mu + xi);
}

PPC_TOKEN_KERNEL void ppc_sigmoid_to_logodds(const double* eta_m, const double* stats_e, double w, double* dst) {
  const double a = eta_m[0], b = eta_m[1];
  dst[0] += w * 0.5 * (a - b);
  dst[1] -= w * (a + b) * jaakkolaLambda(boundPoint(stats_e));
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/factors/ArithmeticEntry.h"

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr OperatorInput kForward[] = {{1, DepKind::Required}};
// The message to e reads e's own statistics too: the bound's point xi.
constexpr OperatorInput kToLogOdds[] = {{0, DepKind::Required}, {1, DepKind::Required}};

constexpr MessageOperator kMessages[] = {{"ppc_sigmoid_forward", "", kForward},
                                         {"ppc_sigmoid_to_logodds", "", kToLogOdds}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_sigmoid_forward", "S1 d"},
    {"ppc_sigmoid_to_logodds", "N0 S1 w d"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_sigmoid_forward),
    PPC_SYMBOL(ppc_sigmoid_to_logodds),
};

// Written out as the bound's statistics and the plug-in probability
// s(E e) = exp(E log p) / (exp(E log p) + exp(E log(1 - p))).
std::vector<std::string> columns(int64_t) { return {"mean_log_p", "mean_log_1mp", "p_at_mean_logodds"}; }
void parameters(int64_t, const double *, const double *stats, std::vector<double> &out) {
  out.push_back(stats[0]);
  out.push_back(stats[1]);
  out.push_back(1.0 / (1.0 + std::exp(stats[1] - stats[0])));
}
std::vector<double> pointMass(double c, int64_t) {
  return {-std::log1p(std::exp(-c)), -std::log1p(std::exp(c))};
}

} // namespace

extern const FactorEntry kSigmoid = [] {
  FactorEntry e = arithmeticEntry(Family::Sigmoid, kMessages, kPatterns, kSymbols);
  e.outputColumns = columns;
  e.standardParameters = parameters;
  e.pointMass = pointMass;
  return e;
}();

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
