//===- runtime/factors/Gaussian.h - the Gaussian family -------------------===//
//
// The Gaussian distribution (mean, precision) with a constant or Gaussian
// mean and a constant or Gamma precision: natural parameters
// (tau mu, -tau/2), statistics (E x, E x^2).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Gaussian(mean, precision) =====
void ppc_gaussian_stats_n(int64_t n, const double* eta, double* stats); ///< (mu, mu^2 + 1/tau)
double ppc_gaussian_lognorm_n(int64_t n, const double* eta);            ///< tau mu^2/2 - log(tau)/2
double ppc_gaussian_entropy_n(int64_t n, const double* eta);
double ppc_gaussian_kl_n(int64_t n, const double* eta_q, const double* eta_p);
/// x ~ N(m, t) -> x: dst += w * (E t E m, -E t / 2)
void ppc_gaussian_sample_avglog(const double* stats_mean, const double* stats_prec, double w, double* dst);
/// -> m: dst += w * (E t E x, -E t / 2)
void ppc_gaussian_mean_avglog(const double* stats_x, const double* stats_prec, double w, double* dst);
void ppc_gaussian_mean_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                    const double* stats_prec, double* dst);
/// -> t: dst += w * (-(E x^2 - 2 E x E m + E m^2)/2, 1/2)
void ppc_gaussian_precision_avglog(const double* stats_x, const double* stats_mean, double w, double* dst);
void ppc_gaussian_precision_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                         const double* stats_mean, double* dst);
/// (E log t - log 2 pi)/2 - E t (E x^2 - 2 E x E m + E m^2)/2
double ppc_gaussian_avglogfactor(const double* stats_x, const double* stats_mean, const double* stats_prec);
/// observed x_i with parents at row pidx_i (both mean and precision)
double ppc_gaussian_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                       const double* stats_mean, const double* stats_prec);

void ppc_gaussian_pointmass_stats(double x, double* stats);  ///< (x, x^2)

/// The posterior predictive of a missing observation (FactorEntry::predictiveKernel).
void ppc_gaussian_predictive(const double* stats_m, const double* eta_tau, const double* stats_tau, double w,
                             double* d);

}  // extern "C"
