// The plate-slice forms of the VMP operators that the generated code calls
// (a batch of observed rows; statistics and entropies of many rows) against
// the per-row kernels OperatorsTest.cpp checks against brute force, and the
// whole-plate Gaussian statistics (weighted moments, moment products)
// against their definitions on every vector ISA.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/Distributions.h"
#include "runtime/Operators.h"
#include "runtime/VectorIsa.h"
#include "test/unit/runtime/TestUtil.h"

namespace ppc::rt {
namespace {

using namespace ppc::rt::test;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// ---- The plate-slice forms the generated code calls, against the kernels
// above (tested against brute force): a batch of observed rows equals the
// sum of the latent kernels at those rows' point masses.

struct MvCase {
  int64_t D = 3;
  std::vector<double> meanStats, precStats; // two parent rows each
  std::vector<double> x{0.3, -1.2, 2.0, 1.5, 0.1, -0.7, -0.4, 0.9, 0.2};
  std::vector<double> w{0.5, 2.0, 1.25};
  std::vector<int64_t> pidx{1, 0, 1};
  MvCase() {
    std::vector<double> scratch(PPC_MV_SCRATCH(3));
    for (int r = 0; r < 2; ++r) {
      MatrixXd L(3, 3);
      L << 2.0 + r, 0.3, -0.2, 0.3, 1.5, 0.1 * r, -0.2, 0.1 * r, 1.0 + 0.5 * r;
      const MvGaussian m(vec({0.5 - r, -1.0, 2.0 * r}), L);
      VectorXd eta = m.natural();
      std::vector<double> st(12);
      ppc_mvgaussian_stats(3, eta.data(), st.data(), scratch.data());
      meanStats.insert(meanStats.end(), st.begin(), st.end());
      MatrixXd S = 0.2 * L;
      const Wishart q(5.0 + r, S);
      VectorXd ew = q.natural();
      std::vector<double> sw(10);
      ppc_wishart_stats(3, ew.data(), sw.data(), scratch.data());
      precStats.insert(precStats.end(), sw.begin(), sw.end());
    }
  }
  std::vector<double> pointStats(int i) const {
    std::vector<double> st(12);
    ppc_mvgaussian_pointmass_stats(3, x.data() + 3 * i, st.data());
    return st;
  }
};

TEST(MvGaussianFactor, ObservedBatchesEqualTheLatentKernelsAtPointMasses) {
  const MvCase c;
  std::vector<double> toMean(24, 0.0), toPrec(20, 0.0), wantMean(24, 0.0), wantPrec(20, 0.0);
  ppc_mvgaussian_mean_avglog_obs_n(3, 3, c.x.data(), c.pidx.data(), c.w.data(), c.precStats.data(), toMean.data());
  ppc_mvgaussian_precision_avglog_obs_n(3, 3, c.x.data(), c.pidx.data(), c.w.data(), c.meanStats.data(),
                                        toPrec.data());
  double elbo = ppc_mvgaussian_avglogfactor_obs_n(3, 3, c.x.data(), c.pidx.data(), c.w.data(), c.meanStats.data(),
                                                  c.precStats.data());
  double wantElbo = 0.0;
  for (int i = 0; i < 3; ++i) {
    const int64_t r = c.pidx[size_t(i)];
    const auto sx = c.pointStats(i);
    ppc_mvgaussian_mean_avglog(3, sx.data(), c.precStats.data() + 10 * r, c.w[size_t(i)], wantMean.data() + 12 * r);
    ppc_mvgaussian_precision_avglog(3, sx.data(), c.meanStats.data() + 12 * r, c.w[size_t(i)],
                                    wantPrec.data() + 10 * r);
    wantElbo += c.w[size_t(i)] * ppc_mvgaussian_avglogfactor(3, sx.data(), c.meanStats.data() + 12 * r,
                                                             c.precStats.data() + 10 * r);
  }
  for (size_t j = 0; j < toMean.size(); ++j) EXPECT_NEAR(toMean[j], wantMean[j], 1e-12) << j;
  for (size_t j = 0; j < toPrec.size(); ++j) EXPECT_NEAR(toPrec[j], wantPrec[j], 1e-12) << j;
  EXPECT_NEAR(elbo, wantElbo, 1e-12 * std::abs(wantElbo));
  // Without parent indices every row goes to the one parent row given; no weights means 1.
  std::vector<double> one(12, 0.0), sum(12, 0.0);
  ppc_mvgaussian_mean_avglog_obs_n(3, 3, c.x.data(), nullptr, nullptr, c.precStats.data(), one.data());
  for (int i = 0; i < 3; ++i) {
    const auto sx = c.pointStats(i);
    ppc_mvgaussian_mean_avglog(3, sx.data(), c.precStats.data(), 1.0, sum.data());
  }
  for (size_t j = 0; j < one.size(); ++j) EXPECT_NEAR(one[j], sum[j], 1e-12) << j;
}

TEST(MvGaussianFactor, RowFormsOfStatisticsAndEntropies) {
  std::vector<double> scratch(PPC_MV_SCRATCH(2));
  MatrixXd L(2, 2);
  L << 2.0, 0.5, 0.5, 1.0;
  const MvGaussian g(vec({1.0, -2.0}), L);
  const Wishart q(4.5, 0.3 * L);
  std::vector<double> eta, etaW;
  for (int r = 0; r < 2; ++r) {
    VectorXd e = g.natural(), ew = q.natural();
    eta.insert(eta.end(), e.data(), e.data() + e.size());
    etaW.insert(etaW.end(), ew.data(), ew.data() + ew.size());
  }
  etaW[5 + 4] += 0.75; // the second Wishart row: another dof
  std::vector<double> st(12), stW(10);
  ppc_mvgaussian_stats_n(2, 2, eta.data(), st.data());
  ppc_wishart_stats_n(2, 2, etaW.data(), stW.data());
  for (int r = 0; r < 2; ++r) {
    std::vector<double> one(6), oneW(5);
    ppc_mvgaussian_stats(2, eta.data() + 6 * r, one.data(), scratch.data());
    ppc_wishart_stats(2, etaW.data() + 5 * r, oneW.data(), scratch.data());
    for (int j = 0; j < 6; ++j) EXPECT_EQ(st[size_t(6 * r + j)], one[size_t(j)]);
    for (int j = 0; j < 5; ++j) EXPECT_EQ(stW[size_t(5 * r + j)], oneW[size_t(j)]);
  }
  EXPECT_NEAR(ppc_mvgaussian_entropy_n(2, 2, eta.data()), 2 * g.entropy(), 1e-12);
  EXPECT_NEAR(ppc_wishart_entropy_n(1, 2, etaW.data()), q.entropy(), 1e-12);
  // Not SPD: NaN statistics, not garbage.
  std::vector<double> bad{0.0, 0.0, 1.0, 0.0, 0.0, 1.0};
  std::vector<double> out(6);
  ppc_mvgaussian_stats_n(1, 2, bad.data(), out.data());
  EXPECT_TRUE(std::isnan(out[0]));
}

TEST(WishartFactor, IsotropicScaleEqualsTheGeneralKernels) {
  const int64_t D = 3;
  const double nu = 4.5, s = 0.4;
  std::vector<double> Sinv(9, 0.0);
  for (int i = 0; i < 3; ++i) Sinv[size_t(4 * i)] = 1.0 / s;
  std::vector<double> a(10, 0.25), b(10, 0.25);
  ppc_wishart_iso_sample_avglog(D, nu, s, 1.5, a.data());
  ppc_wishart_sample_avglog(D, nu, Sinv.data(), 1.5, b.data());
  for (int j = 0; j < 10; ++j) EXPECT_NEAR(a[size_t(j)], b[size_t(j)], 1e-14);
  const MvCase c;
  EXPECT_NEAR(ppc_wishart_iso_avglogfactor(D, nu, s, c.precStats.data()),
              ppc_wishart_avglogfactor(D, nu, Sinv.data(), 3 * std::log(s), c.precStats.data()), 1e-12);
}

// In one dimension, MvGaussian(m, L) with L ~ Wishart(nu, s) is Gaussian(m, t)
// with t ~ Gamma(nu/2, rate 1/(2s)): every term must agree.
TEST(MvGaussianFactor, OneDimensionIsTheGaussianGammaPair) {
  std::vector<double> scratch(PPC_MV_SCRATCH(1));
  const double nu = 5.0, s = 0.3;
  const double etaW[2] = {-0.5 / s, 0.5 * (nu - 2.0)};            // Wishart natural parameters
  const double etaG[2] = {-1.0 / (2.0 * s), nu / 2.0 - 1.0};      // Gamma(shape nu/2, rate 1/(2s)): (-rate, shape-1)
  double sw[2], sg[2];
  ppc_wishart_stats_n(1, 1, etaW, sw);
  ppc_gamma_stats_n(1, etaG, sg);
  EXPECT_NEAR(sw[0], sg[0], 1e-13);
  EXPECT_NEAR(sw[1], sg[1], 1e-13);
  EXPECT_NEAR(ppc_wishart_entropy_n(1, 1, etaW), ppc_gamma_entropy_n(1, etaG), 1e-12);
  const double etaM[2] = {0.7 * 2.0, -1.0};  // mean 0.7, precision 2
  double sm[2], smv[2];
  ppc_gaussian_stats_n(1, etaM, sm);
  ppc_mvgaussian_stats_n(1, 1, etaM, smv);
  EXPECT_NEAR(sm[0], smv[0], 1e-14);
  EXPECT_NEAR(sm[1], smv[1], 1e-14);
  EXPECT_NEAR(ppc_mvgaussian_entropy_n(1, 1, etaM), ppc_gaussian_entropy_n(1, etaM), 1e-13);
  const double x[2] = {1.3, -0.4}, w[2] = {1.0, 2.5};
  EXPECT_NEAR(ppc_mvgaussian_avglogfactor_obs_n(2, 1, x, nullptr, w, sm, sw),
              ppc_gaussian_avglogfactor_obs_n(2, x, nullptr, w, sm, sg), 1e-12);
  double a[2] = {0, 0}, b[2] = {0, 0};
  ppc_mvgaussian_mean_avglog_obs_n(2, 1, x, nullptr, w, sw, a);
  ppc_gaussian_mean_avglog_obs_n(2, x, nullptr, w, sg, b);
  EXPECT_NEAR(a[0], b[0], 1e-13);
  EXPECT_NEAR(a[1], b[1], 1e-13);
  a[0] = a[1] = b[0] = b[1] = 0;
  ppc_mvgaussian_precision_avglog_obs_n(2, 1, x, nullptr, w, sm, a);
  ppc_gaussian_precision_avglog_obs_n(2, x, nullptr, w, sm, b);
  EXPECT_NEAR(a[0], b[0], 1e-13);
  EXPECT_NEAR(a[1], b[1], 1e-13);
  EXPECT_NEAR(ppc_wishart_iso_avglogfactor(1, nu, s, sw), ppc_gamma_avglogfactor(nu / 2, sw, std::vector<double>{1.0 / (2 * s), std::log(1.0 / (2 * s))}.data()), 1e-12);
}


// The whole-plate Gaussian statistics against their definitions: D = 2 and
// 16 take the kernels' path over the data rows, D = 17 and 33 their register
// tiles (not multiples of the tiles' 16 columns); n = 7 and 13 are not
// multiples of 8 rows.
class GaussianPlateStatistics : public ::testing::TestWithParam<std::pair<int64_t, int64_t>> {};
INSTANTIATE_TEST_SUITE_P(DimensionsAndRows, GaussianPlateStatistics,
                         ::testing::Values(std::pair<int64_t, int64_t>{2, 13}, std::pair<int64_t, int64_t>{16, 7},
                                           std::pair<int64_t, int64_t>{17, 7}, std::pair<int64_t, int64_t>{33, 13},
                                           std::pair<int64_t, int64_t>{64, 130}, std::pair<int64_t, int64_t>{65, 9}));
// On every vector ISA this CPU runs (runtime/VectorIsa.h: the kernels'
// copies for SSE2, AVX2 and AVX-512, as `ppc --cpu` chooses them), against
// the definitions; 130 rows span three of the blocks the large-dimension
// kernel works in.
TEST_P(GaussianPlateStatistics, WeightedMomentsAndMomentProductsMatchTheirDefinitions) {
  for (int level = 0; level <= int(ppc::rt::hostVectorIsa()); ++level) {
  std::string error;
  ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::VectorIsa(level), error)) << error;
  SCOPED_TRACE(std::string(ppc::rt::describe(ppc::rt::VectorIsa(level))));
  const int64_t D = GetParam().first, n = GetParam().second, k = 3, width = D + D * D;
  std::vector<double> x(size_t(n * D)), w(size_t(n * k)), eta(size_t(k * width)), offsets{0.5, -1.0, 2.0};
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * double(i)) * 3.0;
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1 + std::fabs(std::cos(0.5 * double(i)));
  for (int64_t j = 0; j < n; ++j) w[size_t(j * k + 2)] = 0.0; // a case with no weight
  for (size_t i = 0; i < eta.size(); ++i) eta[i] = std::cos(0.11 * double(i));
  std::vector<double> means(size_t(k * width)), totals(static_cast<size_t>(k)), out(size_t(n * k));
  ppc_gaussian_weighted_moments(n, k, w.data(), D, x.data(), means.data(), totals.data(), nullptr);
  ppc_gaussian_moment_products(n, k, D, x.data(), eta.data(), offsets.data(), out.data());
  {
    // On ranges of the cases (codegen/transforms/CaseSplitting.cpp): the
    // same bits; the second range ends past k; a zero `changed` skips.
    std::vector<double> m2(means.size(), -1.0), t2(totals.size(), -1.0), o2(out.size(), -1.0);
    const double changed = 1.0, unchanged = 0.0;
    for (int64_t j0 : {0, 2}) {
      ppc_gaussian_weighted_moments_cases(n, k, j0, j0 + 2, w.data(), D, x.data(), m2.data(), t2.data(), &changed);
      ppc_gaussian_moment_products_cases(n, k, j0, j0 + 2, D, x.data(), eta.data(), offsets.data(), o2.data());
    }
    EXPECT_EQ(m2, means);
    EXPECT_EQ(t2, totals);
    EXPECT_EQ(o2, out);
    std::vector<double> untouched(means.size(), 7.0);
    ppc_gaussian_weighted_moments_cases(n, k, 0, k, w.data(), D, x.data(), untouched.data(), t2.data(), &unchanged);
    EXPECT_EQ(untouched, std::vector<double>(means.size(), 7.0));
  }
  for (int64_t j = 0; j < k; ++j) {
    double total = 0;
    std::vector<double> want(size_t(width), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      std::vector<double> t(static_cast<size_t>(width));
      ppc_mvgaussian_pointmass_stats(D, x.data() + i * D, t.data());
      const double wi = w[size_t(i * k + j)];
      total += wi;
      for (int64_t c = 0; c < width; ++c) want[size_t(c)] += wi * t[size_t(c)];
      double dot = offsets[size_t(j)];
      for (int64_t c = 0; c < width; ++c) dot += t[size_t(c)] * eta[size_t(j * width + c)];
      EXPECT_NEAR(out[size_t(i * k + j)], dot, 1e-11 * (1 + std::fabs(dot)));
    }
    EXPECT_NEAR(totals[size_t(j)], total, 1e-14);
    for (int64_t c = 0; c < width; ++c)
      EXPECT_NEAR(means[size_t(j * width + c)], total > 0 ? want[size_t(c)] / total : 0.0, 1e-12) << j << "," << c;
  }
  }
  std::string error;
  ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::hostVectorIsa(), error));
}

// No rows at a large dimension: the tiles never run (they set the
// moments' sums in their first block of rows), and the sums are zeros.
TEST(GaussianPlateStatistics, NoRowsGiveZeroSums) {
  for (int level = 0; level <= int(ppc::rt::hostVectorIsa()); ++level) {
    std::string error;
    ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::VectorIsa(level), error)) << error;
    for (int64_t D : {33, 64}) {
      const int64_t k = 2, width = D + D * D;
      std::vector<double> means(size_t(k * width), -1.0), totals(size_t(k), -1.0), G(size_t(D * D), 0.25);
      ppc_gaussian_weighted_moments(0, k, nullptr, D, nullptr, means.data(), totals.data(), nullptr);
      EXPECT_EQ(means, std::vector<double>(means.size(), 0.0)) << D;
      EXPECT_EQ(totals, std::vector<double>(totals.size(), 0.0)) << D;
      ppc_weighted_gram(0, D, nullptr, nullptr, G.data());
      EXPECT_EQ(G, std::vector<double>(G.size(), 0.25)) << D;
    }
  }
  std::string error;
  ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::hostVectorIsa(), error));
}

// A regression's Gram sums with their first moments (ppc_weighted_gram_linear:
// G += sum_i w_i x_i x_i^T, g += sum_i v_i x_i, each added to what is there)
// against their definitions, on every vector ISA: D = 16 row by row, 17, 33
// and 65 the tiles with a remainder of the first moments' groups of columns
// (8 vectors: 64 columns with AVX-512, 32 with AVX2, 16 with SSE2), 64 none;
// 130 rows span three blocks.
TEST(GaussianPlateStatistics, WeightedGramAndFirstMomentsMatchTheirDefinitions) {
  for (int level = 0; level <= int(ppc::rt::hostVectorIsa()); ++level) {
    std::string error;
    ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::VectorIsa(level), error)) << error;
    SCOPED_TRACE(std::string(ppc::rt::describe(ppc::rt::VectorIsa(level))));
    for (int64_t D : {16, 17, 33, 64, 65}) {
      const int64_t n = 130;
      std::vector<double> x(size_t(n * D)), w(static_cast<size_t>(n)), v(static_cast<size_t>(n));
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * double(i)) * 3.0;
      for (size_t i = 0; i < w.size(); ++i) {
        w[i] = 0.1 + std::fabs(std::cos(0.5 * double(i)));
        v[i] = std::sin(0.9 * double(i)) - 0.2;
      }
      std::vector<double> G(size_t(D * D), 0.5), g(size_t(D), -1.0);
      std::vector<double> wantG(G), wantg(g);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t a = 0; a < D; ++a) {
          wantg[size_t(a)] += v[size_t(i)] * x[size_t(i * D + a)];
          for (int64_t b = 0; b < D; ++b)
            wantG[size_t(a * D + b)] += w[size_t(i)] * x[size_t(i * D + a)] * x[size_t(i * D + b)];
        }
      ppc_weighted_gram_linear(n, D, w.data(), v.data(), x.data(), G.data(), g.data());
      for (int64_t a = 0; a < D; ++a) {
        EXPECT_NEAR(g[size_t(a)], wantg[size_t(a)], 1e-12 * (1 + std::fabs(wantg[size_t(a)]))) << D << " " << a;
        for (int64_t b = 0; b < D; ++b)
          EXPECT_NEAR(G[size_t(a * D + b)], wantG[size_t(a * D + b)], 1e-12 * (1 + std::fabs(wantG[size_t(a * D + b)])))
              << D << " " << a << "," << b;
      }
    }
  }
  std::string error;
  ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::hostVectorIsa(), error));
}

// The memo: the same weights return the stored moments untouched; other
// weights (one entry changed) recompute them.
TEST(GaussianPlateStatisticsMemo, WeightedMomentsMemoRecomputesOnlyForNewWeights) {
  const int64_t n = 5, k = 2, D = 3, width = D + D * D;
  std::vector<double> x(size_t(n * D)), w(size_t(n * k));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.7 * double(i));
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.2 + 0.1 * double(i % 3);
  std::vector<double> means(size_t(k * width)), totals(static_cast<size_t>(k)), memo(size_t(1 + n * k), 0.0);
  std::vector<double> want(means.size()), wantTotals(totals.size());
  ppc_gaussian_weighted_moments(n, k, w.data(), D, x.data(), want.data(), wantTotals.data(), nullptr);
  ppc_gaussian_weighted_moments(n, k, w.data(), D, x.data(), means.data(), totals.data(), memo.data());
  EXPECT_EQ(means, want);
  EXPECT_EQ(totals, wantTotals);
  std::fill(means.begin(), means.end(), -1.0); // a hit must not touch the outputs
  ppc_gaussian_weighted_moments(n, k, w.data(), D, x.data(), means.data(), totals.data(), memo.data());
  EXPECT_EQ(means, std::vector<double>(means.size(), -1.0));
  w[7] *= 2; // new weights: recomputed
  ppc_gaussian_weighted_moments(n, k, w.data(), D, x.data(), want.data(), wantTotals.data(), nullptr);
  ppc_gaussian_weighted_moments(n, k, w.data(), D, x.data(), means.data(), totals.data(), memo.data());
  EXPECT_EQ(means, want);
  EXPECT_EQ(totals, wantTotals);
  // The check on its own (split-cases): unchanged weights give 0, new ones 1.
  double changed = -1;
  ppc_weights_changed(n * k, w.data(), memo.data(), &changed);
  EXPECT_EQ(changed, 0.0);
  w[3] += 0.5;
  ppc_weights_changed(n * k, w.data(), memo.data(), &changed);
  EXPECT_EQ(changed, 1.0);
  ppc_weights_changed(n * k, w.data(), memo.data(), &changed);
  EXPECT_EQ(changed, 0.0);
}

}  // namespace
}  // namespace ppc::rt
