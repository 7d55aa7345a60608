// Special functions of the VMP runtime: scalar versions for setup code and
// vectorizable slice kernels for plate loops.
//
// The slice kernels are extern "C" with plain pointer/int64 arguments so that
// the JIT can call them (or inline their bitcode). They never allocate or
// throw; in-place use (out == x) is allowed. Their element-wise bodies live in
// runtime/VecMath.h (branch-free, so the loops vectorize).
#pragma once

#include <cstdint>

namespace ppc::rt {

/// digamma(x) = d/dx log Gamma(x). Poles (x = 0, -1, -2, ...) give NaN;
/// negative non-integers use the reflection formula.
double digamma(double x);
/// trigamma(x) = d^2/dx^2 log Gamma(x). Poles give NaN; negative non-integers use reflection.
double trigamma(double x);
/// log |Gamma(x)| (glibc's thread-safe lgamma_r; +inf at the poles).
double lgamma(double x);
/// log of the multivariate gamma function Gamma_D(a) = pi^{D(D-1)/4} prod_{i=1}^{D} Gamma(a + (1-i)/2).
double lmvgamma(int D, double a);
/// d/da log Gamma_D(a) = sum_{i=1}^{D} digamma(a + (1-i)/2).
double mvdigamma(int D, double a);

}  // namespace ppc::rt

extern "C" {
/// out[i] = digamma(x[i]) for x[i] > 0 (NaN otherwise).
void ppc_digamma_n(int64_t n, const double* x, double* out);
/// out[i] = trigamma(x[i]) for x[i] > 0 (NaN otherwise).
void ppc_trigamma_n(int64_t n, const double* x, double* out);
/// out[i] = log Gamma(x[i]) for x[i] > 0 (NaN otherwise).
void ppc_lgamma_n(int64_t n, const double* x, double* out);
/// out[i] = exp(x[i]) (< 1 ulp; overflow to +inf, underflow to subnormals/0).
void ppc_exp_n(int64_t n, const double* x, double* out);
/// out[i] = log(x[i]) (< 1 ulp; log 0 = -inf, log of a negative = NaN).
void ppc_log_n(int64_t n, const double* x, double* out);
}
