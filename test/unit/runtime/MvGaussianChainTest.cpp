//===- test/unit/runtime/MvGaussianChainTest.cpp - a chain of MvGaussians -===//
//
// The kernels of runtime/factors/MvGaussianChain.h against dense linear
// algebra: the smoother's means, covariances and lag-one cross moments
// against the inverse of the chain's block-tridiagonal precision built as a
// dense TD x TD matrix; the ELBO terms at the smoother's posterior against
// the log normalizer of the Gaussian they stand for (E_q[log p] + H(q) =
// log Z at the exact q); and each message against the factor's expected log
// density it is the coefficients of.
//
//===----------------------------------------------------------------------===//
#include "runtime/Distributions.h"
#include "runtime/Operators.h"

#include <Eigen/LU>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using ppc::rt::Mat;
using ppc::rt::Vec;

constexpr int64_t D = 3;
const int64_t W = ppc_mvchain_width(D);
const double kLog2Pi = std::log(2.0 * M_PI);

Mat spd(double scale, double off) {
  Mat m = Mat::Identity(D, D) * scale;
  for (int i = 0; i + 1 < D; ++i)
    m(i, i + 1) = m(i + 1, i) = off;
  return m;
}

/// An MvGaussian's statistics (E a, E a a^T) with mean m and covariance S.
std::vector<double> mvStats(const Vec &m, const Mat &S) {
  std::vector<double> s(m.data(), m.data() + D);
  Mat second = S + m * m.transpose();
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j)
      s.push_back(second(i, j));
  return s;
}

/// A Wishart's statistics (E L, E log|L|) with E L = L.
std::vector<double> wishartStats(const Mat &L, double elogdet) {
  std::vector<double> s;
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j)
      s.push_back(L(i, j));
  s.push_back(elogdet);
  return s;
}

struct Chain {
  Vec m0 = Vec::LinSpaced(D, -0.5, 0.7);
  Mat P0 = spd(0.8, 0.2), Q = spd(2.0, -0.6), A;
  std::vector<double> sm0, sP0, sQ, sA; // statistics; A's D rows are point masses
  Chain() {
    A.resize(D, D);
    A << 0.9, 0.2, -0.1, -0.3, 0.8, 0.05, 0.1, 0.0, 0.7;
    sm0 = mvStats(m0, Mat::Zero(D, D));
    sP0 = wishartStats(P0, std::log(P0.determinant()));
    sQ = wishartStats(Q, std::log(Q.determinant()));
    for (int d = 0; d < D; ++d) {
      std::vector<double> r = mvStats(A.row(d).transpose(), Mat::Zero(D, D));
      sA.insert(sA.end(), r.begin(), r.end());
    }
  }
};

// The evidence on element t: h_t, J_t = -R_t / 2 (an emission y_t ~ N(x_t, R_t^-1)).
Vec evidenceH(int64_t t) {
  Vec h(D);
  for (int i = 0; i < D; ++i)
    h(i) = std::sin(1.3 * double(t) + 0.7 * i + 0.2);
  return h;
}
Mat evidenceR(int64_t t) { return spd(0.4 + 0.1 * double(t % 3), 0.05); }

TEST(MvGaussianChain, SmootherEqualsTheDenseInverse) {
  Chain c;
  for (int64_t T : {1, 2, 5, 8}) {
    std::vector<double> eta(size_t(T * W), 0.0), stats(size_t(T * W));
    for (int64_t t = 0; t < T; ++t) {
      double *e = &eta[size_t(t * W)];
      ppc_mvchain_sample_avglog(D, t, c.sm0.data(), c.sP0.data(), D, c.sA.data(), c.sQ.data(), 1.0, e);
      Vec h = evidenceH(t);
      Mat R = evidenceR(t);
      for (int i = 0; i < D; ++i) {
        e[i] += h(i);
        for (int j = 0; j < D; ++j)
          e[D + i * D + j] -= 0.5 * R(i, j);
      }
    }
    ppc_mvchain_stats(T, D, eta.data(), stats.data());
    // The dense precision and linear term of the joint log density.
    Mat L = Mat::Zero(T * D, T * D);
    Vec h = Vec::Zero(T * D);
    L.block(0, 0, D, D) += c.P0;
    h.head(D) += c.P0 * c.m0;
    for (int64_t t = 0; t < T; ++t) {
      L.block(t * D, t * D, D, D) += evidenceR(t);
      h.segment(t * D, D) += evidenceH(t);
      if (t > 0) { // (x_t - A x_{t-1})^T Q (x_t - A x_{t-1})
        L.block(t * D, t * D, D, D) += c.Q;
        L.block((t - 1) * D, (t - 1) * D, D, D) += c.A.transpose() * c.Q * c.A;
        L.block(t * D, (t - 1) * D, D, D) -= c.Q * c.A;
        L.block((t - 1) * D, t * D, D, D) -= c.A.transpose() * c.Q;
      }
    }
    Mat S = L.inverse();
    Vec mu = S * h;
    for (int64_t t = 0; t < T; ++t) {
      const double *r = &stats[size_t(t * W)];
      for (int i = 0; i < D; ++i) {
        EXPECT_NEAR(r[i], mu(t * D + i), 1e-12) << T << " " << t;
        for (int j = 0; j < D; ++j) {
          EXPECT_NEAR(r[D + i * D + j], S(t * D + i, t * D + j) + mu(t * D + i) * mu(t * D + j), 1e-12);
          if (t > 0) {
            const int64_t p = (t - 1) * D;
            EXPECT_NEAR(r[D + D * D + i * D + j], S(t * D + i, p + j) + mu(t * D + i) * mu(p + j), 1e-12);
            EXPECT_NEAR(r[D + 2 * D * D + i * D + j], S(p + i, p + j) + mu(p + i) * mu(p + j), 1e-12);
          }
        }
        if (t > 0) {
          EXPECT_NEAR(r[D + 3 * D * D + i], mu((t - 1) * D + i), 1e-12);
        }
      }
      EXPECT_EQ(r[W - 1], t == 0 ? 1.0 : 0.0);
    }
    // E log p(x) + H(q) + the evidence's expectation = log of the Gaussian integral.
    double elbo = ppc_mvchain_entropy_n(T, D, stats.data());
    for (int64_t t = 0; t < T; ++t) {
      const double *r = &stats[size_t(t * W)];
      elbo += ppc_mvchain_avglogfactor(D, r, c.sm0.data(), c.sP0.data(), D, c.sA.data(), c.sQ.data());
      Vec ht = evidenceH(t);
      Mat R = evidenceR(t);
      for (int i = 0; i < D; ++i) {
        elbo += ht(i) * r[i];
        for (int j = 0; j < D; ++j)
          elbo -= 0.5 * R(i, j) * r[D + i * D + j];
      }
    }
    double logZ = 0.5 * std::log(c.P0.determinant()) - 0.5 * D * kLog2Pi - 0.5 * c.m0.dot(c.P0 * c.m0) +
                  double(T - 1) * (0.5 * std::log(c.Q.determinant()) - 0.5 * D * kLog2Pi);
    logZ += 0.5 * h.dot(mu) + 0.5 * double(T * D) * kLog2Pi - 0.5 * std::log(L.determinant());
    EXPECT_NEAR(elbo, logZ, 1e-10 * std::abs(logZ)) << T;
  }
}

// A later element's statistics (any consistent moments will do).
std::vector<double> laterElement() {
  Mat big = Mat::Zero(2 * D, 2 * D);
  for (int i = 0; i < 2 * D; ++i)
    for (int j = 0; j < 2 * D; ++j)
      big(i, j) = 0.3 * std::cos(0.5 * (i - j)) + (i == j ? 1.0 : 0.0);
  Vec m = Vec::LinSpaced(2 * D, -1.0, 1.2); // (x_t, x_{t-1})
  Mat second = big + m * m.transpose();
  std::vector<double> s(size_t(W), 0.0);
  for (int i = 0; i < D; ++i) {
    s[size_t(i)] = m(i);
    s[size_t(D + 3 * D * D + i)] = m(D + i);
    for (int j = 0; j < D; ++j) {
      s[size_t(D + i * D + j)] = second(i, j);
      s[size_t(D + D * D + i * D + j)] = second(i, D + j);
      s[size_t(D + 2 * D * D + i * D + j)] = second(D + i, D + j);
    }
  }
  return s;
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

// Each message is the coefficients of the factor's expected log density in
// its target's statistics: E log p(x_t | x_{t-1}) = c + <message, stats>.
TEST(MvGaussianChain, MessagesAreTheExpectedLogDensity) {
  Chain c;
  // A learnt A: rows with covariance, so E[A^T Q A] has its variance terms.
  std::vector<double> sA;
  for (int d = 0; d < D; ++d) {
    std::vector<double> r = mvStats(c.A.row(d).transpose(), spd(0.05 + 0.02 * d, 0.01));
    sA.insert(sA.end(), r.begin(), r.end());
  }
  const std::vector<double> x = laterElement();
  const double value = ppc_mvchain_avglogfactor(D, x.data(), c.sm0.data(), c.sP0.data(), D, sA.data(), c.sQ.data());
  const double constant = 0.5 * (c.sQ[D * D] - D * kLog2Pi);
  // -> x_t (and x_{t-1}): the transition's coefficients on the row's moments.
  std::vector<double> toX(size_t(W), 0.0);
  ppc_mvchain_sample_avglog(D, 1, c.sm0.data(), c.sP0.data(), D, sA.data(), c.sQ.data(), 1.0, toX.data());
  EXPECT_NEAR(value, constant + dot(toX, x), 1e-12 * std::abs(value));
  // -> Q: (-E(x_t - A x_{t-1})(x_t - A x_{t-1})^T / 2, 1/2) on (E Q, E log|Q|).
  std::vector<double> toQ(size_t(D * D + 1), 0.0);
  ppc_mvchain_to_precision(D, x.data(), D, sA.data(), 1.0, toQ.data());
  EXPECT_NEAR(value, -0.5 * D * kLog2Pi + dot(toQ, c.sQ), 1e-12 * std::abs(value));
  EXPECT_DOUBLE_EQ(toQ[D * D], 0.5);
  // -> A's rows with a diagonal Q (c I: the case that learns A).
  Mat Qd = Mat::Identity(D, D) * 1.7;
  std::vector<double> sQd = wishartStats(Qd, D * std::log(1.7));
  std::vector<double> toA(sA.size(), 0.0);
  ppc_mvchain_to_transition(D, x.data(), D, sQd.data(), 1.0, toA.data());
  const double valueD = ppc_mvchain_avglogfactor(D, x.data(), c.sm0.data(), c.sP0.data(), D, sA.data(), sQd.data());
  double rest = 0.5 * (sQd[D * D] - D * kLog2Pi); // the terms without A: -tr(Q E x_t x_t^T) / 2
  for (int i = 0; i < D; ++i)
    rest -= 0.5 * 1.7 * x[size_t(D + i * D + i)];
  EXPECT_NEAR(valueD, rest + dot(toA, sA), 1e-12 * std::abs(valueD));
  // The first element's messages only come from the first element.
  std::vector<double> first = x;
  first[size_t(W - 1)] = 1.0;
  std::vector<double> toM(size_t(D + D * D), 0.0);
  ppc_mvchain_to_initial_mean(D, x.data(), c.sP0.data(), 1.0, toM.data());
  for (double v : toM)
    EXPECT_EQ(v, 0.0);
  ppc_mvchain_to_initial_mean(D, first.data(), c.sP0.data(), 1.0, toM.data());
  Vec expected = c.P0 * Vec::Map(x.data(), D);
  for (int i = 0; i < D; ++i)
    EXPECT_NEAR(toM[size_t(i)], expected(i), 1e-14);
  std::vector<double> toP0(size_t(D * D + 1), 0.0);
  ppc_mvchain_to_initial_precision(D, first.data(), c.sm0.data(), 1.0, toP0.data());
  const double firstValue =
      ppc_mvchain_avglogfactor(D, first.data(), c.sm0.data(), c.sP0.data(), D, sA.data(), c.sQ.data());
  EXPECT_NEAR(firstValue, -0.5 * D * kLog2Pi + dot(toP0, c.sP0), 1e-12 * std::abs(firstValue));
}

// vec(A) as one MvGaussian of dimension D^2 (rows correlated with each
// other): with a full E Q (a Wishart's), each message is still the
// coefficients of the expected log density in its target's statistics, and
// with the rows' covariances only on the diagonal blocks the joint layout
// gives the rows layout's numbers.
TEST(MvGaussianChain, AJointMatrixIsTheSameDensity) {
  Chain c;
  const int64_t DD = D * D;
  Mat cov = Mat::Zero(DD, DD);
  for (int a = 0; a < DD; ++a)
    for (int b = 0; b < DD; ++b)
      cov(a, b) = 0.02 * std::exp(-0.7 * std::abs(a - b)) + (a == b ? 0.01 * (1 + a % 3) : 0.0);
  Vec mean(DD);
  for (int d = 0; d < D; ++d)
    for (int i = 0; i < D; ++i)
      mean(d * D + i) = c.A(d, i);
  std::vector<double> sJ(mean.data(), mean.data() + DD);
  Mat second = cov + mean * mean.transpose();
  for (int a = 0; a < DD; ++a)
    for (int b = 0; b < DD; ++b)
      sJ.push_back(second(a, b));
  const std::vector<double> x = laterElement();
  const double value = ppc_mvchain_avglogfactor(D, x.data(), c.sm0.data(), c.sP0.data(), DD, sJ.data(), c.sQ.data());
  std::vector<double> toX(size_t(W), 0.0);
  ppc_mvchain_sample_avglog(D, 1, c.sm0.data(), c.sP0.data(), DD, sJ.data(), c.sQ.data(), 1.0, toX.data());
  EXPECT_NEAR(value, 0.5 * (c.sQ[D * D] - D * kLog2Pi) + dot(toX, x), 1e-12 * std::abs(value));
  std::vector<double> toQ(size_t(D * D + 1), 0.0);
  ppc_mvchain_to_precision(D, x.data(), DD, sJ.data(), 1.0, toQ.data());
  EXPECT_NEAR(value, -0.5 * D * kLog2Pi + dot(toQ, c.sQ), 1e-12 * std::abs(value));
  // -> vec(A), with the full E Q: the terms without A, plus <message, stats>.
  std::vector<double> toA(sJ.size(), 0.0);
  ppc_mvchain_to_transition(D, x.data(), DD, c.sQ.data(), 1.0, toA.data());
  double rest = 0.5 * (c.sQ[D * D] - D * kLog2Pi);
  for (int i = 0; i < D * D; ++i)
    rest -= 0.5 * c.sQ[size_t(i)] * x[size_t(D + i)];
  EXPECT_NEAR(value, rest + dot(toA, sJ), 1e-12 * std::abs(value));
  // Rows uncorrelated with each other: the joint layout's numbers are the rows'.
  Mat blockCov = Mat::Zero(DD, DD);
  std::vector<double> sRows;
  for (int d = 0; d < D; ++d) {
    Mat b = cov.block(d * D, d * D, D, D);
    blockCov.block(d * D, d * D, D, D) = b;
    std::vector<double> r = mvStats(c.A.row(d).transpose(), b);
    sRows.insert(sRows.end(), r.begin(), r.end());
  }
  std::vector<double> sBlock(mean.data(), mean.data() + DD);
  Mat secondBlock = blockCov + mean * mean.transpose();
  for (int a = 0; a < DD; ++a)
    for (int b = 0; b < DD; ++b)
      sBlock.push_back(secondBlock(a, b));
  EXPECT_NEAR(ppc_mvchain_avglogfactor(D, x.data(), c.sm0.data(), c.sP0.data(), DD, sBlock.data(), c.sQ.data()),
              ppc_mvchain_avglogfactor(D, x.data(), c.sm0.data(), c.sP0.data(), D, sRows.data(), c.sQ.data()),
              1e-12 * std::abs(value));
}

// A precision that is not positive definite gives NaN statistics, not garbage.
TEST(MvGaussianChain, AnImproperChainIsNaN) {
  std::vector<double> eta(size_t(2 * W), 0.0), stats(size_t(2 * W));
  for (int i = 0; i < D; ++i)
    eta[size_t(D + i * D + i)] = 0.5; // J = +I/2: precision -I
  ppc_mvchain_stats(2, D, eta.data(), stats.data());
  EXPECT_TRUE(std::isnan(stats[0]));
}

} // namespace
