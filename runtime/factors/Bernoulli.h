//===- runtime/factors/Bernoulli.h - the Bernoulli family -----------------===//
//
// The Bernoulli distribution over {0, 1} with a Beta probability: the
// natural parameter is the logit, the statistic P(x = 1).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Bernoulli =====
void ppc_bernoulli_stats_n(int64_t n, const double* eta, double* p);     ///< p = sigmoid(eta)
double ppc_bernoulli_lognorm_n(int64_t n, const double* eta);            ///< sum softplus(eta)
double ppc_bernoulli_entropy_n(int64_t n, const double* p);              ///< from probabilities
double ppc_bernoulli_kl_n(int64_t n, const double* p_q, const double* p_p);
/// x ~ Bernoulli(p) -> p: dst += w * (E x, 1 - E x)
void ppc_bernoulli_p_avglog(double ex, double w, double* dst);
/// n observations/expectations ex_i (0/1 when observed): dst[2*pidx_i + (0,1)] += w_i (ex_i, 1-ex_i)
void ppc_bernoulli_p_avglog_obs_n(int64_t n, const double* ex, const int64_t* pidx, const double* w,
                                  double* dst);
/// -> x: dst[0] += w * (E log p - E log(1-p))
void ppc_bernoulli_sample_avglog(const double* stats_p, double w, double* dst);
/// E x E log p + (1 - E x) E log(1-p)
double ppc_bernoulli_avglogfactor(double ex, const double* stats_p);
double ppc_bernoulli_avglogfactor_obs_n(int64_t n, const double* ex, const int64_t* pidx, const double* w,
                                        const double* stats_p);

/// The posterior predictive of a missing observation (FactorEntry::predictiveKernel).
void ppc_bernoulli_predictive(const double* eta_p, const double* stats_p, double w, double* d);

}  // extern "C"
