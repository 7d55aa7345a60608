//===- runtime/factors/Poisson.cpp - the Poisson family -------------------===//
//
// The Poisson distribution with a constant or Gamma rate: natural
// parameter log rate, statistic E x.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Poisson.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== Poisson =====

PPC_ROW_KERNEL void ppc_poisson_stats_n(int64_t n, const double* eta, double* mean) {
  for (int64_t i = 0; i < n; ++i) mean[i] = vm::exp(eta[i]);
}

PPC_ROW_KERNEL double ppc_poisson_lognorm_n(int64_t n, const double* eta) {
  return reduce8(n, [&](int64_t i) { return vm::exp(eta[i]); });
}

double ppc_poisson_elogfact(double rate) {
  if (!(rate > 0.0)) return 0.0;  // point mass at 0 (log 0! = 0)
  if (rate > 1000.0) {
    // H(Poisson) = log(2 pi e rate)/2 - 1/(12 rate) - 1/(24 rate^2) - 19/(360 rate^3) + O(rate^-4)
    // and E log x! = H - rate (1 - log rate).
    const double ir = 1.0 / rate;
    const double H = 0.5 * (kLog2Pi + 1.0 + vm::log(rate)) - ir * (1.0 / 12 + ir * (1.0 / 24 + ir * (19.0 / 360)));
    return H - rate * (1.0 - vm::log(rate));
  }
  // Exact sum over the window that holds all but ~1e-20 of the mass.
  const double sd = __builtin_sqrt(rate);
  const double lo = rate - 12.0 * sd - 10.0;
  const int64_t k0 = lo > 0.0 ? static_cast<int64_t>(lo) : 0;
  const int64_t k1 = static_cast<int64_t>(rate + 12.0 * sd + 20.0);
  const double lr = vm::log(rate);
  double s = 0.0;
  for (int64_t k = k0; k <= k1; ++k) {
    const double lf = vm::lgamma_pos(static_cast<double>(k) + 1.0);
    s += vm::exp(static_cast<double>(k) * lr - rate - lf) * lf;
  }
  return s;
}

PPC_ROW_KERNEL double ppc_poisson_entropy_n(int64_t n, const double* eta) {
  // -sum_k p_k log p_k directly (no cancellation between rate log rate and
  // E log x!); the asymptotic series above rate 1000.
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double rate = vm::exp(eta[i]);
    if (rate > 1000.0) {
      const double ir = 1.0 / rate;
      total += 0.5 * (kLog2Pi + 1.0 + eta[i]) - ir * (1.0 / 12 + ir * (1.0 / 24 + ir * (19.0 / 360)));
      continue;
    }
    const double sd = __builtin_sqrt(rate);
    const double lo = rate - 12.0 * sd - 10.0;
    const int64_t k0 = lo > 0.0 ? static_cast<int64_t>(lo) : 0;
    const int64_t k1 = static_cast<int64_t>(rate + 12.0 * sd + 20.0);
    double h = 0.0;
    for (int64_t k = k0; k <= k1; ++k) {
      const double lp = static_cast<double>(k) * eta[i] - rate - vm::lgamma_pos(static_cast<double>(k) + 1.0);
      h -= vm::exp(lp) * lp;
    }
    total += h;
  }
  return total;
}

PPC_ROW_KERNEL double ppc_poisson_kl_n(int64_t n, const double* eta_q, const double* eta_p) {
  // KL = lq (log lq - log lp) - lq + lp
  return reduce8(n, [&](int64_t i) {
    const double lq = vm::exp(eta_q[i]), lp = vm::exp(eta_p[i]);
    return lq * (eta_q[i] - eta_p[i]) - lq + lp;
  });
}

void ppc_poisson_rate_avglog(double ex, double exposure, double w, double* dst) {
  dst[0] -= w * exposure;
  dst[1] += w * ex;
}

void ppc_poisson_rate_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                   double exposure, double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    double* d = dst + 2 * row(pidx, i);
    const double wi = weight(w, i);
    d[0] -= wi * exposure;
    d[1] += wi * x[i];
  }
}

void ppc_poisson_sample_avglog(const double* stats_rate, double exposure, double w, double* dst) {
  dst[0] += w * (stats_rate[1] + std::log(exposure));
}

double ppc_poisson_avglogfactor(double ex, double elogfact_x, const double* stats_rate, double exposure) {
  return ex * (stats_rate[1] + std::log(exposure)) - exposure * stats_rate[0] - elogfact_x;
}

double ppc_poisson_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                      double exposure, const double* stats_rate) {
  const double logExposure = exposure == 1.0 ? 0.0 : vm::log(exposure);
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double* s = stats_rate + 2 * row(pidx, i);
    total += weight(w, i) * (x[i] * (s[1] + logExposure) - exposure * s[0] - vm::lgamma_pos(x[i] + 1.0));
  }
  return total;
}

// The posterior predictive of a missing observation: its mean E rate times
// the exposure (E rate is the first statistic of a Gamma posterior and of a
// constant's point mass); added times the case's weight w.
void ppc_poisson_predictive(const double* stats_rate, double exposure, double w, double* d) {
  d[0] += w * stats_rate[0] * exposure;
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_poisson_stats_n)
PPC_DECLARE_CLONES(ppc_poisson_lognorm_n)
PPC_DECLARE_CLONES(ppc_poisson_entropy_n)
PPC_DECLARE_CLONES(ppc_poisson_kl_n)

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

// Arguments: 0 the count, 1 the rate, 2 the exposure (known).
constexpr MessageOperator kMessages[] = {{"ppc_poisson_sample_avglog", "", kReadParam1},
     {"ppc_poisson_rate_avglog", "ppc_poisson_rate_avglog_obs_n", kReadSample},
     kNoMessage};

constexpr KernelPattern kPatterns[] = {
    {"ppc_poisson_predictive", "S1 V2 w d"},
    {"ppc_poisson_sample_avglog", "S1 V2 w d"},
    {"ppc_poisson_rate_avglog", "V0 V2 w d"},
    {"ppc_poisson_rate_avglog_obs_n", "1 X0 0 W V2 d"},
    {"ppc_poisson_avglogfactor_obs_n", "1 X0 0 W V2 S1"},
    {"ppc_poisson_entropy_n", "1 N0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_poisson_predictive),
    PPC_ROW_SYMBOL(ppc_poisson_stats_n),
    PPC_ROW_SYMBOL(ppc_poisson_lognorm_n),
    PPC_SYMBOL(ppc_poisson_elogfact),
    PPC_ROW_SYMBOL(ppc_poisson_entropy_n),
    PPC_ROW_SYMBOL(ppc_poisson_kl_n),
    PPC_SYMBOL(ppc_poisson_rate_avglog),
    PPC_SYMBOL(ppc_poisson_rate_avglog_obs_n),
    PPC_SYMBOL(ppc_poisson_sample_avglog),
    PPC_SYMBOL(ppc_poisson_avglogfactor),
    PPC_SYMBOL(ppc_poisson_avglogfactor_obs_n),
};

int64_t width(int64_t k) {
  (void)k;
  return 1;
}

std::vector<double> pointMass(double c, int64_t) { return {c}; }

std::vector<std::string> outputColumns(int64_t k) {
  (void)k;
  return {"rate"};
}

void standardParameters(int64_t k, [[maybe_unused]] const double *eta, [[maybe_unused]] const double *stats,
                        std::vector<double> &out) {
  (void)k;
  out.push_back(std::exp(eta[0]));
}

int64_t naturalParameters(int64_t, const double *standard, double *eta, std::string &why) {
  if (!(standard[0] > 0) || !std::isfinite(standard[0])) {
    why = "a finite number > 0";
    return 0;
  }
  eta[0] = std::log(standard[0]);
  return -1;
}

std::vector<std::string> predictiveColumns(int64_t) { return {"mean"}; }
void predictive(int64_t, const double *sums, std::vector<double> &out) { out.push_back(sums[0]); }

} // namespace

extern const FactorEntry kPoisson = {
    {Family::Poisson, kMessages, "ppc_poisson_avglogfactor", "ppc_poisson_avglogfactor_obs_n", kReadSampleAnd1},
    "ppc_poisson_entropy_n",
    "ppc_poisson_stats_n",
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
    "ppc_poisson_predictive",
    predictiveColumns,
    predictive,
};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
