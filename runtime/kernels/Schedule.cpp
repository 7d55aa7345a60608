//===- runtime/kernels/Schedule.cpp - what the schedules need -------------===//
//
// Random initial posteriors (a counter-based generator, so that any
// element can be drawn alone on any thread or process) and the local
// sweeps' convergence test.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Schedule.h"

#include "runtime/kernels/KernelSupport.h"
#include "runtime/VectorIsa.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

namespace {
// splitmix64: a counter-based generator (Steele, Lea & Flood 2014).
uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
/// An Exp(1) draw, the i-th of the stream (seed, stream, element).
double exponentialDraw(int64_t seed, int64_t stream, int64_t element, int64_t i) {
  uint64_t h = mix64(mix64(mix64(uint64_t(seed)) ^ uint64_t(stream)) ^ uint64_t(element));
  h = mix64(h ^ uint64_t(i));
  double u = (double(h >> 11) + 0.5) * 0x1.0p-53;  // in (0, 1)
  return -vm::log(u);
}
}  // namespace

namespace {
__attribute__((always_inline)) inline void randomSimplex(int64_t k, int64_t seed, int64_t stream, int64_t element,
                                                         double* eta, double* stats) {
  // exponentialDraw's hash and logarithm, written out so that the draws
  // vectorize: in two loops, so that the logarithms vectorize even where the
  // hash's 64-bit multiplies do not (AVX2: no vpmullq), the same numbers.
  const uint64_t base = mix64(mix64(mix64(uint64_t(seed)) ^ uint64_t(stream)) ^ uint64_t(element));
  for (int64_t i = 0; i < k; ++i)
    stats[i] = (double(mix64(base ^ uint64_t(i)) >> 11) + 0.5) * 0x1.0p-53;
  for (int64_t i = 0; i < k; ++i)
    stats[i] = -vm::log(stats[i]);
  // One sum in 8 partial sums and one division: a running sum is a chain of
  // k dependent additions, which took about half of LDA's initialization.
  const double inverse = 1.0 / reduce8(k, [&](int64_t i) { return stats[i]; });
  for (int64_t i = 0; i < k; ++i) stats[i] *= inverse;
  if (eta)
    for (int64_t i = 0; i < k; ++i) eta[i] = vm::log(stats[i]);
}
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PPC_RUNTIME_BITCODE)
// The hash multiplies 64-bit lanes and converts them to doubles, which
// vectorize only with AVX-512DQ (vpmullq, vcvtuqq2pd); target_clones cannot
// name it in GCC 12, so the kernel dispatches to this copy itself.
#define PPC_RANDOM_SIMPLEX_DQ 1
__attribute__((target("avx512f,avx512dq,avx512vl"))) void randomSimplexDQ(int64_t k, int64_t seed, int64_t stream,
                                                                          int64_t element, double* eta, double* stats) {
  randomSimplex(k, seed, stream, element, eta, stats);
}
#endif
} // namespace

PPC_ROW_KERNEL void ppc_random_simplex(int64_t k, int64_t seed, int64_t stream, int64_t element, double* eta,
                                       double* stats) {
#ifdef PPC_RANDOM_SIMPLEX_DQ
  // The AVX-512 level includes DQ (runtime/VectorIsa.h); `ppc --cpu` may choose a lower one.
  if (ppc::rt::vectorIsa() == ppc::rt::VectorIsa::Avx512) {
    randomSimplexDQ(k, seed, stream, element, eta, stats);
    return;
  }
#endif
  randomSimplex(k, seed, stream, element, eta, stats);
}

void ppc_random_bernoulli(int64_t seed, int64_t stream, int64_t element, double* eta, double* stats) {
  const double a = exponentialDraw(seed, stream, element, 0), b = exponentialDraw(seed, stream, element, 1);
  stats[0] = a / (a + b);
  eta[0] = vm::log(a) - vm::log(b);
}

void ppc_random_gaussian(int64_t k, int64_t matrix, int64_t seed, int64_t stream, int64_t element, double* eta,
                         double* stats) {
  // Means drawn from a Laplace(0, 1) (a difference of two Exp(1)), unit
  // precision: a Gaussian's (mean, E x^2), or an MvGaussian's [mean, mean
  // mean^T + I] in its [P mu, -P/2] natural parameters.
  for (int64_t j = 0; j < k; ++j) {
    const double m = exponentialDraw(seed, stream, element, 2 * j) - exponentialDraw(seed, stream, element, 2 * j + 1);
    eta[j] = m;
    stats[j] = m;
  }
  if (!matrix) {
    eta[1] = -0.5;
    stats[1] = stats[0] * stats[0] + 1.0;
    return;
  }
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      eta[k + i * k + j] = i == j ? -0.5 : 0.0;
      stats[k + i * k + j] = stats[i] * stats[j] + (i == j ? 1.0 : 0.0);
    }
}

double ppc_mean_abs_change(int64_t n, const double* current, double* previous) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    s += std::abs(current[i] - previous[i]);
    previous[i] = current[i];
  }
  return n > 0 ? s / double(n) : 0.0;
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_random_simplex)

namespace ppc::rt::factors {

namespace {
const RuntimeSymbol kSymbols[] = {
    PPC_ROW_SYMBOL(ppc_random_simplex),
    PPC_SYMBOL(ppc_random_bernoulli),
    PPC_SYMBOL(ppc_random_gaussian),
    PPC_SYMBOL(ppc_mean_abs_change),
};
} // namespace

extern const KernelGroup kScheduleKernels = {"Schedule", kSymbols};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
