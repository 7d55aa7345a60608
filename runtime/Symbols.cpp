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

#include <array>
#include <type_traits>
#include <utility>

namespace ppc::rt {
namespace {

// Signatures and interpreter thunks, derived from each kernel's C type.
template <typename T> constexpr char typeLetter() {
  if constexpr (std::is_void_v<T>)
    return 'v';
  else if constexpr (std::is_same_v<T, int>)
    return 'i';
  else if constexpr (std::is_same_v<T, int64_t>)
    return 'l';
  else if constexpr (std::is_same_v<T, double>)
    return 'd';
  else {
    static_assert(std::is_pointer_v<T>, "kernel parameters are int64_t, double or pointers");
    return 'p';
  }
}

template <typename T> T unpack(const KernelValue &v) {
  if constexpr (std::is_same_v<T, int64_t>)
    return v.i;
  else if constexpr (std::is_same_v<T, double>)
    return v.d;
  else
    return static_cast<T>(v.p);
}

template <typename F> struct KernelTraits;
template <typename R, typename... A> struct KernelTraits<R (*)(A...)> {
  static constexpr std::array<char, sizeof...(A) + 2> signature{typeLetter<R>(), typeLetter<A>()..., '\0'};
  template <auto Fn, size_t... I> static double call(const KernelValue *args, std::index_sequence<I...>) {
    if constexpr (std::is_void_v<R>) {
      Fn(unpack<A>(args[I])...);
      return 0;
    } else {
      return static_cast<double>(Fn(unpack<A>(args[I])...));
    }
  }
  template <auto Fn> static double invoke(const KernelValue *args) {
    return call<Fn>(args, std::index_sequence_for<A...>{});
  }
};

template <auto Fn> struct Kernel {
  using Traits = KernelTraits<decltype(Fn)>;
  static constexpr std::string_view signature{Traits::signature.data(), Traits::signature.size() - 1};
};

#define PPC_SYMBOL(name)                                                                                         \
  {#name, reinterpret_cast<void *>(&name), Kernel<&name>::signature, &Kernel<&name>::Traits::invoke<&name>}
const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_axpy),
    PPC_SYMBOL(ppc_axpy_strided),
    PPC_SYMBOL(ppc_axpy_transposed),
    PPC_SYMBOL(ppc_transpose),
    PPC_SYMBOL(ppc_dot),
    PPC_SYMBOL(ppc_logsumexp),
    PPC_SYMBOL(ppc_softmax_inplace),
    PPC_SYMBOL(ppc_random_simplex),
    PPC_SYMBOL(ppc_random_bernoulli),
    PPC_SYMBOL(ppc_mean_abs_change),
    PPC_SYMBOL(ppc_fill),
    PPC_SYMBOL(ppc_mul_n),
    PPC_SYMBOL(ppc_mul2_n),
    PPC_SYMBOL(ppc_copy_n),
    PPC_SYMBOL(ppc_exp_shifted_n),
    PPC_SYMBOL(ppc_exp_shifted_transposed),
    PPC_SYMBOL(ppc_categorical_stats_from_product),
    PPC_SYMBOL(ppc_categorical_stats_from_product_lognorm),
    PPC_SYMBOL(ppc_dot_inverse_axpy),
    PPC_SYMBOL(ppc_product_axpy_lognorm),
    PPC_SYMBOL(ppc_product_axpy),
    PPC_SYMBOL(ppc_product_axpy_norm),
    PPC_SYMBOL(ppc_weighted_log_sum),
    PPC_SYMBOL(ppc_mul_add_n),
    PPC_SYMBOL(ppc_prefetch_row),
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
    PPC_SYMBOL(ppc_dirichlet_stats_lognorm_n),
    PPC_SYMBOL(ppc_dirichlet_entropy_lognorm_n),
    PPC_SYMBOL(ppc_dirichlet_kl_n),
    PPC_SYMBOL(ppc_dirichlet_probs_avglog),
    PPC_SYMBOL(ppc_dirichlet_probs_avglog_n),
    PPC_SYMBOL(ppc_dirichlet_avglogfactor),
    PPC_SYMBOL(ppc_dirichlet_sym_avglogfactor),
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
    PPC_SYMBOL(ppc_mvgaussian_stats_n),
    PPC_SYMBOL(ppc_mvgaussian_entropy_n),
    PPC_SYMBOL(ppc_mvgaussian_mean_avglog_obs_n),
    PPC_SYMBOL(ppc_mvgaussian_precision_avglog_obs_n),
    PPC_SYMBOL(ppc_mvgaussian_avglogfactor_obs_n),
    PPC_SYMBOL(ppc_wishart_stats),
    PPC_SYMBOL(ppc_wishart_lognorm),
    PPC_SYMBOL(ppc_wishart_lognorm_params),
    PPC_SYMBOL(ppc_wishart_entropy),
    PPC_SYMBOL(ppc_wishart_kl),
    PPC_SYMBOL(ppc_wishart_sample_avglog),
    PPC_SYMBOL(ppc_wishart_avglogfactor),
    PPC_SYMBOL(ppc_wishart_stats_n),
    PPC_SYMBOL(ppc_wishart_entropy_n),
    PPC_SYMBOL(ppc_wishart_iso_sample_avglog),
    PPC_SYMBOL(ppc_wishart_iso_avglogfactor),
    PPC_SYMBOL(ppc_lda_token),
    PPC_SYMBOL(ppc_lda_doc),
    PPC_SYMBOL(ppc_cases_posterior),
    PPC_SYMBOL(ppc_cases_avglogfactor),
    PPC_SYMBOL(ppc_cases_selector_avglog),
    PPC_SYMBOL(ppc_cases_bernoulli_avglog),
    PPC_SYMBOL(ppc_gate_accumulate),
    PPC_SYMBOL(ppc_gaussian_weighted_moments),
    PPC_SYMBOL(ppc_gaussian_moment_products),
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
  const RuntimeSymbol *s = findRuntimeKernel(name);
  return s ? s->address : nullptr;
}

const RuntimeSymbol *findRuntimeKernel(std::string_view name) {
  for (const RuntimeSymbol &s : kSymbols)
    if (s.name == name)
      return &s;
  return nullptr;
}

} // namespace ppc::rt
