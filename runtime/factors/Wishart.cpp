//===- runtime/factors/Wishart.cpp - the Wishart family -------------------===//
//
// The Wishart distribution (dof nu, scale S) over D x D precision matrices:
// natural parameters (-S^-1/2, (nu-D-1)/2), statistics (E Lambda,
// E log|Lambda|); E[Lambda] = nu S.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Wishart.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== Wishart =====

/// The statistics, and log|S| in *logdetS unless it is null.
PPC_KERNEL_INLINE int wishartStats(int64_t D, const double* eta, double* stats, double* scratch,
                                   double* logdetS = nullptr) {
  double* L = scratch;
  double* S = scratch + D * D;
  const WishartParts p = wishartParts(D, eta, L);
  if (!p.ok) return 1;
  if (logdetS) *logdetS = p.logdetS;
  choleskyInverse(D, L, S);
  for (int64_t i = 0; i < D * D; ++i) stats[i] = p.nu * S[i];
  stats[D * D] = wishartElogdet(D, p.nu, p.logdetS);
  return 0;
}

PPC_ROW_KERNEL int ppc_wishart_stats(int64_t D, const double* eta, double* stats, double* scratch) {
  return wishartStats(D, eta, stats, scratch);
}

PPC_KERNEL_INLINE double wishartLognormParams(int64_t D, double nu, double logdet_S) {
  return 0.5 * nu * logdet_S + 0.5 * nu * static_cast<double>(D) * kLog2 + lmvgamma(D, 0.5 * nu);
}

PPC_ROW_KERNEL double ppc_wishart_lognorm_params(int64_t D, double nu, double logdet_S) {
  return wishartLognormParams(D, nu, logdet_S);
}

PPC_KERNEL_INLINE double wishartLognorm(int64_t D, const double* eta, double* scratch) {
  const WishartParts p = wishartParts(D, eta, scratch);
  if (!p.ok) return vm::kNaN;
  return wishartLognormParams(D, p.nu, p.logdetS);
}

PPC_ROW_KERNEL double ppc_wishart_lognorm(int64_t D, const double* eta, double* scratch) {
  return wishartLognorm(D, eta, scratch);
}

/// H = A + nu D / 2 - (nu - D - 1)/2 E log|Lambda|, from nu and log|S|.
PPC_KERNEL_INLINE double wishartEntropyOf(int64_t D, double nu, double logdetS) {
  const double dd = static_cast<double>(D);
  return wishartLognormParams(D, nu, logdetS) + 0.5 * nu * dd - 0.5 * (nu - dd - 1.0) * wishartElogdet(D, nu, logdetS);
}

PPC_KERNEL_INLINE double wishartEntropy(int64_t D, const double* eta, double* scratch) {
  const WishartParts p = wishartParts(D, eta, scratch);
  if (!p.ok) return vm::kNaN;
  return wishartEntropyOf(D, p.nu, p.logdetS);
}

PPC_ROW_KERNEL double ppc_wishart_entropy(int64_t D, const double* eta, double* scratch) {
  return wishartEntropy(D, eta, scratch);
}

PPC_KERNEL_INLINE double wishartKl(int64_t D, const double* eta_q, const double* eta_p, double* scratch) {
  double* stats = scratch + 2 * D * D + D;  // D*D + 1 more doubles
  if (wishartStats(D, eta_q, stats, scratch)) return vm::kNaN;
  const double Ap = wishartLognorm(D, eta_p, scratch);
  const double Aq = wishartLognorm(D, eta_q, scratch);
  double inner = 0.0;
  for (int64_t i = 0; i < D * D + 1; ++i) inner += (eta_p[i] - eta_q[i]) * stats[i];
  return Ap - Aq - inner;
}

PPC_ROW_KERNEL double ppc_wishart_kl(int64_t D, const double* eta_q, const double* eta_p, double* scratch) {
  return wishartKl(D, eta_q, eta_p, scratch);
}

void ppc_wishart_sample_avglog(int64_t D, double nu, const double* S_inv, double w, double* dst) {
  for (int64_t i = 0; i < D * D; ++i) dst[i] -= 0.5 * w * S_inv[i];
  dst[D * D] += 0.5 * w * (nu - static_cast<double>(D) - 1.0);
}

double ppc_wishart_avglogfactor(int64_t D, double nu, const double* S_inv, double logdet_S,
                                const double* stats_L) {
  double tr = 0.0;
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) tr += S_inv[i * D + j] * stats_L[j * D + i];
  return 0.5 * (nu - static_cast<double>(D) - 1.0) * stats_L[D * D] - 0.5 * tr -
         wishartLognormParams(D, nu, logdet_S);
}

PPC_ROW_KERNEL void ppc_wishart_stats_n(int64_t n, int64_t D, const double* eta, double* stats) {
  const int64_t width = D * D + 1;
  MvScratch scratch(D);
  for (int64_t i = 0; i < n; ++i)
    if (wishartStats(D, eta + i * width, stats + i * width, scratch.p))
      for (int64_t j = 0; j < width; ++j) stats[i * width + j] = vm::kNaN;
}

PPC_ROW_KERNEL void ppc_wishart_stats_logdet_n(int64_t n, int64_t D, const double* eta, double* stats,
                                               double* logdetS) {
  const int64_t width = D * D + 1;
  MvScratch scratch(D);
  for (int64_t i = 0; i < n; ++i)
    if (wishartStats(D, eta + i * width, stats + i * width, scratch.p, logdetS + i)) {
      for (int64_t j = 0; j < width; ++j) stats[i * width + j] = vm::kNaN;
      logdetS[i] = vm::kNaN;
    }
}

PPC_ROW_KERNEL double ppc_wishart_entropy_logdet_n(int64_t n, int64_t D, const double* eta, const double* logdetS) {
  const int64_t width = D * D + 1;
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double nu = 2.0 * eta[i * width + D * D] + static_cast<double>(D + 1);
    total += wishartEntropyOf(D, nu, logdetS[i]);
  }
  return total;
}

PPC_ROW_KERNEL double ppc_wishart_entropy_n(int64_t n, int64_t D, const double* eta) {
  MvScratch scratch(D);
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) total += wishartEntropy(D, eta + i * (D * D + 1), scratch.p);
  return total;
}

void ppc_wishart_iso_sample_avglog(int64_t D, double nu, double s, double w, double* dst) {
  const double h = -0.5 * w / s;
  for (int64_t i = 0; i < D; ++i) dst[i * D + i] += h;
  dst[D * D] += 0.5 * w * (nu - static_cast<double>(D) - 1.0);
}

double ppc_wishart_iso_avglogfactor(int64_t D, double nu, double s, const double* stats_L) {
  double tr = 0.0;
  for (int64_t i = 0; i < D; ++i) tr += stats_L[i * D + i];
  const double dd = static_cast<double>(D);
  return 0.5 * (nu - dd - 1.0) * stats_L[D * D] - 0.5 * tr / s -
         wishartLognormParams(D, nu, dd * vm::log(s));
}

PPC_KERNEL_INLINE int wishartPointmassStats(int64_t D, const double* lambda, double* stats, double* scratch) {
  for (int64_t i = 0; i < D * D; ++i) {
    stats[i] = lambda[i];
    scratch[i] = lambda[i];
  }
  if (!cholesky(D, scratch)) return 1;
  stats[D * D] = logdetFromCholesky(D, scratch);
  return 0;
}

PPC_ROW_KERNEL int ppc_wishart_pointmass_stats(int64_t D, const double* lambda, double* stats, double* scratch) {
  return wishartPointmassStats(D, lambda, stats, scratch);
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_wishart_stats)
PPC_DECLARE_CLONES(ppc_wishart_lognorm_params)
PPC_DECLARE_CLONES(ppc_wishart_lognorm)
PPC_DECLARE_CLONES(ppc_wishart_entropy)
PPC_DECLARE_CLONES(ppc_wishart_kl)
PPC_DECLARE_CLONES(ppc_wishart_stats_n)
PPC_DECLARE_CLONES(ppc_wishart_entropy_n)
PPC_DECLARE_CLONES(ppc_wishart_stats_logdet_n)
PPC_DECLARE_CLONES(ppc_wishart_entropy_logdet_n)
PPC_DECLARE_CLONES(ppc_wishart_pointmass_stats)

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr MessageOperator kMessages[] = {{"ppc_wishart_iso_sample_avglog", "", kNone}, kNoMessage, kNoMessage, kNoMessage};

constexpr KernelPattern kPatterns[] = {
    {"ppc_wishart_iso_sample_avglog", "D0 V1 V2 w d"},
    {"ppc_wishart_iso_avglogfactor", "D0 V1 V2 S0"},
    {"ppc_wishart_entropy_n", "1 D0 N0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_ROW_SYMBOL(ppc_wishart_stats_n),
    PPC_ROW_SYMBOL(ppc_wishart_entropy_n),
    PPC_ROW_SYMBOL(ppc_wishart_stats_logdet_n),
    PPC_ROW_SYMBOL(ppc_wishart_entropy_logdet_n),
    PPC_SYMBOL(ppc_wishart_iso_sample_avglog),
    PPC_SYMBOL(ppc_wishart_iso_avglogfactor),
    PPC_ROW_SYMBOL(ppc_wishart_stats),
    PPC_ROW_SYMBOL(ppc_wishart_lognorm),
    PPC_ROW_SYMBOL(ppc_wishart_lognorm_params),
    PPC_ROW_SYMBOL(ppc_wishart_entropy),
    PPC_ROW_SYMBOL(ppc_wishart_kl),
    PPC_SYMBOL(ppc_wishart_sample_avglog),
    PPC_SYMBOL(ppc_wishart_avglogfactor),
    PPC_ROW_SYMBOL(ppc_wishart_pointmass_stats),
};

int64_t width(int64_t k) {
  return k * k + 1;
}

std::vector<double> pointMass(double c, int64_t k) {
  // (E L, E log|L|) of c I
  std::vector<double> s(size_t(k * k + 1), 0.0);
  for (int64_t i = 0; i < k; ++i)
    s[size_t(i * k + i)] = c;
  s[size_t(k * k)] = double(k) * std::log(c);
  return s;
}

std::vector<std::string> outputColumns(int64_t k) {
  std::vector<std::string> cols = {"dof"};
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j)
      cols.push_back("scale_" + std::to_string(i) + "_" + std::to_string(j));
  return cols;
}

void standardParameters(int64_t k, [[maybe_unused]] const double *eta, [[maybe_unused]] const double *stats,
                        std::vector<double> &out) {
  // dof = 2 eta2 + D + 1, scale = E[L] / dof
  const double dof = 2 * eta[k * k] + double(k + 1);
  out.push_back(dof);
  for (int64_t i = 0; i < k * k; ++i)
    out.push_back(stats[i] / dof);
}

int64_t naturalParameters(int64_t k, const double *standard, double *eta, std::string &why) {
  if (!(standard[0] > double(k - 1)) || !std::isfinite(standard[0])) {
    why = "a finite number > " + std::to_string(k - 1) + " (the dimension - 1)";
    return 0;
  }
  const double *scale = standard + 1;
  for (int64_t i = 0; i < k * k; ++i)
    if (!std::isfinite(scale[i])) {
      why = "a finite number";
      return 1 + i;
    }
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < i; ++j)
      if (std::abs(scale[i * k + j] - scale[j * k + i]) >
          1e-9 * (std::abs(scale[i * k + j]) + std::abs(scale[j * k + i]))) {
        why = "equal to scale_" + std::to_string(j) + "_" + std::to_string(i) + " (a scale matrix is symmetric)";
        return 1 + i * k + j;
      }
  std::vector<double> L(scale, scale + k * k), inverse(size_t(k * k));
  if (!cholesky(k, L.data())) {
    why = "part of a positive definite scale matrix (its Cholesky factorization fails)";
    return 1;
  }
  choleskyInverse(k, L.data(), inverse.data());
  for (int64_t i = 0; i < k * k; ++i)
    eta[i] = -0.5 * inverse[i];
  eta[k * k] = 0.5 * (standard[0] - double(k + 1));
  return -1;
}

std::vector<std::string> summaryColumns(int64_t k) {
  std::vector<std::string> cols;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j)
      cols.push_back("mean_" + std::to_string(i) + "_" + std::to_string(j));
  return cols;
}

void summaries(int64_t k, const double *standard, std::vector<double> &out) {
  for (int64_t i = 0; i < k * k; ++i)
    out.push_back(standard[0] * standard[1 + i]);
}

} // namespace

extern const FactorEntry kWishart = {
    {Family::Wishart, kMessages, "ppc_wishart_iso_avglogfactor", "", kReadSampleOnly},
    "ppc_wishart_entropy_n",
    "ppc_wishart_stats_n",
    true,
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
