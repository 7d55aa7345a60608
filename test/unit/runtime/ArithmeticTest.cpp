//===- test/unit/runtime/ArithmeticTest.cpp - deterministic factors -------===//
//
// The kernels of runtime/factors/Arithmetic.h against brute force: forward
// statistics against Monte Carlo moments of independent Gaussian draws, and
// each message against the function it stands for, E_q(other)[eta0 m +
// eta1 m^2] as a function of the argument, evaluated by Monte Carlo over
// the other argument with common random numbers (the message's natural
// parameters must reproduce its differences between argument values).
//
//===----------------------------------------------------------------------===//
#include "runtime/Operators.h"
#include "runtime/VectorIsa.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kDraws = 400000;

struct Scalar {
  double mean, var;
  std::vector<double> stats() const { return {mean, var + mean * mean}; }
};

std::vector<double> draws(const Scalar &s, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(s.mean, std::sqrt(s.var));
  std::vector<double> x(kDraws);
  for (double &v : x)
    v = n(rng);
  return x;
}

using Op = std::function<double(double, double)>;
using Forward = void (*)(const double *, const double *, double *);
using Message = void (*)(const double *, const double *, double, double *);

void checkScalarFactor(const Op &f, Forward forward, Message toLeft, Message toRight) {
  const Scalar a{0.7, 0.5}, b{-1.3, 0.8};
  const std::vector<double> xa = draws(a, 1), xb = draws(b, 2);
  double m1 = 0, m2 = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double m = f(xa[i], xb[i]);
    m1 += m / kDraws;
    m2 += m * m / kDraws;
  }
  double out[2] = {0, 0};
  forward(a.stats().data(), b.stats().data(), out);
  EXPECT_NEAR(out[0], m1, 0.02 * (1 + std::abs(m1)));
  EXPECT_NEAR(out[1], m2, 0.02 * (1 + std::abs(m2)));

  // eta of m: its children's messages; the message to an argument x must give
  // eta_x0 x + eta_x1 x^2 = E[eta0 m + eta1 m^2] + const.
  const double eta[2] = {0.9, -0.4}, w = 1.5;
  auto check = [&](Message msg, const std::vector<double> &other, const Scalar &otherQ, bool left) {
    double d[2] = {0, 0};
    msg(eta, otherQ.stats().data(), w, d);
    auto g = [&](double x) {
      double s = 0;
      for (int i = 0; i < kDraws; ++i) {
        const double m = left ? f(x, other[i]) : f(other[i], x);
        s += w * (eta[0] * m + eta[1] * m * m) / kDraws;
      }
      return s;
    };
    for (double x : {-1.0, 0.5, 2.0}) {
      const double lhs = d[0] * (x - 0.1) + d[1] * (x * x - 0.01), rhs = g(x) - g(0.1);
      EXPECT_NEAR(lhs, rhs, 0.02 * (1 + std::abs(rhs))) << "x = " << x;
    }
  };
  check(toLeft, xb, b, true);
  check(toRight, xa, a, false);
}

TEST(Arithmetic, SumMatchesMonteCarlo) {
  checkScalarFactor([](double x, double y) { return x + y; }, ppc_sum_forward, ppc_sum_to_left, ppc_sum_to_right);
}

TEST(Arithmetic, DifferenceMatchesMonteCarlo) {
  checkScalarFactor([](double x, double y) { return x - y; }, ppc_difference_forward, ppc_difference_to_left,
                    ppc_difference_to_right);
}

TEST(Arithmetic, ProductMatchesMonteCarlo) {
  checkScalarFactor([](double x, double y) { return x * y; }, ppc_product_forward, ppc_product_to_left,
                    ppc_product_to_right);
}

// a.dot(b) with a an MvGaussian (full statistics) and b either another
// (full) or a known vector: the forward moments against the closed forms
// written independently, E (a.b)^2 = mu_a^T S_b mu_a + tr(S_a S_b) + ... via
// Monte Carlo over both.
TEST(Arithmetic, InnerProductMatchesMonteCarlo) {
  const int D = 3;
  const double ma[D] = {0.5, -1.0, 2.0}, sa[D] = {0.3, 0.2, 0.5};
  const double mb[D] = {1.0, 0.4, -0.7}, sb[D] = {0.6, 0.1, 0.2};
  auto full = [&](const double *m, const double *s) {
    std::vector<double> r(m, m + D);
    for (int i = 0; i < D; ++i)
      for (int j = 0; j < D; ++j)
        r.push_back(m[i] * m[j] + (i == j ? s[i] : 0.0));
    return r;
  };
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n01;
  double m1 = 0, m2 = 0, k1 = 0, k2 = 0;
  for (int t = 0; t < kDraws; ++t) {
    double dot = 0, known = 0;
    for (int i = 0; i < D; ++i) {
      const double a = ma[i] + std::sqrt(sa[i]) * n01(rng), b = mb[i] + std::sqrt(sb[i]) * n01(rng);
      dot += a * b;
      known += a * mb[i];
    }
    m1 += dot / kDraws;
    m2 += dot * dot / kDraws;
    k1 += known / kDraws;
    k2 += known * known / kDraws;
  }
  const std::vector<double> A = full(ma, sa), B = full(mb, sb);
  double out[2] = {0, 0};
  ppc_dot_forward(D, A.data(), 1, B.data(), 1, out);
  EXPECT_NEAR(out[0], m1, 0.02 * (1 + std::abs(m1)));
  EXPECT_NEAR(out[1], m2, 0.02 * (1 + std::abs(m2)));
  double known[2] = {0, 0};
  ppc_dot_forward(D, A.data(), 1, mb, 0, known);
  EXPECT_NEAR(known[0], k1, 0.02 * (1 + std::abs(k1)));
  EXPECT_NEAR(known[1], k2, 0.02 * (1 + std::abs(k2)));
  // The message to a from a known b is (eta0 b, eta1 b b^T): a known row and
  // its full form (b's point mass) give the same message.
  const double eta[2] = {0.9, -0.4};
  std::vector<double> fromRow(D + D * D, 0.0), fromFull(D + D * D, 0.0);
  ppc_dot_to_left(D, eta, mb, 0, 2.0, fromRow.data());
  const double zero[D] = {0, 0, 0};
  ppc_dot_to_left(D, eta, full(mb, zero).data(), 1, 2.0, fromFull.data());
  for (int i = 0; i < D + D * D; ++i)
    EXPECT_DOUBLE_EQ(fromRow[size_t(i)], fromFull[size_t(i)]) << i;
  EXPECT_DOUBLE_EQ(fromRow[0], 2.0 * 0.9 * mb[0]);
  EXPECT_DOUBLE_EQ(fromRow[D + 1], 2.0 * -0.4 * mb[0] * mb[1]);
}

} // namespace

namespace {
// s * tau with tau ~ Gamma(a, b): statistics against Monte Carlo moments, and
// the message to tau reproduces E[eta0 m + eta1 log m] as a function of tau.
TEST(Arithmetic, ScaledGammaMatchesMonteCarlo) {
  const double a = 3.0, b = 2.0, s = 0.7;
  std::mt19937_64 rng(11);
  std::gamma_distribution<double> g(a, 1.0 / b);
  double m1 = 0, mlog = 0, e = 0, elog = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double t = g(rng);
    m1 += s * t / kDraws;
    mlog += std::log(s * t) / kDraws;
    e += t / kDraws;
    elog += std::log(t) / kDraws;
  }
  const double tau[2] = {e, elog};
  double out[2] = {0, 0};
  ppc_scale_forward(tau, s, out);
  EXPECT_NEAR(out[0], m1, 1e-12 * std::abs(m1) + 1e-12); // exact for the sample's own moments
  EXPECT_NEAR(out[1], mlog, 1e-9);
  const double eta[2] = {-0.8, 1.3}, w = 2.0;
  double d[2] = {0, 0};
  ppc_scale_to_variable(eta, s, w, d);
  for (double t : {0.5, 1.0, 4.0}) { // d0 (t - 1) + d1 (log t - log 1) = w [f(s t) - f(s)]
    auto f = [&](double m) { return eta[0] * m + eta[1] * std::log(m); };
    EXPECT_NEAR(d[0] * (t - 1.0) + d[1] * std::log(t), w * (f(s * t) - f(s)), 1e-12) << t;
  }
}
} // namespace

namespace {
double logSigmoid(double x) { return x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x)); }

// sigmoid(e) with e ~ N(mu, v): the forward statistics are lower bounds of
// (E log s(e), E log s(-e)) by Monte Carlo, exact for a point mass, and
// their difference is E e exactly.
TEST(Arithmetic, SigmoidForwardBoundsMonteCarlo) {
  for (Scalar e : {Scalar{0.3, 0.5}, Scalar{-2.0, 1.5}, Scalar{4.0, 0.01}, Scalar{0.0, 3.0}}) {
    std::vector<double> x = draws(e, 5);
    double lp = 0, lq = 0;
    for (double v : x) {
      lp += logSigmoid(v) / kDraws;
      lq += logSigmoid(-v) / kDraws;
    }
    std::vector<double> st = e.stats();
    double out[2] = {0, 0};
    ppc_sigmoid_forward(st.data(), out);
    EXPECT_LE(out[0], lp + 3e-3) << e.mean; // Monte Carlo error about 1e-3
    EXPECT_LE(out[1], lq + 3e-3) << e.mean;
    EXPECT_GT(out[0], lp - 0.5) << e.mean; // a bound, not a wild one
    EXPECT_NEAR(out[0] - out[1], e.mean, 1e-12);
  }
  for (double c : {-3.0, -0.2, 0.0, 0.7, 25.0}) {
    const double st[2] = {c, c * c};
    double out[2] = {0, 0};
    ppc_sigmoid_forward(st, out);
    EXPECT_NEAR(out[0], logSigmoid(c), 1e-12) << c;
    EXPECT_NEAR(out[1], logSigmoid(-c), 1e-12) << c;
  }
}

// The message to e from (a, b) on (log p, log(1 - p)) is a quadratic
// d0 e + d1 e^2 that, shifted by a constant, stays below f(e) = a log s(e) +
// b log s(-e) and touches it at e = xi and -xi (the Jaakkola-Jordan bound
// at xi = sqrt(E e^2)).
TEST(Arithmetic, SigmoidMessageIsTheJaakkolaJordanBound) {
  for (auto [a, b, mu, var] : {std::array<double, 4>{1, 0, 0.5, 0.4}, {0, 1, -1.0, 2.0}, {3, 2, 0.1, 1e-12},
                               {0.4, 0.6, 0.0, 0.0}}) {
    const double st[2] = {mu, var + mu * mu}, eta[2] = {a, b}, w = 2.0;
    const double xi = std::sqrt(st[1]);
    double d[2] = {0, 0};
    ppc_sigmoid_to_logodds(eta, st, w, d);
    auto gap = [&](double e) { return w * (a * logSigmoid(e) + b * logSigmoid(-e)) - (d[0] * e + d[1] * e * e); };
    const double touch = gap(xi);
    EXPECT_NEAR(gap(-xi), touch, 1e-9);
    for (double e = -12.0; e <= 12.0; e += 0.01)
      EXPECT_GE(gap(e), touch - 1e-9) << e;
  }
}
} // namespace

namespace {
// softmax of K independent Gaussians: Bouchard's bound on E log p_k is below
// the Monte Carlo value and within the bound's known slack (under 1 nat here);
// at zero variance and equal means it is log(1/K) minus the bound's gap.
TEST(Arithmetic, SoftmaxForwardBoundsMonteCarlo) {
  const std::vector<Scalar> e = {{0.5, 0.3}, {-1.0, 1.0}, {2.0, 0.05}};
  const int64_t K = 3;
  std::vector<std::vector<double>> x;
  for (int64_t k = 0; k < K; ++k)
    x.push_back(draws(e[size_t(k)], 20 + unsigned(k)));
  std::vector<double> mc(K, 0.0);
  for (int i = 0; i < kDraws; ++i) {
    double m = -1e300, total = 0;
    for (int64_t k = 0; k < K; ++k) m = std::max(m, x[size_t(k)][size_t(i)]);
    for (int64_t k = 0; k < K; ++k) total += std::exp(x[size_t(k)][size_t(i)] - m);
    for (int64_t k = 0; k < K; ++k) mc[size_t(k)] += (x[size_t(k)][size_t(i)] - m - std::log(total)) / kDraws;
  }
  std::vector<double> stats;
  for (const Scalar &s : e)
    for (double v : s.stats()) stats.push_back(v);
  std::vector<double> out(K, 0.0);
  ppc_softmax_forward(K, stats.data(), out.data());
  for (int64_t k = 0; k < K; ++k) {
    EXPECT_LE(out[size_t(k)], mc[size_t(k)] + 3e-3) << k;
    EXPECT_GT(out[size_t(k)], mc[size_t(k)] - 1.0) << k;
  }
  // The differences between categories are exact: E e_k - E e_j.
  EXPECT_NEAR(out[0] - out[1], 1.5, 1e-12);
}
} // namespace

namespace {
// The whole-plate kernels of codegen/transforms/BatchDot.cpp against the
// per-row ones: the forward statistics of n rows and the message with and
// without the X^T X table. D = 5 takes the kernels' row-by-row path, D = 37
// their register tiles (not a multiple of a tile's columns); 7 rows are
// fewer than a tile's, 301 span two of the forward kernel's chunks of 256;
// on every vector ISA this CPU runs (ppc --cpu chooses among them).
class RowKernels : public ::testing::TestWithParam<std::pair<int64_t, int64_t>> {};
INSTANTIATE_TEST_SUITE_P(DimensionsAndRows, RowKernels,
                         ::testing::Values(std::pair<int64_t, int64_t>{5, 7}, std::pair<int64_t, int64_t>{37, 7},
                                           std::pair<int64_t, int64_t>{37, 301}, std::pair<int64_t, int64_t>{16, 301}));
TEST_P(RowKernels, EqualPerRowCalls) {
  for (int level = 0; level <= int(ppc::rt::hostVectorIsa()); ++level) {
  std::string error;
  ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::VectorIsa(level), error)) << error;
  SCOPED_TRACE(std::string(ppc::rt::describe(ppc::rt::VectorIsa(level))));
  const int64_t D = GetParam().first, n = GetParam().second;
  std::vector<double> X(size_t(n * D)), a(size_t(D + D * D)), eta(size_t(2 * n));
  for (int64_t k = 0; k < n * D; ++k)
    X[size_t(k)] = std::sin(0.7 * double(k) + 0.3);
  for (int64_t c = 0; c < D; ++c)
    a[size_t(c)] = 0.2 * double(c) - 0.4;
  for (int64_t r = 0; r < D; ++r)
    for (int64_t c = 0; c < D; ++c) // a symmetric E[w w^T]
      a[size_t(D + r * D + c)] = a[size_t(r)] * a[size_t(c)] + (r == c ? 1.0 : 0.1 / double(1 + r + c));
  std::vector<double> rows(size_t(2 * n)), one(2);
  ppc_dot_forward_rows(n, D, a.data(), X.data(), rows.data());
  for (int64_t i = 0; i < n; ++i) {
    one = {0, 0};
    ppc_dot_forward(D, a.data(), 1, X.data() + i * D, 0, one.data());
    EXPECT_NEAR(rows[size_t(2 * i)], one[0], 1e-12 * (1 + std::abs(one[0])));
    EXPECT_NEAR(rows[size_t(2 * i + 1)], one[1], 1e-12 * std::abs(one[1]));
  }
  for (bool same : {true, false}) {
    for (int64_t i = 0; i < n; ++i) {
      eta[size_t(2 * i)] = 0.3 * double(i) - 1.0;
      eta[size_t(2 * i + 1)] = same ? -0.7 : -0.7 - 0.1 * double(i);
    }
    std::vector<double> batched(size_t(D + D * D), 0.0), perRow(size_t(D + D * D), 0.0), gram(size_t(1 + D * D), 0.0);
    ppc_dot_to_operand_rows(n, D, eta.data(), X.data(), 1.5, gram.data(), batched.data());
    for (int64_t i = 0; i < n; ++i)
      ppc_dot_to_left(D, eta.data() + 2 * i, X.data() + i * D, 0, 1.5, perRow.data());
    for (size_t k = 0; k < batched.size(); ++k)
      EXPECT_NEAR(batched[k], perRow[k], 1e-12 * (1 + std::abs(perRow[k]))) << (same ? "table " : "rows ") << k;
    EXPECT_EQ(gram[0], same ? 1.0 : 0.0); // the table is built only when every e1 is the same
  }
  // Deferred variances (codegen/transforms/VarianceSums.cpp): the rows'
  // means and squared means, the sum of their variances, and the variances
  // put back give the forward rows above.
  std::vector<double> means(size_t(2 * n)), shadow(2), snapshot(a.size()), table(size_t(1 + D * D), 0.0);
  ppc_dot_forward_rows_mean(n, D, a.data(), X.data(), means.data());
  ppc_dot_variance_sum(n, D, a.data(), X.data(), table.data(), snapshot.data(), shadow.data());
  double variances = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(means[size_t(2 * i)], rows[size_t(2 * i)], 1e-12 * (1 + std::abs(rows[size_t(2 * i)])));
    EXPECT_NEAR(means[size_t(2 * i + 1)], rows[size_t(2 * i)] * rows[size_t(2 * i)], 1e-11 * (1 + rows[size_t(2 * i + 1)]));
    variances += rows[size_t(2 * i + 1)] - rows[size_t(2 * i)] * rows[size_t(2 * i)];
  }
  EXPECT_EQ(shadow[0], 0.0);
  EXPECT_NEAR(shadow[1], variances, 1e-10 * std::abs(variances));
  EXPECT_EQ(snapshot, a);
  std::vector<double> twice = means;
  ppc_dot_add_variance_rows(n, D, snapshot.data(), X.data(), means.data(), twice.data());
  for (int64_t i = 0; i < 2 * n; ++i) {
    EXPECT_NEAR(means[size_t(i)], rows[size_t(i)], 1e-11 * (1 + std::abs(rows[size_t(i)])));
    EXPECT_EQ(twice[size_t(i)], means[size_t(i)]);
  }
  // Message rows affine in a data column (codegen/transforms/AffineRows.cpp):
  // eta_i = at0 + (at1 - at0) y_i, from the tables against per-row calls,
  // with e1 the same for every row and varying with y.
  for (bool same : {true, false}) {
    std::vector<double> y(static_cast<size_t>(n)), at0{0.4, -0.6}, at1{1.9, same ? -0.6 : -0.9};
    for (int64_t i = 0; i < n; ++i) {
      y[size_t(i)] = std::cos(1.3 * double(i)) * 2.0;
      for (int c = 0; c < 2; ++c)
        eta[size_t(2 * i + c)] = at0[size_t(c)] + (at1[size_t(c)] - at0[size_t(c)]) * y[size_t(i)];
    }
    std::vector<double> affine(size_t(D + D * D), 0.0), perRow(size_t(D + D * D), 0.0), sums(size_t(1 + 2 * D), 0.0),
        grams(size_t(1 + D * D), 0.0);
    for (int pass = 0; pass < 2; ++pass) { // the second from the tables made by the first
      std::fill(affine.begin(), affine.end(), 0.0);
      ppc_dot_to_operand_affine(n, D, at0.data(), at1.data(), eta.data(), X.data(), y.data(), 1.5, sums.data(),
                                grams.data(), affine.data());
    }
    for (int64_t i = 0; i < n; ++i)
      ppc_dot_to_left(D, eta.data() + 2 * i, X.data() + i * D, 0, 1.5, perRow.data());
    for (size_t k = 0; k < affine.size(); ++k)
      EXPECT_NEAR(affine[k], perRow[k], 1e-11 * (1 + std::abs(perRow[k]))) << (same ? "same e1 " : "e1 by row ") << k;
    EXPECT_EQ(sums[0], 1.0);
    EXPECT_EQ(grams[0], same ? 1.0 : 0.0); // X^T X only when e1 is the same for every row
  }
  }
  std::string error;
  ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::hostVectorIsa(), error));
}
} // namespace
