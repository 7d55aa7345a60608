//===- runtime/factors/Scale.cpp - a Gamma times a known number -----------===//
//
// m = s * tau with tau a Gamma (or a scaled one) and s > 0 known (a constant
// or Data): a Gaussian's precision scaled per datum, Gaussian(mu, tau * s(i)),
// or a Gamma's scaled rate. s * Gamma(a, b) is Gamma(a, b / s), so m is
// Gamma-like: its statistics (E m, E log m) = (s E tau, log s + E log tau)
// are what its children read, and a child's message (eta0, eta1) on
// (m, log m) is (s eta0, eta1) on (tau, log tau) (Gamma's natural
// parameters, runtime/factors/Gamma.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Arithmetic.h"

#include <cmath>

extern "C" {

void ppc_scale_forward(const double* stats_v, double s, double* dst) {
  dst[0] += s * stats_v[0];
  dst[1] += std::log(s) + stats_v[1];
}

void ppc_scale_to_variable(const double* eta_m, double s, double w, double* dst) {
  dst[0] += w * s * eta_m[0];
  dst[1] += w * eta_m[1];
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/factors/ArithmeticEntry.h"

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr OperatorInput kForward[] = {{1, DepKind::Required}};
constexpr OperatorInput kToVariable[] = {{0, DepKind::Required}};

constexpr MessageOperator kMessages[] = {{"ppc_scale_forward", "", kForward},
                                         {"ppc_scale_to_variable", "", kToVariable},
                                         kNoMessage};

constexpr KernelPattern kPatterns[] = {
    {"ppc_scale_forward", "S1 V2 d"},
    {"ppc_scale_to_variable", "N0 V2 w d"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_scale_forward),
    PPC_SYMBOL(ppc_scale_to_variable),
};

std::vector<std::string> columns(int64_t) { return {"mean", "mean_log"}; }
void parameters(int64_t, const double *, const double *stats, std::vector<double> &out) {
  out.push_back(stats[0]);
  out.push_back(stats[1]);
}
std::vector<double> pointMass(double c, int64_t) { return {c, std::log(c)}; }

} // namespace

extern const FactorEntry kScale = [] {
  FactorEntry e = arithmeticEntry(Family::Scale, kMessages, kPatterns, kSymbols);
  e.outputColumns = columns;
  e.standardParameters = parameters;
  e.pointMass = pointMass;
  return e;
}();

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
