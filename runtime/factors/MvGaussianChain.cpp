//===- runtime/factors/MvGaussianChain.cpp - a chain of MvGaussians -------===//
//
// A linear dynamical system's states, x_0 ~ MvGaussian(m0, P0),
// x_t ~ MvGaussian(A x_{t-1}, Q), with a structured posterior: one Gaussian
// per chain whose precision is block-tridiagonal, updated by the smoother
// (the block LDL^T elimination of that precision: the information form of
// the Rauch-Tung-Striebel smoother). The layout of a row is in
// MvGaussianChain.h.
//
// The precision's diagonal blocks are -2 (J_t + K_{t+1}), the blocks below
// them -C_t. Forward, D_t = Lambda_tt - C_t D_{t-1}^-1 C_t^T and
// z_t = h_t + C_t D_{t-1}^-1 z_{t-1}; backward, with the gain
// F_t = D_t^-1 C_{t+1}^T: mu_t = D_t^-1 z_t + F_t mu_{t+1},
// Cov(x_t, x_{t+1}) = F_t Sigma_{t+1}, Sigma_t = D_t^-1 + F_t Sigma_{t+1} F_t^T.
// log|precision| = sum_t log|D_t|, so the chain's entropy is the sum of the
// elements' shares D/2 log(2 pi e) - log|D_t| / 2.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/MvGaussianChain.h"
#include "runtime/factors/MvGaussian.h"

#include "runtime/kernels/KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

/// Offsets in a row of dimension D.
struct Layout {
  int64_t D, quad, cross, prevQuad, prevMean, entropy, flag, width;
  explicit Layout(int64_t d)
      : D(d), quad(d), cross(d + d * d), prevQuad(d + 2 * d * d), prevMean(d + 3 * d * d),
        entropy(2 * d + 3 * d * d), flag(2 * d + 3 * d * d + 1), width(2 * d + 3 * d * d + 2) {}
};

/// Scratch of n doubles for one kernel call: on the stack up to a few small
/// matrices (the usual state dimensions), else on the heap. The per-element
/// kernels run once per element and iteration: no allocation there.
class Scratch {
public:
  explicit Scratch(size_t n) : p_(n <= kSmall ? small_ : (heap_.resize(n), heap_.data())) {}
  double* operator()(size_t offset) { return p_ + offset; }

private:
  static constexpr size_t kSmall = 6 * 64; // six 8 x 8 matrices
  double small_[kSmall];
  std::vector<double> heap_;
  double* p_;
};

/// c = a b (D x D, row-major); transposes by flags.
void matmul(int64_t D, const double* a, bool ta, const double* b, bool tb, double* c) {
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < D; ++k)
        s += (ta ? a[k * D + i] : a[i * D + k]) * (tb ? b[j * D + k] : b[k * D + j]);
      c[i * D + j] = s;
    }
}

/// A's statistics in either layout: D rows of (E a, E a a^T) (a learnt A's
/// rows, a known matrix's or a constant's point masses), or one MvGaussian
/// over vec(A), row-major, of dimension D^2 (`dimA`), (E vec A, E vec A vec A^T).
class MatrixMoments {
public:
  MatrixMoments(int64_t D, int64_t dimA, const double* stats) : D_(D), joint_(D > 1 && dimA == D * D), s_(stats) {}
  bool joint() const { return joint_; }
  /// E A_di
  double mean(int64_t d, int64_t i) const { return joint_ ? s_[d * D_ + i] : s_[d * (D_ + D_ * D_) + i]; }
  /// E[A_di A_ej]
  double second(int64_t d, int64_t i, int64_t e, int64_t j) const {
    if (joint_)
      return s_[D_ * D_ + (d * D_ + i) * D_ * D_ + (e * D_ + j)];
    return d == e ? s_[d * (D_ + D_ * D_) + D_ + i * D_ + j] : mean(d, i) * mean(e, j);
  }
  void expected(double* EA) const {
    for (int64_t d = 0; d < D_; ++d)
      for (int64_t i = 0; i < D_; ++i)
        EA[d * D_ + i] = mean(d, i);
  }
  /// E[A^T B A] (D x D) for a D x D matrix B (`inner`: the transition
  /// precision's E Q), or E[A B A^T] (a state's second moment): out_pq =
  /// sum_ab B_ab E[A_ap A_bq], or sum_ab B_ab E[A_pa A_qb].
  void contract(const double* B, bool inner, double* out) const {
    for (int64_t p = 0; p < D_; ++p)
      for (int64_t q = 0; q < D_; ++q) {
        double s = 0.0;
        for (int64_t a = 0; a < D_; ++a)
          for (int64_t b = 0; b < D_; ++b)
            s += B[a * D_ + b] * (inner ? second(a, p, b, q) : second(p, a, q, b));
        out[p * D_ + q] = s;
      }
  }

private:
  int64_t D_;
  bool joint_;
  const double* s_;
};

/// E[(x_t - A x_{t-1})(x_t - A x_{t-1})^T] of a later element (D x D).
void innovationMoment(int64_t D, const double* sx, const MatrixMoments& A, double* R) {
  const Layout L(D);
  const size_t DD = size_t(D * D);
  Scratch scratch(3 * DD);
  double *EA = scratch(0), *t1 = scratch(DD), *t3 = scratch(2 * DD);
  A.expected(EA);
  const double* M = sx + L.cross;    // E x_t x_{t-1}^T
  const double* S = sx + L.prevQuad; // E x_{t-1} x_{t-1}^T
  matmul(D, M, false, EA, true, t1); // M EA^T
  A.contract(S, false, t3);          // E[A S A^T]
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j)
      R[i * D + j] = sx[L.quad + i * D + j] - t1[i * D + j] - t1[j * D + i] + t3[i * D + j];
}

/// In-place inverse of an SPD matrix; log|m| in *logdet. False if not SPD.
bool spdInverse(int64_t D, double* m, double* logdet) {
  Scratch scratch(size_t(D * D));
  double* chol = scratch(0);
  std::copy(m, m + D * D, chol);
  if (!cholesky(D, chol))
    return false;
  *logdet = logdetFromCholesky(D, chol);
  choleskyInverse(D, chol, m);
  return true;
}

} // namespace

extern "C" {

int64_t ppc_mvchain_width(int64_t D) { return Layout(D).width; }

void ppc_mvchain_sample_avglog(int64_t D, int64_t pos, const double* stats_m0, const double* stats_P0,
                               int64_t dimA, const double* stats_A, const double* stats_Q, double w, double* dst) {
  const Layout L(D);
  if (pos == 0) {
    ppc_mvgaussian_sample_avglog(D, stats_m0, stats_P0, w, dst);
    dst[L.flag] += w;
    return;
  }
  const MatrixMoments A(D, dimA, stats_A);
  const size_t DD = size_t(D * D);
  Scratch scratch(3 * DD);
  double *EA = scratch(0), *QA = scratch(DD), *AQA = scratch(2 * DD);
  A.expected(EA);
  matmul(D, stats_Q, false, EA, false, QA); // E Q E A
  A.contract(stats_Q, true, AQA);            // E[A^T Q A]
  for (int64_t i = 0; i < D * D; ++i) {
    dst[L.quad + i] -= w * 0.5 * stats_Q[i];
    dst[L.cross + i] += w * QA[i];
    dst[L.prevQuad + i] -= w * 0.5 * AQA[i];
  }
}

void ppc_mvchain_to_initial_mean(int64_t D, const double* stats_x, const double* stats_P0, double w, double* dst) {
  const double f = stats_x[Layout(D).flag];
  if (f != 0.0)
    ppc_mvgaussian_mean_avglog(D, stats_x, stats_P0, w * f, dst);
}

void ppc_mvchain_to_initial_precision(int64_t D, const double* stats_x, const double* stats_m0, double w,
                                      double* dst) {
  const double f = stats_x[Layout(D).flag];
  if (f != 0.0)
    ppc_mvgaussian_precision_avglog(D, stats_x, stats_m0, w * f, dst);
}

void ppc_mvchain_to_transition(int64_t D, const double* stats_x, int64_t dimA, const double* stats_Q, double w,
                               double* dst) {
  const Layout L(D);
  if (stats_x[L.flag] != 0.0)
    return;
  const double* M = stats_x + L.cross;
  const double* S = stats_x + L.prevQuad;
  if (D > 1 && dimA == D * D) { // vec(A): linear (E Q M)_di, quadratic -E Q_de S_ij / 2 (E Q kron S)
    const int64_t DD = D * D;
    for (int64_t d = 0; d < D; ++d)
      for (int64_t i = 0; i < D; ++i) {
        double s = 0.0;
        for (int64_t e = 0; e < D; ++e)
          s += stats_Q[d * D + e] * M[e * D + i];
        dst[d * D + i] += w * s;
        for (int64_t e = 0; e < D; ++e)
          for (int64_t j = 0; j < D; ++j)
            dst[DD + (d * D + i) * DD + (e * D + j)] -= w * 0.5 * stats_Q[d * D + e] * S[i * D + j];
      }
    return;
  }
  const int64_t row = D + D * D;
  for (int64_t d = 0; d < D; ++d) {
    double* out = dst + d * row;
    for (int64_t e = 0; e < D; ++e) {
      const double q = stats_Q[d * D + e];
      for (int64_t j = 0; j < D; ++j)
        out[j] += w * q * M[e * D + j];
    }
    const double qdd = stats_Q[d * D + d];
    for (int64_t i = 0; i < D * D; ++i)
      out[D + i] -= w * 0.5 * qdd * S[i];
  }
}

void ppc_mvchain_to_precision(int64_t D, const double* stats_x, int64_t dimA, const double* stats_A, double w,
                              double* dst) {
  const Layout L(D);
  if (stats_x[L.flag] != 0.0)
    return;
  Scratch scratch(size_t(D * D));
  double* R = scratch(0);
  innovationMoment(D, stats_x, MatrixMoments(D, dimA, stats_A), R);
  for (int64_t i = 0; i < D * D; ++i)
    dst[i] -= w * 0.5 * R[i];
  dst[D * D] += w * 0.5;
}

void ppc_mvchain_stats(int64_t T, int64_t D, const double* eta, double* stats) {
  if (T <= 0)
    return;
  const Layout L(D);
  const size_t n = size_t(T), DD = size_t(D * D);
  // Per element: D_t^-1, z_t, then mu_t and Sigma_t.
  std::vector<double> Dinv(n * DD), z(n * size_t(D)), mu(n * size_t(D)), Sigma(n * DD), gain(n * DD);
  std::vector<double> block(DD), tmp(DD), tmp2(DD);
  bool ok = true;
  for (size_t t = 0; t < n && ok; ++t) {
    const double* e = eta + t * size_t(L.width);
    const double* next = t + 1 < n ? eta + (t + 1) * size_t(L.width) : nullptr;
    for (size_t i = 0; i < DD; ++i)
      block[i] = -2.0 * (e[L.quad + int64_t(i)] + (next ? next[L.prevQuad + int64_t(i)] : 0.0));
    for (int64_t i = 0; i < D; ++i)
      z[t * size_t(D) + size_t(i)] = e[i];
    if (t > 0) {
      const double* C = e + L.cross;
      const double* Dp = Dinv.data() + (t - 1) * DD;
      matmul(D, C, false, Dp, false, tmp.data());          // C_t D_{t-1}^-1
      matmul(D, tmp.data(), false, C, true, tmp2.data());  // C_t D_{t-1}^-1 C_t^T
      for (size_t i = 0; i < DD; ++i)
        block[i] -= tmp2[i];
      for (int64_t i = 0; i < D; ++i) {
        double s = 0.0;
        for (int64_t j = 0; j < D; ++j)
          s += tmp[size_t(i * D + j)] * z[(t - 1) * size_t(D) + size_t(j)];
        z[t * size_t(D) + size_t(i)] += s;
      }
    }
    // Symmetric by construction up to rounding: average the halves.
    for (int64_t i = 0; i < D; ++i)
      for (int64_t j = 0; j < i; ++j) {
        const double a = 0.5 * (block[size_t(i * D + j)] + block[size_t(j * D + i)]);
        block[size_t(i * D + j)] = block[size_t(j * D + i)] = a;
      }
    double logdet = 0.0;
    ok = spdInverse(D, block.data(), &logdet);
    std::copy(block.begin(), block.end(), Dinv.begin() + std::ptrdiff_t(t * DD));
    stats[t * size_t(L.width) + size_t(L.entropy)] = 0.5 * double(D) * (1.0 + kLog2Pi) - 0.5 * logdet;
  }
  if (!ok) {
    for (size_t i = 0; i < n * size_t(L.width); ++i)
      stats[i] = std::nan("");
    return;
  }
  // Backward.
  auto matvec = [&](const double* m, const double* v, double* out) {
    for (int64_t i = 0; i < D; ++i) {
      double s = 0.0;
      for (int64_t j = 0; j < D; ++j)
        s += m[i * D + j] * v[j];
      out[i] = s;
    }
  };
  const size_t last = n - 1;
  matvec(Dinv.data() + last * DD, z.data() + last * size_t(D), mu.data() + last * size_t(D));
  std::copy(Dinv.begin() + std::ptrdiff_t(last * DD), Dinv.begin() + std::ptrdiff_t(n * DD),
            Sigma.begin() + std::ptrdiff_t(last * DD));
  std::vector<double> a(static_cast<size_t>(D)), b(static_cast<size_t>(D));
  for (size_t t = last; t-- > 0;) {
    const double* Cn = eta + (t + 1) * size_t(L.width) + L.cross;
    double* F = gain.data() + t * DD;
    matmul(D, Dinv.data() + t * DD, false, Cn, true, F); // F_t = D_t^-1 C_{t+1}^T
    matvec(Dinv.data() + t * DD, z.data() + t * size_t(D), a.data());
    matvec(F, mu.data() + (t + 1) * size_t(D), b.data());
    for (int64_t i = 0; i < D; ++i)
      mu[t * size_t(D) + size_t(i)] = a[size_t(i)] + b[size_t(i)];
    matmul(D, F, false, Sigma.data() + (t + 1) * DD, false, tmp.data()); // F Sigma_{t+1} = Cov(x_t, x_{t+1})
    matmul(D, tmp.data(), false, F, true, tmp2.data());
    for (size_t i = 0; i < DD; ++i)
      Sigma[t * DD + i] = Dinv[t * DD + i] + tmp2[i];
  }
  for (size_t t = 0; t < n; ++t) {
    double* s = stats + t * size_t(L.width);
    const double* m = mu.data() + t * size_t(D);
    const double* Sg = Sigma.data() + t * DD;
    for (int64_t i = 0; i < D; ++i) {
      s[i] = m[i];
      for (int64_t j = 0; j < D; ++j)
        s[L.quad + i * D + j] = Sg[i * D + j] + m[i] * m[j];
    }
    if (t == 0) {
      for (int64_t i = L.cross; i < L.entropy; ++i)
        s[i] = 0.0;
    } else {
      const double* mp = mu.data() + (t - 1) * size_t(D);
      const double* Sp = Sigma.data() + (t - 1) * DD;
      // Cov(x_t, x_{t-1}) = (F_{t-1} Sigma_t)^T = Sigma_t F_{t-1}^T
      matmul(D, Sg, false, gain.data() + (t - 1) * DD, true, tmp.data());
      for (int64_t i = 0; i < D; ++i) {
        s[L.prevMean + i] = mp[i];
        for (int64_t j = 0; j < D; ++j) {
          s[L.cross + i * D + j] = tmp[size_t(i * D + j)] + m[i] * mp[j];
          s[L.prevQuad + i * D + j] = Sp[i * D + j] + mp[i] * mp[j];
        }
      }
    }
    s[L.flag] = eta[t * size_t(L.width) + size_t(L.flag)];
  }
}

double ppc_mvchain_avglogfactor(int64_t D, const double* stats_x, const double* stats_m0, const double* stats_P0,
                                int64_t dimA, const double* stats_A, const double* stats_Q) {
  const Layout L(D);
  if (stats_x[L.flag] != 0.0)
    return ppc_mvgaussian_avglogfactor(D, stats_x, stats_m0, stats_P0);
  Scratch scratch(size_t(D * D));
  double* R = scratch(0);
  innovationMoment(D, stats_x, MatrixMoments(D, dimA, stats_A), R);
  double tr = 0.0;
  for (int64_t i = 0; i < D * D; ++i)
    tr += stats_Q[i] * R[i];
  return 0.5 * (stats_Q[D * D] - double(D) * kLog2Pi) - 0.5 * tr;
}

double ppc_mvchain_entropy_n(int64_t n, int64_t D, const double* stats) {
  const Layout L(D);
  double h = 0.0;
  for (int64_t i = 0; i < n; ++i)
    h += stats[i * L.width + L.entropy];
  return h;
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

namespace ppc::rt::factors {

extern const FactorEntry kMvGaussian;

namespace {

// Arguments: 0 the chain, 1 m0, 2 P0, 3 A (its rows, whole), 4 Q, 5 the
// dimension (runtime/Catalogue.h: the state chains' operator inputs).
constexpr MessageOperator kMessages[] = {{"ppc_mvchain_sample_avglog", "", catalogue::kStateChainToChain},
                                         {"ppc_mvchain_to_initial_mean", "", catalogue::kStateChainToInitialMean},
                                         {"ppc_mvchain_to_initial_precision", "", catalogue::kStateChainToInitialPrecision},
                                         {"ppc_mvchain_to_transition", "", catalogue::kStateChainToTransition},
                                         {"ppc_mvchain_to_precision", "", catalogue::kStateChainToPrecision},
                                         catalogue::kNoMessage}; // the dimension

constexpr KernelPattern kPatterns[] = {
    {"ppc_mvchain_sample_avglog", "D0 P S1 S2 D3 S3 S4 w d"},
    {"ppc_mvchain_to_initial_mean", "D0 S0 S2 w d"},
    {"ppc_mvchain_to_initial_precision", "D0 S0 S1 w d"},
    {"ppc_mvchain_to_transition", "D0 S0 D3 S4 w d"},
    {"ppc_mvchain_to_precision", "D0 S0 D3 S3 w d"},
    {"ppc_mvchain_avglogfactor", "D0 S0 S1 S2 D3 S3 S4"},
    {"ppc_mvchain_entropy_n", "1 D0 S0"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_mvchain_width),           PPC_SYMBOL(ppc_mvchain_sample_avglog),
    PPC_SYMBOL(ppc_mvchain_to_initial_mean), PPC_SYMBOL(ppc_mvchain_to_initial_precision),
    PPC_SYMBOL(ppc_mvchain_to_transition),   PPC_SYMBOL(ppc_mvchain_to_precision),
    PPC_SYMBOL(ppc_mvchain_stats),           PPC_SYMBOL(ppc_mvchain_avglogfactor),
    PPC_SYMBOL(ppc_mvchain_entropy_n),
};

int64_t width(int64_t k) { return Layout(k).width; }
// An element's row starts like an MvGaussian's, and its posterior is written
// out as one (each element's marginal mean and covariance).
std::vector<double> pointMass(double c, int64_t k) { return kMvGaussian.pointMass(c, k); }
std::vector<std::string> outputColumns(int64_t k) { return kMvGaussian.outputColumns(k); }
void standardParameters(int64_t k, const double *eta, const double *stats, std::vector<double> &out) {
  kMvGaussian.standardParameters(k, eta, stats, out);
}

} // namespace

extern const FactorEntry kMvGaussianChain = {
    {Family::MvGaussianChain, kMessages, "ppc_mvchain_avglogfactor", "", catalogue::kStateChainElbo},
    "ppc_mvchain_entropy_n",
    "ppc_mvchain_stats",
    true,
    width,
    pointMass,
    outputColumns,
    standardParameters,
    kPatterns,
    kSymbols,
    nullptr, // a chain's saved marginals do not determine its covariances: not givable
    catalogue::noSummaryColumns,
    catalogue::noSummaries,
    "",
    nullptr,
    nullptr,
};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
