//===- runtime/factors/Categorical.h - the Categorical family -------------===//
//
// The Categorical distribution over {0, ..., K-1}, with Dirichlet or Beta
// probabilities: n rows of K log-potentials, statistics the probabilities.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Categorical =====
/// rows of probabilities from natural parameters (softmax of each row)
void ppc_categorical_stats_n(int64_t n, int64_t K, const double* eta, double* probs);
/// sum_i logsumexp(eta_i)
double ppc_categorical_lognorm_n(int64_t n, int64_t K, const double* eta);
/// sum_i -sum_k q_ik log q_ik  (from probabilities; 0 log 0 = 0)
double ppc_categorical_entropy_n(int64_t n, int64_t K, const double* probs);
/// sum_i sum_k q_ik (log q_ik - log p_ik)  (from probabilities)
double ppc_categorical_kl_n(int64_t n, int64_t K, const double* probs_q, const double* probs_p);
/// x ~ Categorical(p) -> p: dst += w * q(x)          (probs_x = stats(x))
void ppc_categorical_probs_avglog(int64_t K, const double* probs_x, double w, double* dst);
/// observed x -> p: dst[x] += w                      (0 <= x < K)
void ppc_categorical_probs_avglog_obs(int64_t K, int64_t x, double w, double* dst);
/// n observations: dst[pidx_i * K + x_i] += w_i
void ppc_categorical_probs_avglog_obs_n(int64_t n, int64_t K, const int64_t* x, const int64_t* pidx,
                                        const double* w, double* dst);
/// -> x: dst += w * E log p
void ppc_categorical_sample_avglog(int64_t K, const double* elog_p, double w, double* dst);
/// sum_k q(x=k) E log p_k
double ppc_categorical_avglogfactor(int64_t K, const double* probs_x, const double* elog_p);
/// E log p_x for an observed x
double ppc_categorical_avglogfactor_obs(int64_t K, int64_t x, const double* elog_p);
/// sum_i w_i E log p[pidx_i, x_i]
double ppc_categorical_avglogfactor_obs_n(int64_t n, int64_t K, const int64_t* x, const int64_t* pidx,
                                          const double* w, const double* elog_p);

/// The posterior predictive of a missing observation (FactorEntry::predictiveKernel).
void ppc_categorical_predictive(int64_t K, const double* eta_p, const double* stats_p, double w, double* d);

}  // extern "C"
