//===- runtime/factors/Beta.h - the Beta family ---------------------------===//
//
// The Beta distribution: the Dirichlet with K = 2 on (p, 1 - p), whose
// statistics, entropy and layout it shares (runtime/factors/Dirichlet.cpp);
// its own kernels are the prior message and the expected log density.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Beta factor (the variable is a Dirichlet K = 2) =====
/// Beta(a, b) -> p: dst += w * (a - 1, b - 1)
void ppc_beta_p_avglog(double a, double b, double w, double* dst);
/// -log B(a, b) + (a-1) E log p + (b-1) E log(1-p);  stats_p = (E log p, E log(1-p))
double ppc_beta_avglogfactor(double a, double b, const double* stats_p);

}  // extern "C"
