#include "runtime/Special.h"

#include <cmath>
#include <numbers>

#include "runtime/VecMath.h"

namespace ppc::rt {

namespace {
bool isNonPositiveInteger(double x) { return x <= 0.0 && x == std::floor(x); }
}  // namespace

double digamma(double x) {
  if (std::isnan(x) || isNonPositiveInteger(x)) return vm::kNaN;
  if (x > 0.0) return vm::digamma_pos(x);
  // Reflection: psi(x) = psi(1 - x) - pi / tan(pi x).
  const double pi = std::numbers::pi;
  return vm::digamma_pos(1.0 - x) - pi / std::tan(pi * x);
}

double trigamma(double x) {
  if (std::isnan(x) || isNonPositiveInteger(x)) return vm::kNaN;
  if (x > 0.0) return vm::trigamma_pos(x);
  // Reflection: psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x).
  const double pi = std::numbers::pi;
  const double s = std::sin(pi * x);
  return pi * pi / (s * s) - vm::trigamma_pos(1.0 - x);
}

double lgamma(double x) {
#if defined(__GLIBC__)
  int sign = 0;
  return ::lgamma_r(x, &sign);
#else
  return std::lgamma(x);
#endif
}

double lmvgamma(int D, double a) {
  double r = 0.25 * D * (D - 1) * std::log(std::numbers::pi);
  for (int i = 1; i <= D; ++i) r += lgamma(a + 0.5 * (1 - i));
  return r;
}

double mvdigamma(int D, double a) {
  double r = 0.0;
  for (int i = 1; i <= D; ++i) r += digamma(a + 0.5 * (1 - i));
  return r;
}

}  // namespace ppc::rt

using namespace ppc::rt;

extern "C" {

PPC_ROW_KERNEL void ppc_digamma_n(int64_t n, const double* x, double* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = vm::digamma_pos(x[i]);
}

PPC_ROW_KERNEL void ppc_trigamma_n(int64_t n, const double* x, double* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = vm::trigamma_pos(x[i]);
}

PPC_ROW_KERNEL void ppc_lgamma_n(int64_t n, const double* x, double* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = vm::lgamma_pos(x[i]);
}

PPC_ROW_KERNEL void ppc_exp_n(int64_t n, const double* x, double* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = vm::exp(x[i]);
}

PPC_ROW_KERNEL void ppc_log_n(int64_t n, const double* x, double* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = vm::log(x[i]);
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's list of these kernels (not in the bitcode) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_digamma_n)
PPC_DECLARE_CLONES(ppc_trigamma_n)
PPC_DECLARE_CLONES(ppc_lgamma_n)
PPC_DECLARE_CLONES(ppc_exp_n)
PPC_DECLARE_CLONES(ppc_log_n)

namespace ppc::rt::factors {
namespace {
const RuntimeSymbol kSymbols[] = {
    PPC_ROW_SYMBOL(ppc_digamma_n), PPC_ROW_SYMBOL(ppc_trigamma_n), PPC_ROW_SYMBOL(ppc_lgamma_n),
    PPC_ROW_SYMBOL(ppc_exp_n),     PPC_ROW_SYMBOL(ppc_log_n),
};
} // namespace

extern const KernelGroup kSpecialFunctionKernels = {"SpecialFunctions", kSymbols};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
