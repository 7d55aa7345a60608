//===- runtime/factors/Binomial.cpp - the Binomial family -----------------===//
//
// x successes out of n known trials with a Beta probability p. Its VMP
// messages are Beta-Bernoulli's with the counts (x, n - x) in place of
// (x, 1 - x); its E log f adds the binomial coefficient. Observed only: no
// posterior layout, no message to the sample.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Binomial.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>

extern "C" {

void ppc_binomial_p_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w, double trials,
                                 double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    double* d = dst + 2 * row(pidx, i);
    const double wi = weight(w, i);
    d[0] += wi * x[i];
    d[1] += wi * (trials - x[i]);
  }
}

double ppc_binomial_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                       double trials, const double* stats_p) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double* s = stats_p + 2 * row(pidx, i);
    const double logChoose =
        vm::lgamma_pos(trials + 1.0) - vm::lgamma_pos(x[i] + 1.0) - vm::lgamma_pos(trials - x[i] + 1.0);
    total += weight(w, i) * ((x[i] > 0.0 ? x[i] * s[0] : 0.0) + (x[i] < trials ? (trials - x[i]) * s[1] : 0.0) +
                             logChoose);
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

// Arguments: 0 the successes (observed), 1 the trials (known), 2 p.
constexpr MessageOperator kMessages[] = {
    kNoMessage, kNoMessage, {"", "ppc_binomial_p_avglog_obs_n", kReadSample}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_binomial_p_avglog_obs_n", "1 X0 0 W V1 d"},
    {"ppc_binomial_avglogfactor_obs_n", "1 X0 0 W V1 S2"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_binomial_p_avglog_obs_n),
    PPC_SYMBOL(ppc_binomial_avglogfactor_obs_n),
};

} // namespace

extern const FactorEntry kBinomial =
    observedOnlyEntry(Family::Binomial, kMessages, "ppc_binomial_avglogfactor_obs_n", kReadSampleAnd2, kPatterns,
                      kSymbols);

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
