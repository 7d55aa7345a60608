//===- runtime/factors/Dirichlet.cpp - the Dirichlet family ---------------===//
//
// The Dirichlet distribution over the simplex (and the symmetric prior of
// LDA's topics and documents): n rows of K, natural parameters alpha - 1,
// statistics E log p.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Dirichlet.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== Dirichlet =====

PPC_ROW_KERNEL void ppc_dirichlet_elog_n(int64_t n, int64_t K, const double* alpha, double* elog) {
  for (int64_t i = 0; i < n; ++i) {
    const double* a = alpha + i * K;
    double* e = elog + i * K;
    const double s = reduce8(K, [&](int64_t k) { return a[k]; });
    digammaRowMinus(K, a, 0.0, s, e);
  }
}

namespace {
// Rows narrower than a vector (a Beta's two entries, many rows: the
// row-fission pass calls these on all of them): blocks of rows, the
// entries' special functions as one flat array and the rows' sums' as
// another, so that the vectors are full and independent. One row at a time
// ran one 8-lane digamma with 3 lanes used, its chain's latency a row (39 ns
// a Beta posterior on Zen 5). Each value is computed as on one row (the
// same function of the same input in any lane): the same bits.
constexpr int64_t kNarrowRows = 64;
} // namespace

PPC_ROW_KERNEL void ppc_dirichlet_stats_n(int64_t n, int64_t K, const double* eta, double* elog) {
  if (K < kLanes && n > 1) {
    double t[kNarrowRows * kLanes], sums[kNarrowRows], ds[kNarrowRows];
    for (int64_t i0 = 0; i0 < n; i0 += kNarrowRows) {
      const int64_t m = n - i0 < kNarrowRows ? n - i0 : kNarrowRows;
      const double* a = eta + i0 * K;
      double* e = elog + i0 * K;
      for (int64_t i = 0; i < m; ++i) sums[i] = reduce8(K, [&](int64_t k) { return a[i * K + k] + 1.0; });
      for (int64_t j = 0; j < m * K; ++j) t[j] = vm::digamma_pos(a[j] + 1.0);
      for (int64_t i = 0; i < m; ++i) ds[i] = vm::digamma_pos(sums[i]);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t k = 0; k < K; ++k) e[i * K + k] = t[i * K + k] - ds[i];
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const double* a = eta + i * K;
    double* e = elog + i * K;
    const double s = reduce8(K, [&](int64_t k) { return a[k] + 1.0; });
    digammaRowMinus(K, a, 1.0, s, e);
  }
}

PPC_ROW_KERNEL void ppc_dirichlet_exp_stats(int64_t K, const double* eta, double* exp, double* shift) {
  // exp(psi(x_k) - M) = y_k exp(t_k - M) (vm::digamma_without_log): no
  // logarithm per entry. M = t + log_floor(y) of the largest x, within ln 2
  // of its digamma, keeps the largest entry in [1, 2); the one digamma
  // left, psi(sum_k x_k), goes into the shift: exp[k] = exp(E log p_k -
  // shift), E log p_k = psi(x_k) - psi(s). M and psi(s) are scalar chains
  // (a maximum over the t's would not vectorize), written after the loops
  // they do not feed: a long chain early in the code holds up the
  // retirement of the vector work behind it. With this order and the
  // shorter chains of vm::shiftFraction, 199 -> 165 ns a call at K = 20
  // (BM_DocExpStats/20, one AVX2 core).
  if (K <= 0) {
    *shift = 0.0;
    return;
  }
  const double xMax = maxOfLanes(K, [&](int64_t k) { return eta[k] + 1.0; });
  // The last K % 4 entries as one padded vector of 4 (AVX2's width; an
  // AVX-512 loop's vector epilogue): LDA's K = 20 has none.
  constexpr int64_t kTail = 4;
  const int64_t full = K - K % kTail, rest = K - full;
  double in[kTail], t[kTail];
  for (int64_t k = 0; k < full; ++k) exp[k] = vm::digamma_without_log(eta[k] + 1.0);  // t_k, for now
  if (rest) {
    for (int64_t j = 0; j < kTail; ++j) in[j] = j < rest ? eta[full + j] + 1.0 : 1.0;
    for (int64_t j = 0; j < kTail; ++j) t[j] = vm::digamma_without_log(in[j]);
  }
  const double M = vm::digamma_without_log(xMax) + vm::log_floor(vm::digamma_shifted(xMax));
  for (int64_t k = 0; k < full; ++k) exp[k] = vm::digamma_shifted(eta[k] + 1.0) * vm::exp(exp[k] - M);
  if (rest) {
    for (int64_t j = 0; j < kTail; ++j) t[j] = vm::digamma_shifted(in[j]) * vm::exp(t[j] - M);
    for (int64_t j = 0; j < rest; ++j) exp[full + j] = t[j];
  }
  *shift = M - vm::digamma_pos(reduce8(K, [&](int64_t k) { return eta[k] + 1.0; }));
}

PPC_ROW_KERNEL double ppc_dirichlet_lognorm_n(int64_t n, int64_t K, const double* eta) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double* e = eta + i * K;
    const double s = reduce8(K, [&](int64_t k) { return e[k] + 1.0; });
    const double lg = reduce8(K, [&](int64_t k) { return vm::lgamma_pos(e[k] + 1.0); });
    total += lg - vm::lgamma_pos(s);
  }
  return total;
}

PPC_ROW_KERNEL double ppc_dirichlet_entropy_n(int64_t n, int64_t K, const double* eta, const double* elog) {
  // H = log B(alpha) + (alpha0 - K) psi(alpha0) - sum_k (alpha_k - 1) psi(alpha_k), and
  // psi(alpha_k) = E log p_k + psi(alpha0): the psi(alpha0) terms cancel.
  double total = 0.0;
  if (K < kLanes && n > 1) { // narrow rows, as ppc_dirichlet_stats_n
    double lgs[kNarrowRows * kLanes], sums[kNarrowRows], lgsum[kNarrowRows];
    for (int64_t i0 = 0; i0 < n; i0 += kNarrowRows) {
      const int64_t m = n - i0 < kNarrowRows ? n - i0 : kNarrowRows;
      const double* e = eta + i0 * K;
      const double* l = elog + i0 * K;
      for (int64_t i = 0; i < m; ++i) sums[i] = reduce8(K, [&](int64_t k) { return e[i * K + k] + 1.0; });
      for (int64_t j = 0; j < m * K; ++j) lgs[j] = vm::lgamma_pos(e[j] + 1.0);
      for (int64_t i = 0; i < m; ++i) lgsum[i] = vm::lgamma_pos(sums[i]);
      for (int64_t i = 0; i < m; ++i) {
        const double lg = reduce8(K, [&](int64_t k) { return lgs[i * K + k] - e[i * K + k] * l[i * K + k]; });
        total += lg - lgsum[i];
      }
    }
    return total;
  }
  for (int64_t i = 0; i < n; ++i) {
    const double* e = eta + i * K;
    const double* l = elog + i * K;
    const double s = reduce8(K, [&](int64_t k) { return e[k] + 1.0; });
    const double lg = reduce8(K, [&](int64_t k) { return vm::lgamma_pos(e[k] + 1.0) - e[k] * l[k]; });
    total += lg - vm::lgamma_pos(s);
  }
  return total;
}

PPC_ROW_KERNEL void ppc_dirichlet_stats_lognorm_n(int64_t n, int64_t K, const double* eta, double* elog,
                                                  double* lognorm) {
  if (K < kLanes && n > 1) { // narrow rows, as ppc_dirichlet_stats_n (digammaLgammaRowMinus's sums)
    double t[kNarrowRows * kLanes], lg[kNarrowRows * kLanes], sums[kNarrowRows], ds[kNarrowRows], lgs[kNarrowRows];
    for (int64_t i0 = 0; i0 < n; i0 += kNarrowRows) {
      const int64_t m = n - i0 < kNarrowRows ? n - i0 : kNarrowRows;
      const double* a = eta + i0 * K;
      double* e = elog + i0 * K;
      for (int64_t i = 0; i < m; ++i) sums[i] = reduce8(K, [&](int64_t k) { return a[i * K + k] + 1.0; });
      for (int64_t j = 0; j < m * K; ++j) t[j] = vm::digamma_lgamma_pos(a[j] + 1.0, lg[j]);
      for (int64_t i = 0; i < m; ++i) ds[i] = vm::digamma_lgamma_pos(sums[i], lgs[i]);
      for (int64_t i = 0; i < m; ++i) {
        double sum = 0.0;
        for (int64_t k = 0; k < K; ++k) {
          e[i * K + k] = t[i * K + k] - ds[i];
          sum += lg[i * K + k];
        }
        lognorm[i0 + i] = sum - lgs[i];
      }
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const double* a = eta + i * K;
    const double s = reduce8(K, [&](int64_t k) { return a[k] + 1.0; });
    lognorm[i] = digammaLgammaRowMinus(K, a, 1.0, s, elog + i * K);
  }
}

PPC_ROW_KERNEL double ppc_dirichlet_entropy_lognorm_n(int64_t n, int64_t K, const double* eta, const double* elog,
                                                      const double* lognorm) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double* e = eta + i * K;
    const double* l = elog + i * K;
    total += lognorm[i] - reduce8(K, [&](int64_t k) { return e[k] * l[k]; });
  }
  return total;
}

PPC_ROW_KERNEL double ppc_dirichlet_kl_n(int64_t n, int64_t K, const double* eta_q, const double* eta_p) {
  // KL = A(p) - A(q) - <eta_p - eta_q, E_q log x>
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double* q = eta_q + i * K;
    const double* p = eta_p + i * K;
    const double sq = reduce8(K, [&](int64_t k) { return q[k] + 1.0; });
    const double sp = reduce8(K, [&](int64_t k) { return p[k] + 1.0; });
    const double dsq = vm::digamma_pos(sq);
    const double v = reduce8(K, [&](int64_t k) {
      return vm::lgamma_pos(p[k] + 1.0) - vm::lgamma_pos(q[k] + 1.0) -
             (p[k] - q[k]) * (vm::digamma_pos(q[k] + 1.0) - dsq);
    });
    total += v - vm::lgamma_pos(sp) + vm::lgamma_pos(sq);
  }
  return total;
}

PPC_ROW_KERNEL void ppc_dirichlet_probs_avglog(int64_t K, const double* alpha, double w, double* dst) {
  for (int64_t k = 0; k < K; ++k) dst[k] += w * (alpha[k] - 1.0);
}

PPC_ROW_KERNEL void ppc_dirichlet_probs_avglog_n(int64_t n, int64_t K, const double* alpha, double w, double* dst) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < K; ++k) dst[i * K + k] += w * (alpha[k] - 1.0);
}

PPC_ROW_KERNEL double ppc_dirichlet_avglogfactor(int64_t K, const double* alpha, const double* elog_p) {
  return -dirichletLogB(K, alpha) + reduce8(K, [&](int64_t k) { return (alpha[k] - 1.0) * elog_p[k]; });
}

PPC_ROW_KERNEL double ppc_dirichlet_sym_avglogfactor(int64_t K, double alpha, const double* elog_p) {
  const double logB = static_cast<double>(K) * vm::lgamma_pos(alpha) - vm::lgamma_pos(static_cast<double>(K) * alpha);
  return -logB + (alpha - 1.0) * reduce8(K, [&](int64_t k) { return elog_p[k]; });
}

PPC_ROW_KERNEL double ppc_dirichlet_avglogfactor_n(int64_t n, int64_t K, const double* alpha, const double* elog_p) {
  const double logB = dirichletLogB(K, alpha);
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double* e = elog_p + i * K;
    total += reduce8(K, [&](int64_t k) { return (alpha[k] - 1.0) * e[k]; });
  }
  return total - static_cast<double>(n) * logB;
}

void ppc_dirichlet_pointmass_stats(int64_t K, const double* p, double* stats) {
  for (int64_t k = 0; k < K; ++k) stats[k] = vm::log(p[k]);
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_dirichlet_elog_n)
PPC_DECLARE_CLONES(ppc_dirichlet_stats_n)
PPC_DECLARE_CLONES(ppc_dirichlet_exp_stats)
PPC_DECLARE_CLONES(ppc_dirichlet_lognorm_n)
PPC_DECLARE_CLONES(ppc_dirichlet_entropy_n)
PPC_DECLARE_CLONES(ppc_dirichlet_stats_lognorm_n)
PPC_DECLARE_CLONES(ppc_dirichlet_entropy_lognorm_n)
PPC_DECLARE_CLONES(ppc_dirichlet_kl_n)
PPC_DECLARE_CLONES(ppc_dirichlet_probs_avglog)
PPC_DECLARE_CLONES(ppc_dirichlet_probs_avglog_n)
PPC_DECLARE_CLONES(ppc_dirichlet_avglogfactor)
PPC_DECLARE_CLONES(ppc_dirichlet_sym_avglogfactor)
PPC_DECLARE_CLONES(ppc_dirichlet_avglogfactor_n)

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr MessageOperator kMessages[] = {{"ppc_dirichlet_probs_avglog", "", kNone}, kNoMessage, kNoMessage};

constexpr KernelPattern kPatterns[] = {
    {"ppc_dirichlet_probs_avglog", "D0 A1 w d"},
    {"ppc_dirichlet_sym_avglogfactor", "D0 C1 S0"},
    {"ppc_dirichlet_entropy_n", "1 D0 N0 S0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_ROW_SYMBOL(ppc_dirichlet_elog_n),
    PPC_ROW_SYMBOL(ppc_dirichlet_stats_n),
    PPC_ROW_SYMBOL(ppc_dirichlet_exp_stats),
    PPC_ROW_SYMBOL(ppc_dirichlet_lognorm_n),
    PPC_ROW_SYMBOL(ppc_dirichlet_entropy_n),
    PPC_ROW_SYMBOL(ppc_dirichlet_stats_lognorm_n),
    PPC_ROW_SYMBOL(ppc_dirichlet_entropy_lognorm_n),
    PPC_ROW_SYMBOL(ppc_dirichlet_kl_n),
    PPC_ROW_SYMBOL(ppc_dirichlet_probs_avglog),
    PPC_ROW_SYMBOL(ppc_dirichlet_probs_avglog_n),
    PPC_ROW_SYMBOL(ppc_dirichlet_avglogfactor),
    PPC_ROW_SYMBOL(ppc_dirichlet_sym_avglogfactor),
    PPC_ROW_SYMBOL(ppc_dirichlet_avglogfactor_n),
    PPC_SYMBOL(ppc_dirichlet_pointmass_stats),
};

int64_t width(int64_t k) {
  return k;
}

std::vector<double> pointMass(double c, int64_t) { return {c}; }

std::vector<std::string> outputColumns(int64_t k) {
  return catalogue::indexedColumns("alpha_", k);
}

void standardParameters(int64_t k, [[maybe_unused]] const double *eta, [[maybe_unused]] const double *stats,
                        std::vector<double> &out) {
  for (int64_t i = 0; i < k; ++i)
    out.push_back(eta[i] + 1);
}

std::vector<std::string> summaryColumns(int64_t k) { return catalogue::indexedColumns("mean_", k); }

void summaries(int64_t k, const double *standard, std::vector<double> &out) {
  double total = 0;
  for (int64_t i = 0; i < k; ++i)
    total += standard[i];
  for (int64_t i = 0; i < k; ++i)
    out.push_back(standard[i] / total);
}

} // namespace

extern const FactorEntry kDirichlet = {
    {Family::Dirichlet, kMessages, "ppc_dirichlet_sym_avglogfactor", "", kReadSampleOnly},
    "ppc_dirichlet_entropy_n",
    "ppc_dirichlet_stats_n",
    true,
    width,
    pointMass,
    outputColumns,
    standardParameters,
    kPatterns,
    kSymbols,
    catalogue::concentrationNaturalParameters,
    summaryColumns,
    summaries,
    "",
    nullptr,
    nullptr,
};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
