//===- runtime/factors/Binomial.h - the Binomial family -------------------===//
//
// x successes out of n known trials with a Beta probability p: observed only
// (a latent count out of n would need a posterior over 0..n, which VMP in ppc
// does not have). The trials are a constant or a known input per element.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Binomial =====
/// n observations x_i of trials_i each -> p: dst[2*pidx_i + (0,1)] += w_i (x_i, trials_i - x_i)
void ppc_binomial_p_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w, double trials,
                                 double* dst);
/// sum_i w_i (x_i E log p + (trials_i - x_i) E log(1-p) + log C(trials_i, x_i))
double ppc_binomial_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                       double trials, const double* stats_p);

}  // extern "C"
