//===- runtime/factors/Dirichlet.h - the Dirichlet family -----------------===//
//
// The Dirichlet distribution over the simplex (and the symmetric prior of
// LDA's topics and documents): n rows of K, natural parameters alpha - 1,
// statistics E log p.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Dirichlet (and Beta as K = 2), n rows of K =====
/// elog[i,k] = psi(alpha[i,k]) - psi(sum_k alpha[i,k])
void ppc_dirichlet_elog_n(int64_t n, int64_t K, const double* alpha, double* elog);
/// stats from natural parameters: alpha = eta + 1
void ppc_dirichlet_stats_n(int64_t n, int64_t K, const double* eta, double* elog);
/// One row's exponential statistics, as ppc_dirichlet_stats_n then
/// ppc_exp_shifted_n compute them (exp[k] = exp(E log p_k - *shift), the
/// largest entry near 1) but without the statistics and their logarithms;
/// equal to rounding, not bit for bit (codegen/transforms/DeferStats.cpp).
void ppc_dirichlet_exp_stats(int64_t K, const double* eta, double* exp, double* shift);
/// sum_i A(eta_i) = sum_i [sum_k lgamma(alpha_ik) - lgamma(sum_k alpha_ik)]
double ppc_dirichlet_lognorm_n(int64_t n, int64_t K, const double* eta);
/// `elog`: the rows' statistics (ppc_dirichlet_stats_n of eta). The entropy
/// is then log B(alpha) - sum_k (alpha_k - 1) E log p_k: one lgamma per entry
/// and no digamma (the statistics already hold them).
double ppc_dirichlet_entropy_n(int64_t n, int64_t K, const double* eta, const double* elog);
/// ppc_dirichlet_stats_n, and each row's log normalizer A(eta_i) (as
/// ppc_dirichlet_lognorm_n) in lognorm[i]: its lgamma share the digammas'
/// shifts and logarithms (codegen/EntropySharing.cpp).
void ppc_dirichlet_stats_lognorm_n(int64_t n, int64_t K, const double* eta, double* elog, double* lognorm);
/// ppc_dirichlet_entropy_n from the rows' log normalizers that
/// ppc_dirichlet_stats_lognorm_n stored with `elog`: no special function.
double ppc_dirichlet_entropy_lognorm_n(int64_t n, int64_t K, const double* eta, const double* elog,
                                       const double* lognorm);
double ppc_dirichlet_kl_n(int64_t n, int64_t K, const double* eta_q, const double* eta_p);
/// Dirichlet(alpha) factor -> p: dst += w * (alpha - 1)
void ppc_dirichlet_probs_avglog(int64_t K, const double* alpha, double w, double* dst);
/// the same for n variables sharing alpha: dst[i,:] += w * (alpha - 1)
void ppc_dirichlet_probs_avglog_n(int64_t n, int64_t K, const double* alpha, double w, double* dst);
/// E[log Dir(p; alpha)] = -log B(alpha) + sum_k (alpha_k - 1) E log p_k
double ppc_dirichlet_avglogfactor(int64_t K, const double* alpha, const double* elog_p);
/// The same for the symmetric prior Dirichlet(alpha, K) the language writes:
/// log B is K lgamma(alpha) - lgamma(K alpha), two lgammas instead of K + 1.
double ppc_dirichlet_sym_avglogfactor(int64_t K, double alpha, const double* elog_p);
/// sum over n variables p_i ~ Dirichlet(alpha) with shared alpha, elog_p n x K
double ppc_dirichlet_avglogfactor_n(int64_t n, int64_t K, const double* alpha, const double* elog_p);

void ppc_dirichlet_pointmass_stats(int64_t K, const double* p, double* stats);  ///< log p

}  // extern "C"
