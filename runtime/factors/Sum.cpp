//===- runtime/factors/Sum.cpp - the sum and difference factors -----------===//
//
// m = a + b and m = a - b of Gaussians, constants and known inputs
// (runtime/factors/Arithmetic.h has the messages). Infer.NET's
// DoublePlusOp/DoubleMinusOp under VMP compute the same messages; these are
// derived from E_q[eta0 m + eta1 m^2] with m's arguments independent.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Arithmetic.h"

extern "C" {

void ppc_sum_forward(const double* a, const double* b, double* dst) {
  dst[0] += a[0] + b[0];
  dst[1] += a[1] + b[1] + 2.0 * a[0] * b[0];
}

void ppc_sum_to_left(const double* eta_m, const double* b, double w, double* dst) {
  dst[0] += w * (eta_m[0] + 2.0 * eta_m[1] * b[0]);
  dst[1] += w * eta_m[1];
}

void ppc_sum_to_right(const double* eta_m, const double* a, double w, double* dst) { ppc_sum_to_left(eta_m, a, w, dst); }

void ppc_difference_forward(const double* a, const double* b, double* dst) {
  dst[0] += a[0] - b[0];
  dst[1] += a[1] + b[1] - 2.0 * a[0] * b[0];
}

void ppc_difference_to_left(const double* eta_m, const double* b, double w, double* dst) {
  dst[0] += w * (eta_m[0] - 2.0 * eta_m[1] * b[0]);
  dst[1] += w * eta_m[1];
}

void ppc_difference_to_right(const double* eta_m, const double* a, double w, double* dst) {
  dst[0] += w * (-eta_m[0] - 2.0 * eta_m[1] * a[0]);
  dst[1] += w * eta_m[1];
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entries (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"
#include "runtime/factors/ArithmeticEntry.h"

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr MessageOperator kSumMessages[] = {{"ppc_sum_forward", "", kArithmeticForward},
                                            {"ppc_sum_to_left", "", kArithmeticToLeft},
                                            {"ppc_sum_to_right", "", kArithmeticToRight}};
constexpr MessageOperator kDifferenceMessages[] = {{"ppc_difference_forward", "", kArithmeticForward},
                                                   {"ppc_difference_to_left", "", kArithmeticToLeft},
                                                   {"ppc_difference_to_right", "", kArithmeticToRight}};

// A message to an argument reads m's natural parameters (N0) and the other
// argument's statistics.
constexpr KernelPattern kSumPatterns[] = {
    {"ppc_sum_forward", "S1 S2 d"},
    {"ppc_sum_to_left", "N0 S2 w d"},
    {"ppc_sum_to_right", "N0 S1 w d"},
};
constexpr KernelPattern kDifferencePatterns[] = {
    {"ppc_difference_forward", "S1 S2 d"},
    {"ppc_difference_to_left", "N0 S2 w d"},
    {"ppc_difference_to_right", "N0 S1 w d"},
};

const RuntimeSymbol kSumSymbols[] = {
    PPC_SYMBOL(ppc_sum_forward),
    PPC_SYMBOL(ppc_sum_to_left),
    PPC_SYMBOL(ppc_sum_to_right),
};
const RuntimeSymbol kDifferenceSymbols[] = {
    PPC_SYMBOL(ppc_difference_forward),
    PPC_SYMBOL(ppc_difference_to_left),
    PPC_SYMBOL(ppc_difference_to_right),
};

} // namespace

extern const FactorEntry kSum = arithmeticEntry(Family::Sum, kSumMessages, kSumPatterns, kSumSymbols);
extern const FactorEntry kDifference =
    arithmeticEntry(Family::Difference, kDifferenceMessages, kDifferencePatterns, kDifferenceSymbols);

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
