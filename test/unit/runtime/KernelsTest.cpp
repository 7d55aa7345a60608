// Per-variable kernels (stats, log-normalizer, entropy, KL) against the
// Distributions classes, plate-batch kernels against loops of the scalar
// kernels (with index arrays and weights), and the vector helpers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/Distributions.h"
#include "runtime/Operators.h"
#include "runtime/Special.h"
#include "runtime/Symbols.h"
#include "runtime/VectorIsa.h"
#include "runtime/kernels/KernelSupport.h"
#include "test/unit/runtime/TestUtil.h"

namespace ppc::rt {
namespace {

using namespace ppc::rt::test;
using Eigen::MatrixXd;
using Eigen::VectorXd;

std::vector<double> concat(const std::vector<VectorXd>& rows) {
  std::vector<double> out;
  for (const auto& r : rows) out.insert(out.end(), r.data(), r.data() + r.size());
  return out;
}

double rel(double a, double b) { return std::abs(a - b) / std::max(1.0, std::abs(b)); }

// The two forms of a row's maximum (the vector ISAs' clones use the one in
// vectors of 4) give the same value for every length, with infinities and
// NaNs (which neither takes) among the entries.
TEST(KernelSupport, MaxOfLanesIsMaxOf8) {
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> u(-50.0, 50.0);
  std::uniform_int_distribution<int> special(0, 19);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (int trial = 0; trial < 20000; ++trial) {
    const int64_t n = trial % 41;
    std::vector<double> x(static_cast<size_t>(n));
    for (double& v : x) {
      const int s = special(rng);
      v = s == 0 ? nan : s == 1 ? -inf : s == 2 ? inf : u(rng);
    }
    auto at = [&](int64_t i) { return x[static_cast<size_t>(i)]; };
    const double scalar = maxOf8(n, at), lanes = maxOfLanes(n, at);
    EXPECT_EQ(lanes, scalar) << "n = " << n;
    double direct = -inf;
    for (double v : x) direct = v > direct ? v : direct;
    EXPECT_EQ(scalar, direct) << "n = " << n;
  }
}

TEST(FamilyKernels, DirichletMatchesClass) {
  const std::vector<Dirichlet> ds = {Dirichlet(vec({0.3, 2.0, 5.5, 1.0})), Dirichlet(vec({1e-3, 1e3, 7.0, 0.5})),
                                     Dirichlet(vec({1.0, 1.0, 1.0, 1.0}))};
  std::vector<VectorXd> alphas, etas;
  for (const auto& d : ds) {
    alphas.push_back(d.alpha());
    etas.push_back(d.natural());
  }
  const auto alpha = concat(alphas), eta = concat(etas);
  std::vector<double> elog(12), elog2(12);
  ppc_dirichlet_elog_n(3, 4, alpha.data(), elog.data());
  ppc_dirichlet_stats_n(3, 4, eta.data(), elog2.data());
  double lognorm = 0.0, entropy = 0.0, klSum = 0.0;
  for (int i = 0; i < 3; ++i) {
    const VectorXd e = ds[i].elog();
    for (int k = 0; k < 4; ++k) {
      EXPECT_LE(rel(elog[i * 4 + k], e[k]), 1e-13);
      EXPECT_LE(rel(elog2[i * 4 + k], e[k]), 1e-13);
    }
    lognorm += ds[i].logNormalizer();
    entropy += ds[i].entropy();
    klSum += kl(ds[i], ds[(i + 1) % 3]);
  }
  std::vector<VectorXd> shifted = {etas[1], etas[2], etas[0]};
  const auto etaP = concat(shifted);
  EXPECT_LE(rel(ppc_dirichlet_lognorm_n(3, 4, eta.data()), lognorm), 1e-13);
  std::vector<double> stats(12);
  ppc_dirichlet_stats_n(3, 4, eta.data(), stats.data());
  EXPECT_LE(rel(ppc_dirichlet_entropy_n(3, 4, eta.data(), stats.data()), entropy), 1e-12);
  EXPECT_LE(rel(ppc_dirichlet_kl_n(3, 4, eta.data(), etaP.data()), klSum), 1e-12);
  // batch prior message and ELBO with shared alpha
  const double prior[4] = {0.5, 0.5, 2.0, 1.0};
  std::vector<double> dst(12, 1.0);
  ppc_dirichlet_probs_avglog_n(3, 4, prior, 2.0, dst.data());
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(dst[i * 4 + k], 1.0 + 2.0 * (prior[k] - 1.0));
  double sum = 0.0;
  for (int i = 0; i < 3; ++i) sum += ppc_dirichlet_avglogfactor(4, prior, elog.data() + 4 * i);
  EXPECT_LE(rel(ppc_dirichlet_avglogfactor_n(3, 4, prior, elog.data()), sum), 1e-14);
}

// codegen/EntropySharing.cpp's pair: the statistics as ppc_dirichlet_stats_n
// (bit for bit), each row's log normalizer as ppc_dirichlet_lognorm_n, and
// the entropy from them as ppc_dirichlet_entropy_n, for row widths around
// the 8-lane blocks (the padded last block holds lgamma of the row's sum).
TEST(FamilyKernels, DirichletStatisticsWithLogNormalizers) {
  std::mt19937_64 rng(7);
  std::gamma_distribution<double> counts(0.3, 4.0);
  for (int64_t K : {1, 2, 7, 8, 9, 16, 101}) {
    const int64_t n = 3;
    std::vector<double> eta(size_t(n * K));
    for (double &e : eta) e = 0.01 - 1.0 + counts(rng); // eta = alpha - 1, alpha >= 0.01
    std::vector<double> stats(eta.size()), fused(eta.size()), lognorm(size_t(n), 0.0);
    ppc_dirichlet_stats_n(n, K, eta.data(), stats.data());
    ppc_dirichlet_stats_lognorm_n(n, K, eta.data(), fused.data(), lognorm.data());
    EXPECT_EQ(fused, stats) << "K = " << K;
    for (int64_t i = 0; i < n; ++i)
      EXPECT_LE(rel(lognorm[size_t(i)], ppc_dirichlet_lognorm_n(1, K, eta.data() + i * K)), 1e-13) << "K = " << K;
    EXPECT_LE(rel(ppc_dirichlet_entropy_lognorm_n(n, K, eta.data(), stats.data(), lognorm.data()),
                  ppc_dirichlet_entropy_n(n, K, eta.data(), stats.data())),
              1e-13)
        << "K = " << K;
  }
}

// Rows narrower than a vector (a Beta's two entries) over many rows run as
// flat blocks of entries (row-fission calls them on all rows at once): the
// same statistics (and log normalizers), bit for bit, and the same entropy
// as one row per call, for widths 1..7 and row counts around the blocks of
// 64.
TEST(FamilyKernels, DirichletNarrowRowsAsOneRowPerCall) {
  std::mt19937_64 rng(9);
  std::gamma_distribution<double> counts(0.3, 40.0);
  for (int64_t K : {1, 2, 3, 5, 7, 8}) {
    for (int64_t n : {2, 63, 64, 65, 200}) {
      std::vector<double> eta(size_t(n * K));
      for (double &e : eta) e = 0.01 - 1.0 + counts(rng);
      std::vector<double> all(eta.size()), one(eta.size()), fused(eta.size()), fusedOne(eta.size());
      std::vector<double> lognorm(static_cast<size_t>(n)), lognormOne(static_cast<size_t>(n));
      ppc_dirichlet_stats_n(n, K, eta.data(), all.data());
      ppc_dirichlet_stats_lognorm_n(n, K, eta.data(), fused.data(), lognorm.data());
      double entropy = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        ppc_dirichlet_stats_n(1, K, eta.data() + i * K, one.data() + i * K);
        ppc_dirichlet_stats_lognorm_n(1, K, eta.data() + i * K, fusedOne.data() + i * K, lognormOne.data() + i);
        entropy += ppc_dirichlet_entropy_n(1, K, eta.data() + i * K, one.data() + i * K);
      }
      EXPECT_EQ(std::memcmp(all.data(), one.data(), sizeof(double) * all.size()), 0) << K << " x " << n;
      EXPECT_EQ(std::memcmp(fused.data(), one.data(), sizeof(double) * all.size()), 0) << K << " x " << n;
      EXPECT_EQ(std::memcmp(lognorm.data(), lognormOne.data(), sizeof(double) * lognorm.size()), 0) << K;
      EXPECT_EQ(ppc_dirichlet_entropy_n(n, K, eta.data(), all.data()), entropy) << K << " x " << n;
    }
  }
}

TEST(FamilyKernels, ScalarFamiliesMatchClasses) {
  // Gamma
  {
    const std::vector<Gamma> gs = {Gamma(0.5, 2.0), Gamma(3.0, 0.25), Gamma(120.0, 40.0)};
    std::vector<VectorXd> etas;
    for (const auto& g : gs) etas.push_back(g.natural());
    const auto eta = concat(etas);
    std::vector<VectorXd> sh = {etas[2], etas[0], etas[1]};
    const auto etaP = concat(sh);
    std::vector<double> st(6);
    ppc_gamma_stats_n(3, eta.data(), st.data());
    double ln = 0, h = 0, k = 0;
    for (int i = 0; i < 3; ++i) {
      EXPECT_LE(rel(st[2 * i], gs[i].mean()), 1e-15);
      EXPECT_LE(rel(st[2 * i + 1], gs[i].elog()), 1e-14);
      ln += gs[i].logNormalizer();
      h += gs[i].entropy();
      k += kl(gs[i], gs[(i + 2) % 3]);
    }
    EXPECT_LE(rel(ppc_gamma_lognorm_n(3, eta.data()), ln), 1e-13);
    EXPECT_LE(rel(ppc_gamma_entropy_n(3, eta.data()), h), 1e-13);
    EXPECT_LE(rel(ppc_gamma_kl_n(3, eta.data(), etaP.data()), k), 1e-12);
  }
  // Gaussian
  {
    const std::vector<Gaussian> gs = {Gaussian(0.0, 1.0), Gaussian(-3.0, 250.0), Gaussian(7.0, 0.01)};
    std::vector<VectorXd> etas;
    for (const auto& g : gs) etas.push_back(g.natural());
    const auto eta = concat(etas);
    std::vector<VectorXd> sh = {etas[1], etas[2], etas[0]};
    const auto etaP = concat(sh);
    std::vector<double> st(6);
    ppc_gaussian_stats_n(3, eta.data(), st.data());
    double ln = 0, h = 0, k = 0;
    for (int i = 0; i < 3; ++i) {
      const VectorXd e = gs[i].expectedStats();
      EXPECT_LE(rel(st[2 * i], e[0]), 1e-14);
      EXPECT_LE(rel(st[2 * i + 1], e[1]), 1e-14);
      ln += gs[i].logNormalizer();
      h += gs[i].entropy();
      k += kl(gs[i], gs[(i + 1) % 3]);
    }
    EXPECT_LE(rel(ppc_gaussian_lognorm_n(3, eta.data()), ln), 1e-13);
    EXPECT_LE(rel(ppc_gaussian_entropy_n(3, eta.data()), h), 1e-14);
    EXPECT_LE(rel(ppc_gaussian_kl_n(3, eta.data(), etaP.data()), k), 1e-13);
  }
  // Poisson
  {
    const double rates[3] = {0.2, 30.0, 2500.0};
    double eta[3], etaP[3], mean[3];
    double ln = 0, h = 0, k = 0;
    for (int i = 0; i < 3; ++i) {
      eta[i] = std::log(rates[i]);
      etaP[i] = std::log(rates[(i + 1) % 3]);
      ln += rates[i];
      h += Poisson(rates[i]).entropy();
      k += kl(Poisson(rates[i]), Poisson(rates[(i + 1) % 3]));
    }
    ppc_poisson_stats_n(3, eta, mean);
    for (int i = 0; i < 3; ++i) EXPECT_LE(rel(mean[i], rates[i]), 1e-15);
    EXPECT_LE(rel(ppc_poisson_lognorm_n(3, eta), ln), 1e-15);
    EXPECT_LE(rel(ppc_poisson_entropy_n(3, eta), h), 1e-14);
    EXPECT_LE(rel(ppc_poisson_kl_n(3, eta, etaP), k), 1e-12);
  }
  // Bernoulli and Categorical
  {
    const double eta[3] = {-2.0, 0.0, 5.0};
    double p[3];
    ppc_bernoulli_stats_n(3, eta, p);
    double ln = 0, h = 0, k = 0;
    for (int i = 0; i < 3; ++i) {
      const Bernoulli b = Bernoulli::fromNatural(vec({eta[i]}));
      EXPECT_LE(rel(p[i], b.p()), 1e-15);
      ln += Bernoulli::logNormalizer(vec({eta[i]}));
      h += b.entropy();
      k += kl(b, Bernoulli::fromNatural(vec({eta[(i + 1) % 3]})));
    }
    const double pP[3] = {p[1], p[2], p[0]};
    EXPECT_LE(rel(ppc_bernoulli_lognorm_n(3, eta), ln), 1e-15);
    EXPECT_LE(rel(ppc_bernoulli_entropy_n(3, p), h), 1e-14);
    EXPECT_LE(rel(ppc_bernoulli_kl_n(3, p, pP), k), 1e-13);
  }
  {
    const double eta[6] = {0.0, 1.0, -1.0, 700.0, 699.0, -1e300};
    double probs[6];
    ppc_categorical_stats_n(2, 3, eta, probs);
    const Categorical c0 = Categorical::fromNatural(vec({0.0, 1.0, -1.0}));
    const Categorical c1 = Categorical::fromNatural(vec({700.0, 699.0, -1e300}));
    for (int k = 0; k < 3; ++k) {
      EXPECT_LE(rel(probs[k], c0.probs()[k]), 1e-15);
      EXPECT_LE(rel(probs[3 + k], c1.probs()[k]), 1e-15);
    }
    EXPECT_EQ(probs[5], 0.0);
    EXPECT_LE(rel(ppc_categorical_lognorm_n(2, 3, eta),
                  Categorical::logNormalizer(vec({0.0, 1.0, -1.0})) + Categorical::logNormalizer(vec({700.0, 699.0, -1e300}))),
              1e-15);
    EXPECT_LE(rel(ppc_categorical_entropy_n(2, 3, probs), c0.entropy() + c1.entropy()), 1e-14);
    const double pq[3] = {0.2, 0.0, 0.8}, pp[3] = {0.5, 0.25, 0.25};
    EXPECT_LE(rel(ppc_categorical_kl_n(1, 3, pq, pp), kl(Categorical(vec({0.2, 0.0, 0.8})), Categorical(vec({0.5, 0.25, 0.25})))),
              1e-14);
  }
}

TEST(FamilyKernels, MultivariateMatchClasses) {
  MatrixXd lambda(3, 3), lp(3, 3);
  lambda << 2.0, 0.5, -0.3, 0.5, 1.5, 0.2, -0.3, 0.2, 0.8;
  lp << 1.0, 0.1, 0.0, 0.1, 2.0, 0.3, 0.0, 0.3, 1.0;
  const MvGaussian g(vec({0.5, -1.0, 2.0}), lambda), gp(vec({0.0, 1.0, 0.0}), lp);
  const VectorXd eta = g.natural(), etaP = gp.natural();
  std::vector<double> scratch(PPC_MV_SCRATCH(3)), st(12);
  ASSERT_EQ(ppc_mvgaussian_stats(3, eta.data(), st.data(), scratch.data()), 0);
  const VectorXd want = g.expectedStats();
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(st[i], want[i], 1e-13);
  EXPECT_NEAR(ppc_mvgaussian_lognorm(3, eta.data(), scratch.data()), g.logNormalizer(), 1e-13);
  EXPECT_NEAR(ppc_mvgaussian_entropy(3, eta.data(), scratch.data()), g.entropy(), 1e-13);
  EXPECT_NEAR(ppc_mvgaussian_kl(3, eta.data(), etaP.data(), scratch.data()), kl(g, gp), 1e-12);

  MatrixXd S(3, 3), Sp(3, 3);
  S << 0.5, 0.1, 0.0, 0.1, 0.3, -0.05, 0.0, -0.05, 0.9;
  Sp << 1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.5;
  const Wishart w(6.5, S), wp(4.0, Sp);
  const VectorXd ew = w.natural(), ewp = wp.natural();
  std::vector<double> sw(10);
  ASSERT_EQ(ppc_wishart_stats(3, ew.data(), sw.data(), scratch.data()), 0);
  const VectorXd wantW = w.expectedStats();
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(sw[i], wantW[i], 1e-13);
  EXPECT_NEAR(ppc_wishart_lognorm(3, ew.data(), scratch.data()), w.logNormalizer(), 1e-12);
  EXPECT_NEAR(ppc_wishart_entropy(3, ew.data(), scratch.data()), w.entropy(), 1e-12);
  EXPECT_NEAR(ppc_wishart_kl(3, ew.data(), ewp.data(), scratch.data()), kl(w, wp), 1e-11);
  // failures are reported, not thrown
  VectorXd bad = ew;
  bad[0] = 5.0;  // -2 eta1 no longer positive definite
  EXPECT_EQ(ppc_wishart_stats(3, bad.data(), sw.data(), scratch.data()), 1);
  EXPECT_TRUE(std::isnan(ppc_wishart_entropy(3, bad.data(), scratch.data())));
  // SPD helper
  std::vector<double> inv(9);
  double ld = 0.0;
  ASSERT_EQ(ppc_spd_inverse_logdet(3, lambda.data(), inv.data(), &ld, scratch.data()), 0);
  const MatrixXd li = lambda.inverse();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(inv[i * 3 + j], li(i, j), 1e-14);
  EXPECT_NEAR(ld, std::log(lambda.determinant()), 1e-14);
  MatrixXd notPd(2, 2);
  notPd << 1.0, 2.0, 2.0, 1.0;
  EXPECT_EQ(ppc_spd_inverse_logdet(2, notPd.data(), inv.data(), &ld, scratch.data()), 1);
}

// A random symmetric positive-definite D x D matrix, row-major.
MatrixXd randomSpd(int64_t D, std::mt19937_64& rng) {
  std::normal_distribution<double> z(0.0, 1.0);
  MatrixXd B(D, D);
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) B(i, j) = z(rng);
  return B * B.transpose() / double(D) + 0.5 * MatrixXd::Identity(D, D);
}

// The Cholesky factor and inverse take rows two at a time (four on AVX-512
// from D = 24), 4 vectors in registers (of 4 lanes, or of 8 on AVX-512),
// then the rest's vectors and last columns, and mirror their triangles in
// 4 x 4 blocks: every dimension
// up to past two blocks, odd and even (a lone last row, every kind of
// remainder), from the input's lower triangle only, against Eigen's inverse
// and determinant, with the same bits on every ISA the CPU runs; and a
// matrix that fails at any row of a block, or at the lone last row, is
// reported.
TEST(DenseAlgebra, SpdInverseEveryDimensionMatchesEigen) {
  std::mt19937_64 rng(7);
  for (int64_t D : {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 18, 20, 23, 24, 25, 26, 28, 30, 31, 32, 33, 35, 39, 44, 47, 63, 64}) {
    const MatrixXd A = randomSpd(D, rng);
    std::vector<double> a(size_t(D * D)), inv(a.size()), scratch(a.size()), first;
    for (int64_t i = 0; i < D; ++i) // only the lower triangle is read: NaNs above it
      for (int64_t j = 0; j < D; ++j) a[size_t(i * D + j)] = j <= i ? A(i, j) : std::nan("");
    const MatrixXd want = A.inverse();
    for (int level = 0; level <= int(ppc::rt::hostVectorIsa()); ++level) {
      std::string error;
      ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::VectorIsa(level), error)) << error;
      SCOPED_TRACE(std::string(ppc::rt::describe(ppc::rt::VectorIsa(level))) + " D = " + std::to_string(D));
      double logdet = 0.0;
      ASSERT_EQ(ppc_spd_inverse_logdet(D, a.data(), inv.data(), &logdet, scratch.data()), 0);
      double err = 0.0;
      for (int64_t i = 0; i < D; ++i)
        for (int64_t j = 0; j < D; ++j) err = std::max(err, std::abs(inv[size_t(i * D + j)] - want(i, j)));
      EXPECT_LE(err, 1e-12 * want.cwiseAbs().maxCoeff());
      EXPECT_LE(rel(logdet, std::log(A.determinant())), 1e-12);
      for (int64_t i = 0; i < D; ++i)
        for (int64_t j = 0; j < i; ++j) EXPECT_EQ(inv[size_t(i * D + j)], inv[size_t(j * D + i)]);
      if (first.empty())
        first = inv;
      else
        EXPECT_EQ(std::memcmp(first.data(), inv.data(), sizeof(double) * inv.size()), 0);
    }
  }
  std::string error;
  ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::hostVectorIsa(), error));
  // Fails at row r: a pair's second (D = 4), the lone last row (D = 5);
  // from D = 24, AVX-512 takes rows four at a time: each row of a block of
  // four (D = 28), a pair after the blocks (D = 26), a lone row (D = 27).
  for (auto [D, r] : std::vector<std::pair<int64_t, int64_t>>{
           {4, 3}, {5, 4}, {28, 25}, {28, 26}, {28, 27}, {28, 24}, {26, 25}, {27, 26}}) {
    MatrixXd A = MatrixXd::Identity(D, D);
    A(r, r - 1) = A(r - 1, r) = 2.0;
    std::vector<double> a(size_t(D * D)), inv(a.size()), scratch(a.size());
    for (int64_t i = 0; i < D; ++i)
      for (int64_t j = 0; j < D; ++j) a[size_t(i * D + j)] = A(i, j);
    double logdet = 0.0;
    EXPECT_EQ(ppc_spd_inverse_logdet(D, a.data(), inv.data(), &logdet, scratch.data()), 1) << D << " " << r;
  }
}

// E log N(x | m, Lambda) and the message to x (or m) with D-vectors in
// four lanes and the rows' last entries apart: every dimension through two
// vectors and their tails, against the formulas in Eigen.
TEST(FamilyKernels, MvGaussianAvgLogFactorAndMessageMatchFormulas) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> z(0.0, 1.0);
  for (int64_t D : {1, 2, 3, 4, 5, 7, 8, 9, 13, 64}) {
    VectorXd ex(D), em(D);
    for (int64_t i = 0; i < D; ++i) {
      ex[i] = z(rng);
      em[i] = z(rng);
    }
    const MatrixXd exx = randomSpd(D, rng) + ex * ex.transpose(), emm = randomSpd(D, rng) + em * em.transpose();
    const MatrixXd prec = randomSpd(D, rng);
    const double elogdet = std::log(prec.determinant()) - 0.1;
    std::vector<double> sx(size_t(D + D * D)), sm(sx.size()), sp(size_t(D * D + 1));
    for (int64_t i = 0; i < D; ++i) {
      sx[size_t(i)] = ex[i];
      sm[size_t(i)] = em[i];
      for (int64_t j = 0; j < D; ++j) {
        sx[size_t(D + i * D + j)] = exx(i, j);
        sm[size_t(D + i * D + j)] = emm(i, j);
        sp[size_t(i * D + j)] = prec(i, j);
      }
    }
    sp[size_t(D * D)] = elogdet;
    const MatrixXd C = exx - ex * em.transpose() - em * ex.transpose() + emm;
    const double want = 0.5 * elogdet - 0.5 * double(D) * std::log(2.0 * M_PI) - 0.5 * (prec * C).trace();
    EXPECT_LE(rel(ppc_mvgaussian_avglogfactor(D, sx.data(), sm.data(), sp.data()), want), 1e-13) << "D = " << D;
    std::vector<double> dst(sx.size(), 0.25);
    ppc_mvgaussian_sample_avglog(D, sm.data(), sp.data(), 1.5, dst.data());
    const VectorXd lin = 1.5 * prec * em;
    for (int64_t i = 0; i < D; ++i) {
      EXPECT_LE(rel(dst[size_t(i)], 0.25 + lin[i]), 1e-13) << "D = " << D;
      for (int64_t j = 0; j < D; ++j) EXPECT_EQ(dst[size_t(D + i * D + j)], 0.25 - 0.5 * 1.5 * prec(i, j));
    }
  }
}

TEST(BatchKernels, ObservedPlatesEqualScalarLoops) {
  const int64_t n = 13;
  std::vector<int64_t> pidx(n), xcat(n);
  std::vector<double> w(n), x(n), xbin(n), xcount(n);
  for (int64_t i = 0; i < n; ++i) {
    pidx[i] = (i * 7) % 3;
    xcat[i] = (i * 5) % 4;
    w[i] = 0.5 + 0.25 * i;
    x[i] = 0.3 + 0.7 * i;
    xbin[i] = static_cast<double>(i % 2);
    xcount[i] = static_cast<double>((i * 3) % 8);
  }
  // parents: 3 rows each
  std::vector<double> elogp(12), statsBeta(6), statsGamma(6), statsGauss(6);
  for (int r = 0; r < 3; ++r) {
    const VectorXd e = Dirichlet(vec({1.0 + r, 2.0, 0.5, 3.0})).elog();
    for (int k = 0; k < 4; ++k) elogp[r * 4 + k] = e[k];
    const VectorXd b = Beta(1.0 + r, 2.0).expectedStats();
    statsBeta[2 * r] = b[0];
    statsBeta[2 * r + 1] = b[1];
    const VectorXd g = Gamma(2.0 + r, 1.5).expectedStats();
    statsGamma[2 * r] = g[0];
    statsGamma[2 * r + 1] = g[1];
    const VectorXd m = Gaussian(r - 1.0, 2.0).expectedStats();
    statsGauss[2 * r] = m[0];
    statsGauss[2 * r + 1] = m[1];
  }
  // Categorical
  {
    std::vector<double> a(12, 0.0), b(12, 0.0);
    ppc_categorical_probs_avglog_obs_n(n, 4, xcat.data(), pidx.data(), w.data(), a.data());
    double va = ppc_categorical_avglogfactor_obs_n(n, 4, xcat.data(), pidx.data(), w.data(), elogp.data()), vb = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      ppc_categorical_probs_avglog_obs(4, xcat[i], w[i], b.data() + 4 * pidx[i]);
      vb += w[i] * ppc_categorical_avglogfactor_obs(4, xcat[i], elogp.data() + 4 * pidx[i]);
    }
    EXPECT_EQ(a, b);
    EXPECT_NEAR(va, vb, 1e-13);
    // no index, no weights: everything into row 0 with weight 1
    std::vector<double> c(4, 0.0);
    ppc_categorical_probs_avglog_obs_n(n, 4, xcat.data(), nullptr, nullptr, c.data());
    EXPECT_EQ(c[0] + c[1] + c[2] + c[3], static_cast<double>(n));
  }
  // Bernoulli
  {
    std::vector<double> a(6, 0.0), b(6, 0.0);
    ppc_bernoulli_p_avglog_obs_n(n, xbin.data(), pidx.data(), w.data(), a.data());
    double va = ppc_bernoulli_avglogfactor_obs_n(n, xbin.data(), pidx.data(), w.data(), statsBeta.data()), vb = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      ppc_bernoulli_p_avglog(xbin[i], w[i], b.data() + 2 * pidx[i]);
      vb += w[i] * ppc_bernoulli_avglogfactor(xbin[i], statsBeta.data() + 2 * pidx[i]);
    }
    EXPECT_EQ(a, b);
    EXPECT_NEAR(va, vb, 1e-13);
  }
  // Gamma (observed x, latent rate per row)
  {
    const double shape = 1.7;
    std::vector<double> a(6, 0.0), b(6, 0.0);
    ppc_gamma_rate_avglog_obs_n(n, shape, x.data(), pidx.data(), w.data(), a.data());
    double va = ppc_gamma_avglogfactor_obs_n(n, shape, x.data(), pidx.data(), w.data(), statsGamma.data()), vb = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double sx[2];
      ppc_gamma_pointmass_stats(x[i], sx);
      ppc_gamma_rate_avglog(shape, sx, w[i], b.data() + 2 * pidx[i]);
      vb += w[i] * ppc_gamma_avglogfactor(shape, sx, statsGamma.data() + 2 * pidx[i]);
    }
    EXPECT_EQ(a, b);
    EXPECT_NEAR(va, vb, 1e-12 * std::abs(vb));
  }
  // Poisson
  {
    std::vector<double> a(6, 0.0), b(6, 0.0);
    ppc_poisson_rate_avglog_obs_n(n, xcount.data(), pidx.data(), w.data(), 1.0, a.data());
    double va = ppc_poisson_avglogfactor_obs_n(n, xcount.data(), pidx.data(), w.data(), 1.0, statsGamma.data()), vb = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      ppc_poisson_rate_avglog(xcount[i], 1.0, w[i], b.data() + 2 * pidx[i]);
      vb += w[i] * ppc_poisson_avglogfactor(xcount[i], std::lgamma(xcount[i] + 1.0), statsGamma.data() + 2 * pidx[i], 1.0);
    }
    EXPECT_EQ(a, b);
    EXPECT_NEAR(va, vb, 1e-12 * std::abs(vb));
  }
  // Gaussian (observed x, latent mean and precision per row)
  {
    std::vector<double> am(6, 0.0), bm(6, 0.0), at(6, 0.0), bt(6, 0.0);
    ppc_gaussian_mean_avglog_obs_n(n, x.data(), pidx.data(), w.data(), statsGamma.data(), am.data());
    ppc_gaussian_precision_avglog_obs_n(n, x.data(), pidx.data(), w.data(), statsGauss.data(), at.data());
    const double va =
        ppc_gaussian_avglogfactor_obs_n(n, x.data(), pidx.data(), w.data(), statsGauss.data(), statsGamma.data());
    double vb = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      double sx[2];
      ppc_gaussian_pointmass_stats(x[i], sx);
      const int64_t r = pidx[i];
      ppc_gaussian_mean_avglog(sx, statsGamma.data() + 2 * r, w[i], bm.data() + 2 * r);
      ppc_gaussian_precision_avglog(sx, statsGauss.data() + 2 * r, w[i], bt.data() + 2 * r);
      vb += w[i] * ppc_gaussian_avglogfactor(sx, statsGauss.data() + 2 * r, statsGamma.data() + 2 * r);
    }
    for (int i = 0; i < 6; ++i) {
      EXPECT_NEAR(am[i], bm[i], 1e-13 * std::max(1.0, std::abs(bm[i])));
      EXPECT_NEAR(at[i], bt[i], 1e-13 * std::max(1.0, std::abs(bt[i])));
    }
    EXPECT_NEAR(va, vb, 1e-12 * std::abs(vb));
  }
}

TEST(VectorHelpers, SoftmaxLogsumexpAxpyDot) {
  for (int64_t n : {1, 2, 7, 8, 9, 17, 100}) {
    std::vector<double> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = std::sin(1.3 * i) * 30.0 + 500.0;  // large: needs the max shift
    long double ref = 0.0L;
    const long double m = *std::max_element(x.begin(), x.end());
    for (double v : x) ref += std::exp(static_cast<long double>(v) - m);
    const double lse = static_cast<double>(m + std::log(ref));
    EXPECT_NEAR(ppc_logsumexp(n, x.data()), lse, 2e-15 * std::abs(lse)) << n;
    std::vector<double> y = x;
    EXPECT_NEAR(ppc_softmax_inplace(n, y.data()), lse, 2e-15 * std::abs(lse));
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(y[i], static_cast<double>(std::exp(static_cast<long double>(x[i]) - m) / ref), 1e-15);
      s += y[i];
    }
    EXPECT_NEAR(s, 1.0, 1e-14);
    std::vector<double> z(n, 1.0);
    ppc_axpy(n, 2.0, x.data(), z.data());
    double dot = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(z[i], 1.0 + 2.0 * x[i]);
      dot += x[i] * z[i];
    }
    EXPECT_NEAR(ppc_dot(n, x.data(), z.data()), dot, 1e-14 * dot);
  }
  const double inf = std::numeric_limits<double>::infinity();
  const double withInf[3] = {-inf, 0.0, -inf};
  EXPECT_EQ(ppc_logsumexp(3, withInf), 0.0);
  const double allInf[2] = {-inf, -inf};
  EXPECT_EQ(ppc_logsumexp(2, allInf), -inf);
  EXPECT_EQ(ppc_logsumexp(0, allInf), -inf);
}

TEST(VectorHelpers, ReductionsDoNotDependOnAlignment) {
  // The 8-lane summation order is fixed: the same data at different offsets gives the same bits.
  std::vector<double> buf(64);
  for (int i = 0; i < 64; ++i) buf[i] = 1.0 / (i + 1.0);
  std::vector<double> a(buf.begin(), buf.begin() + 37), b(40, 0.0);
  std::copy(a.begin(), a.end(), b.begin() + 3);
  EXPECT_EQ(ppc_logsumexp(37, a.data()), ppc_logsumexp(37, b.data() + 3));
  EXPECT_EQ(ppc_dot(37, a.data(), a.data()), ppc_dot(37, b.data() + 3, b.data() + 3));
}

TEST(PointMass, StatsOfConstants) {
  double g[2], n[2];
  ppc_gamma_pointmass_stats(2.5, g);
  EXPECT_EQ(g[0], 2.5);
  EXPECT_NEAR(g[1], std::log(2.5), 1e-16);
  ppc_gaussian_pointmass_stats(-3.0, n);
  EXPECT_EQ(n[0], -3.0);
  EXPECT_EQ(n[1], 9.0);
  const double p[3] = {0.2, 0.3, 0.5};
  double lp[3];
  ppc_dirichlet_pointmass_stats(3, p, lp);
  EXPECT_NEAR(lp[2], std::log(0.5), 1e-16);
  const double x[2] = {1.0, -2.0};
  double mv[6];
  ppc_mvgaussian_pointmass_stats(2, x, mv);
  EXPECT_EQ(mv[2], 1.0);
  EXPECT_EQ(mv[3], -2.0);
  EXPECT_EQ(mv[4], -2.0);
  EXPECT_EQ(mv[5], 4.0);
}

}  // namespace
}  // namespace ppc::rt

// The symmetric prior's ELBO term (two lgammas for log B) equals the general
// one with alpha repeated K times.
TEST(FamilyKernels, SymmetricDirichletAvgLogFactorMatchesGeneral) {
  for (int64_t K : {2, 5, 100, 1000})
    for (double alpha : {0.01, 0.1, 1.0, 3.5}) {
      std::vector<double> a(static_cast<size_t>(K), alpha), eta(static_cast<size_t>(K)), elog(static_cast<size_t>(K));
      for (int64_t k = 0; k < K; ++k)
        eta[size_t(k)] = 0.3 * double(k % 7) + 0.05;
      ppc_dirichlet_stats_n(1, K, eta.data(), elog.data());
      double general = ppc_dirichlet_avglogfactor(K, a.data(), elog.data());
      double symmetric = ppc_dirichlet_sym_avglogfactor(K, alpha, elog.data());
      EXPECT_NEAR(symmetric, general, 1e-12 * std::abs(general)) << "K " << K << " alpha " << alpha;
    }
}

// The exponential statistics without the statistics (ppc_dirichlet_exp_stats,
// codegen/transforms/DeferStats.cpp): exp[k] * e^shift against
// e^(psi(alpha_k) - psi(sum alpha)) from the scalar digamma, for rows of
// every length from 1 to 25, concentrations from 1e-4 (terms near -1e4, the
// entries then differing by factors of e^-1000) to 1e5, and the largest
// entry near 1 whatever the row.
TEST(FamilyKernels, ExpStatsEqualTheExponentialOfTheStatistics) {
  // Every copy this CPU runs (SSE2, AVX2, AVX-512: what `ppc --cpu` chooses).
  const ppc::rt::RuntimeSymbol *symbol = ppc::rt::findRuntimeKernel("ppc_dirichlet_exp_stats");
  ASSERT_NE(symbol, nullptr);
  for (int level = 0; level <= int(ppc::rt::hostVectorIsa()); ++level) {
    SCOPED_TRACE(std::string(ppc::rt::describe(ppc::rt::VectorIsa(level))));
    const auto expStats =
        reinterpret_cast<void (*)(int64_t, const double *, double *, double *)>(symbol->clones[level]);
    ASSERT_NE(expStats, nullptr);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> logAlpha(std::log(1e-4), std::log(1e5));
    for (int64_t K = 1; K <= 25; ++K)
      for (int trial = 0; trial < 20; ++trial) {
        const size_t n = static_cast<size_t>(K);
        std::vector<double> eta(n), out(n + 1, 7.0);
        double sum = 0;
        for (size_t k = 0; k < n; ++k) {
          // trial 0: every entry at the smallest concentration (a restart from a tiny prior)
          const double alpha = trial == 0 ? 1e-4 : std::exp(logAlpha(rng));
          eta[k] = alpha - 1.0;
          sum += eta[k] + 1.0; // the kernel's alpha (alpha - 1 + 1 is not always alpha)
        }
        double shift = 0;
        expStats(K, eta.data(), out.data(), &shift);
        EXPECT_EQ(out[n], 7.0) << "K " << K;
        std::vector<double> stat(n);
        for (size_t k = 0; k < n; ++k)
          stat[k] = ppc::rt::digamma(eta[k] + 1.0) - ppc::rt::digamma(sum);
        const double top = *std::max_element(stat.begin(), stat.end());
        double largest = 0;
        for (size_t k = 0; k < n; ++k) {
          largest = std::max(largest, out[k]);
          if (stat[k] - top < -700) { // e^(stat - top) underflows, as exp(stats - max) does
            EXPECT_LT(out[k], 1e-300) << "K " << K << " k " << k;
            continue;
          }
          // log of the entry against the statistic, to the digammas' accuracy
          // (the statistic is a difference of two of them).
          ASSERT_GT(out[k], 0.0) << "K " << K << " k " << k;
          const double scale =
              std::max({1.0, std::abs(ppc::rt::digamma(eta[k] + 1.0)), std::abs(ppc::rt::digamma(sum))});
          EXPECT_NEAR(std::log(out[k]) + shift, stat[k], 1e-13 * scale) << "K " << K << " k " << k;
        }
        EXPECT_GE(largest, 0.5) << "K " << K;
        EXPECT_LE(largest, 2.0) << "K " << K;
      }
    double untouched = 7.0, shift = 7.0;
    expStats(0, &untouched, &untouched, &shift);
    EXPECT_EQ(untouched, 7.0);
    EXPECT_EQ(shift, 0.0);
  }
}

// Rows of every length from 1 to 25 (every remainder after blocks of 8, the
// remainder computed as one padded vector): each entry of the statistics and
// of the shifted exponentials against the scalar functions, and the entries
// past the row untouched.
TEST(FamilyKernels, RowTailsMatchTheScalarFunctions) {
  for (int64_t K = 1; K <= 25; ++K) {
    const size_t n = static_cast<size_t>(K);
    std::vector<double> eta(n), elog(n + 1, 7.0), out(n + 1, 7.0);
    double sum = 0;
    for (int64_t k = 0; k < K; ++k) {
      eta[size_t(k)] = 0.01 + 3.7 * double((k * 5) % 11);
      sum += eta[size_t(k)] + 1.0;
    }
    ppc_dirichlet_stats_n(1, K, eta.data(), elog.data());
    for (int64_t k = 0; k < K; ++k) {
      double expected = ppc::rt::digamma(eta[size_t(k)] + 1.0) - ppc::rt::digamma(sum);
      EXPECT_NEAR(elog[size_t(k)], expected, 1e-13 * std::max(1.0, std::abs(expected))) << "K " << K << " k " << k;
    }
    EXPECT_EQ(elog[size_t(K)], 7.0) << "K " << K;
    // The same rows through the mean-parameter kernel (no +1 offset).
    ppc_dirichlet_elog_n(1, K, eta.data(), elog.data());
    for (int64_t k = 0; k < K; ++k) {
      double expected = ppc::rt::digamma(eta[size_t(k)]) - ppc::rt::digamma(sum - double(K));
      EXPECT_NEAR(elog[size_t(k)], expected, 1e-13 * std::max(1.0, std::abs(expected))) << "K " << K << " k " << k;
    }
    EXPECT_EQ(elog[size_t(K)], 7.0) << "K " << K;
    double shift = 0;
    ppc_exp_shifted_n(K, eta.data(), out.data(), &shift);
    double max = *std::max_element(eta.begin(), eta.end());
    EXPECT_EQ(shift, max);
    for (int64_t k = 0; k < K; ++k)
      EXPECT_NEAR(out[size_t(k)], std::exp(eta[size_t(k)] - max), 1e-15) << "K " << K << " k " << k;
    EXPECT_EQ(out[size_t(K)], 7.0) << "K " << K;
  }
  // An empty row writes nothing.
  double untouched = 7.0, shift = 7.0;
  ppc_dirichlet_stats_n(1, 0, &untouched, &untouched);
  ppc_exp_shifted_n(0, &untouched, &untouched, &shift);
  EXPECT_EQ(untouched, 7.0);
}
