// Published values and exact conjugate answers reproduced by calling the
// runtime kernels directly, as the generated code will: accumulate messages
// into natural parameters, compute expectations, assemble the ELBO as
// sum of avglogfactor terms plus entropies of the latent variables.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/Distributions.h"
#include "runtime/Operators.h"
#include "test/unit/runtime/TestUtil.h"

namespace ppc::rt {
namespace {

using namespace ppc::rt::test;
using Eigen::MatrixXd;
using Eigen::VectorXd;

// Infer.NET's VMP test (Dirichlet(1,1,1,1) prior on pi, one Categorical
// observation x = 2): posterior E[log pi] = (-2.08333, -2.08333, -1.08333,
// -2.08333) and log evidence -1.3862944 (= log 1/4).
TEST(Published, InferNetDirichletCategorical) {
  const double prior[4] = {1.0, 1.0, 1.0, 1.0};
  double eta[4] = {0.0, 0.0, 0.0, 0.0};
  ppc_dirichlet_probs_avglog(4, prior, 1.0, eta);
  ppc_categorical_probs_avglog_obs(4, 2, 1.0, eta);
  double elog[4];
  ppc_dirichlet_stats_n(1, 4, eta, elog);
  const double want[4] = {-2.08333, -2.08333, -1.08333, -2.08333};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(elog[k], want[k], 1e-5);
  const double elbo = ppc_categorical_avglogfactor_obs(4, 2, elog) + ppc_dirichlet_avglogfactor(4, prior, elog) +
                      ppc_dirichlet_entropy_n(1, 4, eta, elog);
  EXPECT_NEAR(elbo, -1.3862944, 1e-7);
  EXPECT_NEAR(elbo, std::log(0.25), 1e-13);
}

TEST(Published, BetaBernoulliConjugateUpdateAndEvidence) {
  const double a = 2.0, b = 3.0;
  const std::vector<double> xs = {1, 0, 1, 1, 0, 1, 1};
  double eta[2] = {0.0, 0.0};
  ppc_beta_p_avglog(a, b, 1.0, eta);
  ppc_bernoulli_p_avglog_obs_n(static_cast<int64_t>(xs.size()), xs.data(), nullptr, nullptr, eta);
  const Beta post = Beta::fromNatural(vec({eta[0], eta[1]}));
  EXPECT_DOUBLE_EQ(post.a(), a + 5);
  EXPECT_DOUBLE_EQ(post.b(), b + 2);
  double st[2];
  ppc_dirichlet_stats_n(1, 2, eta, st);
  const double elbo = ppc_bernoulli_avglogfactor_obs_n(static_cast<int64_t>(xs.size()), xs.data(), nullptr, nullptr, st) +
                      ppc_beta_avglogfactor(a, b, st) + ppc_dirichlet_entropy_n(1, 2, eta, st);
  auto lbeta = [](double p, double q) { return std::lgamma(p) + std::lgamma(q) - std::lgamma(p + q); };
  EXPECT_NEAR(elbo, lbeta(a + 5, b + 2) - lbeta(a, b), 1e-12);
  // the Bernoulli message to an unobserved x is the posterior predictive logit
  double logit = 0.0;
  ppc_bernoulli_sample_avglog(st, 1.0, &logit);
  EXPECT_NEAR(logit, Beta(a + 5, b + 2).elogP() - Beta(a + 5, b + 2).elog1mP(), 1e-14);
}

TEST(Published, GammaPoissonConjugateUpdateAndEvidence) {
  const double a = 2.0, b = 0.5;
  const std::vector<double> xs = {3, 0, 7, 2, 4};
  double eta[2] = {0.0, 0.0};
  // Gamma(a, b) prior on the rate: the rate is the "x" of a Gamma factor with constant rate b
  double pb[2];
  ppc_gamma_pointmass_stats(b, pb);
  ppc_gamma_sample_avglog(a, pb, 1.0, eta);
  ppc_poisson_rate_avglog_obs_n(5, xs.data(), nullptr, nullptr, 1.0, eta);
  const Gamma post = Gamma::fromNatural(vec({eta[0], eta[1]}));
  EXPECT_DOUBLE_EQ(post.shape(), a + 16);
  EXPECT_DOUBLE_EQ(post.rate(), b + 5);
  double st[2];
  ppc_gamma_stats_n(1, eta, st);
  const double elbo = ppc_poisson_avglogfactor_obs_n(5, xs.data(), nullptr, nullptr, 1.0, st) +
                      ppc_gamma_avglogfactor(a, st, pb) + ppc_gamma_entropy_n(1, eta);
  double logFact = 0.0;
  for (double x : xs) logFact += std::lgamma(x + 1.0);
  const double evidence =
      a * std::log(b) - std::lgamma(a) + std::lgamma(a + 16) - (a + 16) * std::log(b + 5) - logFact;
  EXPECT_NEAR(elbo, evidence, 1e-12);
}

TEST(Published, GaussianMeanKnownPrecisionEvidence) {
  const double m0 = 1.0, t0 = 0.5, t = 2.0;
  const std::vector<double> xs = {0.3, 1.9, 2.4, 0.8};
  double eta[2] = {0.0, 0.0}, pm[2], pt0[2], pt[2];
  ppc_gaussian_pointmass_stats(m0, pm);
  ppc_gamma_pointmass_stats(t0, pt0);
  ppc_gamma_pointmass_stats(t, pt);
  ppc_gaussian_sample_avglog(pm, pt0, 1.0, eta);
  ppc_gaussian_mean_avglog_obs_n(4, xs.data(), nullptr, nullptr, pt, eta);
  const Gaussian post = Gaussian::fromNatural(vec({eta[0], eta[1]}));
  EXPECT_NEAR(post.precision(), t0 + 4 * t, 1e-14);
  EXPECT_NEAR(post.mean(), (t0 * m0 + t * (0.3 + 1.9 + 2.4 + 0.8)) / (t0 + 4 * t), 1e-14);
  double sm[2];
  ppc_gaussian_stats_n(1, eta, sm);
  const double elbo = ppc_gaussian_avglogfactor_obs_n(4, xs.data(), nullptr, nullptr, sm, pt) +
                      ppc_gaussian_avglogfactor(sm, pm, pt0) + ppc_gaussian_entropy_n(1, eta);
  // exact: x ~ N(m0 1, I/t + 1 1^T / t0)
  const MatrixXd cov = MatrixXd::Identity(4, 4) / t + MatrixXd::Constant(4, 4, 1.0 / t0);
  const VectorXd d = Eigen::Map<const VectorXd>(xs.data(), 4).array() - m0;
  const double logp = -0.5 * (4 * std::log(2 * kPi) + std::log(cov.determinant()) + d.dot(cov.llt().solve(d)));
  EXPECT_NEAR(elbo, logp, 1e-12);
}

// Mean-field VMP for x_i ~ N(mu, tau), mu ~ N(m0, t0), tau ~ Gamma(a0, b0):
// the ELBO never decreases and the fixed point satisfies the update equations.
TEST(Published, GaussianGammaMeanFieldElboMonotone) {
  const std::vector<double> xs = {4.1, 5.3, 3.9, 6.2, 5.0, 4.4, 5.8};
  const int64_t n = static_cast<int64_t>(xs.size());
  const double m0 = 0.0, t0 = 0.01, a0 = 1.0, b0 = 1.0;
  double pm[2], pt0[2], pb0[2];
  ppc_gaussian_pointmass_stats(m0, pm);
  ppc_gamma_pointmass_stats(t0, pt0);
  ppc_gamma_pointmass_stats(b0, pb0);
  double etaMu[2] = {0.0, -0.5}, etaTau[2] = {-1.0, 0.0};  // initial q: N(0, 1), Gamma(1, 1)
  double prev = -INFINITY;
  for (int it = 0; it < 60; ++it) {
    double sMu[2], sTau[2];
    ppc_gamma_stats_n(1, etaTau, sTau);
    // update mu given tau
    etaMu[0] = etaMu[1] = 0.0;
    ppc_gaussian_sample_avglog(pm, pt0, 1.0, etaMu);
    ppc_gaussian_mean_avglog_obs_n(n, xs.data(), nullptr, nullptr, sTau, etaMu);
    ppc_gaussian_stats_n(1, etaMu, sMu);
    // update tau given mu
    etaTau[0] = etaTau[1] = 0.0;
    ppc_gamma_sample_avglog(a0, pb0, 1.0, etaTau);
    ppc_gaussian_precision_avglog_obs_n(n, xs.data(), nullptr, nullptr, sMu, etaTau);
    ppc_gamma_stats_n(1, etaTau, sTau);
    const double elbo = ppc_gaussian_avglogfactor_obs_n(n, xs.data(), nullptr, nullptr, sMu, sTau) +
                        ppc_gaussian_avglogfactor(sMu, pm, pt0) + ppc_gamma_avglogfactor(a0, sTau, pb0) +
                        ppc_gaussian_entropy_n(1, etaMu) + ppc_gamma_entropy_n(1, etaTau);
    EXPECT_GE(elbo, prev - 1e-12 * std::abs(elbo)) << "iteration " << it;
    prev = elbo;
  }
  // fixed point: tau's shape is a0 + n/2, and mu's precision is t0 + n E[tau]
  const Gamma qt = Gamma::fromNatural(vec({etaTau[0], etaTau[1]}));
  const Gaussian qm = Gaussian::fromNatural(vec({etaMu[0], etaMu[1]}));
  EXPECT_NEAR(qt.shape(), a0 + 0.5 * n, 1e-12);
  EXPECT_NEAR(qm.precision(), t0 + n * qt.mean(), 1e-9);
  double sumx = 0.0, sumsq = 0.0;
  for (double x : xs) {
    sumx += x;
    sumsq += (x - qm.mean()) * (x - qm.mean());
  }
  EXPECT_NEAR(qt.rate(), b0 + 0.5 * (sumsq + n / qm.precision()), 1e-9);
  EXPECT_NEAR(qm.mean(), (t0 * m0 + qt.mean() * sumx) / qm.precision(), 1e-9);
}

// A tiny LDA run on the kernels: the ELBO assembled from ppc_lda_doc values
// and the Dirichlet terms never decreases, and the token value equals the
// explicit sum of its parts.
TEST(Published, TinyLdaElboMonotone) {
  const int K = 2, V = 6, D = 3;
  const std::vector<std::vector<int64_t>> words = {{0, 1, 2}, {3, 4, 5}, {0, 2, 4, 5}};
  const std::vector<std::vector<double>> counts = {{3, 2, 4}, {5, 1, 2}, {1, 1, 2, 3}};
  const double alpha[K] = {0.5, 0.5};
  std::vector<double> beta(V, 0.1);
  // initial q: symmetric-breaking phi
  std::vector<double> etaPhi(K * V), etaTheta(D * K, 0.0);  // phi rows are topics (K x V)
  for (int k = 0; k < K; ++k)
    for (int v = 0; v < V; ++v) etaPhi[k * V + v] = 0.5 + 0.3 * ((k + v) % 3);
  double prev = -INFINITY;
  for (int it = 0; it < 40; ++it) {
    std::vector<double> elogPhi(K * V), elogPhiT(V * K), elogTheta(D * K);
    ppc_dirichlet_stats_n(K, V, etaPhi.data(), elogPhi.data());
    for (int k = 0; k < K; ++k)
      for (int v = 0; v < V; ++v) elogPhiT[v * K + k] = elogPhi[k * V + v];
    ppc_dirichlet_stats_n(D, K, etaTheta.data(), elogTheta.data());
    std::vector<double> msgTheta(D * K, 0.0), msgPhiT(V * K, 0.0), r(K);
    double elbo = 0.0;
    for (int d = 0; d < D; ++d)
      elbo += ppc_lda_doc(static_cast<int64_t>(words[d].size()), K, words[d].data(), counts[d].data(),
                          elogTheta.data() + d * K, elogPhiT.data(), r.data(), msgTheta.data() + d * K, msgPhiT.data());
    elbo += ppc_dirichlet_avglogfactor_n(D, K, alpha, elogTheta.data()) + ppc_dirichlet_entropy_n(D, K, etaTheta.data(), elogTheta.data());
    elbo += ppc_dirichlet_avglogfactor_n(K, V, beta.data(), elogPhi.data()) + ppc_dirichlet_entropy_n(K, V, etaPhi.data(), elogPhi.data());
    if (it > 0) {
      EXPECT_GE(elbo, prev - 1e-12 * std::abs(elbo)) << "iteration " << it;
    }
    prev = elbo;
    // new posteriors = prior + messages
    std::fill(etaTheta.begin(), etaTheta.end(), 0.0);
    ppc_dirichlet_probs_avglog_n(D, K, alpha, 1.0, etaTheta.data());
    ppc_axpy(D * K, 1.0, msgTheta.data(), etaTheta.data());
    std::fill(etaPhi.begin(), etaPhi.end(), 0.0);
    ppc_dirichlet_probs_avglog_n(K, V, beta.data(), 1.0, etaPhi.data());
    for (int k = 0; k < K; ++k)
      for (int v = 0; v < V; ++v) etaPhi[k * V + v] += msgPhiT[v * K + k];
    // pseudo-counts are conserved: each document's theta received its token count
    for (int d = 0; d < D; ++d) {
      double c = 0.0, m = 0.0;
      for (double x : counts[d]) c += x;
      for (int k = 0; k < K; ++k) m += msgTheta[d * K + k];
      EXPECT_NEAR(m, c, 1e-12);
    }
  }
  EXPECT_TRUE(std::isfinite(prev));
}

}  // namespace
}  // namespace ppc::rt
