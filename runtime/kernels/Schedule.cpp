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

#if defined(__x86_64__) && defined(__GNUC__) && !defined(PPC_RUNTIME_BITCODE)
#include <immintrin.h>
#endif

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
/// The uniform draws of randomSimplex into u[0, k): the i-th in (0, 1).
__attribute__((always_inline)) inline void uniformDraws(int64_t k, uint64_t base, double* u) {
  for (int64_t i = 0; i < k; ++i)
    u[i] = (double(mix64(base ^ uint64_t(i)) >> 11) + 0.5) * 0x1.0p-53;
}

__attribute__((always_inline)) inline void simplexFromUniforms(int64_t k, double* eta, double* stats) {
  // The uniforms lie in [2^-54, 1 - 2^-54]: normal numbers, whose log needs
  // none of vm::log's special cases (LDA's random start on AP: 6 M draws).
  for (int64_t i = 0; i < k; ++i)
    stats[i] = -vm::log_of_normal(stats[i]);
  // One sum in 8 partial sums and one division: a running sum is a chain of
  // k dependent additions, which took about half of LDA's initialization.
  const double inverse = 1.0 / reduce8(k, [&](int64_t i) { return stats[i]; });
  for (int64_t i = 0; i < k; ++i) stats[i] *= inverse;
  if (eta)
    for (int64_t i = 0; i < k; ++i) eta[i] = vm::log(stats[i]);
}

__attribute__((always_inline)) inline uint64_t simplexBase(int64_t seed, int64_t stream, int64_t element) {
  return mix64(mix64(mix64(uint64_t(seed)) ^ uint64_t(stream)) ^ uint64_t(element));
}

// exponentialDraw's hash and logarithm, written out so that the draws
// vectorize: in two loops, so that the logarithms vectorize even where the
// hash's 64-bit multiplies do not, the same numbers.
__attribute__((always_inline)) inline void randomSimplex(int64_t k, int64_t seed, int64_t stream, int64_t element,
                                                         double* eta, double* stats) {
  uniformDraws(k, simplexBase(seed, stream, element), stats);
  simplexFromUniforms(k, eta, stats);
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

// AVX2 has neither: the compiler leaves the hash scalar (LDA's random
// start on AP through --cpu x86-64-v3: 29 ms, 26 with this). Four lanes by
// hand: a 64-bit product from three 32 x 32-bit ones (the low 64 bits, as
// the scalar multiply keeps), and h >> 11 (under 2^53) to a double from
// its two 32-bit halves, each exact through the 2^52 exponent trick: the
// same numbers as the scalar draws.
#define PPC_RANDOM_SIMPLEX_AVX2 1
__attribute__((target("avx2"))) inline __m256i mul64Avx2(__m256i a, __m256i b) {
  const __m256i low = _mm256_mul_epu32(a, b);
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b),
                                         _mm256_mul_epu32(a, _mm256_srli_epi64(b, 32)));
  return _mm256_add_epi64(low, _mm256_slli_epi64(cross, 32));
}
__attribute__((target("avx2"))) inline __m256i mix64Avx2(__m256i z) {
  z = _mm256_add_epi64(z, _mm256_set1_epi64x(int64_t(0x9e3779b97f4a7c15ULL)));
  z = mul64Avx2(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), _mm256_set1_epi64x(int64_t(0xbf58476d1ce4e5b9ULL)));
  z = mul64Avx2(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), _mm256_set1_epi64x(int64_t(0x94d049bb133111ebULL)));
  return _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
}
__attribute__((target("avx2"))) void randomSimplexAvx2(int64_t k, int64_t seed, int64_t stream, int64_t element,
                                                      double* eta, double* stats) {
  const uint64_t base = simplexBase(seed, stream, element);
  const __m256i magic = _mm256_set1_epi64x(0x4330000000000000LL); // 2^52's bits: or-ing in a 32-bit integer gives 2^52 + it
  const __m256d two52 = _mm256_set1_pd(0x1.0p52), two32 = _mm256_set1_pd(0x1.0p32);
  int64_t i = 0;
  for (; i + 4 <= k; i += 4) {
    const __m256i idx = _mm256_add_epi64(_mm256_set1_epi64x(i), _mm256_setr_epi64x(0, 1, 2, 3));
    const __m256i h = _mm256_srli_epi64(mix64Avx2(_mm256_xor_si256(_mm256_set1_epi64x(int64_t(base)), idx)), 11);
    const __m256d hi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(h, 32), magic)), two52);
    const __m256d lo = _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(h, _mm256_set1_epi64x(0xffffffffLL)), magic)), two52);
    // hi 2^32 + lo is the integer h (under 2^53: exact, no fused rounding to
    // differ); then (h + 0.5) 2^-53 as the scalar draws.
    const __m256d d = _mm256_add_pd(_mm256_mul_pd(hi, two32), lo);
    _mm256_storeu_pd(stats + i, _mm256_mul_pd(_mm256_add_pd(d, _mm256_set1_pd(0.5)), _mm256_set1_pd(0x1.0p-53)));
  }
  for (; i < k; ++i)
    stats[i] = (double(mix64(base ^ uint64_t(i)) >> 11) + 0.5) * 0x1.0p-53;
  simplexFromUniforms(k, eta, stats);
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
#ifdef PPC_RANDOM_SIMPLEX_AVX2
  if (ppc::rt::vectorIsa() == ppc::rt::VectorIsa::Avx2) {
    randomSimplexAvx2(k, seed, stream, element, eta, stats);
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
