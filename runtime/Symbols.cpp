//===- runtime/Symbols.cpp - the runtime's kernels by name -----------------===//
//
// The JIT resolves calls from generated code through this table, and the
// tests check that every kernel the catalogue names exists here. Keep it in
// step with runtime/Operators.h and runtime/Special.h (a test compares them).
//
//===----------------------------------------------------------------------===//
#include "runtime/Symbols.h"

#include "runtime/Operators.h"
#include "runtime/Special.h"

namespace ppc::rt {
namespace {
#define PPC_SYMBOL(name) {#name, reinterpret_cast<void *>(&name)}
const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_axpy),
    PPC_SYMBOL(ppc_dot),
    PPC_SYMBOL(ppc_logsumexp),
    PPC_SYMBOL(ppc_softmax_inplace),
    PPC_SYMBOL(ppc_spd_inverse_logdet),
    PPC_SYMBOL(ppc_gamma_pointmass_stats),
    PPC_SYMBOL(ppc_gaussian_pointmass_stats),
    PPC_SYMBOL(ppc_dirichlet_pointmass_stats),
    PPC_SYMBOL(ppc_mvgaussian_pointmass_stats),
    PPC_SYMBOL(ppc_wishart_pointmass_stats),
    PPC_SYMBOL(ppc_dirichlet_elog_n),
    PPC_SYMBOL(ppc_dirichlet_stats_n),
    PPC_SYMBOL(ppc_dirichlet_lognorm_n),
    PPC_SYMBOL(ppc_dirichlet_entropy_n),
    PPC_SYMBOL(ppc_dirichlet_kl_n),
    PPC_SYMBOL(ppc_dirichlet_probs_avglog),
    PPC_SYMBOL(ppc_dirichlet_probs_avglog_n),
    PPC_SYMBOL(ppc_dirichlet_avglogfactor),
    PPC_SYMBOL(ppc_dirichlet_avglogfactor_n),
    PPC_SYMBOL(ppc_beta_p_avglog),
    PPC_SYMBOL(ppc_beta_avglogfactor),
    PPC_SYMBOL(ppc_categorical_stats_n),
    PPC_SYMBOL(ppc_categorical_lognorm_n),
    PPC_SYMBOL(ppc_categorical_entropy_n),
    PPC_SYMBOL(ppc_categorical_kl_n),
    PPC_SYMBOL(ppc_categorical_probs_avglog),
    PPC_SYMBOL(ppc_categorical_probs_avglog_obs),
    PPC_SYMBOL(ppc_categorical_probs_avglog_obs_n),
    PPC_SYMBOL(ppc_categorical_sample_avglog),
    PPC_SYMBOL(ppc_categorical_avglogfactor),
    PPC_SYMBOL(ppc_categorical_avglogfactor_obs),
    PPC_SYMBOL(ppc_categorical_avglogfactor_obs_n),
    PPC_SYMBOL(ppc_bernoulli_stats_n),
    PPC_SYMBOL(ppc_bernoulli_lognorm_n),
    PPC_SYMBOL(ppc_bernoulli_entropy_n),
    PPC_SYMBOL(ppc_bernoulli_kl_n),
    PPC_SYMBOL(ppc_bernoulli_p_avglog),
    PPC_SYMBOL(ppc_bernoulli_p_avglog_obs_n),
    PPC_SYMBOL(ppc_bernoulli_sample_avglog),
    PPC_SYMBOL(ppc_bernoulli_avglogfactor),
    PPC_SYMBOL(ppc_bernoulli_avglogfactor_obs_n),
    PPC_SYMBOL(ppc_gamma_stats_n),
    PPC_SYMBOL(ppc_gamma_lognorm_n),
    PPC_SYMBOL(ppc_gamma_entropy_n),
    PPC_SYMBOL(ppc_gamma_kl_n),
    PPC_SYMBOL(ppc_gamma_sample_avglog),
    PPC_SYMBOL(ppc_gamma_rate_avglog),
    PPC_SYMBOL(ppc_gamma_rate_avglog_obs_n),
    PPC_SYMBOL(ppc_gamma_avglogfactor),
    PPC_SYMBOL(ppc_gamma_avglogfactor_obs_n),
    PPC_SYMBOL(ppc_poisson_stats_n),
    PPC_SYMBOL(ppc_poisson_lognorm_n),
    PPC_SYMBOL(ppc_poisson_elogfact),
    PPC_SYMBOL(ppc_poisson_entropy_n),
    PPC_SYMBOL(ppc_poisson_kl_n),
    PPC_SYMBOL(ppc_poisson_rate_avglog),
    PPC_SYMBOL(ppc_poisson_rate_avglog_obs_n),
    PPC_SYMBOL(ppc_poisson_sample_avglog),
    PPC_SYMBOL(ppc_poisson_avglogfactor),
    PPC_SYMBOL(ppc_poisson_avglogfactor_obs_n),
    PPC_SYMBOL(ppc_gaussian_stats_n),
    PPC_SYMBOL(ppc_gaussian_lognorm_n),
    PPC_SYMBOL(ppc_gaussian_entropy_n),
    PPC_SYMBOL(ppc_gaussian_kl_n),
    PPC_SYMBOL(ppc_gaussian_sample_avglog),
    PPC_SYMBOL(ppc_gaussian_mean_avglog),
    PPC_SYMBOL(ppc_gaussian_mean_avglog_obs_n),
    PPC_SYMBOL(ppc_gaussian_precision_avglog),
    PPC_SYMBOL(ppc_gaussian_precision_avglog_obs_n),
    PPC_SYMBOL(ppc_gaussian_avglogfactor),
    PPC_SYMBOL(ppc_gaussian_avglogfactor_obs_n),
    PPC_SYMBOL(ppc_mvgaussian_stats),
    PPC_SYMBOL(ppc_mvgaussian_lognorm),
    PPC_SYMBOL(ppc_mvgaussian_entropy),
    PPC_SYMBOL(ppc_mvgaussian_kl),
    PPC_SYMBOL(ppc_mvgaussian_sample_avglog),
    PPC_SYMBOL(ppc_mvgaussian_mean_avglog),
    PPC_SYMBOL(ppc_mvgaussian_precision_avglog),
    PPC_SYMBOL(ppc_mvgaussian_avglogfactor),
    PPC_SYMBOL(ppc_wishart_stats),
    PPC_SYMBOL(ppc_wishart_lognorm),
    PPC_SYMBOL(ppc_wishart_lognorm_params),
    PPC_SYMBOL(ppc_wishart_entropy),
    PPC_SYMBOL(ppc_wishart_kl),
    PPC_SYMBOL(ppc_wishart_sample_avglog),
    PPC_SYMBOL(ppc_wishart_avglogfactor),
    PPC_SYMBOL(ppc_lda_token),
    PPC_SYMBOL(ppc_lda_doc),
    PPC_SYMBOL(ppc_cases_posterior),
    PPC_SYMBOL(ppc_cases_avglogfactor),
    PPC_SYMBOL(ppc_cases_selector_avglog),
    PPC_SYMBOL(ppc_cases_bernoulli_avglog),
    PPC_SYMBOL(ppc_gate_accumulate),
    PPC_SYMBOL(ppc_digamma_n),
    PPC_SYMBOL(ppc_trigamma_n),
    PPC_SYMBOL(ppc_lgamma_n),
    PPC_SYMBOL(ppc_exp_n),
    PPC_SYMBOL(ppc_log_n),
};
#undef PPC_SYMBOL
} // namespace

std::span<const RuntimeSymbol> runtimeSymbols() { return kSymbols; }

void *findRuntimeSymbol(std::string_view name) {
  for (const RuntimeSymbol &s : kSymbols)
    if (s.name == name)
      return s.address;
  return nullptr;
}

} // namespace ppc::rt
