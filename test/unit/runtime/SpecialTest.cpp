// Special functions: literature values, long-double references, ulp checks of
// the vectorized exp/log, and the slice kernels against the scalar bodies.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "runtime/Special.h"
#include "runtime/VecMath.h"
#include "test/unit/runtime/TestUtil.h"

namespace ppc::rt {
namespace {

using test::refDigamma;
using test::refLgamma;
using test::refTrigamma;
using test::ulpError;

// Euler-Mascheroni constant and the positive root of digamma, to 25+ digits.
// Sources: Abramowitz & Stegun 6.1.3 (gamma), OEIS A001620; root x0: OEIS A030169,
// also A&S Table 6.1 (x0 = 1.46163 21449 68362 34126 ...).
constexpr double kEulerGamma = 0.57721566490153286060651209;
constexpr double kDigammaRoot = 1.46163214496836234126265954;

// Log-uniform grid on [lo, hi] plus the integers and half-integers below 20.
std::vector<double> testGrid(double lo, double hi, int n) {
  std::vector<double> xs;
  for (int i = 0; i < n; ++i) xs.push_back(lo * std::pow(hi / lo, (i + 0.5) / n));
  for (int k = 1; k <= 40; ++k) xs.push_back(0.5 * k);
  return xs;
}

TEST(Special, DigammaLiteratureValues) {
  // A&S 6.3.2: psi(1) = -gamma; 6.3.3: psi(1/2) = -gamma - 2 ln 2; 6.3.4: psi(n) = -gamma + H_{n-1}.
  EXPECT_NEAR(digamma(1.0), -kEulerGamma, 1e-15);
  EXPECT_NEAR(digamma(0.5), -kEulerGamma - 2.0 * std::log(2.0), 2e-15);
  EXPECT_NEAR(digamma(10.0), -kEulerGamma + (1. + 1. / 2 + 1. / 3 + 1. / 4 + 1. / 5 + 1. / 6 + 1. / 7 + 1. / 8 + 1. / 9),
              1e-15);
  EXPECT_NEAR(digamma(kDigammaRoot), 0.0, 1e-15);
  // A&S 6.4.2: psi'(1) = pi^2/6; 6.4.4: psi'(1/2) = pi^2/2.
  EXPECT_NEAR(trigamma(1.0), std::numbers::pi * std::numbers::pi / 6.0, 4e-16);
  EXPECT_NEAR(trigamma(0.5), std::numbers::pi * std::numbers::pi / 2.0, 8e-16);
  // Gamma(1/2) = sqrt(pi); Gamma(1/3) = 2.678938534707747633655692940974677644 (OEIS A073005).
  // The kernel's lgamma cancels terms of size ~20 for small x: absolute error <= 1e-14.
  const double lg12 = 0.5 * std::log(std::numbers::pi);
  EXPECT_NEAR(vm::lgamma_pos(0.5), lg12, 1e-14);
  EXPECT_NEAR(vm::lgamma_pos(1.0 / 3.0), std::log(2.678938534707747633655692940974677644), 1e-14);
  EXPECT_NEAR(vm::lgamma_pos(1.0), 0.0, 1e-14);
  EXPECT_NEAR(vm::lgamma_pos(2.0), 0.0, 1e-14);
  EXPECT_NEAR(vm::lgamma_pos(11.0), std::log(3628800.0), 1e-14);
  EXPECT_NEAR(lgamma(0.5), lg12, 2e-16);
}

TEST(Special, DigammaKernelAgainstLongDoubleReference) {
  const std::vector<double> xs = testGrid(1e-3, 1e6, 20000);
  std::vector<double> out(xs.size());
  ppc_digamma_n(static_cast<int64_t>(xs.size()), xs.data(), out.data());
  double maxRel = 0.0, maxAbsNearRoot = 0.0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const long double ref = refDigamma(xs[i]);
    const double err = static_cast<double>(std::abs(out[i] - ref));
    if (std::abs(ref) > 0.05L)
      maxRel = std::max(maxRel, err / static_cast<double>(std::abs(ref)));
    else
      maxAbsNearRoot = std::max(maxAbsNearRoot, err);
    EXPECT_LE(test::ulpDistance(out[i], digamma(xs[i])), 2.0) << "kernel and scalar differ at " << xs[i];
  }
  EXPECT_LE(maxRel, 1e-13);
  EXPECT_LE(maxAbsNearRoot, 5e-15);  // = 1e-13 relative at |psi| = 0.05
  std::printf("digamma: max rel err %.3g, max abs err near root %.3g\n", maxRel, maxAbsNearRoot);
}

TEST(Special, TrigammaKernelAgainstLongDoubleReference) {
  const std::vector<double> xs = testGrid(1e-3, 1e6, 20000);
  std::vector<double> out(xs.size());
  ppc_trigamma_n(static_cast<int64_t>(xs.size()), xs.data(), out.data());
  double maxRel = 0.0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const long double ref = refTrigamma(xs[i]);
    maxRel = std::max(maxRel, static_cast<double>(std::abs((out[i] - ref) / ref)));
  }
  EXPECT_LE(maxRel, 1e-13);
  std::printf("trigamma: max rel err %.3g\n", maxRel);
}

TEST(Special, LgammaKernelAgainstLongDoubleReference) {
  const std::vector<double> xs = testGrid(1e-3, 1e6, 20000);
  std::vector<double> out(xs.size());
  ppc_lgamma_n(static_cast<int64_t>(xs.size()), xs.data(), out.data());
  double maxRel = 0.0, maxAbs = 0.0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const long double ref = refLgamma(xs[i]);
    const double err = static_cast<double>(std::abs(out[i] - ref));
    // Relative error away from the roots x = 1 and x = 2 of lgamma; absolute near them.
    if (std::abs(ref) > 0.1L) maxRel = std::max(maxRel, err / static_cast<double>(std::abs(ref)));
    else maxAbs = std::max(maxAbs, err);
  }
  EXPECT_LE(maxRel, 1e-13);
  EXPECT_LE(maxAbs, 1e-14);
  std::printf("lgamma: max rel err %.3g (|lgamma| > 0.1), max abs err %.3g elsewhere\n", maxRel, maxAbs);
}

// The fused digamma and lgamma (codegen/EntropySharing.cpp's kernels) give
// digamma_pos and lgamma_pos bit for bit: sharing them changes no statistic.
TEST(Special, FusedDigammaLgammaIsBothFunctionsExactly) {
  std::vector<double> xs = testGrid(1e-6, 1e6, 4000);
  for (double x : {0.0, -1.0, -0.5, std::numeric_limits<double>::quiet_NaN(), 9.999999999999998, 10.0, 1e300})
    xs.push_back(x);
  for (double x : xs) {
    double lg = 0;
    const double dg = vm::digamma_lgamma_pos(x, lg);
    const double dgRef = vm::digamma_pos(x), lgRef = vm::lgamma_pos(x);
    if (std::isnan(dgRef)) {
      EXPECT_TRUE(std::isnan(dg) && std::isnan(lg)) << x;
      continue;
    }
    EXPECT_EQ(dg, dgRef) << x;
    EXPECT_EQ(lg, lgRef) << x;
  }
}

TEST(Special, ScalarLgammaMatchesReferenceEverywhere) {
  // The scalar lgamma (glibc lgamma_r) including near the roots and for negative arguments.
  for (double x : {-2.5, -0.5, 0.25, 0.999, 1.0001, 1.5, 1.9999, 2.0001, 3.7, 170.3, 1e10}) {
    const long double ref = refLgamma(x);
    EXPECT_LE(static_cast<double>(std::abs(lgamma(x) - ref)), 4e-16 * std::max(1.0, std::abs(static_cast<double>(ref))))
        << x;
  }
}

TEST(Special, NegativeArgumentsAndPoles) {
  // Recurrence psi(x + 1) = psi(x) + 1/x continued to negative non-integers.
  for (double x : {-0.5, -1.5, -2.25, -7.75}) {
    EXPECT_NEAR(digamma(x + 1.0), digamma(x) + 1.0 / x, 1e-13 * std::max(1.0, std::abs(digamma(x)))) << x;
    EXPECT_NEAR(trigamma(x + 1.0), trigamma(x) - 1.0 / (x * x), 1e-12 * std::max(1.0, trigamma(x))) << x;
  }
  EXPECT_NEAR(digamma(-0.5), 0.03648997397857652056, 1e-15);  // = psi(1/2) + 2
  for (double x : {0.0, -1.0, -4.0}) {
    EXPECT_TRUE(std::isnan(digamma(x))) << x;
    EXPECT_TRUE(std::isnan(trigamma(x))) << x;
  }
  // The kernels are defined for x > 0 only.
  const double bad[4] = {0.0, -1.5, std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity()};
  double out[4];
  ppc_digamma_n(4, bad, out);
  for (double v : out) EXPECT_TRUE(std::isnan(v));
  ppc_lgamma_n(4, bad, out);
  for (double v : out) EXPECT_TRUE(std::isnan(v));
}

TEST(Special, RecurrenceIdentitiesAtRandomPoints) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-6.0, 12.0);
  for (int i = 0; i < 2000; ++i) {
    const double x = std::exp(u(rng));
    EXPECT_NEAR(vm::digamma_pos(x + 1.0) - vm::digamma_pos(x), 1.0 / x, 1e-13 / x + 1e-14) << x;
    EXPECT_NEAR(vm::lgamma_pos(x + 1.0) - vm::lgamma_pos(x), std::log(x), 2e-13 * std::max(1.0, std::abs(vm::lgamma_pos(x)))) << x;
  }
}

TEST(Special, MultivariateGamma) {
  // Gamma_1 = Gamma; Gamma_2(a) = sqrt(pi) Gamma(a) Gamma(a - 1/2).
  EXPECT_NEAR(lmvgamma(1, 3.3), std::lgamma(3.3), 1e-14);
  EXPECT_NEAR(lmvgamma(2, 3.3), 0.5 * std::log(std::numbers::pi) + std::lgamma(3.3) + std::lgamma(2.8), 1e-13);
  EXPECT_NEAR(mvdigamma(2, 3.3), static_cast<double>(refDigamma(3.3L) + refDigamma(2.8L)), 1e-14);
}

TEST(Special, ExpWithinOneUlpOfLongDoubleReference) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-745.0, 709.7);
  std::uniform_real_distribution<double> small(-2.0, 2.0);
  std::vector<double> xs;
  for (int i = 0; i < 100000; ++i) xs.push_back(u(rng));
  for (int i = 0; i < 100000; ++i) xs.push_back(small(rng));
  std::vector<double> out(xs.size());
  ppc_exp_n(static_cast<int64_t>(xs.size()), xs.data(), out.data());
  double maxUlp = 0.0, maxUlpVsStd = 0.0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const long double ref = std::exp(static_cast<long double>(xs[i]));
    if (ref < 2.2250738585072014e-308L) continue;  // subnormal results checked separately
    maxUlp = std::max(maxUlp, ulpError(out[i], ref));
    maxUlpVsStd = std::max(maxUlpVsStd, test::ulpDistance(out[i], std::exp(xs[i])));
  }
  EXPECT_LE(maxUlp, 1.0);
  EXPECT_LE(maxUlpVsStd, 2.0);
  std::printf("exp: max %.3f ulp vs long double, %.1f ulp vs glibc\n", maxUlp, maxUlpVsStd);
}

TEST(Special, ExpSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double xs[] = {0.0, -0.0, 1.0, 709.78, 709.79, 1000.0, inf, -inf, -745.2, -746.0, -740.0, -708.5};
  double out[std::size(xs)];
  ppc_exp_n(std::size(xs), xs, out);
  EXPECT_EQ(out[0], 1.0);
  EXPECT_EQ(out[1], 1.0);
  EXPECT_LE(test::ulpDistance(out[2], std::exp(1.0)), 1.0);
  EXPECT_LE(test::ulpDistance(out[3], std::exp(709.78)), 1.0);
  EXPECT_EQ(out[4], inf);
  EXPECT_EQ(out[5], inf);
  EXPECT_EQ(out[6], inf);
  EXPECT_EQ(out[7], 0.0);
  EXPECT_EQ(out[8], 0.0);
  EXPECT_EQ(out[9], 0.0);
  // subnormal results: within 2 units of the smallest subnormal of glibc's value
  EXPECT_NEAR(out[10], std::exp(-740.0), 2 * 4.9406564584124654e-324);
  EXPECT_NEAR(out[11], std::exp(-708.5), 2 * 4.9406564584124654e-324);
  EXPECT_GT(out[10], 0.0);
  EXPECT_TRUE(std::isnan(vm::exp(std::numeric_limits<double>::quiet_NaN())));
}

TEST(Special, LogWithinOneUlpOfLongDoubleReference) {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> e(-1074.0, 1023.0);
  std::uniform_real_distribution<double> near1(0.5, 2.0);
  std::vector<double> xs;
  for (int i = 0; i < 100000; ++i) xs.push_back(std::exp2(e(rng)));
  for (int i = 0; i < 100000; ++i) xs.push_back(near1(rng));
  std::vector<double> out(xs.size());
  ppc_log_n(static_cast<int64_t>(xs.size()), xs.data(), out.data());
  double maxUlp = 0.0, maxUlpVsStd = 0.0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i] == 1.0) continue;
    maxUlp = std::max(maxUlp, ulpError(out[i], std::log(static_cast<long double>(xs[i]))));
    maxUlpVsStd = std::max(maxUlpVsStd, test::ulpDistance(out[i], std::log(xs[i])));
  }
  EXPECT_LE(maxUlp, 1.0);
  EXPECT_LE(maxUlpVsStd, 2.0);
  std::printf("log: max %.3f ulp vs long double, %.1f ulp vs glibc\n", maxUlp, maxUlpVsStd);
}

// log_of_normal drops log's special cases, not its arithmetic: on every
// normal number (the exponent's whole range, both sides of the mantissa's
// sqrt(2) fold, the smallest normal and the largest finite) the same bits.
TEST(Special, LogOfNormalIsLogBitForBit) {
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> e(-1022.0, 1023.0);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::vector<double> xs = {0x1p-1022, std::numeric_limits<double>::max(), 1.0, 1.4142135623730951,
                            std::nextafter(1.4142135623730951, 2.0), 0x1p-54, 1.0 - 0x1p-54, 0.5};
  for (int i = 0; i < 200000; ++i) xs.push_back(std::ldexp(mantissa(rng), static_cast<int>(e(rng))));
  for (double x : xs) {
    ASSERT_TRUE(std::isnormal(x)) << x;
    ASSERT_EQ(std::bit_cast<uint64_t>(vm::log_of_normal(x)), std::bit_cast<uint64_t>(vm::log(x))) << x;
  }
}

TEST(Special, LogSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  const double xs[] = {1.0, 0.0, -0.0, -1.0, inf, 4.9406564584124654e-324, 2.2250738585072014e-308, 2.0};
  double out[std::size(xs)];
  ppc_log_n(std::size(xs), xs, out);
  EXPECT_EQ(out[0], 0.0);
  EXPECT_EQ(out[1], -inf);
  EXPECT_EQ(out[2], -inf);
  EXPECT_TRUE(std::isnan(out[3]));
  EXPECT_EQ(out[4], inf);
  EXPECT_EQ(out[5], std::log(4.9406564584124654e-324));
  EXPECT_EQ(out[6], std::log(2.2250738585072014e-308));
  EXPECT_EQ(out[7], std::log(2.0));
  EXPECT_TRUE(std::isnan(vm::log(std::numeric_limits<double>::quiet_NaN())));
}

TEST(Special, SliceKernelsHandleAnyLengthAndInPlace) {
  // Lengths around vector widths and unrolled tails; the in-place call must equal the
  // scalar body (to 2 ulp: the library may be compiled with FMA contraction, see
  // PPC_RUNTIME_NATIVE, while this file is not).
  for (int64_t n : {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 33}) {
    std::vector<double> x(static_cast<size_t>(n) + 1, -99.0);
    for (int64_t i = 0; i < n; ++i) x[i] = 0.37 + 1.9 * i;
    std::vector<double> y = x;
    ppc_digamma_n(n, y.data(), y.data());
    for (int64_t i = 0; i < n; ++i) EXPECT_LE(test::ulpDistance(y[i], vm::digamma_pos(x[i])), 2.0) << x[i];
    EXPECT_EQ(y[n], -99.0) << "wrote past the end";
    y = x;
    ppc_lgamma_n(n, y.data(), y.data());
    for (int64_t i = 0; i < n; ++i) EXPECT_LE(test::ulpDistance(y[i], vm::lgamma_pos(x[i])), 2.0) << x[i];
    y = x;
    ppc_exp_n(n, y.data(), y.data());
    for (int64_t i = 0; i < n; ++i) EXPECT_LE(test::ulpDistance(y[i], vm::exp(x[i])), 2.0) << x[i];
    y = x;
    ppc_log_n(n, y.data(), y.data());
    for (int64_t i = 0; i < n; ++i) EXPECT_LE(test::ulpDistance(y[i], vm::log(x[i])), 2.0) << x[i];
    EXPECT_EQ(y[n], -99.0);
  }
}

TEST(Special, SoftplusAccurate) {
  for (double x : {-700.0, -40.0, -1.0, -1e-8, 0.0, 1e-8, 0.5, 3.0, 40.0, 800.0}) {
    const long double ref = x > 0 ? x + std::log1p(std::exp(-static_cast<long double>(x)))
                                  : std::log1p(std::exp(static_cast<long double>(x)));
    EXPECT_LE(static_cast<double>(std::abs((vm::softplus(x) - ref) / ref)), 4e-16) << x;
  }
}

}  // namespace
}  // namespace ppc::rt
