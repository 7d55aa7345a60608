//===- test/unit/runtime/GaussianChainTest.cpp - a chain of Gaussians ----===//
//
// The kernels of runtime/factors/GaussianChain.h against dense linear
// algebra: the smoother's means, variances and lag-one covariances against
// the inverse of the chain's tridiagonal precision built as a dense matrix,
// and the ELBO terms at the smoother's posterior against the log normalizer
// of the Gaussian they stand for (E_q[log p] + H(q) = log Z at the exact q).
//
//===----------------------------------------------------------------------===//
#include "runtime/Distributions.h"
#include "runtime/Operators.h"

#include <Eigen/LU>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

constexpr int64_t W = 6;

// A chain with constant m0, p0, a, tau and Gaussian evidence (h_t, j_t) on
// every element (an emission y_t ~ N(x_t, r): h = r y_t, j = -r / 2).
struct ChainSetup {
  int64_t T;
  double m0 = 0.3, p0 = 0.5, a = 0.8, tau = 2.0;
  std::vector<double> h, j;
};

ChainSetup setup(int64_t T) {
  ChainSetup s{T, 0.3, 0.5, 0.8, 2.0, {}, {}};
  for (int64_t t = 0; t < T; ++t) {
    s.h.push_back(std::sin(1.3 * double(t) + 0.2));
    s.j.push_back(-0.5 * (0.4 + 0.1 * double(t % 3)));
  }
  return s;
}

TEST(GaussianChain, SmootherEqualsTheDenseInverse) {
  for (int64_t T : {1, 2, 5, 9}) {
    ChainSetup s = setup(T);
    const double m0[2] = {s.m0, s.m0 * s.m0}, p0[2] = {s.p0, std::log(s.p0)}, a[2] = {s.a, s.a * s.a},
                 tau[2] = {s.tau, std::log(s.tau)};
    std::vector<double> eta(size_t(T * W), 0.0), stats(size_t(T * W));
    for (int64_t t = 0; t < T; ++t) {
      ppc_gchain_sample_avglog(t, m0, p0, a, tau, 1.0, &eta[size_t(t * W)]);
      eta[size_t(t * W)] += s.h[size_t(t)];
      eta[size_t(t * W + 1)] += s.j[size_t(t)];
    }
    ppc_gchain_stats(T, eta.data(), stats.data());
    // The dense precision and linear term of the joint log density.
    ppc::rt::Mat L = ppc::rt::Mat::Zero(T, T);
    ppc::rt::Vec h = ppc::rt::Vec::Zero(T);
    L(0, 0) += s.p0;
    h(0) += s.p0 * s.m0;
    for (int64_t t = 0; t < T; ++t) {
      L(t, t) += -2.0 * s.j[size_t(t)];
      h(t) += s.h[size_t(t)];
      if (t > 0) { // tau (x_t - a x_{t-1})^2
        L(t, t) += s.tau;
        L(t - 1, t - 1) += s.tau * s.a * s.a;
        L(t, t - 1) -= s.tau * s.a;
        L(t - 1, t) -= s.tau * s.a;
      }
    }
    ppc::rt::Mat S = L.inverse();
    ppc::rt::Vec mu = S * h;
    for (int64_t t = 0; t < T; ++t) {
      const double *r = &stats[size_t(t * W)];
      EXPECT_NEAR(r[0], mu(t), 1e-12) << T << " " << t;
      EXPECT_NEAR(r[1], S(t, t) + mu(t) * mu(t), 1e-12) << T << " " << t;
      if (t > 0) {
        EXPECT_NEAR(r[2], S(t, t - 1) + mu(t) * mu(t - 1), 1e-12) << T << " " << t;
        EXPECT_NEAR(r[3], S(t - 1, t - 1) + mu(t - 1) * mu(t - 1), 1e-12) << T << " " << t;
        EXPECT_NEAR(r[4], mu(t - 1), 1e-12) << T << " " << t;
      }
      EXPECT_EQ(r[5], t == 0 ? 1.0 : 0.0);
    }
    // E log p(x) + H(q) + the evidence's expectation = log of the Gaussian integral.
    double elbo = ppc_gchain_entropy_n(T, stats.data());
    for (int64_t t = 0; t < T; ++t) {
      elbo += ppc_gchain_avglogfactor(&stats[size_t(t * W)], m0, p0, a, tau);
      elbo += s.h[size_t(t)] * stats[size_t(t * W)] + s.j[size_t(t)] * stats[size_t(t * W + 1)];
    }
    const double log2pi = std::log(2.0 * M_PI);
    double logZ = 0.5 * std::log(s.p0) - 0.5 * log2pi - 0.5 * s.p0 * s.m0 * s.m0 +
                  double(T - 1) * (0.5 * std::log(s.tau) - 0.5 * log2pi);
    logZ += 0.5 * h.dot(mu) + 0.5 * double(T) * log2pi - 0.5 * std::log(L.determinant());
    EXPECT_NEAR(elbo, logZ, 1e-10 * std::abs(logZ)) << T;
  }
}

// Each message is the expectation of the factor's log density as a function
// of its target, from one row: checked against the terms it stands for.
TEST(GaussianChain, MessagesAreTheExpectedLogDensity) {
  const double x0[W] = {0.4, 0.5, 0, 0, 0, 1.0}, x1[W] = {0.7, 0.9, 0.2, 0.5, 0.4, 0.0};
  const double p0[2] = {2.0, 0.5}, a[2] = {0.8, 0.7}, tau[2] = {3.0, 1.0};
  double d[2] = {0, 0};
  ppc_gchain_to_initial_mean(x0, p0, 1.0, d); // -p0/2 (x0 - m)^2 = p0 x0 m - p0/2 m^2 + ...
  EXPECT_DOUBLE_EQ(d[0], 2.0 * 0.4);
  EXPECT_DOUBLE_EQ(d[1], -1.0);
  ppc_gchain_to_initial_mean(x1, p0, 1.0, d); // not the first element: nothing
  EXPECT_DOUBLE_EQ(d[0], 0.8);
  double g[2] = {0, 0};
  ppc_gchain_to_precision(x1, a, 2.0, g); // 2 (-1/2 E (x1 - a x0)^2, 1/2)
  EXPECT_DOUBLE_EQ(g[0], -(0.9 - 2.0 * 0.8 * 0.2 + 0.7 * 0.5));
  EXPECT_DOUBLE_EQ(g[1], 1.0);
  double c[2] = {0, 0};
  ppc_gchain_to_coefficient(x1, tau, 1.0, c);
  EXPECT_DOUBLE_EQ(c[0], 3.0 * 0.2);
  EXPECT_DOUBLE_EQ(c[1], -1.5 * 0.5);
}

} // namespace
