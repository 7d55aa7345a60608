//===- runtime/factors/Multinomial.cpp - the Multinomial family -----------===//
//
// Observed rows of K counts with Dirichlet probabilities (Multinomial.h):
// the message to p adds the counts to its natural parameters, as K
// Categorical observations would; the ELBO term adds the multinomial
// coefficient.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Multinomial.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>

extern "C" {

void ppc_multinomial_probs_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w, int64_t K,
                                        double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    double* d = dst + row(pidx, i) * K;
    const double wi = weight(w, i);
    for (int64_t k = 0; k < K; ++k)
      d[k] += wi * x[i * K + k];
  }
}

double ppc_multinomial_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                          int64_t K, const double* stats_p) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double* elog = stats_p + row(pidx, i) * K;
    double trials = 0.0, term = 0.0;
    for (int64_t k = 0; k < K; ++k) {
      const double c = x[i * K + k];
      trials += c;
      term -= vm::lgamma_pos(c + 1.0);
      if (c > 0.0)
        term += c * elog[k];
    }
    total += weight(w, i) * (term + vm::lgamma_pos(trials + 1.0));
  }
  return total;
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/factors/ObservedOnlyEntry.h"

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

// Arguments: 0 the counts (observed), 1 the trials (known), 2 p.
constexpr MessageOperator kMessages[] = {
    kNoMessage, kNoMessage, {"", "ppc_multinomial_probs_avglog_obs_n", kReadSample}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_multinomial_probs_avglog_obs_n", "1 X0 0 W D2 d"},
    {"ppc_multinomial_avglogfactor_obs_n", "1 X0 0 W D2 S2"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_multinomial_probs_avglog_obs_n),
    PPC_SYMBOL(ppc_multinomial_avglogfactor_obs_n),
};

} // namespace

extern const FactorEntry kMultinomial =
    observedOnlyEntry(Family::Multinomial, kMessages, "ppc_multinomial_avglogfactor_obs_n", kReadSampleAnd2,
                      kPatterns, kSymbols);

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
