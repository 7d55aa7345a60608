//===- runtime/factors/Categorical.cpp - the Categorical family -----------===//
//
// The Categorical distribution over {0, ..., K-1}, with Dirichlet or Beta
// probabilities: n rows of K log-potentials, statistics the probabilities.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Categorical.h"

#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Vector.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== Categorical =====

PPC_ROW_KERNEL void ppc_categorical_stats_n(int64_t n, int64_t K, const double* eta, double* probs) {
  // Blocks of rows at a time, so that the exponentials run as wide as the
  // vectors however small K is: shift each row by its maximum, exponentiate
  // the block as one flat array, normalize each row. Every row gets exactly
  // ppc_softmax_inplace's values (the same operations on each entry).
  constexpr int64_t kBlockRows = 256;
  typedef double Vec8 __attribute__((vector_size(64)));
  // A vector through memcpy, by a macro (a function returning one would
  // have an ISA-dependent ABI).
#define PPC_LOAD8(x) ({ Vec8 v_; __builtin_memcpy(&v_, (x), sizeof v_); v_; })
  for (int64_t i0 = 0; i0 < n; i0 += kBlockRows) {
    const int64_t rows = n - i0 < kBlockRows ? n - i0 : kBlockRows;
    double* block = probs + i0 * K;
    if (K >= 8 && K < 16) {
      // A row in two overlapping 8-lane vectors (8 <= K < 16): its maximum
      // (any order: the same value) and its sum in reduce8's tree (the
      // first 8 entries' halves added, then (h0 + h2) + (h1 + h3), then the
      // rest one by one: the same bits) without scalar loops per row.
      for (int64_t i = 0; i < rows; ++i) {
        const double* e = eta + (i0 + i) * K;
        const Vec8 a = PPC_LOAD8(e), b = PPC_LOAD8(e + K - 8), x = a > b ? a : b;
        double m = x[0];
        for (int j = 1; j < 8; ++j) m = x[j] > m ? x[j] : m;
        double* p = block + i * K;
        for (int64_t k = 0; k < K; ++k) p[k] = e[k] - m;
      }
      for (int64_t j = 0; j < rows * K; ++j) block[j] = vm::exp(block[j]);
      for (int64_t i = 0; i < rows; ++i) {
        double* p = block + i * K;
        const Vec8 v = PPC_LOAD8(p);
        double s = ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
        for (int64_t k = 8; k < K; ++k) s += p[k];
        const double inv = 1.0 / s;
        for (int64_t k = 0; k < K; ++k) p[k] *= inv;
      }
      continue;
    }
#undef PPC_LOAD8
    for (int64_t i = 0; i < rows; ++i) {
      const double* e = eta + (i0 + i) * K;
      double* p = block + i * K;
      const double m = maxOfLanes(K, [&](int64_t k) { return e[k]; });
      for (int64_t k = 0; k < K; ++k) p[k] = e[k] - m;
    }
    for (int64_t j = 0; j < rows * K; ++j) block[j] = vm::exp(block[j]);
    for (int64_t i = 0; i < rows; ++i) {
      double* p = block + i * K;
      const double inv = 1.0 / reduce8(K, [&](int64_t k) { return p[k]; });
      for (int64_t k = 0; k < K; ++k) p[k] *= inv;
    }
  }
}

PPC_ROW_KERNEL double ppc_categorical_lognorm_n(int64_t n, int64_t K, const double* eta) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) total += ppc_logsumexp(K, eta + i * K);
  return total;
}

PPC_ROW_KERNEL double ppc_categorical_entropy_n(int64_t n, int64_t K, const double* probs) {
  return -reduce8(n * K, [&](int64_t i) { return probs[i] > 0.0 ? probs[i] * vm::log(probs[i]) : 0.0; });
}

PPC_ROW_KERNEL double ppc_categorical_kl_n(int64_t n, int64_t K, const double* probs_q, const double* probs_p) {
  return reduce8(n * K, [&](int64_t i) {
    const double q = probs_q[i];
    return q > 0.0 ? q * (vm::log(q) - vm::log(probs_p[i])) : 0.0;
  });
}

void ppc_categorical_probs_avglog(int64_t K, const double* probs_x, double w, double* dst) {
  for (int64_t k = 0; k < K; ++k) dst[k] += w * probs_x[k];
}

void ppc_categorical_probs_avglog_obs(int64_t /*K*/, int64_t x, double w, double* dst) { dst[x] += w; }

void ppc_categorical_probs_avglog_obs_n(int64_t n, int64_t K, const int64_t* x, const int64_t* pidx,
                                        const double* w, double* dst) {
  for (int64_t i = 0; i < n; ++i) dst[row(pidx, i) * K + x[i]] += weight(w, i);
}

void ppc_categorical_sample_avglog(int64_t K, const double* elog_p, double w, double* dst) {
  for (int64_t k = 0; k < K; ++k) dst[k] += w * elog_p[k];
}

double ppc_categorical_avglogfactor(int64_t K, const double* probs_x, const double* elog_p) {
  // 0 * (-inf) = 0: a category with q = 0 contributes nothing even if E log p = -inf.
  return reduce8(K, [&](int64_t k) { return probs_x[k] > 0.0 ? probs_x[k] * elog_p[k] : 0.0; });
}

double ppc_categorical_avglogfactor_obs(int64_t /*K*/, int64_t x, const double* elog_p) { return elog_p[x]; }

double ppc_categorical_avglogfactor_obs_n(int64_t n, int64_t K, const int64_t* x, const int64_t* pidx,
                                          const double* w, const double* elog_p) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) total += weight(w, i) * elog_p[row(pidx, i) * K + x[i]];
  return total;
}

// The posterior predictive of a missing observation: P(x = k) = E p_k, from
// p's Dirichlet posterior (alpha_k / sum alpha) or a constant (its values,
// normalized); added times the case's weight w.
void ppc_categorical_predictive(int64_t K, const double* eta_p, const double* stats_p, double w, double* d) {
  if (eta_p) { // a Dirichlet posterior: alpha / sum alpha
    double total = 0.0;
    for (int64_t k = 0; k < K; ++k) total += eta_p[k] + 1.0;
    for (int64_t k = 0; k < K; ++k) d[k] += w * (eta_p[k] + 1.0) / total;
    return;
  }
  // A value computed forward (the softmax link): its statistics are (bounds
  // of) E log p_k; the plug-in probabilities, exp normalized.
  double m = stats_p[0], total = 0.0;
  for (int64_t k = 1; k < K; ++k) m = std::max(m, stats_p[k]);
  for (int64_t k = 0; k < K; ++k) total += std::exp(stats_p[k] - m);
  for (int64_t k = 0; k < K; ++k) d[k] += w * std::exp(stats_p[k] - m) / total;
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_categorical_stats_n)
PPC_DECLARE_CLONES(ppc_categorical_lognorm_n)
PPC_DECLARE_CLONES(ppc_categorical_entropy_n)
PPC_DECLARE_CLONES(ppc_categorical_kl_n)

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr MessageOperator kMessages[] = {{"ppc_categorical_sample_avglog", "", kReadParam1},
     {"ppc_categorical_probs_avglog", "ppc_categorical_probs_avglog_obs_n", kReadSample}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_categorical_predictive", "D0 Q1 S1 w d"},
    {"ppc_categorical_sample_avglog", "D0 S1 w d"},
    {"ppc_categorical_probs_avglog", "D1 S0 w d"},
    {"ppc_categorical_probs_avglog_obs_n", "1 D1 I0 0 W d"},
    {"ppc_categorical_avglogfactor", "D0 S0 S1"},
    {"ppc_categorical_avglogfactor_obs_n", "1 D1 I0 0 W S1"},
    {"ppc_categorical_entropy_n", "1 D0 S0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_categorical_predictive),
    PPC_ROW_SYMBOL(ppc_categorical_stats_n),
    PPC_ROW_SYMBOL(ppc_categorical_lognorm_n),
    PPC_ROW_SYMBOL(ppc_categorical_entropy_n),
    PPC_ROW_SYMBOL(ppc_categorical_kl_n),
    PPC_SYMBOL(ppc_categorical_probs_avglog),
    PPC_SYMBOL(ppc_categorical_probs_avglog_obs),
    PPC_SYMBOL(ppc_categorical_probs_avglog_obs_n),
    PPC_SYMBOL(ppc_categorical_sample_avglog),
    PPC_SYMBOL(ppc_categorical_avglogfactor),
    PPC_SYMBOL(ppc_categorical_avglogfactor_obs),
    PPC_SYMBOL(ppc_categorical_avglogfactor_obs_n),
};

int64_t width(int64_t k) {
  return k;
}

std::vector<double> pointMass(double c, int64_t) { return {c}; }

std::vector<std::string> outputColumns(int64_t k) {
  return catalogue::indexedColumns("p_", k);
}

void standardParameters(int64_t k, [[maybe_unused]] const double *eta, [[maybe_unused]] const double *stats,
                        std::vector<double> &out) {
  for (int64_t i = 0; i < k; ++i)
    out.push_back(stats[i]);
}

int64_t naturalParameters(int64_t k, const double *standard, double *eta, std::string &why) {
  double total = 0;
  for (int64_t i = 0; i < k; ++i) {
    if (!(standard[i] >= 0 && standard[i] <= 1)) {
      why = "a probability (from 0 to 1)";
      return i;
    }
    total += standard[i];
  }
  if (std::abs(total - 1) > 1e-6) {
    why = "one of probabilities that add up to 1 (they add up to " + std::to_string(total) + ")";
    return k - 1;
  }
  // log p; an impossible category as the smallest log a normal double has
  for (int64_t i = 0; i < k; ++i)
    eta[i] = std::log(std::max(standard[i], 1e-300));
  return -1;
}

std::vector<std::string> predictiveColumns(int64_t k) { return catalogue::indexedColumns("p_", k); }
void predictive(int64_t k, const double *sums, std::vector<double> &out) { out.insert(out.end(), sums, sums + k); }

} // namespace

extern const FactorEntry kCategorical = {
    {Family::Categorical, kMessages, "ppc_categorical_avglogfactor", "ppc_categorical_avglogfactor_obs_n", kReadSampleAnd1},
    "ppc_categorical_entropy_n",
    "ppc_categorical_stats_n",
    true,
    width,
    pointMass,
    outputColumns,
    standardParameters,
    kPatterns,
    kSymbols,
    naturalParameters,
    catalogue::noSummaryColumns,
    catalogue::noSummaries,
    "ppc_categorical_predictive",
    predictiveColumns,
    predictive,
};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
