//===- runtime/factors/Gaussian.cpp - the Gaussian family -----------------===//
//
// The Gaussian distribution (mean, precision) with a constant or Gaussian
// mean and a constant or Gamma precision: natural parameters
// (tau mu, -tau/2), statistics (E x, E x^2).
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Gaussian.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== Gaussian =====

PPC_ROW_KERNEL void ppc_gaussian_stats_n(int64_t n, const double* eta, double* stats) {
  for (int64_t i = 0; i < n; ++i) {
    const double tau = -2.0 * eta[2 * i + 1];
    const double mu = eta[2 * i] / tau;
    stats[2 * i] = mu;
    stats[2 * i + 1] = mu * mu + 1.0 / tau;
  }
}

PPC_ROW_KERNEL double ppc_gaussian_lognorm_n(int64_t n, const double* eta) {
  return reduce8(n, [&](int64_t i) {
    const double tau = -2.0 * eta[2 * i + 1];
    return 0.5 * eta[2 * i] * eta[2 * i] / tau - 0.5 * vm::log(tau);
  });
}

PPC_ROW_KERNEL double ppc_gaussian_entropy_n(int64_t n, const double* eta) {
  return reduce8(n, [&](int64_t i) { return 0.5 * (1.0 + kLog2Pi - vm::log(-2.0 * eta[2 * i + 1])); });
}

PPC_ROW_KERNEL double ppc_gaussian_kl_n(int64_t n, const double* eta_q, const double* eta_p) {
  // KL = (log(tq/tp) + tp/tq + tp (mq - mp)^2 - 1) / 2
  return reduce8(n, [&](int64_t i) {
    const double tq = -2.0 * eta_q[2 * i + 1], tp = -2.0 * eta_p[2 * i + 1];
    const double d = eta_q[2 * i] / tq - eta_p[2 * i] / tp;
    return 0.5 * (vm::log(tq) - vm::log(tp) + tp / tq + tp * d * d - 1.0);
  });
}

void ppc_gaussian_sample_avglog(const double* stats_mean, const double* stats_prec, double w, double* dst) {
  dst[0] += w * stats_prec[0] * stats_mean[0];
  dst[1] -= 0.5 * w * stats_prec[0];
}

void ppc_gaussian_mean_avglog(const double* stats_x, const double* stats_prec, double w, double* dst) {
  dst[0] += w * stats_prec[0] * stats_x[0];
  dst[1] -= 0.5 * w * stats_prec[0];
}

void ppc_gaussian_mean_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                    const double* stats_prec, double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double wt = weight(w, i) * stats_prec[2 * r];
    dst[2 * r] += wt * x[i];
    dst[2 * r + 1] -= 0.5 * wt;
  }
}

void ppc_gaussian_precision_avglog(const double* stats_x, const double* stats_mean, double w, double* dst) {
  dst[0] -= 0.5 * w * (stats_x[1] - 2.0 * stats_x[0] * stats_mean[0] + stats_mean[1]);
  dst[1] += 0.5 * w;
}

void ppc_gaussian_precision_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                         const double* stats_mean, double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double* m = stats_mean + 2 * r;
    const double wi = weight(w, i);
    dst[2 * r] -= 0.5 * wi * (x[i] * x[i] - 2.0 * x[i] * m[0] + m[1]);
    dst[2 * r + 1] += 0.5 * wi;
  }
}

double ppc_gaussian_avglogfactor(const double* stats_x, const double* stats_mean, const double* stats_prec) {
  const double q = stats_x[1] - 2.0 * stats_x[0] * stats_mean[0] + stats_mean[1];
  return 0.5 * (stats_prec[1] - kLog2Pi) - 0.5 * stats_prec[0] * q;
}

double ppc_gaussian_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                       const double* stats_mean, const double* stats_prec) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double* m = stats_mean + 2 * r;
    const double* t = stats_prec + 2 * r;
    const double q = x[i] * x[i] - 2.0 * x[i] * m[0] + m[1];
    total += weight(w, i) * (0.5 * (t[1] - kLog2Pi) - 0.5 * t[0] * q);
  }
  return total;
}

void ppc_gaussian_pointmass_stats(double x, double* stats) {
  stats[0] = x;
  stats[1] = x * x;
}

// The posterior predictive of a missing observation: E x = E m and
// E x^2 = E m^2 + E[1/tau], with E[1/tau] = rate / (shape - 1) for a Gamma
// posterior (infinite for shape <= 1) or 1/c for a constant; added times
// the case's weight w (the mean and variance of a mixture follow).
void ppc_gaussian_predictive(const double* stats_m, const double* eta_tau, const double* stats_tau, double w,
                             double* d) {
  double inverse;
  if (eta_tau)
    inverse = eta_tau[1] > 0.0 ? -eta_tau[0] / eta_tau[1] : vm::kInf;
  else
    inverse = 1.0 / stats_tau[0];
  d[0] += w * stats_m[0];
  d[1] += w * (stats_m[1] + inverse);
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_gaussian_stats_n)
PPC_DECLARE_CLONES(ppc_gaussian_lognorm_n)
PPC_DECLARE_CLONES(ppc_gaussian_entropy_n)
PPC_DECLARE_CLONES(ppc_gaussian_kl_n)

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr MessageOperator kMessages[] = {{"ppc_gaussian_sample_avglog", "", kGaussianToSample},
     {"ppc_gaussian_mean_avglog", "ppc_gaussian_mean_avglog_obs_n", kGaussianToMean},
     {"ppc_gaussian_precision_avglog", "ppc_gaussian_precision_avglog_obs_n", kGaussianToPrecision}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_gaussian_predictive", "S1 Q2 S2 w d"},
    {"ppc_gaussian_sample_avglog", "S1 S2 w d"},
    {"ppc_gaussian_mean_avglog", "S0 S2 w d"},
    {"ppc_gaussian_mean_avglog_obs_n", "1 X0 0 W S2 d"},
    {"ppc_gaussian_precision_avglog", "S0 S1 w d"},
    {"ppc_gaussian_precision_avglog_obs_n", "1 X0 0 W S1 d"},
    {"ppc_gaussian_avglogfactor", "S0 S1 S2"},
    {"ppc_gaussian_avglogfactor_obs_n", "1 X0 0 W S1 S2"},
    {"ppc_gaussian_entropy_n", "1 N0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_gaussian_predictive),
    PPC_ROW_SYMBOL(ppc_gaussian_stats_n),
    PPC_ROW_SYMBOL(ppc_gaussian_lognorm_n),
    PPC_ROW_SYMBOL(ppc_gaussian_entropy_n),
    PPC_ROW_SYMBOL(ppc_gaussian_kl_n),
    PPC_SYMBOL(ppc_gaussian_sample_avglog),
    PPC_SYMBOL(ppc_gaussian_mean_avglog),
    PPC_SYMBOL(ppc_gaussian_mean_avglog_obs_n),
    PPC_SYMBOL(ppc_gaussian_precision_avglog),
    PPC_SYMBOL(ppc_gaussian_precision_avglog_obs_n),
    PPC_SYMBOL(ppc_gaussian_avglogfactor),
    PPC_SYMBOL(ppc_gaussian_avglogfactor_obs_n),
    PPC_SYMBOL(ppc_gaussian_pointmass_stats),
};

int64_t width(int64_t k) {
  (void)k;
  return 2;
}

std::vector<double> pointMass(double c, int64_t k) {
  (void)k;
  return {c, c * c};
}

std::vector<std::string> outputColumns(int64_t k) {
  (void)k;
  return {"mean", "variance"};
}

void standardParameters(int64_t k, [[maybe_unused]] const double *eta, [[maybe_unused]] const double *stats,
                        std::vector<double> &out) {
  (void)k;
  const double tau = -2 * eta[1];
  out.push_back(eta[0] / tau);
  out.push_back(1 / tau);
}

int64_t naturalParameters(int64_t, const double *standard, double *eta, std::string &why) {
  if (!std::isfinite(standard[0])) {
    why = "a finite number";
    return 0;
  }
  if (!(standard[1] > 0) || !std::isfinite(standard[1])) {
    why = "a finite number > 0";
    return 1;
  }
  const double tau = 1 / standard[1];
  eta[0] = standard[0] * tau;
  eta[1] = -0.5 * tau;
  return -1;
}

std::vector<std::string> predictiveColumns(int64_t) { return {"mean", "variance"}; }
void predictive(int64_t, const double *sums, std::vector<double> &out) {
  out.push_back(sums[0]);
  out.push_back(sums[1] - sums[0] * sums[0]);
}

} // namespace

extern const FactorEntry kGaussian = {
    {Family::Gaussian, kMessages, "ppc_gaussian_avglogfactor", "ppc_gaussian_avglogfactor_obs_n", kGaussianElbo},
    "ppc_gaussian_entropy_n",
    "ppc_gaussian_stats_n",
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
    "ppc_gaussian_predictive",
    predictiveColumns,
    predictive,
};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
