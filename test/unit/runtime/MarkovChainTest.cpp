//===- test/unit/runtime/MarkovChainTest.cpp - a chain of Categoricals ---===//
//
// The kernels of runtime/factors/MarkovChain.h against brute force: the
// forward-backward statistics (marginals, pair marginals) and log
// normalizer of short chains against a sum over all K^T paths, and the
// chain's ELBO terms (E log p(z) + H(q(z)), element by element) against the
// identity they must satisfy at the forward-backward posterior:
// E_q[sum of potentials] + H(q) = log Z.
//
//===----------------------------------------------------------------------===//
#include "runtime/Operators.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

struct Chain {
  int64_t T, K;
  std::vector<double> eta; // T rows of K + K^2 + 1
  int64_t width() const { return K + K * K + 1; }
};

Chain randomChain(int64_t T, int64_t K, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0.0, 1.5);
  Chain c{T, K, std::vector<double>(size_t(T * (K + K * K + 1)), 0.0)};
  for (int64_t t = 0; t < T; ++t) {
    double *row = &c.eta[size_t(t * c.width())];
    for (int64_t k = 0; k < K; ++k)
      row[k] = n(rng);
    if (t > 0)
      for (int64_t jk = 0; jk < K * K; ++jk)
        row[K + jk] = n(rng);
    row[K + K * K] = t == 0 ? 1.0 : 0.0;
  }
  return c;
}

/// Every path's log potential; marginals, pairs and log Z by enumeration.
struct Brute {
  std::vector<double> marg, pair;
  double logZ = 0;
  double entropy = 0; ///< of the distribution over whole paths
};

Brute enumerate(const Chain &c) {
  const int64_t W = c.width();
  Brute b;
  b.marg.assign(size_t(c.T * c.K), 0.0);
  b.pair.assign(size_t(c.T * c.K * c.K), 0.0);
  int64_t paths = 1;
  for (int64_t t = 0; t < c.T; ++t)
    paths *= c.K;
  std::vector<double> logw(static_cast<size_t>(paths));
  std::vector<int64_t> z(size_t(c.T));
  double m = -INFINITY;
  for (int64_t p = 0; p < paths; ++p) {
    int64_t r = p;
    for (int64_t t = 0; t < c.T; ++t) {
      z[size_t(t)] = r % c.K;
      r /= c.K;
    }
    double s = 0;
    for (int64_t t = 0; t < c.T; ++t) {
      s += c.eta[size_t(t * W + z[size_t(t)])];
      if (t > 0)
        s += c.eta[size_t(t * W + c.K + z[size_t(t - 1)] * c.K + z[size_t(t)])];
    }
    logw[size_t(p)] = s;
    m = std::max(m, s);
  }
  double total = 0;
  for (double l : logw)
    total += std::exp(l - m);
  b.logZ = m + std::log(total);
  for (int64_t p = 0; p < paths; ++p) {
    const double w = std::exp(logw[size_t(p)] - b.logZ);
    b.entropy -= w > 0 ? w * (logw[size_t(p)] - b.logZ) : 0.0;
    int64_t r = p;
    for (int64_t t = 0; t < c.T; ++t) {
      z[size_t(t)] = r % c.K;
      r /= c.K;
    }
    for (int64_t t = 0; t < c.T; ++t) {
      b.marg[size_t(t * c.K + z[size_t(t)])] += w;
      if (t > 0)
        b.pair[size_t((t * c.K + z[size_t(t - 1)]) * c.K + z[size_t(t)])] += w;
    }
  }
  return b;
}

TEST(MarkovChain, ForwardBackwardEqualsEnumeratingEveryPath) {
  for (auto [T, K, seed] : {std::array<int64_t, 3>{1, 3, 1}, {2, 2, 2}, {5, 3, 3}, {7, 2, 4}, {6, 4, 5}}) {
    Chain c = randomChain(T, K, unsigned(seed));
    std::vector<double> stats(c.eta.size());
    const double logZ = ppc_chain_stats_lognorm(T, K, c.eta.data(), stats.data());
    Brute b = enumerate(c);
    EXPECT_NEAR(logZ, b.logZ, 1e-12 * std::abs(b.logZ) + 1e-12) << T << " " << K;
    const int64_t W = c.width();
    for (int64_t t = 0; t < T; ++t) {
      for (int64_t k = 0; k < K; ++k)
        EXPECT_NEAR(stats[size_t(t * W + k)], b.marg[size_t(t * K + k)], 1e-12) << t << " " << k;
      // The first element has no pair: its block holds the chain's entropy, then zeros.
      for (int64_t jk = 0; jk < K * K; ++jk)
        EXPECT_NEAR(stats[size_t(t * W + K + jk)], t == 0 && jk == 0 ? b.entropy : b.pair[size_t(t * K * K + jk)],
                    1e-12 * (1 + b.entropy))
            << t << " " << jk;
      EXPECT_EQ(stats[size_t(t * W + K + K * K)], t == 0 ? 1.0 : 0.0);
    }
  }
}

// Potentials of E log pi and E log A (as the chain's own message writes them)
// plus emission evidence: at the forward-backward posterior, the ELBO terms
// sum_t [E log p(z_t | z_{t-1}) + evidence_t . q_t] + H(q) equal log Z.
TEST(MarkovChain, ElboTermsAtThePosteriorEqualTheLogNormalizer) {
  const int64_t T = 6, K = 3, W = K + K * K + 1;
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(0.05, 1.0);
  std::vector<double> logPi(K), logA(K * K), evidence(T * K);
  for (double &v : logPi) v = std::log(u(rng));
  for (double &v : logA) v = std::log(u(rng));
  for (double &v : evidence) v = std::log(u(rng));
  std::vector<double> eta(T * W, 0.0);
  for (int64_t t = 0; t < T; ++t) {
    ppc_chain_sample_avglog(K, t, logPi.data(), logA.data(), 1.0, &eta[size_t(t * W)]);
    for (int64_t k = 0; k < K; ++k)
      eta[size_t(t * W + k)] += evidence[size_t(t * K + k)];
  }
  std::vector<double> stats(eta.size());
  const double logZ = ppc_chain_stats_lognorm(T, K, eta.data(), stats.data());
  double elbo = ppc_chain_entropy_n(T, K, stats.data());
  for (int64_t t = 0; t < T; ++t) {
    elbo += ppc_chain_avglogfactor(K, &stats[size_t(t * W)], logPi.data(), logA.data());
    for (int64_t k = 0; k < K; ++k)
      elbo += stats[size_t(t * W + k)] * evidence[size_t(t * K + k)];
  }
  EXPECT_NEAR(elbo, logZ, 1e-12 * std::abs(logZ));
  // The messages to pi and A: the first marginal, and the pairs summed over t.
  std::vector<double> toPi(K, 0.0), toA(K * K, 0.0);
  for (int64_t t = 0; t < T; ++t) {
    ppc_chain_to_initial(K, &stats[size_t(t * W)], 1.0, toPi.data());
    ppc_chain_to_transition(K, &stats[size_t(t * W)], 1.0, toA.data());
  }
  double firstSum = 0, pairSum = 0;
  for (int64_t k = 0; k < K; ++k) {
    EXPECT_DOUBLE_EQ(toPi[size_t(k)], stats[size_t(k)]);
    firstSum += toPi[size_t(k)];
  }
  for (double v : toA)
    pairSum += v;
  EXPECT_NEAR(firstSum, 1.0, 1e-12);
  EXPECT_NEAR(pairSum, double(T - 1), 1e-12);
}

} // namespace
