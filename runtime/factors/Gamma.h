//===- runtime/factors/Gamma.h - the Gamma family -------------------------===//
//
// The Gamma distribution (shape, rate) with a constant shape and a constant
// or Gamma rate: natural parameters (-rate, shape - 1), statistics
// (E x, E log x).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Gamma(shape, rate) =====
void ppc_gamma_stats_n(int64_t n, const double* eta, double* stats);    ///< (a/b, psi(a) - log b)
double ppc_gamma_lognorm_n(int64_t n, const double* eta);               ///< lgamma(a) - a log b
double ppc_gamma_entropy_n(int64_t n, const double* eta);
double ppc_gamma_kl_n(int64_t n, const double* eta_q, const double* eta_p);
/// x ~ Gamma(a, b) -> x: dst += w * (-E b, a - 1)
void ppc_gamma_sample_avglog(double shape, const double* stats_rate, double w, double* dst);
/// -> b: dst += w * (-E x, a)
void ppc_gamma_rate_avglog(double shape, const double* stats_x, double w, double* dst);
/// n observed x_i, rate row pidx_i: dst[2*pidx_i + :] += w_i (-x_i, a)
void ppc_gamma_rate_avglog_obs_n(int64_t n, double shape, const double* x, const int64_t* pidx,
                                 const double* w, double* dst);
/// a E log b - lgamma(a) + (a-1) E log x - E b E x
double ppc_gamma_avglogfactor(double shape, const double* stats_x, const double* stats_rate);
double ppc_gamma_avglogfactor_obs_n(int64_t n, double shape, const double* x, const int64_t* pidx,
                                    const double* w, const double* stats_rate);

void ppc_gamma_pointmass_stats(double x, double* stats);     ///< (x, log x)

}  // extern "C"
