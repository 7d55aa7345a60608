// Branch-free, inlinable elementary and special functions for the VMP runtime.
//
// Every function here is a straight-line sequence of floating-point and 64-bit
// integer operations plus selects (`c ? a : b` on values that are both already
// computed), with no calls and no data-dependent branches. A loop that calls
// them over a contiguous slice is therefore vectorized by GCC/Clang at -O3
// (SSE2 two lanes by default, AVX2/AVX-512 when the target allows), and the
// same bodies compiled to LLVM bitcode inline into JIT-generated plate loops.
//
// Accuracy (measured by test/unit/runtime/SpecialTest.cpp against long-double
// references on a log-uniform grid of [1e-3, 1e6]):
//   exp, log      < 1 ulp (0.88 and 0.78 ulp max) over the whole double range
//                 (exp keeps subnormal results, with a double rounding there;
//                 inference flushes them to 0: runtime/FloatEnvironment.h).
//   digamma_pos   relative error <= 2e-14; absolute error <= 1.5e-15 where
//                 |psi| < 0.05 (around the positive root x0 = 1.46163...).
//   trigamma_pos  relative error <= 1.1e-15.
//   lgamma_pos    relative error <= 6e-14 where |lgamma| > 0.1, absolute error
//                 <= 9e-15 near the roots 1 and 2 (terms of size ~20 cancel).
// The *_pos functions are defined for x > 0 and return NaN for x <= 0 or NaN.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

// PPC_ROW_KERNEL marks a kernel that evaluates special functions over whole
// rows (a topic's V entries). The precompiled runtime builds it for AVX-512,
// AVX2 and the baseline, chosen at load time (an ifunc): its loop then runs
// 8 lanes wide where the CPU has them. The runtime's bitcode puts it in the
// section the JIT looks for, and the JIT calls the precompiled kernel
// instead of compiling its body again (codegen/LLVMCodegen.cpp): the inliner
// would not inline these special functions into the loop, so the JIT's copy
// would run one lane at a time, and compiling it costs latency.
//
// PPC_VECTOR_CLONES gives an internal helper (no symbol the JIT could call)
// the same three clones, so its loops run as wide as the kernels that call it.
#if defined(PPC_RUNTIME_BITCODE)
#define PPC_ROW_KERNEL __attribute__((section(".text.ppc.precompiled")))
#define PPC_VECTOR_CLONES
#elif defined(__x86_64__) && defined(__GNUC__) && defined(__gnu_linux__)
#define PPC_ROW_KERNEL __attribute__((target_clones("avx512f", "avx2", "default")))
#define PPC_VECTOR_CLONES PPC_ROW_KERNEL
#else
#define PPC_ROW_KERNEL
#define PPC_VECTOR_CLONES
#endif

// PPC_TOKEN_KERNEL marks a kernel called once per datum in the hot loops
// (a categorical's fused product and message): the JIT inlines it into the
// loop whatever its size, where the row width becomes a constant.
#if defined(PPC_RUNTIME_BITCODE)
#define PPC_TOKEN_KERNEL __attribute__((always_inline))
#else
#define PPC_TOKEN_KERNEL
#endif

// The special functions below are always inlined into the precompiled
// kernels: a row kernel's loop runs 8 lanes wide only with them inside it,
// and GCC's unit-growth limits would otherwise leave calls to the baseline
// copies in some clones (a 2.7x slower digamma over LDA's topics). The JIT's
// bitcode keeps its own inlining decisions (compile latency).
#if defined(PPC_RUNTIME_BITCODE)
#define PPC_MATH_INLINE inline
#else
#define PPC_MATH_INLINE __attribute__((always_inline)) inline
#endif

namespace ppc::rt::vm {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kHalfLog2Pi = 0.91893853320467274178032973640562;  // ln(2*pi)/2

/// e^x, < 1 ulp in the normal range; +inf above 709.78, 0 below -745.13.
PPC_MATH_INLINE double exp(double x) {
  // Clamp so that k below stays in [-1075, 1025]; NaN passes through (both compares false).
  const double xc = x < -745.5 ? -745.5 : (x > 710.0 ? 710.0 : x);
  constexpr double kShifter = 0x1.8p52;  // adding it rounds to the nearest integer
  constexpr double kLog2e = 1.4426950408889634074;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // fdlibm split of ln 2
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const double kd = (xc * kLog2e + kShifter) - kShifter;
  const double r = (xc - kd * kLn2Hi) - kd * kLn2Lo;  // |r| <= 0.3466 (plus rounding)
  // fdlibm's rational form: exp(r) = 1 + 2r / (R(r^2) - r) with a Remez polynomial
  // c(r) = r - r^2 (P1 + ... + P5 r^8); < 1 ulp, fewer operations than a Taylor series.
  constexpr double P1 = 1.66666666666666019037e-01, P2 = -2.77777777770155933842e-03,
                   P3 = 6.61375632143793436117e-05, P4 = -1.65339022054652515390e-06,
                   P5 = 4.13813679705723846039e-08;
  const double hi = xc - kd * kLn2Hi;
  const double lo = kd * kLn2Lo;
  const double t = r * r;
  const double c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  const double p = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
  // 2^k as 2^k1 * 2^k2 with k1 ~ k/2, so both factors are normal numbers even
  // when the result is subnormal or close to overflow.
  const double k1d = (kd * 0.5 + kShifter) - kShifter;
  const double k2d = kd - k1d;
  constexpr std::uint64_t kShifterBits = std::bit_cast<std::uint64_t>(kShifter);
  const std::uint64_t e1 = std::bit_cast<std::uint64_t>(k1d + kShifter) - kShifterBits + 1023u;
  const std::uint64_t e2 = std::bit_cast<std::uint64_t>(k2d + kShifter) - kShifterBits + 1023u;
  const double s1 = std::bit_cast<double>(e1 << 52);
  const double s2 = std::bit_cast<double>(e2 << 52);
  const double y = (p * s1) * s2;
  return x > 710.0 ? kInf : (x < -745.5 ? 0.0 : y);
}

/// log's arithmetic for a positive, finite, normal xs, less `scaled` (54 for
/// an input log scaled up by 2^54, else 0) times ln 2.
PPC_MATH_INLINE double logOfNormal(double xs, double scaled) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(xs);
  // Mantissa in [1, 2), biased exponent as a double (magic-number conversion).
  const double m0 = std::bit_cast<double>((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  const double eb = std::bit_cast<double>((bits >> 52) | 0x4330000000000000ull) - 0x1p52;
  const bool big = m0 > 1.4142135623730951;  // sqrt(2): fold mantissa into [sqrt(.5), sqrt(2))
  const double m = big ? m0 * 0.5 : m0;
  const double k = eb - 1023.0 + (big ? 1.0 : 0.0) - scaled;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
                   Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
                   Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                   Lg7 = 1.479819860511658591e-01;
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double w = z * z;
  const double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
  const double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
  const double R = t2 + t1;
  const double hfsq = 0.5 * f * f;
  return k * kLn2Hi - ((hfsq - (s * (hfsq + R) + k * kLn2Lo)) - f);
}

/// Natural logarithm, < 1 ulp (fdlibm's polynomial); log(0) = -inf, log(x<0) = NaN.
PPC_MATH_INLINE double log(double x) {
  // Subnormals: scale into the normal range first.
  const bool sub = x < 0x1p-1022;
  double y = logOfNormal(sub ? x * 0x1p54 : x, sub ? 54.0 : 0.0);
  y = x == kInf ? kInf : y;
  y = x == 0.0 ? -kInf : y;
  y = x < 0.0 ? kNaN : y;
  return x != x ? x : y;
}

/// log(x) for x known positive, finite and normal (a uniform draw in (0, 1)):
/// the same bits without log's tests and selects for the other cases (the
/// random start's 6 M draws for LDA on AP: 17.7 -> 15.0 ms on AVX2).
PPC_MATH_INLINE double log_of_normal(double x) { return logOfNormal(x, 0.0); }

/// Number of recurrence steps used to move small arguments to >= kShift.
inline constexpr int kShift = 10;

/// Sum_{k<kShift} 1/(x+k) as one fraction num/den (one division instead of
/// ten); den is prod_{k<kShift} (x+k). As a tree of pairs, 1/a + 1/b =
/// (a + b) / (a b), then fractions added two by two: five levels of
/// dependent operations instead of Horner's twenty, so that the vector
/// loops over the entries are not bound by this chain's latency (LDA's
/// documents refresh 20 digammas per sweep).
PPC_MATH_INLINE void shiftFraction(double x, double& num, double& den) {
  static_assert(kShift == 10, "the tree below adds ten fractions");
  double n[5], d[5];
  for (int j = 0; j < 5; ++j) {
    const double a = x + 2 * j, b = x + (2 * j + 1);
    n[j] = a + b;
    d[j] = a * b;
  }
  const double n01 = n[0] * d[1] + n[1] * d[0], d01 = d[0] * d[1];
  const double n23 = n[2] * d[3] + n[3] * d[2], d23 = d[2] * d[3];
  const double n03 = n01 * d23 + n23 * d01, d03 = d01 * d23;
  num = n03 * d[4] + n[4] * d03;
  den = d03 * d[4];
}

/// psi(y) = ln y - 1/(2y) - digammaSeries(1/y^2); error < 5e-17 for y >= 10.
/// Estrin's scheme (three levels) rather than Horner's (seven): the same
/// polynomial with a shorter dependency chain.
PPC_MATH_INLINE double digammaSeries(double z) {
  // z (c1 - c2 z + c3 z^2 - c4 z^3 + c5 z^4 - c6 z^5 + c7 z^6), c_k = B_2k / (2k)
  const double z2 = z * z, z4 = z2 * z2;
  const double p01 = 1.0 / 12 - (1.0 / 120) * z, p23 = 1.0 / 252 - (1.0 / 240) * z,
               p45 = 1.0 / 132 - (691.0 / 32760) * z;
  return z * ((p01 + p23 * z2) + z4 * (p45 + (1.0 / 12) * z2));
}

/// lgamma(y) = (y - 1/2) ln y - y + ln(2 pi)/2 + lgammaSeries(1/y, 1/y^2):
/// sum_k B_2k / (2k (2k-1) y^(2k-1)); error < 3e-17 for y >= 10. Estrin's
/// scheme, as digammaSeries.
PPC_MATH_INLINE double lgammaSeries(double iy, double z) {
  // iy (c1 - c2 z + c3 z^2 - c4 z^3 + c5 z^4 - c6 z^5 + c7 z^6)
  const double z2 = z * z, z4 = z2 * z2;
  const double p01 = 1.0 / 12 - (1.0 / 360) * z, p23 = 1.0 / 1260 - (1.0 / 1680) * z,
               p45 = 1.0 / 1188 - (691.0 / 360360) * z;
  return iy * ((p01 + p23 * z2) + z4 * (p45 + (1.0 / 156) * z2));
}

/// digamma_pos's recurrence: y = x moved to >= kShift, corr the sum of
/// 1/(x+k) over the steps taken (0 for none), iy = 1/y.
PPC_MATH_INLINE void digammaShift(double x, double& y, double& corr, double& iy) {
  double num, den;
  shiftFraction(x, num, den);
  const bool small = x < kShift;
  y = small ? x + kShift : x;
  corr = small ? num / den : 0.0;
  iy = 1.0 / y;
}

/// digamma(x) = d/dx log Gamma(x) for x > 0.
PPC_MATH_INLINE double digamma_pos(double x) {
  double y, corr, iy;
  digammaShift(x, y, corr, iy);
  const double r = vm::log(y) - 0.5 * iy - digammaSeries(iy * iy) - corr;
  return x > 0.0 ? r : kNaN;
}

/// trigamma(x) = d^2/dx^2 log Gamma(x) for x > 0.
PPC_MATH_INLINE double trigamma_pos(double x) {
  double num = 0.0, den = 1.0;  // sum_{k<kShift} 1/(x+k)^2 = num/den
  for (int k = 0; k < kShift; ++k) {
    const double t = (x + k) * (x + k);
    num = num * t + den;
    den = den * t;
  }
  const bool small = x < kShift;
  const double y = small ? x + kShift : x;
  const double corr = small ? num / den : 0.0;
  const double iy = 1.0 / y;
  const double z = iy * iy;
  // psi1(y) = 1/y + 1/(2y^2) + sum_k B_2k / y^(2k+1)
  const double series =
      z * iy * (1.0 / 6 - z * (1.0 / 30 - z * (1.0 / 42 - z * (1.0 / 30 - z * (5.0 / 66 - z * (691.0 / 2730 - z * (7.0 / 6)))))));
  const double r = iy + 0.5 * z + series + corr;
  return x > 0.0 ? r : kNaN;
}

/// log Gamma(x) for x > 0 (Stirling series after shifting to >= 10).
PPC_MATH_INLINE double lgamma_pos(double x) {
  double num, den;  // den = prod_{k<kShift} (x+k), as digamma_lgamma_pos forms it (num unused)
  shiftFraction(x, num, den);
  (void)num;
  const bool small = x < kShift;
  const double y = small ? x + kShift : x;
  const double corr = small ? vm::log(den) : 0.0;
  const double iy = 1.0 / y;
  const double r = ((y - 0.5) * vm::log(y) - y) + (kHalfLog2Pi + lgammaSeries(iy, iy * iy)) - corr;
  return x > 0.0 ? r : kNaN;
}

/// digamma_lgamma_pos's first stage: y = x moved to >= kShift, corr the
/// recurrence's sum of 1/(x+k) and den its product of (x+k) (both for no
/// steps: 0 and 1, whose log is 0).
PPC_MATH_INLINE void digammaLgammaShift(double x, double& y, double& corr, double& den) {
  double num, d;
  shiftFraction(x, num, d);
  const bool small = x < kShift;
  y = small ? x + kShift : x;
  corr = small ? num / d : 0.0;
  den = small ? d : 1.0;
}

/// digamma_lgamma_pos's last stage, from the first's y, corr and the logs of
/// y and den.
PPC_MATH_INLINE double digammaLgammaFinish(double x, double y, double corr, double logy, double logden, double& lg) {
  const double iy = 1.0 / y;
  const double z = iy * iy;
  const double r = logy - 0.5 * iy - digammaSeries(z) - corr;
  const double l = ((y - 0.5) * logy - y) + (kHalfLog2Pi + lgammaSeries(iy, z)) - logden;
  lg = x > 0.0 ? l : kNaN;
  return x > 0.0 ? r : kNaN;
}

/// digamma_pos(x), with lgamma_pos(x) in `lg`: both from one shift and one
/// log(y) (a Dirichlet's statistics and its entropy's lgamma in one pass,
/// codegen/EntropySharing.cpp). The same operations in the same order as the
/// two functions above, so the results are theirs bit for bit (tested). In
/// two stages around the logarithms, which a row kernel can run as separate
/// loops (digammaLgammaRowMinus).
PPC_MATH_INLINE double digamma_lgamma_pos(double x, double& lg) {
  double y, corr, den;
  digammaLgammaShift(x, y, corr, den);
  return digammaLgammaFinish(x, y, corr, vm::log(y), vm::log(den), lg);
}

/// x shifted by the recurrence to >= kShift: the y of digamma_pos.
PPC_MATH_INLINE double digamma_shifted(double x) { return x < kShift ? x + kShift : x; }

/// digamma_pos(x) - log(digamma_shifted(x)): -1/(2y) - digammaSeries(1/y^2)
/// - the shift's sum of 1/(x+k) (NaN for x <= 0). For exp(psi(x) - M) =
/// y exp(t - M), which needs no logarithm (ppc_dirichlet_exp_stats).
PPC_MATH_INLINE double digamma_without_log(double x) {
  double y, corr, iy;
  digammaShift(x, y, corr, iy);
  const double t = (-0.5 * iy - digammaSeries(iy * iy)) - corr;
  return x > 0.0 ? t : kNaN;
}

/// ln 2 * (the binary exponent of y > 0): log y rounded down to a multiple
/// of ln 2, from the bits alone. The biased exponent becomes a double by
/// the 2^52 trick, not an int64 conversion (which AVX2 lacks: the loop
/// would not vectorize).
PPC_MATH_INLINE double log_floor(double y) {
  constexpr uint64_t kTwo52 = 0x4330000000000000;  // 2^52: its low bits hold an integer below 2^52
  const double biased = std::bit_cast<double>((std::bit_cast<uint64_t>(y) >> 52) | kTwo52) - 0x1p52;
  return (biased - 1023.0) * 0.69314718055994530942;
}

/// log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|).
PPC_MATH_INLINE double softplus(double x) {
  const double ax = x < 0.0 ? -x : x;
  const double e = vm::exp(-ax);
  // log1p(e) for e in (0, 1]: log(1+e) computed with the standard correction
  // u = 1+e, log(u) - ((u-1)-e)/u, accurate to a few ulp.
  const double u = 1.0 + e;
  const double l = vm::log(u) - ((u - 1.0) - e) / u;
  return (x > 0.0 ? x : 0.0) + l;
}

}  // namespace ppc::rt::vm
