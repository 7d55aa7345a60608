//===- runtime/factors/Gates.cpp - conditionals and mixtures --------------===//
//
// The gate operators of seed 001: a condition's posterior from its
// branches' evidence, and the messages in and out of a branch weighted by
// the probability of its case.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Gates.h"

#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Vector.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== Gates =====

double ppc_cases_posterior(int64_t K, const double* ell, double* q) {
  if (q != ell)
    for (int64_t k = 0; k < K; ++k) q[k] = ell[k];
  return ppc_softmax_inplace(K, q);
}

double ppc_cases_avglogfactor(int64_t K, const double* q, const double* ell) {
  return reduce8(K, [&](int64_t k) { return q[k] > 0.0 ? q[k] * (ell[k] - vm::log(q[k])) : 0.0; });
}

void ppc_cases_selector_avglog(int64_t k, double branch_avglog, double w, double* dst) {
  dst[k] += w * branch_avglog;
}

void ppc_cases_bernoulli_avglog(double ell_true, double ell_false, double w, double* dst) {
  dst[0] += w * (ell_true - ell_false);
}

void ppc_gate_accumulate(int64_t n, const double* q, int64_t k, const double* msg, double* dst) {
  const double qk = q[k];
  for (int64_t i = 0; i < n; ++i) dst[i] += qk * msg[i];
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

namespace ppc::rt::factors {

namespace {
const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_cases_posterior),
    PPC_SYMBOL(ppc_cases_avglogfactor),
    PPC_SYMBOL(ppc_cases_selector_avglog),
    PPC_SYMBOL(ppc_cases_bernoulli_avglog),
    PPC_SYMBOL(ppc_gate_accumulate),
};

constexpr GateOperator kGates[] = {
    {GateOp::Cases, "gate.cases", "ppc_cases_posterior", "ppc_cases_avglogfactor",
     "splits a condition into one boolean per case; its posterior is softmax(log prior + branch evidence)"},
    {GateOp::Enter, "gate.enter", "ppc_gate_accumulate", "",
     "a clone of an outer variable for every case; messages out of case k are weighted by q(c = k)"},
    {GateOp::EnterPartial, "gate.enter_partial", "ppc_gate_accumulate", "",
     "clones of an outer variable for a subset of the cases"},
    {GateOp::EnterOne, "gate.enter_one", "ppc_gate_accumulate", "",
     "the one clone of an outer variable used in exactly one case"},
    {GateOp::Exit, "gate.exit", "ppc_gate_accumulate", "",
     "merges the clones defined in each case into the variable used after the conditional"},
};
} // namespace

extern const KernelGroup kGatesKernels = {"Gates", kSymbols};
extern const std::span<const GateOperator> kGateOperators = kGates;

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
