//===- runtime/factors/Gamma.cpp - the Gamma family -----------------------===//
//
// The Gamma distribution (shape, rate) with a constant shape and a constant
// or Gamma rate: natural parameters (-rate, shape - 1), statistics
// (E x, E log x).
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Gamma.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== Gamma =====

PPC_ROW_KERNEL void ppc_gamma_stats_n(int64_t n, const double* eta, double* stats) {
  for (int64_t i = 0; i < n; ++i) {
    const double b = -eta[2 * i], a = eta[2 * i + 1] + 1.0;
    stats[2 * i] = a / b;
    stats[2 * i + 1] = vm::digamma_pos(a) - vm::log(b);
  }
}

PPC_ROW_KERNEL double ppc_gamma_lognorm_n(int64_t n, const double* eta) {
  return reduce8(n, [&](int64_t i) {
    const double b = -eta[2 * i], a = eta[2 * i + 1] + 1.0;
    return vm::lgamma_pos(a) - a * vm::log(b);
  });
}

PPC_ROW_KERNEL double ppc_gamma_entropy_n(int64_t n, const double* eta) {
  // H = a - log b + lgamma(a) + (1 - a) psi(a)
  return reduce8(n, [&](int64_t i) {
    const double b = -eta[2 * i], a = eta[2 * i + 1] + 1.0;
    return a - vm::log(b) + vm::lgamma_pos(a) + (1.0 - a) * vm::digamma_pos(a);
  });
}

PPC_ROW_KERNEL double ppc_gamma_kl_n(int64_t n, const double* eta_q, const double* eta_p) {
  // KL = (aq - ap) psi(aq) - lgamma(aq) + lgamma(ap) + ap (log bq - log bp) + aq (bp - bq) / bq
  return reduce8(n, [&](int64_t i) {
    const double bq = -eta_q[2 * i], aq = eta_q[2 * i + 1] + 1.0;
    const double bp = -eta_p[2 * i], ap = eta_p[2 * i + 1] + 1.0;
    return (aq - ap) * vm::digamma_pos(aq) - vm::lgamma_pos(aq) + vm::lgamma_pos(ap) +
           ap * (vm::log(bq) - vm::log(bp)) + aq * (bp - bq) / bq;
  });
}

void ppc_gamma_sample_avglog(double shape, const double* stats_rate, double w, double* dst) {
  dst[0] -= w * stats_rate[0];
  dst[1] += w * (shape - 1.0);
}

void ppc_gamma_rate_avglog(double shape, const double* stats_x, double w, double* dst) {
  dst[0] -= w * stats_x[0];
  dst[1] += w * shape;
}

void ppc_gamma_rate_avglog_obs_n(int64_t n, double shape, const double* x, const int64_t* pidx,
                                 const double* w, double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    double* d = dst + 2 * row(pidx, i);
    const double wi = weight(w, i);
    d[0] -= wi * x[i];
    d[1] += wi * shape;
  }
}

double ppc_gamma_avglogfactor(double shape, const double* stats_x, const double* stats_rate) {
  return shape * stats_rate[1] - vm::lgamma_pos(shape) + (shape - 1.0) * stats_x[1] - stats_rate[0] * stats_x[0];
}

double ppc_gamma_avglogfactor_obs_n(int64_t n, double shape, const double* x, const int64_t* pidx,
                                    const double* w, const double* stats_rate) {
  const double lg = vm::lgamma_pos(shape);
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double* s = stats_rate + 2 * row(pidx, i);
    total += weight(w, i) * (shape * s[1] - lg + (shape - 1.0) * vm::log(x[i]) - s[0] * x[i]);
  }
  return total;
}

void ppc_gamma_pointmass_stats(double x, double* stats) {
  stats[0] = x;
  stats[1] = vm::log(x);
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_gamma_stats_n)
PPC_DECLARE_CLONES(ppc_gamma_lognorm_n)
PPC_DECLARE_CLONES(ppc_gamma_entropy_n)
PPC_DECLARE_CLONES(ppc_gamma_kl_n)

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr MessageOperator kMessages[] = {{"ppc_gamma_sample_avglog", "", kReadParam2},
     kNoMessage,
     {"ppc_gamma_rate_avglog", "ppc_gamma_rate_avglog_obs_n", kReadSample}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_gamma_sample_avglog", "V1 S2 w d"},
    {"ppc_gamma_rate_avglog", "V1 S0 w d"},
    {"ppc_gamma_rate_avglog_obs_n", "1 V1 X0 0 W d"},
    {"ppc_gamma_avglogfactor", "V1 S0 S2"},
    {"ppc_gamma_avglogfactor_obs_n", "1 V1 X0 0 W S2"},
    {"ppc_gamma_entropy_n", "1 N0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_ROW_SYMBOL(ppc_gamma_stats_n),
    PPC_ROW_SYMBOL(ppc_gamma_lognorm_n),
    PPC_ROW_SYMBOL(ppc_gamma_entropy_n),
    PPC_ROW_SYMBOL(ppc_gamma_kl_n),
    PPC_SYMBOL(ppc_gamma_sample_avglog),
    PPC_SYMBOL(ppc_gamma_rate_avglog),
    PPC_SYMBOL(ppc_gamma_rate_avglog_obs_n),
    PPC_SYMBOL(ppc_gamma_avglogfactor),
    PPC_SYMBOL(ppc_gamma_avglogfactor_obs_n),
    PPC_SYMBOL(ppc_gamma_pointmass_stats),
};

int64_t width(int64_t k) {
  (void)k;
  return 2;
}

std::vector<double> pointMass(double c, int64_t k) {
  (void)k;
  return {c, std::log(c)};
}

std::vector<std::string> outputColumns(int64_t k) {
  (void)k;
  return {"shape", "rate"};
}

void standardParameters(int64_t k, [[maybe_unused]] const double *eta, [[maybe_unused]] const double *stats,
                        std::vector<double> &out) {
  (void)k;
  out.push_back(eta[1] + 1);
  out.push_back(-eta[0]);
}

int64_t naturalParameters(int64_t, const double *standard, double *eta, std::string &why) {
  for (int64_t i = 0; i < 2; ++i)
    if (!(standard[i] > 0) || !std::isfinite(standard[i])) {
      why = "a finite number > 0";
      return i;
    }
  eta[0] = -standard[1];
  eta[1] = standard[0] - 1;
  return -1;
}

std::vector<std::string> summaryColumns(int64_t) { return {"mean", "variance"}; }

void summaries(int64_t, const double *standard, std::vector<double> &out) {
  out.push_back(standard[0] / standard[1]);
  out.push_back(standard[0] / (standard[1] * standard[1]));
}

} // namespace

extern const FactorEntry kGamma = {
    {Family::Gamma, kMessages, "ppc_gamma_avglogfactor", "ppc_gamma_avglogfactor_obs_n", kReadSampleAnd2},
    "ppc_gamma_entropy_n",
    "ppc_gamma_stats_n",
    false,
    width,
    pointMass,
    outputColumns,
    standardParameters,
    kPatterns,
    kSymbols,
    naturalParameters,
    summaryColumns,
    summaries,
    "",
    nullptr,
    nullptr,
};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
