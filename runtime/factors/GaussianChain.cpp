//===- runtime/factors/GaussianChain.cpp - a chain of Gaussians -----------===//
//
// A linear-Gaussian state-space model's states, x_0 ~ Gaussian(m0, p0),
// x_t ~ Gaussian(a x_{t-1}, tau), with a structured posterior: one Gaussian
// per chain, whose precision is tridiagonal, updated by the smoother (an
// LDL^T elimination of the tridiagonal precision: the information form of
// the Rauch-Tung-Striebel smoother), its means and the diagonal and first
// off-diagonal of its covariance. The layout of a row is in GaussianChain.h.
//
// The ELBO terms E log p(x) + H(q(x)) decompose over the elements: the
// entropy of a Gaussian chain is H(x_0) + sum_t H(x_t | x_{t-1}), each from
// one row's moments.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/GaussianChain.h"

#include <cmath>
#include <vector>

namespace {
constexpr int64_t kWidth = 6;
constexpr double kLog2Pi = 1.8378770664093454836;
constexpr double kLog2PiE = 2.8378770664093454836;
} // namespace

extern "C" {

void ppc_gchain_sample_avglog(int64_t pos, const double* stats_m0, const double* stats_p0, const double* stats_a,
                              const double* stats_tau, double w, double* dst) {
  if (pos == 0) {
    dst[0] += w * stats_p0[0] * stats_m0[0];
    dst[1] -= w * 0.5 * stats_p0[0];
    dst[5] += w;
    return;
  }
  dst[1] -= w * 0.5 * stats_tau[0];
  dst[2] += w * stats_tau[0] * stats_a[0];
  dst[3] -= w * 0.5 * stats_tau[0] * stats_a[1];
}

void ppc_gchain_to_initial_mean(const double* stats_x, const double* stats_p0, double w, double* dst) {
  if (stats_x[5] == 0.0)
    return;
  dst[0] += w * stats_x[5] * stats_p0[0] * stats_x[0];
  dst[1] -= w * stats_x[5] * 0.5 * stats_p0[0];
}

void ppc_gchain_to_initial_precision(const double* stats_x, const double* stats_m0, double w, double* dst) {
  if (stats_x[5] == 0.0)
    return;
  dst[0] -= w * stats_x[5] * 0.5 * (stats_x[1] - 2.0 * stats_m0[0] * stats_x[0] + stats_m0[1]);
  dst[1] += w * stats_x[5] * 0.5;
}

void ppc_gchain_to_coefficient(const double* stats_x, const double* stats_tau, double w, double* dst) {
  if (stats_x[5] != 0.0)
    return;
  dst[0] += w * stats_tau[0] * stats_x[2];
  dst[1] -= w * 0.5 * stats_tau[0] * stats_x[3];
}

void ppc_gchain_to_precision(const double* stats_x, const double* stats_a, double w, double* dst) {
  if (stats_x[5] != 0.0)
    return;
  dst[0] -= w * 0.5 * (stats_x[1] - 2.0 * stats_a[0] * stats_x[2] + stats_a[1] * stats_x[3]);
  dst[1] += w * 0.5;
}

void ppc_gchain_stats(int64_t T, const double* eta, double* stats) {
  if (T <= 0)
    return;
  const size_t n = static_cast<size_t>(T);
  // The precision: diagonal lam_t = -2 (J_t + q_{t+1}), below it b_t = -o_t.
  std::vector<double> d(n), l(n, 0.0), z(n), mu(n), var(n), cov(n, 0.0);
  for (size_t t = 0; t < n; ++t) {
    const double* e = eta + t * kWidth;
    const double next = t + 1 < n ? eta[(t + 1) * kWidth + 3] : 0.0;
    const double lam = -2.0 * (e[1] + next);
    if (t == 0) {
      d[t] = lam;
      z[t] = e[0];
    } else {
      const double b = -e[2];
      l[t] = b / d[t - 1];
      d[t] = lam - l[t] * b;
      z[t] = e[0] - l[t] * z[t - 1];
    }
  }
  mu[n - 1] = z[n - 1] / d[n - 1];
  var[n - 1] = 1.0 / d[n - 1];
  for (size_t t = n - 1; t-- > 0;) {
    mu[t] = z[t] / d[t] - l[t + 1] * mu[t + 1];
    cov[t + 1] = -l[t + 1] * var[t + 1]; // Cov(x_t, x_{t+1})
    var[t] = 1.0 / d[t] - l[t + 1] * cov[t + 1];
  }
  for (size_t t = 0; t < n; ++t) {
    double* s = stats + t * kWidth;
    s[0] = mu[t];
    s[1] = var[t] + mu[t] * mu[t];
    if (t == 0) {
      s[2] = s[3] = s[4] = 0.0;
    } else {
      s[2] = cov[t] + mu[t] * mu[t - 1];
      s[3] = var[t - 1] + mu[t - 1] * mu[t - 1];
      s[4] = mu[t - 1];
    }
    s[5] = eta[t * kWidth + 5];
  }
}

double ppc_gchain_avglogfactor(const double* stats_x, const double* stats_m0, const double* stats_p0,
                               const double* stats_a, const double* stats_tau) {
  if (stats_x[5] != 0.0)
    return 0.5 * (stats_p0[1] - kLog2Pi) -
           0.5 * stats_p0[0] * (stats_x[1] - 2.0 * stats_m0[0] * stats_x[0] + stats_m0[1]);
  return 0.5 * (stats_tau[1] - kLog2Pi) -
         0.5 * stats_tau[0] * (stats_x[1] - 2.0 * stats_a[0] * stats_x[2] + stats_a[1] * stats_x[3]);
}

double ppc_gchain_entropy_n(int64_t n, const double* stats) {
  double h = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double* s = stats + i * kWidth;
    const double v = s[1] - s[0] * s[0];
    if (s[5] != 0.0) {
      h += 0.5 * (kLog2PiE + std::log(v));
      continue;
    }
    const double c = s[2] - s[0] * s[4], vp = s[3] - s[4] * s[4];
    h += 0.5 * (kLog2PiE + std::log(v - c * c / vp));
  }
  return h;
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

namespace ppc::rt::factors {

namespace {

constexpr MessageOperator kMessages[] = {{"ppc_gchain_sample_avglog", "", catalogue::kStateChainToChain},
                                         {"ppc_gchain_to_initial_mean", "", catalogue::kStateChainToInitialMean},
                                         {"ppc_gchain_to_initial_precision", "", catalogue::kStateChainToInitialPrecision},
                                         {"ppc_gchain_to_coefficient", "", catalogue::kStateChainToTransition},
                                         {"ppc_gchain_to_precision", "", catalogue::kStateChainToPrecision}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_gchain_sample_avglog", "P S1 S2 S3 S4 w d"},
    {"ppc_gchain_to_initial_mean", "S0 S2 w d"},
    {"ppc_gchain_to_initial_precision", "S0 S1 w d"},
    {"ppc_gchain_to_coefficient", "S0 S4 w d"},
    {"ppc_gchain_to_precision", "S0 S3 w d"},
    {"ppc_gchain_avglogfactor", "S0 S1 S2 S3 S4"},
    {"ppc_gchain_entropy_n", "1 S0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_gchain_sample_avglog),   PPC_SYMBOL(ppc_gchain_to_initial_mean),
    PPC_SYMBOL(ppc_gchain_to_initial_precision), PPC_SYMBOL(ppc_gchain_to_coefficient),
    PPC_SYMBOL(ppc_gchain_to_precision),    PPC_SYMBOL(ppc_gchain_stats),
    PPC_SYMBOL(ppc_gchain_avglogfactor),    PPC_SYMBOL(ppc_gchain_entropy_n),
};

int64_t width(int64_t) { return kWidth; }
std::vector<double> pointMass(double c, int64_t) { return {c, c * c}; }
std::vector<std::string> outputColumns(int64_t) { return {"mean", "variance"}; }
void standardParameters(int64_t, const double *, const double *stats, std::vector<double> &out) {
  out.push_back(stats[0]);
  out.push_back(stats[1] - stats[0] * stats[0]);
}

} // namespace

extern const FactorEntry kGaussianChain = {
    {Family::GaussianChain, kMessages, "ppc_gchain_avglogfactor", "", catalogue::kStateChainElbo},
    "ppc_gchain_entropy_n",
    "ppc_gchain_stats",
    false,
    width,
    pointMass,
    outputColumns,
    standardParameters,
    kPatterns,
    kSymbols,
    nullptr, // a chain's saved marginals do not determine its covariances: not givable
    catalogue::noSummaryColumns,
    catalogue::noSummaries,
    "",
    nullptr,
    nullptr,
};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
