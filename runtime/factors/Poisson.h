//===- runtime/factors/Poisson.h - the Poisson family ---------------------===//
//
// The Poisson distribution with a constant or Gamma rate: natural
// parameter log rate, statistic E x.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Poisson =====
void ppc_poisson_stats_n(int64_t n, const double* eta, double* mean);   ///< exp(eta)
double ppc_poisson_lognorm_n(int64_t n, const double* eta);
/// E[log x!] for x ~ Poisson(rate) (exact sum up to rate 1000, asymptotic beyond)
double ppc_poisson_elogfact(double rate);
double ppc_poisson_entropy_n(int64_t n, const double* eta);
double ppc_poisson_kl_n(int64_t n, const double* eta_q, const double* eta_p);
/// x ~ Poisson(l t) with exposure t -> l: dst += w * (-t, E x)
void ppc_poisson_rate_avglog(double ex, double exposure, double w, double* dst);
void ppc_poisson_rate_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                   double exposure, double* dst);
/// -> x: dst[0] += w * (E log l + log t)
void ppc_poisson_sample_avglog(const double* stats_rate, double exposure, double w, double* dst);
/// E x (E log l + log t) - t E l - E log x!
double ppc_poisson_avglogfactor(double ex, double elogfact_x, const double* stats_rate, double exposure);
/// observed counts: sum_i w_i (x_i (E log l + log t) - t E l - lgamma(x_i + 1))
double ppc_poisson_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                      double exposure, const double* stats_rate);

/// The posterior predictive of a missing observation (FactorEntry::predictiveKernel).
void ppc_poisson_predictive(const double* stats_rate, double exposure, double w, double* d);

}  // extern "C"
