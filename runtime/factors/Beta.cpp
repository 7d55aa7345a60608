//===- runtime/factors/Beta.cpp - the Beta family -------------------------===//
//
// The Beta distribution: the Dirichlet with K = 2 on (p, 1 - p), whose
// statistics, entropy and layout it shares (runtime/factors/Dirichlet.cpp);
// its own kernels are the prior message and the expected log density.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Beta.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== Beta =====

void ppc_beta_p_avglog(double a, double b, double w, double* dst) {
  dst[0] += w * (a - 1.0);
  dst[1] += w * (b - 1.0);
}

double ppc_beta_avglogfactor(double a, double b, const double* stats_p) {
  const double logB = vm::lgamma_pos(a) + vm::lgamma_pos(b) - vm::lgamma_pos(a + b);
  return -logB + (a - 1.0) * stats_p[0] + (b - 1.0) * stats_p[1];
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr MessageOperator kMessages[] = {{"ppc_beta_p_avglog", "", kNone}, kNoMessage, kNoMessage};

constexpr KernelPattern kPatterns[] = {
    {"ppc_beta_p_avglog", "V1 V2 w d"},
    {"ppc_beta_avglogfactor", "V1 V2 S0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_beta_p_avglog),
    PPC_SYMBOL(ppc_beta_avglogfactor),
};

int64_t width(int64_t k) {
  (void)k;
  return 2;
}

std::vector<double> pointMass(double c, int64_t k) {
  (void)k;
  return {std::log(c), std::log1p(-c)};
}

std::vector<std::string> outputColumns(int64_t k) {
  (void)k;
  return {"alpha", "beta"};
}

void standardParameters(int64_t k, [[maybe_unused]] const double *eta, [[maybe_unused]] const double *stats,
                        std::vector<double> &out) {
  for (int64_t i = 0; i < k; ++i)
    out.push_back(eta[i] + 1);
}

std::vector<std::string> summaryColumns(int64_t) { return {"mean", "variance"}; }

void summaries(int64_t, const double *standard, std::vector<double> &out) {
  const double a = standard[0], b = standard[1], s = a + b;
  out.push_back(a / s);
  out.push_back(a * b / (s * s * (s + 1)));
}

} // namespace

extern const FactorEntry kBeta = {
    {Family::Beta, kMessages, "ppc_beta_avglogfactor", "", kReadSampleOnly},
    "ppc_dirichlet_entropy_n",
    "ppc_dirichlet_stats_n",
    true,
    width,
    pointMass,
    outputColumns,
    standardParameters,
    kPatterns,
    kSymbols,
    catalogue::concentrationNaturalParameters,
    summaryColumns,
    summaries,
    "",
    nullptr,
    nullptr,
};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
