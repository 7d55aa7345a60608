//===- runtime/factors/MarkovChain.cpp - a chain of Categoricals ----------===//
//
// A hidden Markov model's states, z_0 ~ Categorical(pi), z_t ~
// Categorical(A(z_{t-1})), with a structured posterior q(z_0..z_{T-1})
// updated by the forward-backward recursion over the expected log
// initial, transition and emission terms (BayesPy's CategoricalMarkovChain;
// Beal 2003, ch. 3). The layout of a row is in MarkovChain.h.
//
// Messages: pi receives q(z_0), row j of A the pair marginals q(z_{t-1} = j,
// z_t = .) summed over t (each element's row adds its own pair), and the
// chain receives E log pi and E log A as its elements' node and edge
// potentials, the children's evidence on its nodes (as a Categorical would).
// The ELBO terms E log p(z) + H(q(z)) decompose over the elements: the
// entropy of a chain is H(q_0) + sum_t [H(q(z_{t-1}, z_t)) - H(q_{t-1})].
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/MarkovChain.h"

#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Schedule.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace {

inline int64_t rowWidth(int64_t K) { return K + K * K + 1; }

} // namespace

extern "C" {

void ppc_chain_sample_avglog(int64_t K, int64_t pos, const double* stats_pi, const double* stats_A, double w,
                             double* dst) {
  if (pos == 0) {
    for (int64_t k = 0; k < K; ++k)
      dst[k] += w * stats_pi[k];
    dst[K + K * K] += w;
    return;
  }
  for (int64_t jk = 0; jk < K * K; ++jk)
    dst[K + jk] += w * stats_A[jk];
}

void ppc_chain_to_initial(int64_t K, const double* stats_z, double w, double* dst) {
  const double first = stats_z[K + K * K];
  if (first == 0.0)
    return;
  for (int64_t k = 0; k < K; ++k)
    dst[k] += w * first * stats_z[k];
}

void ppc_chain_to_transition(int64_t K, const double* stats_z, double w, double* dst) {
  if (stats_z[K + K * K] != 0.0) // the first element: no pair (its block holds the entropy)
    return;
  for (int64_t jk = 0; jk < K * K; ++jk)
    dst[jk] += w * stats_z[K + jk];
}

// Scaled forward-backward (Rabiner's c_t): alpha_t = P(z_t | x_0..t),
// beta_t scaled by the same constants; potentials exp(. - max) for range.
// Per element it reads the row's K^2 edge block once to see whether it is
// the element before's (then its exponentials are reused) and once with
// the pair marginals, which are written normalized in one pass: their sum
// is known from the backward pass (sum_jk alpha_{t-1}(j) e(j, k) n(k)
// beta_t(k) = c_t sum_j alpha_{t-1}(j) beta_{t-1}(j)), and the entropy's
// expected edge potentials are summed in the same pass.
double ppc_chain_stats_lognorm(int64_t T, int64_t K, const double* eta, double* stats) {
  const int64_t W = rowWidth(K);
  if (T <= 0)
    return 0.0;
  std::vector<double> alpha(size_t(T * K)), beta(size_t(T * K)), node(size_t(T * K));
  std::vector<double> nb(static_cast<size_t>(K));
  // The edge factors, one K x K block per distinct E log A (usually one per
  // chain): element t's block starts at edge[edgeAt[t]].
  std::vector<double> edge;
  std::vector<size_t> edgeAt(size_t(T), 0);
  std::vector<double> logScale(static_cast<size_t>(T));
  // Node and edge factors, each shifted by its maximum (added back to the log normalizer).
  double logShift = 0.0, edgeShift = 0.0;
  for (int64_t t = 0; t < T; ++t) {
    const double* e = eta + t * W;
    double m = e[0];
    for (int64_t k = 1; k < K; ++k)
      m = std::max(m, e[k]);
    for (int64_t k = 0; k < K; ++k)
      node[size_t(t * K + k)] = std::exp(e[k] - m);
    logShift += m;
    if (t > 0) {
      // The edges are usually the same E log A at every element: reuse the
      // previous element's exponentials and shift then (K^2 exps saved per element).
      if (t > 1 && std::memcmp(e + K, e - W + K, size_t(K * K) * sizeof(double)) == 0) {
        edgeAt[size_t(t)] = edgeAt[size_t(t - 1)];
      } else {
        double me = e[K];
        for (int64_t jk = 1; jk < K * K; ++jk)
          me = std::max(me, e[K + jk]);
        edgeShift = me;
        edgeAt[size_t(t)] = edge.size();
        for (int64_t jk = 0; jk < K * K; ++jk)
          edge.push_back(std::exp(e[K + jk] - me));
      }
      logShift += edgeShift;
    }
  }
  // Forward.
  double logZ = logShift;
  for (int64_t t = 0; t < T; ++t) {
    double* a = &alpha[size_t(t * K)];
    const double* nd = &node[size_t(t * K)];
    if (t == 0) {
      for (int64_t k = 0; k < K; ++k)
        a[k] = nd[k];
    } else {
      const double* prev = &alpha[size_t((t - 1) * K)];
      const double* ed = &edge[edgeAt[size_t(t)]];
      for (int64_t k = 0; k < K; ++k)
        a[k] = 0.0;
      for (int64_t j = 0; j < K; ++j) {
        const double pj = prev[j];
        for (int64_t k = 0; k < K; ++k)
          a[k] += pj * ed[j * K + k];
      }
      for (int64_t k = 0; k < K; ++k)
        a[k] *= nd[k];
    }
    double c = 0.0;
    for (int64_t k = 0; k < K; ++k)
      c += a[k];
    const double inv = 1.0 / c;
    for (int64_t k = 0; k < K; ++k)
      a[k] *= inv;
    logScale[size_t(t)] = std::log(c);
    logZ += logScale[size_t(t)];
  }
  // Backward, with the same scale constants; then each element's marginal,
  // and its pair marginal with the element before.
  for (int64_t k = 0; k < K; ++k)
    beta[size_t((T - 1) * K + k)] = 1.0;
  double expected = 0.0; // E_q of the node and edge log-potentials, for the entropy
  for (int64_t t = T - 1; t >= 0; --t) {
    const double* b = &beta[size_t(t * K)];
    const double* a = &alpha[size_t(t * K)];
    const double* e = eta + t * W;
    double* s = stats + t * W;
    double total = 0.0;
    for (int64_t k = 0; k < K; ++k)
      total += a[k] * b[k];
    const double invTotal = 1.0 / total;
    for (int64_t k = 0; k < K; ++k) {
      s[k] = a[k] * b[k] * invTotal;
      expected += s[k] > 0.0 ? s[k] * e[k] : 0.0;
    }
    s[K + K * K] = e[K + K * K];
    if (t == 0) {
      for (int64_t jk = 0; jk < K * K; ++jk)
        s[K + jk] = 0.0;
      break;
    }
    const double* nd = &node[size_t(t * K)];
    const double* ed = &edge[edgeAt[size_t(t)]];
    const double* prev = &alpha[size_t((t - 1) * K)];
    double* bp = &beta[size_t((t - 1) * K)];
    const double invC = std::exp(-logScale[size_t(t)]);
    for (int64_t k = 0; k < K; ++k)
      nb[size_t(k)] = nd[k] * b[k];
    double pairSum = 0.0;
    for (int64_t j = 0; j < K; ++j) {
      double r = 0.0;
      for (int64_t k = 0; k < K; ++k)
        r += ed[j * K + k] * nb[size_t(k)];
      bp[j] = r * invC;
      pairSum += prev[j] * r;
    }
    // Pair marginals prev(j) e(j, k) nb(k) / pairSum, and their expected edge potentials.
    const double invPair = 1.0 / pairSum;
    for (int64_t j = 0; j < K; ++j) {
      const double pj = prev[j] * invPair;
      const double* edj = ed + j * K;
      const double* ej = e + K + j * K;
      double* sj = s + K + j * K;
      double x = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        const double v = pj * edj[k] * nb[size_t(k)];
        sj[k] = v;
        x += v > 0.0 ? v * ej[k] : 0.0;
      }
      expected += x;
    }
  }
  // The chain's entropy from its log normalizer, H = log Z - E_q[sum of the
  // node and edge log-potentials] (no K^2 logarithms per element), kept in
  // the first element's pair block, which has no pair (MarkovChain.h).
  stats[K] = logZ - expected;
  return logZ;
}

void ppc_chain_stats(int64_t T, int64_t K, const double* eta, double* stats) {
  ppc_chain_stats_lognorm(T, K, eta, stats);
}

double ppc_chain_avglogfactor(int64_t K, const double* stats_z, const double* stats_pi, const double* stats_A) {
  double total = 0.0;
  if (stats_z[K + K * K] != 0.0) {
    for (int64_t k = 0; k < K; ++k)
      total += stats_z[k] > 0.0 ? stats_z[k] * stats_pi[k] : 0.0;
    return total;
  }
  for (int64_t jk = 0; jk < K * K; ++jk)
    total += stats_z[K + jk] > 0.0 ? stats_z[K + jk] * stats_A[jk] : 0.0;
  return total;
}

double ppc_chain_entropy_n(int64_t n, int64_t K, const double* stats) {
  // Each chain's entropy, which ppc_chain_stats keeps in its first row.
  const int64_t W = rowWidth(K);
  double h = 0.0;
  for (int64_t i = 0; i < n; ++i)
    if (stats[i * W + K + K * K] != 0.0)
      h += stats[i * W + K];
  return h;
}

void ppc_random_chain(int64_t K, int64_t seed, int64_t posterior, int64_t element, double* eta, double* stats) {
  // One random draw per block of kBlock consecutive elements: runs of
  // similar states, whose emissions differ more between the states than
  // independent draws' would (those average out over long sequences), and
  // whose pairs start A's rows apart.
  constexpr int64_t kBlock = 8;
  ppc_random_simplex(K, seed, posterior, element / kBlock, eta, stats);
  // The pair marginal with the draw of the element before it (the generator
  // is keyed by the block); uniform for the first element of all.
  std::vector<double> prevEta(static_cast<size_t>(K)), prev(static_cast<size_t>(K), 1.0 / double(K));
  if (element > 0)
    ppc_random_simplex(K, seed, posterior, (element - 1) / kBlock, prevEta.data(), prev.data());
  for (int64_t j = 0; j < K; ++j)
    for (int64_t k = 0; k < K; ++k)
      stats[K + j * K + k] = prev[size_t(j)] * stats[k];
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

// The chain's own messages read the initial and transition probabilities;
// those to them read the chain.
constexpr OperatorInput kToChain[] = {{1, DepKind::Required}, {2, DepKind::Required}};
constexpr OperatorInput kElbo[] = {{0, DepKind::Plain}, {1, DepKind::Plain}, {2, DepKind::Plain}};

// (Every message names all the other arguments; the one its kernel does not
// read is Plain.)
constexpr OperatorInput kToInitial[] = {{0, DepKind::Required}, {2, DepKind::Plain}};
constexpr OperatorInput kToTransition[] = {{0, DepKind::Required}, {1, DepKind::Plain}};

constexpr MessageOperator kMessages[] = {{"ppc_chain_sample_avglog", "", kToChain},
                                         {"ppc_chain_to_initial", "", kToInitial},
                                         {"ppc_chain_to_transition", "", kToTransition}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_chain_sample_avglog", "D0 P S1 S2 w d"},
    {"ppc_chain_to_initial", "D0 S0 w d"},
    {"ppc_chain_to_transition", "D0 S0 w d"},
    {"ppc_chain_avglogfactor", "D0 S0 S1 S2"},
    {"ppc_chain_entropy_n", "1 D0 S0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_chain_sample_avglog), PPC_SYMBOL(ppc_chain_to_initial), PPC_SYMBOL(ppc_chain_to_transition),
    PPC_SYMBOL(ppc_chain_stats),         PPC_SYMBOL(ppc_chain_stats_lognorm), PPC_SYMBOL(ppc_chain_avglogfactor),
    PPC_SYMBOL(ppc_chain_entropy_n),
    PPC_SYMBOL(ppc_random_chain),
};

int64_t width(int64_t k) { return k + k * k + 1; }

std::vector<double> pointMass(double c, int64_t) { return {c}; }

std::vector<std::string> outputColumns(int64_t k) { return catalogue::indexedColumns("p_", k); }

void standardParameters(int64_t k, const double *, const double *stats, std::vector<double> &out) {
  for (int64_t i = 0; i < k; ++i)
    out.push_back(stats[i]);
}

} // namespace

extern const FactorEntry kMarkovChain = {
    {Family::MarkovChain, kMessages, "ppc_chain_avglogfactor", "", kElbo},
    "ppc_chain_entropy_n",
    "ppc_chain_stats",
    true,
    width,
    pointMass,
    outputColumns,
    standardParameters,
    kPatterns,
    kSymbols,
    nullptr, // a chain's saved marginals do not determine its pair marginals: not givable
    catalogue::noSummaryColumns,
    catalogue::noSummaries,
    "",
    nullptr,
    nullptr,
};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
