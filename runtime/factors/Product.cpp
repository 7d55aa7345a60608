//===- runtime/factors/Product.cpp - the product factor -------------------===//
//
// m = a * b of a Gaussian and a Gaussian, a constant or a known input
// (runtime/factors/Arithmetic.h has the messages). With both arguments
// random it is VMP's product factor of Bayesian PCA and factor analysis
// (Infer.NET's GaussianProductVmpOp): a and b independent under q, so
// E m^2 = E a^2 E b^2.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Arithmetic.h"

extern "C" {

void ppc_product_forward(const double* a, const double* b, double* dst) {
  dst[0] += a[0] * b[0];
  dst[1] += a[1] * b[1];
}

void ppc_product_to_left(const double* eta_m, const double* b, double w, double* dst) {
  dst[0] += w * eta_m[0] * b[0];
  dst[1] += w * eta_m[1] * b[1];
}

void ppc_product_to_right(const double* eta_m, const double* a, double w, double* dst) {
  ppc_product_to_left(eta_m, a, w, dst);
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/factors/ArithmeticEntry.h"

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr MessageOperator kMessages[] = {{"ppc_product_forward", "", kArithmeticForward},
                                         {"ppc_product_to_left", "", kArithmeticToLeft},
                                         {"ppc_product_to_right", "", kArithmeticToRight}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_product_forward", "S1 S2 d"},
    {"ppc_product_to_left", "N0 S2 w d"},
    {"ppc_product_to_right", "N0 S1 w d"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_product_forward),
    PPC_SYMBOL(ppc_product_to_left),
    PPC_SYMBOL(ppc_product_to_right),
};

} // namespace

extern const FactorEntry kProduct = arithmeticEntry(Family::Product, kMessages, kPatterns, kSymbols);

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
