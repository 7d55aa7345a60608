//===- runtime/factors/Bernoulli.cpp - the Bernoulli family ---------------===//
//
// The Bernoulli distribution over {0, 1} with a Beta probability: the
// natural parameter is the logit, the statistic P(x = 1).
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Bernoulli.h"

#include "runtime/kernels/KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== Bernoulli =====

PPC_ROW_KERNEL void ppc_bernoulli_stats_n(int64_t n, const double* eta, double* p) {
  for (int64_t i = 0; i < n; ++i) p[i] = 1.0 / (1.0 + vm::exp(-eta[i]));
}

PPC_ROW_KERNEL double ppc_bernoulli_lognorm_n(int64_t n, const double* eta) {
  return reduce8(n, [&](int64_t i) { return vm::softplus(eta[i]); });
}

PPC_ROW_KERNEL double ppc_bernoulli_entropy_n(int64_t n, const double* p) {
  return -reduce8(n, [&](int64_t i) {
    const double a = p[i], b = 1.0 - p[i];
    return (a > 0.0 ? a * vm::log(a) : 0.0) + (b > 0.0 ? b * vm::log(b) : 0.0);
  });
}

PPC_ROW_KERNEL double ppc_bernoulli_kl_n(int64_t n, const double* p_q, const double* p_p) {
  return reduce8(n, [&](int64_t i) {
    const double a = p_q[i], b = 1.0 - p_q[i];
    return (a > 0.0 ? a * (vm::log(a) - vm::log(p_p[i])) : 0.0) +
           (b > 0.0 ? b * (vm::log(b) - vm::log(1.0 - p_p[i])) : 0.0);
  });
}

void ppc_bernoulli_p_avglog(double ex, double w, double* dst) {
  dst[0] += w * ex;
  dst[1] += w * (1.0 - ex);
}

void ppc_bernoulli_p_avglog_obs_n(int64_t n, const double* ex, const int64_t* pidx, const double* w,
                                  double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    double* d = dst + 2 * row(pidx, i);
    const double wi = weight(w, i);
    d[0] += wi * ex[i];
    d[1] += wi * (1.0 - ex[i]);
  }
}

void ppc_bernoulli_sample_avglog(const double* stats_p, double w, double* dst) {
  dst[0] += w * (stats_p[0] - stats_p[1]);
}

double ppc_bernoulli_avglogfactor(double ex, const double* stats_p) {
  return (ex > 0.0 ? ex * stats_p[0] : 0.0) + (ex < 1.0 ? (1.0 - ex) * stats_p[1] : 0.0);
}

double ppc_bernoulli_avglogfactor_obs_n(int64_t n, const double* ex, const int64_t* pidx, const double* w,
                                        const double* stats_p) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) total += weight(w, i) * ppc_bernoulli_avglogfactor(ex[i], stats_p + 2 * row(pidx, i));
  return total;
}

// E sigmoid(e) from the logistic link's statistics (s0, s1) (Sigmoid.cpp):
// s0 - s1 = E e = mu and s0 + s1 = g(xi) = 2 log sigmoid(xi) - xi with
// xi^2 = E e^2, so Var e = xi^2 - mu^2 with xi found by bisection (g falls
// from g(|mu|) >= s0 + s1 to g(-(s0 + s1)) <= s0 + s1); then MacKay's probit
// approximation sigmoid(mu / sqrt(1 + pi Var e / 8)) (Bishop, PRML (4.153)).
// A constant c's point mass (log c, log(1 - c)) gives xi = |mu|, Var e = 0: c.
static double expectedSigmoid(const double* stats_p) {
  const double mu = stats_p[0] - stats_p[1], t = stats_p[0] + stats_p[1];
  if (!std::isfinite(mu) || !std::isfinite(t))
    return mu > 0 ? 1.0 : 0.0; // a certain constant
  auto g = [](double xi) { return -2.0 * std::log1p(std::exp(-xi)) - xi; };
  double lo = std::fabs(mu), hi = std::max(lo, -t);
  for (int it = 0; it < 200 && hi - lo > 1e-12 * (1.0 + hi); ++it) {
    const double mid = 0.5 * (lo + hi);
    (g(mid) > t ? lo : hi) = mid;
  }
  const double xi = 0.5 * (lo + hi), var = std::max(0.0, xi * xi - mu * mu);
  return 1.0 / (1.0 + std::exp(-mu / std::sqrt(1.0 + M_PI * var / 8.0)));
}

// The posterior predictive of a missing observation: P(x = 1) = E p, from
// p's Beta posterior (alpha / (alpha + beta)), a constant's point mass or
// the logistic link's statistics (expectedSigmoid); added times the case's
// weight w.
void ppc_bernoulli_predictive(const double* eta_p, const double* stats_p, double w, double* d) {
  const double m = eta_p ? (eta_p[0] + 1.0) / (eta_p[0] + eta_p[1] + 2.0) : expectedSigmoid(stats_p);
  d[0] += w * m;
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_bernoulli_stats_n)
PPC_DECLARE_CLONES(ppc_bernoulli_lognorm_n)
PPC_DECLARE_CLONES(ppc_bernoulli_entropy_n)
PPC_DECLARE_CLONES(ppc_bernoulli_kl_n)

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr MessageOperator kMessages[] = {{"ppc_bernoulli_sample_avglog", "", kReadParam1},
     {"ppc_bernoulli_p_avglog", "ppc_bernoulli_p_avglog_obs_n", kReadSample}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_bernoulli_predictive", "Q1 S1 w d"},
    {"ppc_bernoulli_sample_avglog", "S1 w d"},
    {"ppc_bernoulli_p_avglog", "V0 w d"},
    {"ppc_bernoulli_p_avglog_obs_n", "1 X0 0 W d"},
    {"ppc_bernoulli_avglogfactor", "V0 S1"},
    {"ppc_bernoulli_avglogfactor_obs_n", "1 X0 0 W S1"},
    {"ppc_bernoulli_entropy_n", "1 S0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_bernoulli_predictive),
    PPC_ROW_SYMBOL(ppc_bernoulli_stats_n),
    PPC_ROW_SYMBOL(ppc_bernoulli_lognorm_n),
    PPC_ROW_SYMBOL(ppc_bernoulli_entropy_n),
    PPC_ROW_SYMBOL(ppc_bernoulli_kl_n),
    PPC_SYMBOL(ppc_bernoulli_p_avglog),
    PPC_SYMBOL(ppc_bernoulli_p_avglog_obs_n),
    PPC_SYMBOL(ppc_bernoulli_sample_avglog),
    PPC_SYMBOL(ppc_bernoulli_avglogfactor),
    PPC_SYMBOL(ppc_bernoulli_avglogfactor_obs_n),
};

int64_t width(int64_t k) {
  (void)k;
  return 1;
}

std::vector<double> pointMass(double c, int64_t) { return {c}; }

std::vector<std::string> outputColumns(int64_t k) {
  (void)k;
  return {"p"};
}

void standardParameters(int64_t k, [[maybe_unused]] const double *eta, [[maybe_unused]] const double *stats,
                        std::vector<double> &out) {
  (void)k;
  out.push_back(stats[0]);
}

int64_t naturalParameters(int64_t, const double *standard, double *eta, std::string &why) {
  const double p = standard[0];
  if (!(p >= 0 && p <= 1)) {
    why = "a probability (from 0 to 1)";
    return 0;
  }
  // log-odds; a certain outcome as the largest finite one exp() keeps
  eta[0] = std::clamp(std::log(p) - std::log1p(-p), -700.0, 700.0);
  return -1;
}

std::vector<std::string> predictiveColumns(int64_t) { return {"p"}; }
void predictive(int64_t, const double *sums, std::vector<double> &out) { out.push_back(sums[0]); }

} // namespace

extern const FactorEntry kBernoulli = {
    {Family::Bernoulli, kMessages, "ppc_bernoulli_avglogfactor", "ppc_bernoulli_avglogfactor_obs_n", kReadSampleAnd1},
    "ppc_bernoulli_entropy_n",
    "ppc_bernoulli_stats_n",
    false,
    width,
    pointMass,
    outputColumns,
    standardParameters,
    kPatterns,
    kSymbols,
    naturalParameters,
    catalogue::noSummaryColumns,
    catalogue::noSummaries,
    "ppc_bernoulli_predictive",
    predictiveColumns,
    predictive,
};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
