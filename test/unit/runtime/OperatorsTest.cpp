// VMP message operators and ELBO terms against brute force (their
// plate-slice forms and the whole-plate Gaussian statistics are in
// PlateOperatorsTest.cpp).
//
// Messages to a discrete variable: log q*(x) = E_{q(others)}[log f(x, others)]
// + const is computed by enumerating x with the expectation done by
// quadrature, then compared after normalisation. Messages to a continuous
// variable: g(v) = E_{q(others)}[log f(v, others)] is evaluated by quadrature
// (or exact Gauss-Hermite, or Monte Carlo for Wishart-distributed parents) at
// as many points v as the sufficient statistics plus a constant, and the
// coefficients are recovered by an exact linear solve; they must equal the
// kernel's natural-parameter message divided by its weight. ELBO terms
// (avglogfactor) are compared with E_q[log f] by the same quadrature.
// Tolerances: quadrature 1e-9 (relative to the quantity's scale), Monte
// Carlo 5 standard errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <algorithm>
#include <vector>
#include <tuple>

#include "runtime/Distributions.h"
#include "runtime/Operators.h"
#include "runtime/VectorIsa.h"
#include "test/unit/runtime/TestUtil.h"

namespace ppc::rt {
namespace {

using namespace ppc::rt::test;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double kTol = 1e-9;

// log Dirichlet density from scratch (independent of the runtime)
double logDir(const VectorXd& alpha, const VectorXd& p) {
  double r = std::lgamma(alpha.sum());
  for (Eigen::Index k = 0; k < alpha.size(); ++k) r += (alpha[k] - 1.0) * std::log(p[k]) - std::lgamma(alpha[k]);
  return r;
}

VectorXd softmax(const VectorXd& v) {
  const VectorXd e = (v.array() - v.maxCoeff()).exp();
  return e / e.sum();
}

// E_{Dirichlet(alpha)}[log p_k] by quadrature of the Beta(alpha_k, alpha_0 - alpha_k) marginal.
VectorXd quadElogDirichlet(const VectorXd& alpha) {
  VectorXd e(alpha.size());
  for (Eigen::Index k = 0; k < alpha.size(); ++k)
    e[k] = betaRule(alpha[k], alpha.sum() - alpha[k]).expect([](double p) { return std::log(p); });
  return e;
}

// ------------------------------------------------------------------ Dirichlet / Beta

TEST(DirichletFactor, MessageToProbsIsCoefficientOfLogP) {
  const VectorXd alpha = vec({0.4, 2.0, 3.5});
  // log Dir(p; alpha) = sum_k c_k log p_k + c0 at K + 1 interior points of the simplex
  const std::vector<VectorXd> pts = {vec({0.2, 0.3, 0.5}), vec({0.6, 0.1, 0.3}), vec({0.05, 0.9, 0.05}),
                                     vec({0.33, 0.33, 0.34})};
  MatrixXd X(4, 4);
  VectorXd y(4);
  for (int i = 0; i < 4; ++i) {
    X.row(i) << std::log(pts[i][0]), std::log(pts[i][1]), std::log(pts[i][2]), 1.0;
    y[i] = logDir(alpha, pts[i]);
  }
  const VectorXd c = exactFit(X, y);
  std::vector<double> dst(3, 1.0);  // accumulates on top of existing content
  ppc_dirichlet_probs_avglog(3, alpha.data(), 2.5, dst.data());
  for (int k = 0; k < 3; ++k) EXPECT_NEAR((dst[k] - 1.0) / 2.5, c[k], 1e-12);
}

TEST(DirichletFactor, AvgLogFactorAgainstQuadrature) {
  const VectorXd alpha = vec({0.4, 2.0, 3.5});
  const VectorXd aq = vec({1.5, 2.5, 4.0});  // q(p)
  const Rule r1 = betaRule(aq[0], aq[1] + aq[2]), r2 = betaRule(aq[1], aq[2]);
  double want = 0.0;
  for (size_t i = 0; i < r1.x.size(); ++i)
    for (size_t j = 0; j < r2.x.size(); ++j) {
      const double p2 = r1.xc[i] * r2.x[j], p3 = r1.xc[i] * r2.xc[j];
      if (p2 == 0.0 || p3 == 0.0) continue;  // underflowed corner nodes carry no weight
      want += r1.w[i] * r2.w[j] * logDir(alpha, vec({r1.x[i], p2, p3}));
    }
  const VectorXd elog = Dirichlet(aq).elog();
  EXPECT_NEAR(ppc_dirichlet_avglogfactor(3, alpha.data(), elog.data()), want, kTol * std::abs(want));
}

TEST(BetaFactor, MessageAndAvgLogFactor) {
  const double a = 0.7, b = 4.0;
  // fit log Beta(p; a, b) = c1 log p + c2 log(1-p) + c0
  MatrixXd X(3, 3);
  VectorXd y(3);
  const double ps[3] = {0.1, 0.5, 0.85};
  for (int i = 0; i < 3; ++i) {
    X.row(i) << std::log(ps[i]), std::log1p(-ps[i]), 1.0;
    y[i] = betaLogPdf(a, b, ps[i], 1.0 - ps[i]);
  }
  const VectorXd c = exactFit(X, y);
  double dst[2] = {0.0, 0.0};
  ppc_beta_p_avglog(a, b, 1.0, dst);
  EXPECT_NEAR(dst[0], c[0], 1e-12);
  EXPECT_NEAR(dst[1], c[1], 1e-12);
  // E_{q = Beta(2, 3)}[log Beta(p; a, b)]
  const Rule r = betaRule(2.0, 3.0);
  const double want = r.expect2([&](double p, double pc) { return betaLogPdf(a, b, p, pc); });
  const VectorXd st = Beta(2.0, 3.0).expectedStats();
  EXPECT_NEAR(ppc_beta_avglogfactor(a, b, st.data()), want, kTol * std::abs(want));
}

// ------------------------------------------------------------------ Categorical

// The categorical statistics of many rows (exponentials over blocks of rows
// as one flat array) are exactly each row's softmax, whatever K, across the
// kernel's 256-row blocks, in place, and with -inf entries (impossible cases);
// rows of 8 to 15 (two overlapping vectors for the maximum and the sum) at
// both ends.
TEST(CategoricalFactor, StatisticsOfManyRowsAreEachRowsSoftmax) {
  for (int64_t K : {1, 3, 6, 7, 8, 9, 10, 13, 16, 17, 33}) {
    SCOPED_TRACE(K);
    const int64_t n = 300;
    std::vector<double> eta(size_t(n * K)), probs(eta.size()), inPlace;
    for (size_t i = 0; i < eta.size(); ++i) eta[i] = 40.0 * std::sin(0.7 * double(i)) - (i % 11 == 3 ? 800.0 : 0.0);
    if (K > 1)
      eta[size_t(5 * K + 1)] = -std::numeric_limits<double>::infinity();
    inPlace = eta;
    ppc_categorical_stats_n(n, K, eta.data(), probs.data());
    ppc_categorical_stats_n(n, K, inPlace.data(), inPlace.data());
    for (int64_t i = 0; i < n; ++i) {
      std::vector<double> row(eta.begin() + i * K, eta.begin() + (i + 1) * K);
      ppc_softmax_inplace(K, row.data());
      for (int64_t k = 0; k < K; ++k) {
        ASSERT_EQ(probs[size_t(i * K + k)], row[size_t(k)]) << i << "," << k;
        ASSERT_EQ(inPlace[size_t(i * K + k)], row[size_t(k)]) << i << "," << k;
      }
    }
  }
}

TEST(CategoricalFactor, MessageToSampleMatchesEnumeration) {
  const VectorXd alpha = vec({0.5, 3.0, 1.2, 7.0});
  // log q*(x = k) = E_q(p)[log p_k] + const by quadrature
  const VectorXd brute = softmax(quadElogDirichlet(alpha));
  const VectorXd elog = Dirichlet(alpha).elog();
  std::vector<double> dst(4, 0.0);
  ppc_categorical_sample_avglog(4, elog.data(), 1.0, dst.data());
  const VectorXd got = softmax(Eigen::Map<VectorXd>(dst.data(), 4));
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(got[k], brute[k], 1e-11);
  // weighted: dst += w * E log p
  std::vector<double> dst2(4, 0.0);
  ppc_categorical_sample_avglog(4, elog.data(), 3.0, dst2.data());
  for (int k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(dst2[k], 3.0 * dst[k]);
}

TEST(CategoricalFactor, MessageToProbsIsCoefficientOfLogP) {
  const VectorXd qx = vec({0.1, 0.2, 0.7});
  // g(p) = sum_x q(x) log p_x, evaluated by enumeration, fitted on (log p_k, 1)
  const std::vector<VectorXd> pts = {vec({0.2, 0.3, 0.5}), vec({0.6, 0.1, 0.3}), vec({0.05, 0.9, 0.05}),
                                     vec({0.33, 0.33, 0.34})};
  MatrixXd X(4, 4);
  VectorXd y(4);
  for (int i = 0; i < 4; ++i) {
    X.row(i) << std::log(pts[i][0]), std::log(pts[i][1]), std::log(pts[i][2]), 1.0;
    y[i] = 0.0;
    for (int x = 0; x < 3; ++x) y[i] += qx[x] * Categorical(pts[i]).logDensity(x);
  }
  const VectorXd c = exactFit(X, y);
  std::vector<double> dst(3, 0.0);
  ppc_categorical_probs_avglog(3, qx.data(), 2.0, dst.data());
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(dst[k] / 2.0, c[k], 1e-12);
  std::vector<double> obs(3, 0.0);
  ppc_categorical_probs_avglog_obs(3, 1, 4.0, obs.data());
  EXPECT_EQ(obs, (std::vector<double>{0.0, 4.0, 0.0}));
}

TEST(CategoricalFactor, AvgLogFactorAgainstEnumerationAndQuadrature) {
  const VectorXd alpha = vec({0.5, 3.0, 1.2});
  const VectorXd qx = vec({0.25, 0.0, 0.75});
  const VectorXd elogQuad = quadElogDirichlet(alpha);
  double want = 0.0;
  for (int x = 0; x < 3; ++x) want += qx[x] * elogQuad[x];
  const VectorXd elog = Dirichlet(alpha).elog();
  EXPECT_NEAR(ppc_categorical_avglogfactor(3, qx.data(), elog.data()), want, kTol * std::abs(want));
  EXPECT_NEAR(ppc_categorical_avglogfactor_obs(3, 2, elog.data()), elogQuad[2], kTol * std::abs(elogQuad[2]));
  // q(x) = 0 on a category with E log p = -inf contributes 0
  const double elogInf[3] = {-1.0, -INFINITY, -2.0};
  EXPECT_DOUBLE_EQ(ppc_categorical_avglogfactor(3, qx.data(), elogInf), 0.25 * -1.0 + 0.75 * -2.0);
}

// ------------------------------------------------------------------ Bernoulli

TEST(BernoulliFactor, MessagesAndAvgLogFactor) {
  const double a = 0.8, b = 2.5;  // q(p) = Beta(a, b)
  const Rule r = betaRule(a, b);
  const double elogp = r.expect([](double p) { return std::log(p); });
  const double elog1m = r.expect2([](double, double pc) { return std::log(pc); });
  const VectorXd st = Beta(a, b).expectedStats();
  // to x: log q*(1) - log q*(0) = E log p - E log(1-p)
  double m = 0.5;
  ppc_bernoulli_sample_avglog(st.data(), 2.0, &m);
  EXPECT_NEAR((m - 0.5) / 2.0, elogp - elog1m, kTol);
  // to p: g(p) = E_q(x)[x log p + (1-x) log(1-p)], q(x=1) = 0.3, fitted on (log p, log(1-p), 1)
  MatrixXd X(3, 3);
  VectorXd y(3);
  const double ps[3] = {0.15, 0.4, 0.9};
  for (int i = 0; i < 3; ++i) {
    X.row(i) << std::log(ps[i]), std::log1p(-ps[i]), 1.0;
    y[i] = 0.3 * Bernoulli(ps[i]).logDensity(1) + 0.7 * Bernoulli(ps[i]).logDensity(0);
  }
  const VectorXd c = exactFit(X, y);
  double dst[2] = {0.0, 0.0};
  ppc_bernoulli_p_avglog(0.3, 1.0, dst);
  EXPECT_NEAR(dst[0], c[0], 1e-12);
  EXPECT_NEAR(dst[1], c[1], 1e-12);
  // ELBO term
  const double want = 0.3 * elogp + 0.7 * elog1m;
  EXPECT_NEAR(ppc_bernoulli_avglogfactor(0.3, st.data()), want, kTol);
  EXPECT_DOUBLE_EQ(ppc_bernoulli_avglogfactor(1.0, st.data()), st[0]);
}

// ------------------------------------------------------------------ Gamma

TEST(GammaFactor, MessageToSampleWithGammaRate) {
  const double shape = 2.5;
  const Rule rb = gammaRule(3.0, 1.5);  // q(rate)
  // g(x) = E_q(b)[log Gamma(x; shape, b)], fitted on (x, log x, 1)
  const double xs[3] = {0.3, 1.7, 6.0};
  MatrixXd X(3, 3);
  VectorXd y(3);
  for (int i = 0; i < 3; ++i) {
    X.row(i) << xs[i], std::log(xs[i]), 1.0;
    y[i] = rb.expect([&](double b) { return Gamma(shape, b).logDensity(xs[i]); });
  }
  const VectorXd c = exactFit(X, y);
  const VectorXd sr = Gamma(3.0, 1.5).expectedStats();
  double dst[2] = {0.0, 0.0};
  ppc_gamma_sample_avglog(shape, sr.data(), 1.0, dst);
  EXPECT_NEAR(dst[0], c[0], kTol);
  EXPECT_NEAR(dst[1], c[1], kTol);
  // constant rate: point-mass statistics give the exact coefficients
  double pm[2];
  ppc_gamma_pointmass_stats(0.8, pm);
  double dc[2] = {0.0, 0.0};
  ppc_gamma_sample_avglog(shape, pm, 1.0, dc);
  EXPECT_DOUBLE_EQ(dc[0], -0.8);
  EXPECT_DOUBLE_EQ(dc[1], shape - 1.0);
}

TEST(GammaFactor, MessageToRateAndAvgLogFactor) {
  const double shape = 0.7;
  const Rule rx = gammaRule(4.0, 2.0);  // q(x)
  const double bs[3] = {0.2, 1.0, 5.0};
  MatrixXd X(3, 3);
  VectorXd y(3);
  for (int i = 0; i < 3; ++i) {
    X.row(i) << bs[i], std::log(bs[i]), 1.0;
    y[i] = rx.expect([&](double x) { return Gamma(shape, bs[i]).logDensity(x); });
  }
  const VectorXd c = exactFit(X, y);
  const VectorXd sx = Gamma(4.0, 2.0).expectedStats();
  double dst[2] = {0.0, 0.0};
  ppc_gamma_rate_avglog(shape, sx.data(), 1.0, dst);
  EXPECT_NEAR(dst[0], c[0], kTol);
  EXPECT_NEAR(dst[1], c[1], kTol);
  // ELBO: E_{q(x) q(b)}[log Gamma(x; shape, b)] by 2-D quadrature
  const Rule rb = gammaRule(3.0, 1.5);
  double want = 0.0;
  for (size_t i = 0; i < rx.x.size(); ++i)
    want += rx.w[i] * rb.expect([&](double b) { return Gamma(shape, b).logDensity(rx.x[i]); });
  const VectorXd sb = Gamma(3.0, 1.5).expectedStats();
  EXPECT_NEAR(ppc_gamma_avglogfactor(shape, sx.data(), sb.data()), want, kTol * std::abs(want));
}

// ------------------------------------------------------------------ Poisson

TEST(PoissonFactor, MessageToRateLatentAndObservedCount) {
  const Poisson qx(3.2);  // latent count
  const double ls[3] = {0.5, 2.0, 9.0};
  MatrixXd X(3, 3);
  VectorXd y(3), yObs(3);
  for (int i = 0; i < 3; ++i) {
    X.row(i) << ls[i], std::log(ls[i]), 1.0;
    y[i] = 0.0;
    for (int k = 0; k < 100; ++k) y[i] += std::exp(qx.logDensity(k)) * Poisson(ls[i]).logDensity(k);
    yObs[i] = Poisson(ls[i]).logDensity(7);
  }
  const VectorXd c = exactFit(X, y), cObs = exactFit(X, yObs);
  double dst[2] = {0.0, 0.0};
  ppc_poisson_rate_avglog(qx.mean(), 1.0, 1.0, dst);
  EXPECT_NEAR(dst[0], c[0], 1e-11);
  EXPECT_NEAR(dst[1], c[1], 1e-11);
  const double x7 = 7.0;
  double d2[2] = {0.0, 0.0};
  ppc_poisson_rate_avglog_obs_n(1, &x7, nullptr, nullptr, 1.0, d2);
  EXPECT_NEAR(d2[0], cObs[0], 1e-11);
  EXPECT_NEAR(d2[1], cObs[1], 1e-11);
}

TEST(PoissonFactor, MessageToLatentCountAndAvgLogFactor) {
  const Rule rl = gammaRule(2.0, 0.5);  // q(rate)
  const VectorXd sl = Gamma(2.0, 0.5).expectedStats();
  // log q*(x) - log q*(0) = E log f(x) - E log f(0) must equal eta * x - log x! (Poisson family)
  double eta = 0.0;
  ppc_poisson_sample_avglog(sl.data(), 1.0, 1.0, &eta);
  const double f0 = rl.expect([](double l) { return Poisson(l).logDensity(0); });
  for (int x = 1; x <= 12; ++x) {
    const double fx = rl.expect([&](double l) { return Poisson(l).logDensity(x); });
    EXPECT_NEAR(fx - f0, eta * x - std::lgamma(x + 1.0), kTol * std::max(1.0, std::abs(fx - f0))) << x;
  }
  // ELBO with latent x ~ Poisson(3.2) and q(rate) Gamma(2, 0.5)
  const Poisson qx(3.2);
  double want = 0.0;
  for (int k = 0; k < 100; ++k)
    want += std::exp(qx.logDensity(k)) * rl.expect([&](double l) { return Poisson(l).logDensity(k); });
  EXPECT_NEAR(ppc_poisson_avglogfactor(3.2, qx.elogFactorial(), sl.data(), 1.0), want, kTol * std::abs(want));
  // observed batch version
  const double xs[3] = {0.0, 4.0, 11.0};
  double wantObs = 0.0;
  for (double x : xs) wantObs += rl.expect([&](double l) { return Poisson(l).logDensity(static_cast<int64_t>(x)); });
  EXPECT_NEAR(ppc_poisson_avglogfactor_obs_n(3, xs, nullptr, nullptr, 1.0, sl.data()), wantObs, kTol * std::abs(wantObs));
}

// ------------------------------------------------------------------ Gaussian

struct GaussianSetup {
  double mx = 0.7, tx = 2.0;    // q(x) = N(0.7, 1/2)
  double mm = -0.4, tm = 5.0;   // q(mean) = N(-0.4, 1/5)
  double ta = 3.0, tb = 1.5;    // q(precision) = Gamma(3, 1.5)
  VectorXd sx() const { return Gaussian(mx, tx).expectedStats(); }
  VectorXd sm() const { return Gaussian(mm, tm).expectedStats(); }
  VectorXd st() const { return Gamma(ta, tb).expectedStats(); }
};

double logNormal(double x, double m, double t) { return 0.5 * std::log(t / (2 * kPi)) - 0.5 * t * (x - m) * (x - m); }

TEST(GaussianFactor, MessageToSample) {
  const GaussianSetup s;
  const Rule rm = gaussianRule(s.mm, s.tm), rt = gammaRule(s.ta, s.tb);
  const double xs[3] = {-2.0, 0.5, 3.0};
  MatrixXd X(3, 3);
  VectorXd y(3);
  for (int i = 0; i < 3; ++i) {
    X.row(i) << xs[i], xs[i] * xs[i], 1.0;
    double g = 0.0;
    for (size_t a = 0; a < rm.x.size(); ++a)
      g += rm.w[a] * rt.expect([&](double t) { return logNormal(xs[i], rm.x[a], t); });
    y[i] = g;
  }
  const VectorXd c = exactFit(X, y);
  double dst[2] = {0.0, 0.0};
  ppc_gaussian_sample_avglog(s.sm().data(), s.st().data(), 0.5, dst);
  EXPECT_NEAR(dst[0] / 0.5, c[0], kTol);
  EXPECT_NEAR(dst[1] / 0.5, c[1], kTol);
}

TEST(GaussianFactor, MessageToMean) {
  const GaussianSetup s;
  const Rule rx = gaussianRule(s.mx, s.tx), rt = gammaRule(s.ta, s.tb);
  const double ms[3] = {-1.0, 0.2, 2.5};
  MatrixXd X(3, 3);
  VectorXd y(3);
  for (int i = 0; i < 3; ++i) {
    X.row(i) << ms[i], ms[i] * ms[i], 1.0;
    double g = 0.0;
    for (size_t a = 0; a < rx.x.size(); ++a)
      g += rx.w[a] * rt.expect([&](double t) { return logNormal(rx.x[a], ms[i], t); });
    y[i] = g;
  }
  const VectorXd c = exactFit(X, y);
  double dst[2] = {0.0, 0.0};
  ppc_gaussian_mean_avglog(s.sx().data(), s.st().data(), 1.0, dst);
  EXPECT_NEAR(dst[0], c[0], kTol);
  EXPECT_NEAR(dst[1], c[1], kTol);
}

TEST(GaussianFactor, MessageToPrecision) {
  const GaussianSetup s;
  const Rule rx = gaussianRule(s.mx, s.tx), rm = gaussianRule(s.mm, s.tm);
  const double ts[3] = {0.3, 1.0, 4.0};
  MatrixXd X(3, 3);
  VectorXd y(3);
  for (int i = 0; i < 3; ++i) {
    X.row(i) << ts[i], std::log(ts[i]), 1.0;
    double g = 0.0;
    for (size_t a = 0; a < rx.x.size(); ++a)
      g += rx.w[a] * rm.expect([&](double m) { return logNormal(rx.x[a], m, ts[i]); });
    y[i] = g;
  }
  const VectorXd c = exactFit(X, y);
  double dst[2] = {0.0, 0.0};
  ppc_gaussian_precision_avglog(s.sx().data(), s.sm().data(), 1.0, dst);
  EXPECT_NEAR(dst[0], c[0], kTol);
  EXPECT_NEAR(dst[1], c[1], kTol);
}

TEST(GaussianFactor, AvgLogFactorBy3DQuadrature) {
  const GaussianSetup s;
  // log N(x; m, t) is quadratic in (x, m): 5-point Gauss-Hermite over q(x) and
  // q(m) is exact; double-exponential quadrature over q(t).
  const auto nx = gaussHermiteNodes(vec({s.mx}), MatrixXd::Constant(1, 1, 1.0 / s.tx));
  const auto nm = gaussHermiteNodes(vec({s.mm}), MatrixXd::Constant(1, 1, 1.0 / s.tm));
  const Rule rt = gammaRule(s.ta, s.tb);
  double want = 0.0;
  for (const auto& [x, wx] : nx)
    for (const auto& [m, wm] : nm) want += wx * wm * rt.expect([&](double t) { return logNormal(x[0], m[0], t); });
  EXPECT_NEAR(ppc_gaussian_avglogfactor(s.sx().data(), s.sm().data(), s.st().data()), want, kTol * std::abs(want));
  // constant mean and precision: the factor is the log density itself
  double pm[2], pt[2];
  ppc_gaussian_pointmass_stats(0.1, pm);
  ppc_gamma_pointmass_stats(2.0, pt);
  const Rule rx2 = gaussianRule(s.mx, s.tx);
  const double want2 = rx2.expect([](double x) { return logNormal(x, 0.1, 2.0); });
  EXPECT_NEAR(ppc_gaussian_avglogfactor(s.sx().data(), pm, pt), want2, kTol * std::abs(want2));
}

// ------------------------------------------------------------------ MvGaussian / Wishart

struct MvSetup {
  VectorXd mx = vec({0.5, -1.0});
  MatrixXd Lx;  // q(x) precision
  VectorXd mm = vec({-0.3, 0.8});
  MatrixXd Lm;  // q(mean) precision
  MatrixXd S;   // q(Lambda) = Wishart(nu, S)
  double nu = 5.0;
  MvSetup() : Lx(2, 2), Lm(2, 2), S(2, 2) {
    Lx << 2.0, 0.3, 0.3, 1.0;
    Lm << 4.0, -0.5, -0.5, 3.0;
    S << 0.4, 0.1, 0.1, 0.25;
  }
  VectorXd sx() const { return MvGaussian(mx, Lx).expectedStats(); }
  VectorXd sm() const { return MvGaussian(mm, Lm).expectedStats(); }
  VectorXd sL() const { return Wishart(nu, S).expectedStats(); }
};

double logMvNormal(const VectorXd& x, const VectorXd& m, const MatrixXd& L) {
  const VectorXd d = x - m;
  return 0.5 * std::log(L.determinant()) - 0.5 * x.size() * std::log(2 * kPi) - 0.5 * d.dot(L * d);
}

// Monte Carlo sample of Wishart(nu integer, S) by sums of outer products.
std::vector<MatrixXd> wishartSamples(int nu, const MatrixXd& S, int n, uint64_t seed) {
  Rng rng(seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  const MatrixXd L = S.llt().matrixL();
  std::vector<MatrixXd> out;
  for (int s = 0; s < n; ++s) {
    MatrixXd acc = MatrixXd::Zero(S.rows(), S.cols());
    for (int k = 0; k < nu; ++k) {
      VectorXd z(S.rows());
      for (int i = 0; i < z.size(); ++i) z[i] = n01(rng);
      acc += (L * z) * (L * z).transpose();
    }
    out.push_back(acc);
  }
  return out;
}

// Basis of a quadratic function of a 2-vector v: (v0, v1, v0^2, 2 v0 v1, v1^2, 1)
// so that coefficients map to (eta1 [2], eta2 row-major with eta2_01 = eta2_10).
VectorXd quadBasis(const VectorXd& v) {
  VectorXd b(6);
  b << v[0], v[1], v[0] * v[0], 2 * v[0] * v[1], v[1] * v[1], 1.0;
  return b;
}

TEST(MvGaussianFactor, MessageToSampleWithConstantPrecisionExact) {
  const MvSetup s;
  MatrixXd L(2, 2);
  L << 1.5, 0.4, 0.4, 0.9;
  // g(x) = E_q(m)[log N(x; m, L)] by exact Gauss-Hermite over q(m), at 6 points
  const std::vector<VectorXd> xs = {vec({0, 0}), vec({1, 0}), vec({0, 1}), vec({1, 1}), vec({-2, 0.5}), vec({0.3, -1.7})};
  MatrixXd X(6, 6);
  VectorXd y(6);
  const auto nodes = gaussHermiteNodes(s.mm, s.Lm.inverse());
  for (int i = 0; i < 6; ++i) {
    X.row(i) = quadBasis(xs[i]);
    y[i] = 0.0;
    for (const auto& [m, w] : nodes) y[i] += w * logMvNormal(xs[i], m, L);
  }
  const VectorXd c = exactFit(X, y);
  std::vector<double> sL(5), scratch(PPC_MV_SCRATCH(2));
  ASSERT_EQ(ppc_wishart_pointmass_stats(2, L.data(), sL.data(), scratch.data()), 0);
  std::vector<double> dst(6, 0.0);
  ppc_mvgaussian_sample_avglog(2, s.sm().data(), sL.data(), 1.0, dst.data());
  EXPECT_NEAR(dst[0], c[0], 1e-12);
  EXPECT_NEAR(dst[1], c[1], 1e-12);
  EXPECT_NEAR(dst[2], c[2], 1e-12);
  EXPECT_NEAR(dst[3], c[3], 1e-12);
  EXPECT_NEAR(dst[4], c[3], 1e-12);
  EXPECT_NEAR(dst[5], c[4], 1e-12);
}

TEST(MvGaussianFactor, MessagesToSampleAndMeanWithWishartPrecisionMonteCarlo) {
  const MvSetup s;
  const auto Ls = wishartSamples(5, s.S, 4000, 101);
  // For each Wishart sample the E over q(m) is exact; the sample average of the
  // fitted coefficients is the Monte Carlo estimate of the message.
  const std::vector<VectorXd> pts = {vec({0, 0}), vec({1, 0}), vec({0, 1}), vec({1, 1}), vec({-2, 0.5}), vec({0.3, -1.7})};
  MatrixXd X(6, 6);
  for (int i = 0; i < 6; ++i) X.row(i) = quadBasis(pts[i]);
  const auto lu = X.fullPivLu();
  auto check = [&](const VectorXd& otherMean, const MatrixXd& otherCov, const VectorXd& otherStats, bool toMean) {
    const auto nodes = gaussHermiteNodes(otherMean, otherCov);
    std::vector<VectorXd> coefs;
    for (const MatrixXd& L : Ls) {
      VectorXd y(6);
      for (int i = 0; i < 6; ++i) {
        y[i] = 0.0;
        for (const auto& [o, w] : nodes) y[i] += w * (toMean ? logMvNormal(o, pts[i], L) : logMvNormal(pts[i], o, L));
      }
      coefs.push_back(lu.solve(y));
    }
    std::vector<double> dst(6, 0.0);
    const VectorXd sL = s.sL();
    if (toMean) ppc_mvgaussian_mean_avglog(2, otherStats.data(), sL.data(), 1.0, dst.data());
    else ppc_mvgaussian_sample_avglog(2, otherStats.data(), sL.data(), 1.0, dst.data());
    const double want[5] = {dst[0], dst[1], dst[2], dst[3], dst[5]};
    EXPECT_DOUBLE_EQ(dst[3], dst[4]);
    for (int j = 0; j < 5; ++j) {
      double m = 0.0, m2 = 0.0;
      for (const auto& c : coefs) {
        m += c[j];
        m2 += c[j] * c[j];
      }
      m /= coefs.size();
      const double se = std::sqrt((m2 / coefs.size() - m * m) / coefs.size());
      EXPECT_NEAR(want[j], m, 5 * se + 1e-12) << (toMean ? "to mean" : "to x") << " coefficient " << j;
    }
  };
  check(s.mm, s.Lm.inverse(), s.sm(), false);
  check(s.mx, s.Lx.inverse(), s.sx(), true);
}

TEST(MvGaussianFactor, MessageToPrecisionExact) {
  const MvSetup s;
  // g(L) = E_{q(x) q(m)}[log N(x; m, L)]: exact by 4-D Gauss-Hermite; basis (L00, L01 (both), L11, log|L|, 1)
  const auto nx = gaussHermiteNodes(s.mx, s.Lx.inverse());
  const auto nm = gaussHermiteNodes(s.mm, s.Lm.inverse());
  std::vector<MatrixXd> Ls;
  for (auto [a, b, c] : {std::tuple{1.0, 0.0, 1.0}, std::tuple{2.0, 0.5, 1.0}, std::tuple{0.5, -0.2, 3.0},
                         std::tuple{4.0, 1.0, 0.7}, std::tuple{1.2, 0.3, 0.4}}) {
    MatrixXd L(2, 2);
    L << a, b, b, c;
    Ls.push_back(L);
  }
  MatrixXd X(5, 5);
  VectorXd y(5);
  for (int i = 0; i < 5; ++i) {
    X.row(i) << Ls[i](0, 0), 2 * Ls[i](0, 1), Ls[i](1, 1), std::log(Ls[i].determinant()), 1.0;
    y[i] = 0.0;
    for (const auto& [x, wx] : nx)
      for (const auto& [m, wm] : nm) y[i] += wx * wm * logMvNormal(x, m, Ls[i]);
  }
  const VectorXd c = exactFit(X, y);
  std::vector<double> dst(5, 0.0);
  ppc_mvgaussian_precision_avglog(2, s.sx().data(), s.sm().data(), 1.0, dst.data());
  EXPECT_NEAR(dst[0], c[0], 1e-12);
  EXPECT_NEAR(dst[1], c[1], 1e-12);
  EXPECT_NEAR(dst[2], c[1], 1e-12);
  EXPECT_NEAR(dst[3], c[2], 1e-12);
  EXPECT_NEAR(dst[4], c[3], 1e-12);
}

TEST(MvGaussianFactor, AvgLogFactor) {
  const MvSetup s;
  const auto nx = gaussHermiteNodes(s.mx, s.Lx.inverse());
  const auto nm = gaussHermiteNodes(s.mm, s.Lm.inverse());
  // exact for a constant precision
  MatrixXd L(2, 2);
  L << 1.5, 0.4, 0.4, 0.9;
  double want = 0.0;
  for (const auto& [x, wx] : nx)
    for (const auto& [m, wm] : nm) want += wx * wm * logMvNormal(x, m, L);
  std::vector<double> sL(5), scratch(PPC_MV_SCRATCH(2));
  ASSERT_EQ(ppc_wishart_pointmass_stats(2, L.data(), sL.data(), scratch.data()), 0);
  EXPECT_NEAR(ppc_mvgaussian_avglogfactor(2, s.sx().data(), s.sm().data(), sL.data()), want, 1e-12 * std::abs(want));
  // Monte Carlo over a Wishart q(L)
  const auto Ls = wishartSamples(5, s.S, 2000, 103);
  double m = 0.0, m2 = 0.0;
  for (const MatrixXd& Lw : Ls) {
    double v = 0.0;
    for (const auto& [x, wx] : nx)
      for (const auto& [mu, wm] : nm) v += wx * wm * logMvNormal(x, mu, Lw);
    m += v;
    m2 += v * v;
  }
  m /= Ls.size();
  const double se = std::sqrt((m2 / Ls.size() - m * m) / Ls.size());
  EXPECT_NEAR(ppc_mvgaussian_avglogfactor(2, s.sx().data(), s.sm().data(), s.sL().data()), m, 5 * se);
}

TEST(WishartFactor, MessageAndAvgLogFactor) {
  MatrixXd S(2, 2);
  S << 0.4, 0.1, 0.1, 0.25;
  const double nu = 4.5;
  const Wishart prior(nu, S);
  std::vector<MatrixXd> Ls;
  for (auto [a, b, c] : {std::tuple{1.0, 0.0, 1.0}, std::tuple{2.0, 0.5, 1.0}, std::tuple{0.5, -0.2, 3.0},
                         std::tuple{4.0, 1.0, 0.7}, std::tuple{1.2, 0.3, 0.4}}) {
    MatrixXd L(2, 2);
    L << a, b, b, c;
    Ls.push_back(L);
  }
  MatrixXd X(5, 5);
  VectorXd y(5);
  for (int i = 0; i < 5; ++i) {
    X.row(i) << Ls[i](0, 0), 2 * Ls[i](0, 1), Ls[i](1, 1), std::log(Ls[i].determinant()), 1.0;
    y[i] = prior.logDensity(Ls[i]);
  }
  const VectorXd c = exactFit(X, y);
  const MatrixXd Sinv = S.inverse();
  std::vector<double> dst(5, 0.0);
  ppc_wishart_sample_avglog(2, nu, Sinv.data(), 1.0, dst.data());
  EXPECT_NEAR(dst[0], c[0], 1e-12);
  EXPECT_NEAR(dst[1], c[1], 1e-12);
  EXPECT_NEAR(dst[2], c[1], 1e-12);
  EXPECT_NEAR(dst[3], c[2], 1e-12);
  EXPECT_NEAR(dst[4], c[3], 1e-12);
  EXPECT_NEAR(-c[4], ppc_wishart_lognorm_params(2, nu, std::log(S.determinant())), 1e-11);
  // ELBO: E_{q(L) = Wishart(5, Sq)}[log W(L; nu, S)] by Monte Carlo
  MatrixXd Sq(2, 2);
  Sq << 0.3, -0.05, -0.05, 0.5;
  const auto samples = wishartSamples(5, Sq, 40000, 107);
  double m = 0.0, m2 = 0.0;
  for (const auto& L : samples) {
    const double v = prior.logDensity(L);
    m += v;
    m2 += v * v;
  }
  m /= samples.size();
  const double se = std::sqrt((m2 / samples.size() - m * m) / samples.size());
  const VectorXd sq = Wishart(5.0, Sq).expectedStats();
  EXPECT_NEAR(ppc_wishart_avglogfactor(2, nu, Sinv.data(), std::log(S.determinant()), sq.data()), m, 5 * se);
}

// ------------------------------------------------------------------ LDA mixture kernel

TEST(LdaKernel, ResponsibilitiesMessagesAndValueMatchBruteForce) {
  const int K = 5;
  const VectorXd aTheta = vec({0.3, 1.2, 2.0, 0.8, 5.0});
  // phi_k Dirichlet over a vocabulary of 3; token is word 1
  const std::vector<VectorXd> aPhi = {vec({1.0, 2.0, 0.5}), vec({0.2, 0.2, 3.0}), vec({4.0, 1.0, 1.0}),
                                      vec({0.7, 0.7, 0.7}), vec({2.5, 0.1, 0.9})};
  const int w = 1;
  const double count = 3.0;
  // brute force with quadrature expectations: log q*(z=k) = E log theta_k + E log phi_{k,w}
  const VectorXd elt = quadElogDirichlet(aTheta);
  VectorXd elp(K);
  for (int k = 0; k < K; ++k) elp[k] = quadElogDirichlet(aPhi[k])[w];
  const VectorXd qz = softmax(elt + elp);
  // ELBO pieces: sum_z q(z) [E log theta_z + E log phi_{z,w}] - sum q log q, times count
  double elbo = 0.0;
  for (int k = 0; k < K; ++k) elbo += qz[k] * (elt[k] + elp[k]) - qz[k] * std::log(qz[k]);
  elbo *= count;

  const VectorXd et = Dirichlet(aTheta).elog();
  VectorXd ep(K);
  for (int k = 0; k < K; ++k) ep[k] = Dirichlet(aPhi[k]).elog()[w];
  std::vector<double> r(K), dt(K, 0.5), dp(K, 0.25);
  const double v = ppc_lda_token(K, et.data(), ep.data(), count, r.data(), dt.data(), dp.data());
  for (int k = 0; k < K; ++k) {
    EXPECT_NEAR(r[k], qz[k], 1e-11);
    EXPECT_NEAR(dt[k] - 0.5, count * qz[k], 1e-11);
    EXPECT_NEAR(dp[k] - 0.25, count * qz[k], 1e-11);
  }
  EXPECT_NEAR(v, elbo, 1e-9 * std::abs(elbo));
}

TEST(LdaKernel, DocumentLoopEqualsTokenLoop) {
  const int K = 7, V = 11;
  Rng rng(5);
  std::uniform_real_distribution<double> u(-8.0, -0.1);
  std::vector<double> et(K), ep(V * K);
  for (auto& x : et) x = u(rng);
  for (auto& x : ep) x = u(rng);
  const std::vector<int64_t> words = {3, 0, 10, 3, 7};
  const std::vector<double> counts = {1.0, 2.0, 5.0, 1.0, 3.0};
  std::vector<double> r(K), dt(K, 0.0), dp(V * K, 0.0), dt2(K, 0.0), dp2(V * K, 0.0);
  const double v = ppc_lda_doc(5, K, words.data(), counts.data(), et.data(), ep.data(), r.data(), dt.data(), dp.data());
  double v2 = 0.0;
  for (int i = 0; i < 5; ++i)
    v2 += ppc_lda_token(K, et.data(), ep.data() + words[i] * K, counts[i], r.data(), dt2.data(), dp2.data() + words[i] * K);
  EXPECT_EQ(v, v2);
  EXPECT_EQ(dt, dt2);
  EXPECT_EQ(dp, dp2);
  // total message mass equals the token count
  double mass = 0.0;
  for (double x : dt) mass += x;
  EXPECT_NEAR(mass, 12.0, 1e-12);
  // counts == nullptr means 1
  std::vector<double> dt3(K, 0.0), dp3(V * K, 0.0);
  ppc_lda_doc(5, K, words.data(), nullptr, et.data(), ep.data(), r.data(), dt3.data(), dp3.data());
  double mass3 = 0.0;
  for (double x : dt3) mass3 += x;
  EXPECT_NEAR(mass3, 5.0, 1e-12);
}

// ------------------------------------------------------------------ gates

TEST(Gates, CasesPosteriorIsExactMixturePosteriorAndEvidence) {
  // c ~ Categorical(pi); given c = k: mu ~ N(m_k, 1/t0_k), x ~ N(mu, 1/t) observed.
  // Branch k's local ELBO at its optimum q(mu | c=k) is log p(x | c=k), so the
  // gate's q(c) is the exact posterior and its value the exact log evidence.
  const double x = 1.3, t = 2.0;
  const double pi[3] = {0.2, 0.5, 0.3}, m[3] = {-2.0, 0.0, 3.0}, t0[3] = {1.0, 4.0, 0.5};
  double ell[3], logpx[3];
  for (int k = 0; k < 3; ++k) {
    // optimal q(mu | c = k) from the kernels
    double eta[2] = {0.0, 0.0};
    double pmm[2], pmt[2], sxv[2], stv[2];
    ppc_gaussian_pointmass_stats(m[k], pmm);
    ppc_gamma_pointmass_stats(t0[k], pmt);
    ppc_gaussian_sample_avglog(pmm, pmt, 1.0, eta);  // prior
    ppc_gaussian_pointmass_stats(x, sxv);
    ppc_gamma_pointmass_stats(t, stv);
    ppc_gaussian_mean_avglog(sxv, stv, 1.0, eta);  // likelihood
    double smu[2];
    ppc_gaussian_stats_n(1, eta, smu);
    const double branch = ppc_gaussian_avglogfactor(smu, pmm, pmt) + ppc_gaussian_avglogfactor(sxv, smu, stv) +
                          ppc_gaussian_entropy_n(1, eta);
    ell[k] = std::log(pi[k]) + branch;
    // exact marginal: x | c=k ~ N(m_k, 1/t0_k + 1/t)
    logpx[k] = logNormal(x, m[k], 1.0 / (1.0 / t0[k] + 1.0 / t));
  }
  double q[3];
  const double value = ppc_cases_posterior(3, ell, q);
  double evidence = 0.0;
  for (int k = 0; k < 3; ++k) evidence += pi[k] * std::exp(logpx[k]);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(q[k], pi[k] * std::exp(logpx[k]) / evidence, 1e-13);
  EXPECT_NEAR(value, std::log(evidence), 1e-13);
  // the contribution at the optimum: sum q ell + H(q) = logsumexp(ell)
  EXPECT_NEAR(ppc_cases_avglogfactor(3, q, ell), value, 1e-13);
  // any other q gives a lower value (Gibbs' inequality)
  const double other[3] = {0.6, 0.3, 0.1};
  EXPECT_LT(ppc_cases_avglogfactor(3, other, ell), value);
  EXPECT_NEAR(ppc_cases_avglogfactor(3, other, ell),
              0.6 * (ell[0] - std::log(0.6)) + 0.3 * (ell[1] - std::log(0.3)) + 0.1 * (ell[2] - std::log(0.1)), 1e-13);
}

TEST(Gates, SelectorMessagesAndBranchAccumulation) {
  double dst[3] = {0.0, 0.0, 0.0};
  ppc_cases_selector_avglog(1, -2.5, 2.0, dst);
  EXPECT_EQ(dst[1], -5.0);
  EXPECT_EQ(dst[0], 0.0);
  // if/else on a Bernoulli: the logit message makes q(c) = sigmoid(ell_t - ell_f)
  double logit = 0.0;
  ppc_cases_bernoulli_avglog(-1.0, -3.0, 1.0, &logit);
  double p;
  ppc_bernoulli_stats_n(1, &logit, &p);
  const double ell[2] = {-1.0, -3.0};
  double q[2];
  ppc_cases_posterior(2, ell, q);
  EXPECT_NEAR(p, q[0], 1e-15);
  // enter/exit: a branch's message weighted by q(c = k)
  const double qc[3] = {0.2, 0.7, 0.1};
  const double msg[4] = {1.0, -2.0, 3.0, 0.5};
  double acc[4] = {1.0, 1.0, 1.0, 1.0};
  ppc_gate_accumulate(4, qc, 1, msg, acc);
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(acc[i], 1.0 + 0.7 * msg[i]);
}

}  // namespace
}  // namespace ppc::rt
