// Distributions: moments against closed forms and quadrature, gradient of the
// log-normalizer against E[T(x)], entropy and KL against quadrature / exact
// sums / Monte Carlo, sampling, natural-parameter round trips and validation.
//
// Tolerances: quadrature (double-exponential, h = 1/32) is accurate to ~1e-13,
// so quadrature comparisons use 1e-10 relative; numerical gradients use a
// fourth-order central difference with step 1e-4 (truncation ~1e-14, rounding
// ~1e-12 * |A|) and a tolerance of 1e-8 * max(1, |E T|); Monte Carlo checks
// use 5 standard errors estimated from the same samples (fixed seeds).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "runtime/Distributions.h"
#include "runtime/Special.h"
#include "test/unit/runtime/TestUtil.h"

namespace ppc::rt {
namespace {

using namespace ppc::rt::test;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double kQuadTol = 1e-10;

// ---------------------------------------------------------------------------
// Moments against closed forms (long-double digamma) and quadrature.

TEST(DistributionMoments, DirichletAgainstClosedFormsAndQuadrature) {
  const Dirichlet d(vec({0.3, 2.0, 5.5, 1.0}));
  const double a0 = 8.8;
  const VectorXd m = d.mean(), v = d.variance(), e = d.elog();
  for (int k = 0; k < 4; ++k) {
    const double ak = d.alpha()[k];
    EXPECT_NEAR(m[k], ak / a0, 1e-15);
    EXPECT_NEAR(v[k], ak * (a0 - ak) / (a0 * a0 * (a0 + 1)), 1e-15);
    EXPECT_NEAR(e[k], static_cast<double>(refDigamma(ak) - refDigamma(a0)), 1e-14);
    // marginal p_k ~ Beta(alpha_k, alpha_0 - alpha_k)
    const Rule r = betaRule(ak, a0 - ak);
    EXPECT_NEAR(r.total(), 1.0, 1e-13);
    EXPECT_NEAR(e[k], r.expect([](double p) { return std::log(p); }), kQuadTol * std::abs(e[k]));
    EXPECT_NEAR(m[k], r.expect([](double p) { return p; }), kQuadTol);
  }
  EXPECT_EQ(d.expectedStats(), d.elog());
}

TEST(DistributionMoments, BetaAgainstQuadrature) {
  for (auto [a, b] : {std::pair{0.4, 0.7}, std::pair{2.0, 3.0}, std::pair{30.0, 0.9}}) {
    const Beta d(a, b);
    const Rule r = betaRule(a, b);
    double elog1m = 0.0;
    for (size_t i = 0; i < r.x.size(); ++i) elog1m += r.w[i] * std::log(r.xc[i]);
    EXPECT_NEAR(d.mean(), r.expect([](double p) { return p; }), kQuadTol);
    EXPECT_NEAR(d.variance(), r.expect([&](double p) { return (p - d.mean()) * (p - d.mean()); }), kQuadTol);
    EXPECT_NEAR(d.elogP(), r.expect([](double p) { return std::log(p); }), kQuadTol * std::abs(d.elogP()));
    EXPECT_NEAR(d.elog1mP(), elog1m, kQuadTol * std::abs(d.elog1mP()));
    EXPECT_EQ(d.expectedStats(), vec({d.elogP(), d.elog1mP()}));
  }
}

TEST(DistributionMoments, GammaAgainstQuadrature) {
  for (auto [a, b] : {std::pair{0.5, 2.0}, std::pair{3.0, 0.25}, std::pair{120.0, 40.0}}) {
    const Gamma d(a, b);
    const Rule r = gammaRule(a, b);
    EXPECT_NEAR(r.total(), 1.0, 1e-13);
    EXPECT_NEAR(d.mean(), r.expect([](double x) { return x; }), kQuadTol * d.mean());
    EXPECT_NEAR(d.variance(), r.expect([&](double x) { return (x - d.mean()) * (x - d.mean()); }),
                kQuadTol * d.variance());
    EXPECT_NEAR(d.elog(), r.expect([](double x) { return std::log(x); }), kQuadTol * std::max(1.0, std::abs(d.elog())));
    EXPECT_NEAR(d.elog(), static_cast<double>(refDigamma(a) - std::log(static_cast<long double>(b))), 1e-14);
  }
}

TEST(DistributionMoments, GaussianAgainstQuadrature) {
  const Gaussian d(-1.7, 0.3);
  const Rule r = gaussianRule(-1.7, 0.3);
  EXPECT_NEAR(r.total(), 1.0, 1e-13);
  const VectorXd s = d.expectedStats();
  EXPECT_NEAR(s[0], r.expect([](double x) { return x; }), kQuadTol);
  EXPECT_NEAR(s[1], r.expect([](double x) { return x * x; }), kQuadTol * s[1]);
  EXPECT_NEAR(s[1], 1.7 * 1.7 + 1.0 / 0.3, 1e-14);
}

TEST(DistributionMoments, PoissonAndDiscrete) {
  for (double lam : {0.05, 3.5, 80.0, 999.0, 1001.0, 4000.0}) {
    const Poisson d(lam);
    // exact sums over a window holding all the mass
    double mean = 0.0, elf = 0.0, mass = 0.0;
    const int hi = static_cast<int>(lam + 40 * std::sqrt(lam) + 60);
    for (int k = 0; k <= hi; ++k) {
      const double p = std::exp(k * std::log(lam) - lam - std::lgamma(k + 1.0));
      mass += p;
      mean += p * k;
      elf += p * std::lgamma(k + 1.0);
    }
    EXPECT_NEAR(mass, 1.0, 1e-12) << lam;
    EXPECT_NEAR(d.mean(), mean, 1e-11 * lam) << lam;
    // the asymptotic series above rate 1000 is accurate to O(rate^-4)
    EXPECT_NEAR(d.elogFactorial(), elf, 1e-11 * std::max(1.0, elf)) << lam;
  }
  const Categorical c(vec({0.2, 0.5, 0.3}));
  EXPECT_EQ(c.expectedStats(), vec({0.2, 0.5, 0.3}));
  const Bernoulli b(0.3);
  EXPECT_DOUBLE_EQ(b.mean(), 0.3);
  EXPECT_DOUBLE_EQ(b.variance(), 0.21);
}

TEST(DistributionMoments, MvGaussianAgainstGaussHermite) {
  MatrixXd lambda(3, 3);
  lambda << 2.0, 0.5, -0.3, 0.5, 1.5, 0.2, -0.3, 0.2, 0.8;
  const VectorXd mu = vec({0.5, -1.0, 2.0});
  const MvGaussian d(mu, lambda);
  const MatrixXd cov = lambda.inverse();
  EXPECT_LT((d.covariance() - cov).cwiseAbs().maxCoeff(), 1e-14);
  const VectorXd s = d.expectedStats();
  VectorXd ex = VectorXd::Zero(3);
  MatrixXd exx = MatrixXd::Zero(3, 3);
  double mass = 0.0;
  for (const auto& [x, w] : gaussHermiteNodes(mu, cov)) {
    mass += w;
    ex += w * x;
    exx += w * x * x.transpose();
  }
  EXPECT_NEAR(mass, 1.0, 1e-14);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(s[i], ex[i], 1e-13);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(s[3 + 3 * i + j], exx(i, j), 1e-13);
  }
}

// Wishart samples with integer dof as sums of outer products of Gaussian
// vectors (independent of the Bartlett sampler under test).
std::vector<MatrixXd> wishartByOuterProducts(int nu, const MatrixXd& S, int n, uint64_t seed) {
  Rng rng(seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  const MatrixXd L = S.llt().matrixL();
  std::vector<MatrixXd> out;
  for (int s = 0; s < n; ++s) {
    MatrixXd acc = MatrixXd::Zero(S.rows(), S.cols());
    for (int k = 0; k < nu; ++k) {
      VectorXd z(S.rows());
      for (int i = 0; i < z.size(); ++i) z[i] = n01(rng);
      const VectorXd g = L * z;
      acc += g * g.transpose();
    }
    out.push_back(acc);
  }
  return out;
}

// mean and standard error of f over samples
template <class T, class F>
std::pair<double, double> mcMean(const std::vector<T>& xs, F f) {
  double s = 0.0, s2 = 0.0;
  for (const auto& x : xs) {
    const double v = f(x);
    s += v;
    s2 += v * v;
  }
  const double n = static_cast<double>(xs.size());
  const double m = s / n;
  return {m, std::sqrt(std::max(0.0, s2 / n - m * m) / n)};
}

TEST(DistributionMoments, WishartAgainstMonteCarlo) {
  MatrixXd S(2, 2);
  S << 0.5, 0.1, 0.1, 0.3;
  const Wishart d(5.0, S);
  const auto samples = wishartByOuterProducts(5, S, 40000, 17);
  const MatrixXd mean = d.mean();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      const auto [m, se] = mcMean(samples, [&](const MatrixXd& L) { return L(i, j); });
      EXPECT_NEAR(mean(i, j), m, 5 * se);
    }
  const auto [ml, sel] = mcMean(samples, [](const MatrixXd& L) { return std::log(L.determinant()); });
  EXPECT_NEAR(d.elogdet(), ml, 5 * sel);
  // closed form: sum_i psi((nu + 1 - i)/2) + D log 2 + log|S|
  EXPECT_NEAR(d.elogdet(),
              static_cast<double>(refDigamma(2.5L) + refDigamma(2.0L)) + 2 * std::log(2.0) + std::log(S.determinant()),
              1e-13);
}

// ---------------------------------------------------------------------------
// grad A(eta) = E[T(x)]. Families with matrix parameters are differentiated in
// unique coordinates theta (eta = M theta, symmetric pairs moved together), so
// the check is grad_theta A = M^T E[T].

struct GradCase {
  std::string name;
  VectorXd eta;
  std::function<double(const VectorXd&)> A;
  VectorXd stats;
  MatrixXd M;  // eta = M theta (identity for vector families)
};

void checkGradient(const GradCase& c) {
  // theta0 = M^+ eta
  const VectorXd theta0 = c.M.completeOrthogonalDecomposition().solve(c.eta);
  ASSERT_LT((c.M * theta0 - c.eta).cwiseAbs().maxCoeff(), 1e-12) << c.name;
  const VectorXd g = numericGradient([&](const VectorXd& th) { return c.A(c.M * th); }, theta0, 1e-4);
  const VectorXd want = c.M.transpose() * c.stats;
  for (Eigen::Index i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], want[i], 1e-8 * std::max(1.0, std::abs(want[i]))) << c.name << " coordinate " << i;
}

MatrixXd identity(Eigen::Index n) { return MatrixXd::Identity(n, n); }

// eta layout: [vector part (vecLen), D*D row-major symmetric matrix, scalar tail (tailLen)]
MatrixXd symmetricEmbedding(int vecLen, int D, int tailLen) {
  const int uniq = D * (D + 1) / 2;
  MatrixXd M = MatrixXd::Zero(vecLen + D * D + tailLen, vecLen + uniq + tailLen);
  for (int i = 0; i < vecLen; ++i) M(i, i) = 1.0;
  int col = vecLen;
  for (int i = 0; i < D; ++i)
    for (int j = i; j < D; ++j, ++col) {
      M(vecLen + i * D + j, col) = 1.0;
      M(vecLen + j * D + i, col) = 1.0;
    }
  for (int t = 0; t < tailLen; ++t) M(vecLen + D * D + t, col + t) = 1.0;
  return M;
}

TEST(LogNormalizerGradient, EqualsExpectedStatistics) {
  std::vector<GradCase> cases;
  {
    const Dirichlet d(vec({0.3, 2.0, 5.5, 1.0}));
    cases.push_back({"Dirichlet", d.natural(), [](const VectorXd& e) { return Dirichlet::logNormalizer(e); },
                     d.expectedStats(), identity(4)});
  }
  {
    const Beta d(0.6, 3.0);
    cases.push_back({"Beta", d.natural(), [](const VectorXd& e) { return Beta::logNormalizer(e); }, d.expectedStats(),
                     identity(2)});
  }
  {
    const Categorical d(vec({0.1, 0.6, 0.3}));
    // shift the natural parameter so that A != 0
    cases.push_back({"Categorical", d.natural().array() + 0.7,
                     [](const VectorXd& e) { return Categorical::logNormalizer(e); }, d.expectedStats(), identity(3)});
  }
  {
    const Bernoulli d(0.27);
    cases.push_back({"Bernoulli", d.natural(), [](const VectorXd& e) { return Bernoulli::logNormalizer(e); },
                     d.expectedStats(), identity(1)});
  }
  {
    const Gamma d(2.5, 0.7);
    cases.push_back({"Gamma", d.natural(), [](const VectorXd& e) { return Gamma::logNormalizer(e); }, d.expectedStats(),
                     identity(2)});
  }
  {
    const Poisson d(3.3);
    cases.push_back({"Poisson", d.natural(), [](const VectorXd& e) { return Poisson::logNormalizer(e); },
                     d.expectedStats(), identity(1)});
  }
  {
    const Gaussian d(1.2, 0.4);
    cases.push_back({"Gaussian", d.natural(), [](const VectorXd& e) { return Gaussian::logNormalizer(e); },
                     d.expectedStats(), identity(2)});
  }
  {
    MatrixXd lambda(3, 3);
    lambda << 2.0, 0.5, -0.3, 0.5, 1.5, 0.2, -0.3, 0.2, 0.8;
    const MvGaussian d(vec({0.5, -1.0, 2.0}), lambda);
    cases.push_back({"MvGaussian", d.natural(), [](const VectorXd& e) { return MvGaussian::logNormalizer(e, 3); },
                     d.expectedStats(), symmetricEmbedding(3, 3, 0)});
  }
  {
    MatrixXd S(3, 3);
    S << 0.5, 0.1, 0.0, 0.1, 0.3, -0.05, 0.0, -0.05, 0.9;
    const Wishart d(6.5, S);
    cases.push_back({"Wishart", d.natural(), [](const VectorXd& e) { return Wishart::logNormalizer(e, 3); },
                     d.expectedStats(), symmetricEmbedding(0, 3, 1)});
  }
  for (const auto& c : cases) checkGradient(c);
  // The instance log-normalizers agree with the static ones.
  EXPECT_NEAR(Dirichlet(vec({0.3, 2.0})).logNormalizer(), Dirichlet::logNormalizer(vec({-0.7, 1.0})), 1e-15);
  EXPECT_NEAR(Gamma(2.5, 0.7).logNormalizer(), Gamma::logNormalizer(Gamma(2.5, 0.7).natural()), 1e-15);
}

// ---------------------------------------------------------------------------
// Entropy and KL.

TEST(Entropy, OneDimensionalQuadrature) {
  for (auto [a, b] : {std::pair{0.4, 0.7}, std::pair{2.0, 3.0}, std::pair{30.0, 0.9}}) {
    const Beta d(a, b);
    const Rule r = betaRule(a, b);
    EXPECT_NEAR(d.entropy(), -r.expect2([&](double p, double pc) { return betaLogPdf(a, b, p, pc); }), kQuadTol)
        << a << "," << b;
    // logDensity agrees with the independent formula away from p = 1
    EXPECT_NEAR(d.logDensity(0.3), betaLogPdf(a, b, 0.3, 0.7), 1e-13);
    // the K = 2 Dirichlet is the same distribution
    EXPECT_NEAR(Dirichlet(vec({a, b})).entropy(), d.entropy(), 1e-13);
  }
  for (auto [a, b] : {std::pair{0.5, 2.0}, std::pair{3.0, 0.25}, std::pair{120.0, 40.0}}) {
    const Gamma d(a, b);
    const Rule r = gammaRule(a, b);
    EXPECT_NEAR(d.entropy(), -r.expect([&](double x) { return d.logDensity(x); }), kQuadTol * std::max(1.0, std::abs(d.entropy())));
  }
  for (auto [m, t] : {std::pair{0.0, 1.0}, std::pair{-3.0, 250.0}, std::pair{7.0, 0.01}}) {
    const Gaussian d(m, t);
    const Rule r = gaussianRule(m, t);
    EXPECT_NEAR(d.entropy(), -r.expect([&](double x) { return d.logDensity(x); }), kQuadTol * std::max(1.0, std::abs(d.entropy())));
  }
}

// E over Dirichlet(a1, a2, a3) by nested quadrature: p1 ~ Beta(a1, a2 + a3) and
// p2 / (1 - p1) ~ Beta(a2, a3) independently.
template <class F>
double dirichlet3Expect(const VectorXd& a, F f) {
  const Rule r1 = betaRule(a[0], a[1] + a[2]);
  const Rule r2 = betaRule(a[1], a[2]);
  double s = 0.0;
  for (size_t i = 0; i < r1.x.size(); ++i)
    for (size_t j = 0; j < r2.x.size(); ++j) {
      const double p1 = r1.x[i], rest = r1.xc[i];
      const double p2 = rest * r2.x[j], p3 = rest * r2.xc[j];
      if (p2 == 0.0 || p3 == 0.0) continue;  // underflowed corner nodes carry no weight
      s += r1.w[i] * r2.w[j] * f(vec({p1, p2, p3}));
    }
  return s;
}

TEST(Entropy, DirichletByNestedQuadrature) {
  const VectorXd a = vec({1.5, 2.5, 4.0});
  const Dirichlet d(a);
  EXPECT_NEAR(dirichlet3Expect(a, [](const VectorXd&) { return 1.0; }), 1.0, 1e-12);
  // density on the simplex w.r.t. Lebesgue measure on (p1, p2)
  EXPECT_NEAR(d.entropy(), -dirichlet3Expect(a, [&](const VectorXd& p) { return d.logDensity(p); }), 1e-9);
}

TEST(Entropy, DiscreteExactSums) {
  const Categorical c(vec({0.1, 0.0, 0.6, 0.3}));
  EXPECT_NEAR(c.entropy(), -(0.1 * std::log(0.1) + 0.6 * std::log(0.6) + 0.3 * std::log(0.3)), 1e-15);
  const Bernoulli b(0.2);
  EXPECT_NEAR(b.entropy(), -(0.2 * std::log(0.2) + 0.8 * std::log(0.8)), 1e-15);
  EXPECT_EQ(Bernoulli(0.0).entropy(), 0.0);
  for (double lam : {0.05, 3.5, 80.0, 999.0, 1001.0, 4000.0}) {
    const Poisson d(lam);
    double h = 0.0;
    const int hi = static_cast<int>(lam + 40 * std::sqrt(lam) + 60);
    for (int k = 0; k <= hi; ++k) {
      const double lp = d.logDensity(k);
      h -= std::exp(lp) * lp;
    }
    EXPECT_NEAR(d.entropy(), h, 1e-10 * std::max(1.0, h)) << lam;
  }
}

TEST(Entropy, MultivariateFamilies) {
  MatrixXd lambda(2, 2);
  lambda << 2.0, 0.6, 0.6, 1.0;
  const MvGaussian g(vec({1.0, -2.0}), lambda);
  double h = 0.0;  // log density is quadratic: Gauss-Hermite is exact
  for (const auto& [x, w] : gaussHermiteNodes(g.mean(), g.covariance())) h -= w * g.logDensity(x);
  EXPECT_NEAR(g.entropy(), h, 1e-13);

  MatrixXd S(2, 2);
  S << 0.5, 0.1, 0.1, 0.3;
  const Wishart wd(4.0, S);
  const auto samples = wishartByOuterProducts(4, S, 40000, 23);
  const auto [m, se] = mcMean(samples, [&](const MatrixXd& L) { return -wd.logDensity(L); });
  EXPECT_NEAR(wd.entropy(), m, 5 * se);
  Rng rng(29);
  std::vector<MatrixXd> bart;
  for (int i = 0; i < 40000; ++i) bart.push_back(wd.sample(rng));
  const auto [m2, se2] = mcMean(bart, [&](const MatrixXd& L) { return -wd.logDensity(L); });
  EXPECT_NEAR(wd.entropy(), m2, 5 * se2);
}

TEST(KL, OneDimensionalQuadrature) {
  {
    const Beta q(2.0, 3.0), p(0.5, 0.8);
    const Rule r = betaRule(2.0, 3.0);
    EXPECT_NEAR(kl(q, p),
                r.expect2([&](double x, double xc) { return betaLogPdf(2.0, 3.0, x, xc) - betaLogPdf(0.5, 0.8, x, xc); }),
                kQuadTol);
  }
  {
    const Gamma q(3.0, 2.0), p(0.7, 0.1);
    const Rule r = gammaRule(3.0, 2.0);
    EXPECT_NEAR(kl(q, p), r.expect([&](double x) { return q.logDensity(x) - p.logDensity(x); }), kQuadTol);
  }
  {
    const Gaussian q(0.3, 4.0), p(-1.0, 0.5);
    const Rule r = gaussianRule(0.3, 4.0);
    EXPECT_NEAR(kl(q, p), r.expect([&](double x) { return q.logDensity(x) - p.logDensity(x); }), kQuadTol);
  }
  {
    const VectorXd aq = vec({1.5, 2.5, 4.0});
    const Dirichlet q(aq), p(vec({0.5, 1.0, 3.0}));
    EXPECT_NEAR(kl(q, p), dirichlet3Expect(aq, [&](const VectorXd& x) { return q.logDensity(x) - p.logDensity(x); }),
                1e-9);
  }
  EXPECT_NEAR(kl(Gamma(3.0, 2.0), Gamma(3.0, 2.0)), 0.0, 1e-14);
  EXPECT_NEAR(kl(Dirichlet(vec({1.5, 2.5})), Dirichlet(vec({1.5, 2.5}))), 0.0, 1e-14);
}

TEST(KL, DiscreteExactSums) {
  const Categorical q(vec({0.1, 0.0, 0.6, 0.3})), p(vec({0.25, 0.25, 0.25, 0.25}));
  EXPECT_NEAR(kl(q, p), 0.1 * std::log(0.4) + 0.6 * std::log(2.4) + 0.3 * std::log(1.2), 1e-15);
  EXPECT_NEAR(kl(Bernoulli(0.2), Bernoulli(0.7)), 0.2 * std::log(0.2 / 0.7) + 0.8 * std::log(0.8 / 0.3), 1e-15);
  const Poisson pq(4.0), pp(9.0);
  double s = 0.0;
  for (int k = 0; k < 200; ++k) s += std::exp(pq.logDensity(k)) * (pq.logDensity(k) - pp.logDensity(k));
  EXPECT_NEAR(kl(pq, pp), s, 1e-13);
}

TEST(KL, MultivariateFamilies) {
  MatrixXd lq(2, 2), lp(2, 2);
  lq << 2.0, 0.6, 0.6, 1.0;
  lp << 0.5, -0.1, -0.1, 0.8;
  const MvGaussian q(vec({1.0, -2.0}), lq), p(vec({0.0, 0.5}), lp);
  double s = 0.0;
  for (const auto& [x, w] : gaussHermiteNodes(q.mean(), q.covariance())) s += w * (q.logDensity(x) - p.logDensity(x));
  EXPECT_NEAR(kl(q, p), s, 1e-12);
  // closed form: (tr(Lp Sq) + (mq-mp)^T Lp (mq-mp) - D + log|Lq|/|Lp|) / 2
  const VectorXd dm = q.mean() - p.mean();
  EXPECT_NEAR(kl(q, p), 0.5 * ((lp * q.covariance()).trace() + dm.dot(lp * dm) - 2 + std::log(lq.determinant() / lp.determinant())),
              1e-13);

  MatrixXd S(2, 2), Sp(2, 2);
  S << 0.5, 0.1, 0.1, 0.3;
  Sp << 1.0, 0.0, 0.0, 2.0;
  const Wishart wq(4.0, S), wp(3.0, Sp);
  const auto samples = wishartByOuterProducts(4, S, 40000, 31);
  const auto [m, se] = mcMean(samples, [&](const MatrixXd& L) { return wq.logDensity(L) - wp.logDensity(L); });
  EXPECT_NEAR(kl(wq, wp), m, 5 * se);
  EXPECT_NEAR(kl(wq, wq), 0.0, 1e-12);
}

// ---------------------------------------------------------------------------
// Sampling (5 standard errors), natural round trips.

TEST(Sampling, MeansWithinFiveStandardErrors) {
  Rng rng(42);
  const int n = 50000;
  {
    const Dirichlet d(vec({0.05, 0.5, 3.0}));
    std::vector<VectorXd> xs;
    for (int i = 0; i < n; ++i) xs.push_back(d.sample(rng));
    for (int k = 0; k < 3; ++k) {
      const auto [m, se] = mcMean(xs, [&](const VectorXd& x) { return x[k]; });
      EXPECT_NEAR(m, d.mean()[k], 5 * se);
      const auto [ml, sel] = mcMean(xs, [&](const VectorXd& x) { return std::log(x[k]); });
      EXPECT_NEAR(ml, d.elog()[k], 5 * sel) << "E log x_k from samples, alpha small";
    }
  }
  auto check1 = [&](auto& dist, double mean, double elog, bool hasLog) {
    std::vector<double> xs;
    for (int i = 0; i < n; ++i) xs.push_back(static_cast<double>(dist.sample(rng)));
    const auto [m, se] = mcMean(xs, [](double x) { return x; });
    EXPECT_NEAR(m, mean, 5 * se);
    if (hasLog) {
      const auto [ml, sel] = mcMean(xs, [](double x) { return std::log(x); });
      EXPECT_NEAR(ml, elog, 5 * sel);
    }
  };
  Beta beta(0.3, 2.0);
  check1(beta, beta.mean(), beta.elogP(), true);
  Gamma gamma(0.4, 3.0);
  check1(gamma, gamma.mean(), gamma.elog(), true);
  Gaussian gauss(2.0, 0.25);
  check1(gauss, 2.0, 0.0, false);
  Poisson pois(6.5);
  check1(pois, 6.5, 0.0, false);
  Bernoulli bern(0.3);
  check1(bern, 0.3, 0.0, false);
  Categorical cat(vec({0.2, 0.5, 0.3}));
  check1(cat, 0.5 + 0.6, 0.0, false);
  {
    MatrixXd lambda(2, 2);
    lambda << 2.0, 0.6, 0.6, 1.0;
    const MvGaussian g(vec({1.0, -2.0}), lambda);
    std::vector<VectorXd> xs;
    for (int i = 0; i < n; ++i) xs.push_back(g.sample(rng));
    const MatrixXd cov = g.covariance();
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        const auto [m, se] = mcMean(xs, [&](const VectorXd& x) { return (x[i] - g.mean()[i]) * (x[j] - g.mean()[j]); });
        EXPECT_NEAR(m, cov(i, j), 5 * se);
      }
  }
  {
    MatrixXd S(2, 2);
    S << 0.5, 0.1, 0.1, 0.3;
    const Wishart w(3.5, S);  // non-integer dof: only the Bartlett sampler covers it
    std::vector<MatrixXd> xs;
    for (int i = 0; i < n; ++i) xs.push_back(w.sample(rng));
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        const auto [m, se] = mcMean(xs, [&](const MatrixXd& L) { return L(i, j); });
        EXPECT_NEAR(m, w.mean()(i, j), 5 * se);
      }
    const auto [ml, sel] = mcMean(xs, [](const MatrixXd& L) { return std::log(L.determinant()); });
    EXPECT_NEAR(ml, w.elogdet(), 5 * sel);
  }
}

TEST(NaturalParameters, RoundTripsAndLayouts) {
  EXPECT_EQ(Dirichlet(vec({0.5, 2.0})).natural(), vec({-0.5, 1.0}));
  EXPECT_EQ(Gamma(3.0, 2.0).natural(), vec({-2.0, 2.0}));
  EXPECT_EQ(Gaussian(2.0, 4.0).natural(), vec({8.0, -2.0}));
  EXPECT_NEAR(Bernoulli(0.25).natural()[0], std::log(1.0 / 3.0), 1e-15);
  EXPECT_NEAR(Poisson(2.0).natural()[0], std::log(2.0), 1e-15);

  const Gamma g = Gamma::fromNatural(Gamma(3.0, 2.0).natural());
  EXPECT_DOUBLE_EQ(g.shape(), 3.0);
  EXPECT_DOUBLE_EQ(g.rate(), 2.0);
  const Gaussian n = Gaussian::fromNatural(Gaussian(-1.5, 0.2).natural());
  EXPECT_NEAR(n.mean(), -1.5, 1e-15);
  EXPECT_NEAR(n.precision(), 0.2, 1e-15);
  const Beta b = Beta::fromNatural(Beta(0.5, 4.0).natural());
  EXPECT_DOUBLE_EQ(b.a(), 0.5);
  EXPECT_DOUBLE_EQ(b.b(), 4.0);
  EXPECT_NEAR(Bernoulli::fromNatural(Bernoulli(0.3).natural()).p(), 0.3, 1e-15);
  EXPECT_NEAR(Poisson::fromNatural(Poisson(7.0).natural()).rate(), 7.0, 1e-14);
  const Categorical c = Categorical::fromNatural(vec({1.0, 2.0, 3.0}));
  EXPECT_NEAR(c.probs()[2], std::exp(3.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0)), 1e-15);

  MatrixXd lambda(2, 2);
  lambda << 2.0, 0.6, 0.6, 1.0;
  const MvGaussian mv(vec({1.0, -2.0}), lambda);
  const VectorXd eta = mv.natural();
  EXPECT_NEAR(eta[0], 2.0 * 1.0 + 0.6 * -2.0, 1e-15);
  EXPECT_NEAR(eta[2 + 1], -0.3, 1e-15);  // -Lambda_01 / 2, row-major
  const MvGaussian mv2 = MvGaussian::fromNatural(eta, 2);
  EXPECT_LT((mv2.mean() - mv.mean()).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_LT((mv2.precision() - lambda).cwiseAbs().maxCoeff(), 1e-14);

  MatrixXd S(2, 2);
  S << 0.5, 0.1, 0.1, 0.3;
  const Wishart w(4.0, S);
  const VectorXd ew = w.natural();
  EXPECT_NEAR(ew[4], 0.5 * (4.0 - 3.0), 1e-15);
  const Wishart w2 = Wishart::fromNatural(ew, 2);
  EXPECT_NEAR(w2.dof(), 4.0, 1e-14);
  EXPECT_LT((w2.scale() - S).cwiseAbs().maxCoeff(), 1e-14);
}

// ---------------------------------------------------------------------------
// Validation.

template <class F>
std::string errorOf(F f) {
  try {
    f();
  } catch (const ParameterError& e) {
    return e.what();
  } catch (...) {
    return "<other exception>";
  }
  return "<no exception>";
}

TEST(Validation, MessagesNameFamilyParameterAndValue) {
  EXPECT_EQ(errorOf([] { Dirichlet(vec({1.0, 2.0, -1.0})); }), "Dirichlet concentration must be positive; got -1 at index 2");
  EXPECT_EQ(errorOf([] { Dirichlet(vec({1.0})); }), "Dirichlet needs at least 2 components; got 1");
  EXPECT_EQ(errorOf([] { Dirichlet(vec({1.0, NAN})); }), "Dirichlet concentration must be positive; got nan at index 1");
  EXPECT_EQ(errorOf([] { Beta(0.0, 1.0); }), "Beta parameter a must be positive and finite; got 0");
  EXPECT_EQ(errorOf([] { Beta(1.0, INFINITY); }), "Beta parameter b must be positive and finite; got inf");
  EXPECT_EQ(errorOf([] { Categorical(vec({0.5, 0.6})); }), "Categorical probabilities must sum to 1; got sum 1.1");
  EXPECT_EQ(errorOf([] { Categorical(vec({1.5, -0.5})); }),
            "Categorical probability must be non-negative and finite; got -0.5 at index 1");
  EXPECT_EQ(errorOf([] { Bernoulli(1.5); }), "Bernoulli probability must be in [0, 1]; got 1.5");
  EXPECT_EQ(errorOf([] { Gamma(-2.0, 1.0); }), "Gamma shape must be positive and finite; got -2");
  EXPECT_EQ(errorOf([] { Gamma(2.0, 0.0); }), "Gamma rate must be positive and finite; got 0");
  EXPECT_EQ(errorOf([] { Gamma::fromNatural(vec({0.5, 1.0})); }), "Gamma rate must be positive and finite; got -0.5");
  EXPECT_EQ(errorOf([] { Gamma::fromNatural(vec({0.5})); }), "Gamma natural parameter must have 2 entries; got 1");
  EXPECT_EQ(errorOf([] { Poisson(-1.0); }), "Poisson rate must be positive and finite; got -1");
  EXPECT_EQ(errorOf([] { Gaussian(0.0, -1.0); }), "Gaussian precision must be positive and finite; got -1");
  EXPECT_EQ(errorOf([] { Gaussian(NAN, 1.0); }), "Gaussian mean must be finite; got nan");
  MatrixXd notPd(2, 2), asym(2, 2), good(2, 2);
  notPd << 1.0, 2.0, 2.0, 1.0;
  asym << 1.0, 0.5, 0.0, 1.0;
  good << 1.0, 0.0, 0.0, 1.0;
  EXPECT_EQ(errorOf([&] { Wishart(3.0, notPd); }), "Wishart scale matrix is not positive definite");
  EXPECT_EQ(errorOf([&] { Wishart(3.0, asym); }), "Wishart scale matrix is not symmetric");
  EXPECT_EQ(errorOf([&] { Wishart(0.5, good); }), "Wishart degrees of freedom must be greater than D - 1 = 1; got 0.5");
  EXPECT_EQ(errorOf([&] { MvGaussian(vec({0.0, 0.0}), notPd); }), "MvGaussian precision matrix is not positive definite");
  EXPECT_EQ(errorOf([&] { MvGaussian(vec({0.0, 0.0, 0.0}), good); }),
            "MvGaussian mean has dimension 3 but precision matrix is 2x2");
  EXPECT_EQ(errorOf([&] { kl(Dirichlet(vec({1.0, 1.0})), Dirichlet(vec({1.0, 1.0, 1.0}))); }),
            "Dirichlet KL divergence needs equal dimensions; got 2 and 3");
  // ParameterError is an std::invalid_argument
  EXPECT_THROW(Gamma(-1.0, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace ppc::rt
