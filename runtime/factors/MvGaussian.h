//===- runtime/factors/MvGaussian.h - the MvGaussian family ---------------===//
//
// The multivariate Gaussian (mean, precision matrix) of dimension D with a
// constant or MvGaussian mean and a constant or Wishart precision: natural
// parameters (Lambda mu, -Lambda/2), statistics (E x, E x x^T), row-major.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

/// Scratch size (doubles) of the MvGaussian/Wishart kernels of dimension D.
#ifndef PPC_MV_SCRATCH
#define PPC_MV_SCRATCH(D) (3 * (D) * (D) + 2 * (D) + 1)
#endif

extern "C" {

// ===== MvGaussian(mean, precision), dimension D =====
// Kernels taking `scratch` need PPC_MV_SCRATCH(D) = 3*D*D + 2*D + 1 doubles.
/// returns 1 (stats unspecified) when -2 eta2 is not SPD
int ppc_mvgaussian_stats(int64_t D, const double* eta, double* stats, double* scratch);
/// A(eta) = mu^T Lambda mu / 2 - log|Lambda| / 2 (NaN when not SPD)
double ppc_mvgaussian_lognorm(int64_t D, const double* eta, double* scratch);
double ppc_mvgaussian_entropy(int64_t D, const double* eta, double* scratch);
double ppc_mvgaussian_kl(int64_t D, const double* eta_q, const double* eta_p, double* scratch);
/// x ~ N(m, L) -> x: dst += w * (E L E m, -E L / 2)
void ppc_mvgaussian_sample_avglog(int64_t D, const double* stats_mean, const double* stats_prec, double w,
                                  double* dst);
/// -> m: dst += w * (E L E x, -E L / 2)
void ppc_mvgaussian_mean_avglog(int64_t D, const double* stats_x, const double* stats_prec, double w,
                                double* dst);
/// -> L: dst += w * (-(E xx^T - E x E m^T - E m E x^T + E mm^T)/2, 1/2)
void ppc_mvgaussian_precision_avglog(int64_t D, const double* stats_x, const double* stats_mean, double w,
                                     double* dst);
/// (E log|L| - D log 2 pi)/2 - tr(E L (E xx^T - E x E m^T - E m E x^T + E mm^T))/2
double ppc_mvgaussian_avglogfactor(int64_t D, const double* stats_x, const double* stats_mean,
                                   const double* stats_prec);

/// n posteriors (rows of D + D*D): stats(eta) row by row; a row whose -2 eta2 is
/// not SPD gets NaN statistics (which the ELBO then reports).
void ppc_mvgaussian_stats_n(int64_t n, int64_t D, const double* eta, double* stats);
/// the sum of the n rows' entropies (NaN when one is not SPD)
double ppc_mvgaussian_entropy_n(int64_t n, int64_t D, const double* eta);
/// observed x_i (rows of D) with weights w_i, parent rows pidx_i (null: all row 0):
///   -> m: dst[r] += w_i (E L_r x_i, -E L_r / 2)
void ppc_mvgaussian_mean_avglog_obs_n(int64_t n, int64_t D, const double* x, const int64_t* pidx, const double* w,
                                      const double* stats_prec, double* dst);
///   -> L: dst[r] += w_i (-((x_i - E m)(x_i - E m)^T + Cov m)/2, 1/2)
void ppc_mvgaussian_precision_avglog_obs_n(int64_t n, int64_t D, const double* x, const int64_t* pidx,
                                           const double* w, const double* stats_mean, double* dst);
///   sum_i w_i ((E log|L| - D log 2 pi)/2 - ((x_i - E m)^T E L (x_i - E m) + tr(E L Cov m))/2)
double ppc_mvgaussian_avglogfactor_obs_n(int64_t n, int64_t D, const double* x, const int64_t* pidx,
                                         const double* w, const double* stats_mean, const double* stats_prec);

void ppc_mvgaussian_pointmass_stats(int64_t D, const double* x, double* stats); ///< (x, x x^T)

/// ppc_mvgaussian_stats_n that also stores each row's log|Lambda| (NaN where
/// Lambda is not positive definite), for ppc_mvgaussian_entropy_logdet_n
/// (codegen/transforms/EntropySharing.cpp).
void ppc_mvgaussian_stats_logdet_n(int64_t n, int64_t D, const double* eta, double* stats, double* logdet);
/// The entropies of n rows from their stored log|Lambda| (eta unused).
double ppc_mvgaussian_entropy_logdet_n(int64_t n, int64_t D, const double* eta, const double* logdet);

}  // extern "C"
