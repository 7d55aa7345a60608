//===- runtime/factors/Gates.h - conditionals and mixtures ----------------===//
//
// The gate operators of seed 001: a condition's posterior from its
// branches' evidence, and the messages in and out of a branch weighted by
// the probability of its case.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Gates (VMP conditionals: if / case / switch) =====
/// ell_k = log prior(c=k) + local ELBO of branch k. q = softmax(ell); returns
/// logsumexp(ell) = sum_k q_k ell_k + H(q), the gate's ELBO contribution at the optimum.
double ppc_cases_posterior(int64_t K, const double* ell, double* q);
/// sum_k q_k ell_k - sum_k q_k log q_k for a given q (0 log 0 = 0).
double ppc_cases_avglogfactor(int64_t K, const double* q, const double* ell);
/// cases -> Categorical selector c: dst[k] += w * branch_avglog (the branch's summed avglogfactors)
void ppc_cases_selector_avglog(int64_t k, double branch_avglog, double w, double* dst);
/// if/else on a Bernoulli c: dst[0] += w * (ell_true - ell_false)  (logit message)
void ppc_cases_bernoulli_avglog(double ell_true, double ell_false, double w, double* dst);
/// enter/exit of branch k: dst += q[k] * msg  (n doubles) -- a branch's message weighted by q(c=k)
void ppc_gate_accumulate(int64_t n, const double* q, int64_t k, const double* msg, double* dst);

}  // extern "C"
