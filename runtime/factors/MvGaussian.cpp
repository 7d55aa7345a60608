//===- runtime/factors/MvGaussian.cpp - the MvGaussian family -------------===//
//
// The multivariate Gaussian (mean, precision matrix) of dimension D with a
// constant or MvGaussian mean and a constant or Wishart precision: natural
// parameters (Lambda mu, -Lambda/2), statistics (E x, E x x^T), row-major.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/MvGaussian.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== MvGaussian =====

/// The statistics, and log|Lambda| in *logdet unless it is null.
PPC_KERNEL_INLINE int mvgaussianStats(int64_t D, const double* eta, double* stats, double* scratch,
                                      double* logdet = nullptr) {
  double* L = scratch;           // D*D
  double* cov = scratch + D * D; // D*D
  for (int64_t i = 0; i < D * D; ++i) L[i] = -2.0 * eta[D + i];
  if (!cholesky(D, L)) return 1;
  if (logdet) *logdet = logdetFromCholesky(D, L);
  choleskyInverse(D, L, cov);
  // mean_i = sum_j cov_ij h_j in increasing j, as axpys of cov's rows
  // (cov_ji = cov_ij, mirrored): a vectorized loop, not a chain of additions.
  for (int64_t i = 0; i < D; ++i) stats[i] = 0.0;
  for (int64_t j = 0; j < D; ++j) {
    const double h = eta[j];
    const double* row = cov + j * D;
    for (int64_t i = 0; i < D; ++i) stats[i] += row[i] * h;
  }
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) stats[D + i * D + j] = cov[i * D + j] + stats[i] * stats[j];
  return 0;
}

PPC_ROW_KERNEL int ppc_mvgaussian_stats(int64_t D, const double* eta, double* stats, double* scratch) {
  return mvgaussianStats(D, eta, stats, scratch);
}

PPC_KERNEL_INLINE double mvgaussianLognorm(int64_t D, const double* eta, double* scratch) {
  double* L = scratch;
  double* y = scratch + D * D;  // D
  for (int64_t i = 0; i < D * D; ++i) L[i] = -2.0 * eta[D + i];
  if (!cholesky(D, L)) return vm::kNaN;
  // mu^T Lambda mu = h^T Lambda^-1 h = |L^-1 h|^2
  double q = 0.0;
  for (int64_t i = 0; i < D; ++i) {
    double s = eta[i];
    for (int64_t k = 0; k < i; ++k) s -= L[i * D + k] * y[k];
    y[i] = s / L[i * D + i];
    q += y[i] * y[i];
  }
  return 0.5 * q - 0.5 * logdetFromCholesky(D, L);
}

PPC_ROW_KERNEL double ppc_mvgaussian_lognorm(int64_t D, const double* eta, double* scratch) {
  return mvgaussianLognorm(D, eta, scratch);
}

/// The entropy from log|Lambda|.
PPC_KERNEL_INLINE double mvgaussianEntropyOfLogdet(int64_t D, double logdet) {
  return 0.5 * static_cast<double>(D) * (1.0 + kLog2Pi) - 0.5 * logdet;
}

PPC_KERNEL_INLINE double mvgaussianEntropy(int64_t D, const double* eta, double* scratch) {
  double* L = scratch;
  for (int64_t i = 0; i < D * D; ++i) L[i] = -2.0 * eta[D + i];
  if (!cholesky(D, L)) return vm::kNaN;
  return mvgaussianEntropyOfLogdet(D, logdetFromCholesky(D, L));
}

PPC_ROW_KERNEL double ppc_mvgaussian_entropy(int64_t D, const double* eta, double* scratch) {
  return mvgaussianEntropy(D, eta, scratch);
}

PPC_KERNEL_INLINE double mvgaussianKl(int64_t D, const double* eta_q, const double* eta_p, double* scratch) {
  // KL = A(p) - A(q) - <eta_p - eta_q, E_q T>; E_q T needs D + D*D doubles: use the tail of scratch.
  double* stats = scratch + 2 * D * D + D;
  if (mvgaussianStats(D, eta_q, stats, scratch)) return vm::kNaN;
  const double Ap = mvgaussianLognorm(D, eta_p, scratch);
  const double Aq = mvgaussianLognorm(D, eta_q, scratch);
  double inner = 0.0;
  for (int64_t i = 0; i < D + D * D; ++i) inner += (eta_p[i] - eta_q[i]) * stats[i];
  return Ap - Aq - inner;
}

PPC_ROW_KERNEL double ppc_mvgaussian_kl(int64_t D, const double* eta_q, const double* eta_p, double* scratch) {
  return mvgaussianKl(D, eta_q, eta_p, scratch);
}

void ppc_mvgaussian_sample_avglog(int64_t D, const double* stats_mean, const double* stats_prec, double w,
                                  double* dst) {
  // w E[Lambda] E m as axpys of E[Lambda]'s rows (it is symmetric): a
  // vectorized loop, not a chain of additions per entry.
  for (int64_t j = 0; j < D; ++j) {
    const double h = w * stats_mean[j];
    const double* row = stats_prec + j * D;
    for (int64_t i = 0; i < D; ++i) dst[i] += h * row[i];
  }
  for (int64_t i = 0; i < D * D; ++i) dst[D + i] -= 0.5 * w * stats_prec[i];
}

void ppc_mvgaussian_mean_avglog(int64_t D, const double* stats_x, const double* stats_prec, double w,
                                double* dst) {
  ppc_mvgaussian_sample_avglog(D, stats_x, stats_prec, w, dst);  // symmetric in x and mean
}

void ppc_mvgaussian_precision_avglog(int64_t D, const double* stats_x, const double* stats_mean, double w,
                                     double* dst) {
  const double* ex = stats_x;
  const double* exx = stats_x + D;
  const double* em = stats_mean;
  const double* emm = stats_mean + D;
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) {
      const double c = exx[i * D + j] - ex[i] * em[j] - em[i] * ex[j] + emm[i * D + j];
      dst[i * D + j] -= 0.5 * w * c;
    }
  dst[D * D] += 0.5 * w;
}

double ppc_mvgaussian_avglogfactor(int64_t D, const double* stats_x, const double* stats_mean,
                                   const double* stats_prec) {
  const double* ex = stats_x;
  const double* exx = stats_x + D;
  const double* em = stats_mean;
  const double* emm = stats_mean + D;
  // tr(E[Lambda] C), C_ij = E x_i x_j - E x_i E m_j - E m_i E x_j + E m_i m_j
  // (symmetric: read by rows), in two vectors of four lanes and the rows'
  // last entries apart: a Gaussian mixture calls this three times a
  // component and iteration, and one chain of D^2 additions waited on each.
  SpdVec acc[2] = {};
  double rest = 0.0;
  for (int64_t i = 0; i < D; ++i) {
    const double *p = stats_prec + i * D, *xx = exx + i * D, *mm = emm + i * D;
    int64_t j = 0;
    for (; j + 4 <= D; j += 4) {
      const SpdVec c = PPC_SPD_LOAD(xx + j) - ex[i] * PPC_SPD_LOAD(em + j) - em[i] * PPC_SPD_LOAD(ex + j) +
                       PPC_SPD_LOAD(mm + j);
      acc[(j >> 2) & 1] += PPC_SPD_LOAD(p + j) * c;
    }
    for (; j < D; ++j) rest += p[j] * (xx[j] - ex[i] * em[j] - em[i] * ex[j] + mm[j]);
  }
  const SpdVec both = acc[0] + acc[1];
  const double tr = ((both[0] + both[1]) + (both[2] + both[3])) + rest;
  return 0.5 * (stats_prec[D * D] - static_cast<double>(D) * kLog2Pi) - 0.5 * tr;
}

namespace {
// (x - E m)^T A (x - E m) and tr(A Cov m) without forming Cov m: Cov m = E mm^T - E m E m^T.
inline double covTrace(int64_t D, const double* A, const double* em, const double* emm) {
  double tr = 0.0;
  for (int64_t i = 0; i < D; ++i) {
    const double* a = A + i * D;
    const double* c = emm + i * D;
    double s = 0.0;
    for (int64_t j = 0; j < D; ++j) s += a[j] * (c[j] - em[i] * em[j]);
    tr += s;
  }
  return tr;
}
inline double quadForm(int64_t D, const double* A, const double* x, const double* em) {
  double q = 0.0;
  for (int64_t i = 0; i < D; ++i) {
    const double* a = A + i * D;
    double s = 0.0;
    for (int64_t j = 0; j < D; ++j) s += a[j] * (x[j] - em[j]);
    q += (x[i] - em[i]) * s;
  }
  return q;
}
}  // namespace

PPC_ROW_KERNEL void ppc_mvgaussian_stats_n(int64_t n, int64_t D, const double* eta, double* stats) {
  const int64_t width = D + D * D;
  MvScratch scratch(D);
  for (int64_t i = 0; i < n; ++i)
    if (mvgaussianStats(D, eta + i * width, stats + i * width, scratch.p))
      for (int64_t j = 0; j < width; ++j) stats[i * width + j] = vm::kNaN;
}

PPC_ROW_KERNEL void ppc_mvgaussian_stats_logdet_n(int64_t n, int64_t D, const double* eta, double* stats,
                                                  double* logdet) {
  const int64_t width = D + D * D;
  MvScratch scratch(D);
  for (int64_t i = 0; i < n; ++i)
    if (mvgaussianStats(D, eta + i * width, stats + i * width, scratch.p, logdet + i)) {
      for (int64_t j = 0; j < width; ++j) stats[i * width + j] = vm::kNaN;
      logdet[i] = vm::kNaN;
    }
}

PPC_ROW_KERNEL double ppc_mvgaussian_entropy_logdet_n(int64_t n, int64_t D, const double* eta,
                                                      const double* logdet) {
  (void)eta;
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) total += mvgaussianEntropyOfLogdet(D, logdet[i]);
  return total;
}

PPC_ROW_KERNEL double ppc_mvgaussian_entropy_n(int64_t n, int64_t D, const double* eta) {
  MvScratch scratch(D);
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) total += mvgaussianEntropy(D, eta + i * (D + D * D), scratch.p);
  return total;
}

PPC_ROW_KERNEL void ppc_mvgaussian_mean_avglog_obs_n(int64_t n, int64_t D, const double* x, const int64_t* pidx,
                                                     const double* w, const double* stats_prec, double* dst) {
  const int64_t width = D + D * D, pwidth = D * D + 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double wi = weight(w, i);
    const double* L = stats_prec + r * pwidth;
    const double* xi = x + i * D;
    double* d = dst + r * width;
    for (int64_t a = 0; a < D; ++a) {
      double s = 0.0;
      for (int64_t b = 0; b < D; ++b) s += L[a * D + b] * xi[b];
      d[a] += wi * s;
    }
    const double h = -0.5 * wi;
    for (int64_t j = 0; j < D * D; ++j) d[D + j] += h * L[j];
  }
}

PPC_ROW_KERNEL void ppc_mvgaussian_precision_avglog_obs_n(int64_t n, int64_t D, const double* x,
                                                          const int64_t* pidx, const double* w,
                                                          const double* stats_mean, double* dst) {
  const int64_t width = D + D * D, pwidth = D * D + 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double h = -0.5 * weight(w, i);
    const double* em = stats_mean + r * width;
    const double* emm = em + D;
    const double* xi = x + i * D;
    double* d = dst + r * pwidth;
    for (int64_t a = 0; a < D; ++a) {
      const double ya = xi[a] - em[a];
      for (int64_t b = 0; b < D; ++b)
        d[a * D + b] += h * (ya * (xi[b] - em[b]) + emm[a * D + b] - em[a] * em[b]);
    }
    d[D * D] -= h;
  }
}

PPC_ROW_KERNEL double ppc_mvgaussian_avglogfactor_obs_n(int64_t n, int64_t D, const double* x, const int64_t* pidx,
                                                        const double* w, const double* stats_mean,
                                                        const double* stats_prec) {
  const int64_t width = D + D * D, pwidth = D * D + 1;
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double* em = stats_mean + r * width;
    const double* L = stats_prec + r * pwidth;
    const double q = quadForm(D, L, x + i * D, em) + covTrace(D, L, em, em + D);
    total += weight(w, i) * (0.5 * (L[D * D] - static_cast<double>(D) * kLog2Pi) - 0.5 * q);
  }
  return total;
}

void ppc_mvgaussian_pointmass_stats(int64_t D, const double* x, double* stats) {
  for (int64_t i = 0; i < D; ++i) stats[i] = x[i];
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) stats[D + i * D + j] = x[i] * x[j];
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_mvgaussian_stats)
PPC_DECLARE_CLONES(ppc_mvgaussian_lognorm)
PPC_DECLARE_CLONES(ppc_mvgaussian_entropy)
PPC_DECLARE_CLONES(ppc_mvgaussian_kl)
PPC_DECLARE_CLONES(ppc_mvgaussian_stats_n)
PPC_DECLARE_CLONES(ppc_mvgaussian_entropy_n)
PPC_DECLARE_CLONES(ppc_mvgaussian_stats_logdet_n)
PPC_DECLARE_CLONES(ppc_mvgaussian_entropy_logdet_n)
PPC_DECLARE_CLONES(ppc_mvgaussian_mean_avglog_obs_n)
PPC_DECLARE_CLONES(ppc_mvgaussian_precision_avglog_obs_n)
PPC_DECLARE_CLONES(ppc_mvgaussian_avglogfactor_obs_n)

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr MessageOperator kMessages[] = {{"ppc_mvgaussian_sample_avglog", "", kGaussianToSample},
     {"ppc_mvgaussian_mean_avglog", "ppc_mvgaussian_mean_avglog_obs_n", kGaussianToMean},
     {"ppc_mvgaussian_precision_avglog", "ppc_mvgaussian_precision_avglog_obs_n", kGaussianToPrecision},
     kNoMessage};

constexpr KernelPattern kPatterns[] = {
    {"ppc_mvgaussian_sample_avglog", "D0 S1 S2 w d"},
    {"ppc_mvgaussian_mean_avglog", "D0 S0 S2 w d"},
    {"ppc_mvgaussian_mean_avglog_obs_n", "1 D0 X0 0 W S2 d"},
    {"ppc_mvgaussian_precision_avglog", "D0 S0 S1 w d"},
    {"ppc_mvgaussian_precision_avglog_obs_n", "1 D0 X0 0 W S1 d"},
    {"ppc_mvgaussian_avglogfactor", "D0 S0 S1 S2"},
    {"ppc_mvgaussian_avglogfactor_obs_n", "1 D0 X0 0 W S1 S2"},
    {"ppc_mvgaussian_entropy_n", "1 D0 N0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_ROW_SYMBOL(ppc_mvgaussian_stats),
    PPC_ROW_SYMBOL(ppc_mvgaussian_lognorm),
    PPC_ROW_SYMBOL(ppc_mvgaussian_entropy),
    PPC_ROW_SYMBOL(ppc_mvgaussian_kl),
    PPC_SYMBOL(ppc_mvgaussian_sample_avglog),
    PPC_SYMBOL(ppc_mvgaussian_mean_avglog),
    PPC_SYMBOL(ppc_mvgaussian_precision_avglog),
    PPC_SYMBOL(ppc_mvgaussian_avglogfactor),
    PPC_ROW_SYMBOL(ppc_mvgaussian_stats_n),
    PPC_ROW_SYMBOL(ppc_mvgaussian_entropy_n),
    PPC_ROW_SYMBOL(ppc_mvgaussian_stats_logdet_n),
    PPC_ROW_SYMBOL(ppc_mvgaussian_entropy_logdet_n),
    PPC_ROW_SYMBOL(ppc_mvgaussian_mean_avglog_obs_n),
    PPC_ROW_SYMBOL(ppc_mvgaussian_precision_avglog_obs_n),
    PPC_ROW_SYMBOL(ppc_mvgaussian_avglogfactor_obs_n),
    PPC_SYMBOL(ppc_mvgaussian_pointmass_stats),
};

int64_t width(int64_t k) {
  return k + k * k;
}

std::vector<double> pointMass(double c, int64_t k) {
  std::vector<double> s(size_t(k), c);
  s.resize(size_t(k + k * k), c * c);
  return s;
}

std::vector<std::string> outputColumns(int64_t k) {
  std::vector<std::string> cols = catalogue::indexedColumns("mean_", k);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j)
      cols.push_back("cov_" + std::to_string(i) + "_" + std::to_string(j));
  return cols;
}

void standardParameters(int64_t k, [[maybe_unused]] const double *eta, [[maybe_unused]] const double *stats,
                        std::vector<double> &out) {
  // from the statistics (E x, E x x^T)
  for (int64_t i = 0; i < k; ++i)
    out.push_back(stats[i]);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j)
      out.push_back(stats[k + i * k + j] - stats[i] * stats[j]);
}

int64_t naturalParameters(int64_t k, const double *standard, double *eta, std::string &why) {
  for (int64_t i = 0; i < k + k * k; ++i)
    if (!std::isfinite(standard[i])) {
      why = "a finite number";
      return i;
    }
  const double *mean = standard, *cov = standard + k;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < i; ++j)
      if (std::abs(cov[i * k + j] - cov[j * k + i]) > 1e-9 * (std::abs(cov[i * k + j]) + std::abs(cov[j * k + i]))) {
        why = "equal to cov_" + std::to_string(j) + "_" + std::to_string(i) + " (a covariance is symmetric)";
        return k + i * k + j;
      }
  std::vector<double> L(cov, cov + k * k), precision(size_t(k * k));
  if (!cholesky(k, L.data())) {
    why = "part of a positive definite covariance (its Cholesky factorization fails)";
    return k;
  }
  choleskyInverse(k, L.data(), precision.data());
  for (int64_t i = 0; i < k; ++i) {
    double s = 0;
    for (int64_t j = 0; j < k; ++j)
      s += precision[i * k + j] * mean[j];
    eta[i] = s;
  }
  for (int64_t i = 0; i < k * k; ++i)
    eta[k + i] = -0.5 * precision[i];
  return -1;
}

} // namespace

extern const FactorEntry kMvGaussian = {
    {Family::MvGaussian, kMessages, "ppc_mvgaussian_avglogfactor", "ppc_mvgaussian_avglogfactor_obs_n", kGaussianElbo},
    "ppc_mvgaussian_entropy_n",
    "ppc_mvgaussian_stats_n",
    true,
    width,
    pointMass,
    outputColumns,
    standardParameters,
    kPatterns,
    kSymbols,
    naturalParameters,
    catalogue::noSummaryColumns,
    catalogue::noSummaries,
    "",
    nullptr,
    nullptr,
};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
