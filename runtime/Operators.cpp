// VMP operator kernels; see Operators.h for the conventions and the table.
#include "runtime/Operators.h"

#include "runtime/VecMath.h"
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace {

namespace vm = ppc::rt::vm;

constexpr double kLog2 = 0.69314718055994530942;
constexpr double kLog2Pi = 1.8378770664093454836;
constexpr double kLogPi = 1.1447298858494001741;

// Reductions with 8 independent partial sums combined in a fixed tree: the
// loop vectorizes without -ffast-math and the result does not depend on the
// vector width. Always inlined: only inside a kernel's AVX-512/AVX2 clone
// does it run wide (GCC's unit-growth limits would otherwise leave some
// copies out of line, compiled for the baseline).
template <class F>
__attribute__((always_inline)) inline double reduce8(int64_t n, F f) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += f(i + j);
  double s = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += f(i);
  return s;
}

// A row's last partial block of 8 entries as one 8-lane vector, padded: a
// special function in a scalar remainder loop costs about as much as 8
// lanes (LDA's documents, 20 topics: 2 vectors and 4 scalar digammas
// before, 3 vectors now). Lane for lane the same arithmetic as the
// vector loop, so the results do not change.
constexpr int64_t kLanes = 8;

/// e[k] = digamma(a[k] + offset) - digamma(s) over a row of K entries;
/// digamma(s) runs in the padded block's first spare lane.
__attribute__((always_inline)) inline void digammaRowMinus(int64_t K, const double* a, double offset, double s,
                                                           double* e) {
  if (K <= 0) return;
  const int64_t full = K - K % kLanes, rest = K - full;
  double in[kLanes], out[kLanes];
  for (int64_t j = 0; j < kLanes; ++j) in[j] = j < rest ? a[full + j] + offset : (j == rest ? s : 1.0);
  for (int64_t j = 0; j < kLanes; ++j) out[j] = vm::digamma_pos(in[j]);
  const double ds = out[rest];
  for (int64_t k = 0; k < full; ++k) e[k] = vm::digamma_pos(a[k] + offset) - ds;
  for (int64_t j = 0; j < rest; ++j) e[full + j] = out[j] - ds;
}

/// digammaRowMinus, and returns sum_k lgamma(a[k] + offset) - lgamma(s) (a
/// Dirichlet's log normalizer): the lgamma shares each entry's shift and
/// log with its digamma, and lgamma(s) runs in the padded lane with
/// digamma(s).
__attribute__((always_inline)) inline double digammaLgammaRowMinus(int64_t K, const double* a, double offset, double s,
                                                                  double* e) {
  if (K <= 0) return -vm::lgamma_pos(s);
  const int64_t full = K - K % kLanes, rest = K - full;
  double in[kLanes], out[kLanes], lg[kLanes];
  for (int64_t j = 0; j < kLanes; ++j) in[j] = j < rest ? a[full + j] + offset : (j == rest ? s : 1.0);
  for (int64_t j = 0; j < kLanes; ++j) out[j] = vm::digamma_lgamma_pos(in[j], lg[j]);
  const double ds = out[rest];
  double acc[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t k = 0; k < full; k += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) {
      double l;
      e[k + j] = vm::digamma_lgamma_pos(a[k + j] + offset, l) - ds;
      acc[j] += l;
    }
  double sum = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
  for (int64_t j = 0; j < rest; ++j) {
    e[full + j] = out[j] - ds;
    sum += lg[j];
  }
  return sum - lg[rest];
}

__attribute__((always_inline)) inline double max8(int64_t n, const double* x) {
  double acc[8] = {-vm::kInf, -vm::kInf, -vm::kInf, -vm::kInf, -vm::kInf, -vm::kInf, -vm::kInf, -vm::kInf};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
  double m = acc[0];
  for (int j = 1; j < 8; ++j) m = acc[j] > m ? acc[j] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

inline int64_t row(const int64_t* pidx, int64_t i) { return pidx ? pidx[i] : 0; }
inline double weight(const double* w, int64_t i) { return w ? w[i] : 1.0; }

// ---- small dense SPD algebra (row-major) ----

// In-place lower Cholesky factor of A (D x D, its lower triangle is read);
// returns false if not PD. Right-looking on U = L^T, kept in the upper
// triangle: once row j of U is final, every later row k loses U_jk times
// row j's tail, a contiguous axpy (no reductions: it vectorizes as it is).
PPC_VECTOR_CLONES bool cholesky(int64_t D, double* L) {
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < i; ++j) L[j * D + i] = L[i * D + j];
  for (int64_t j = 0; j < D; ++j) {
    double* uj = L + j * D;
    const double d = uj[j];
    if (!(d > 0.0)) return false;  // also rejects NaN
    const double r = __builtin_sqrt(d);
    uj[j] = r;
    for (int64_t c = j + 1; c < D; ++c) uj[c] /= r;
    for (int64_t k = j + 1; k < D; ++k) {
      const double f = uj[k];
      double* uk = L + k * D;
      for (int64_t c = k; c < D; ++c) uk[c] -= f * uj[c];
    }
  }
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < i; ++j) {
      L[i * D + j] = L[j * D + i];
      L[j * D + i] = 0.0;  // clear the upper triangle
    }
  return true;
}

// inv = (L L^T)^-1 from the Cholesky factor L, which is overwritten with L^-1.
// Both steps are contiguous row updates (axpys over row prefixes/suffixes):
//   row i of L^-1 = (e_i - sum_{k<i} L_ik row k of L^-1) / L_ii   (inv's row i as the accumulator)
//   inv_ab = sum_{k >= max(a,b)} L^-1_ka L^-1_kb                  (upper half, then mirrored)
PPC_VECTOR_CLONES void choleskyInverse(int64_t D, double* L, double* inv) {
  for (int64_t i = 0; i < D; ++i) {
    double* li = L + i * D;
    double* acc = inv + i * D;
    for (int64_t j = 0; j <= i; ++j) acc[j] = 0.0;
    for (int64_t k = 0; k < i; ++k) {
      const double c = li[k];
      const double* wk = L + k * D;
      for (int64_t j = 0; j <= k; ++j) acc[j] -= c * wk[j];
    }
    const double r = 1.0 / li[i];
    for (int64_t j = 0; j < i; ++j) li[j] = acc[j] * r;
    li[i] = r;
  }
  for (int64_t a = 0; a < D; ++a) {
    double* row = inv + a * D;
    for (int64_t b = a; b < D; ++b) row[b] = 0.0;
    for (int64_t k = a; k < D; ++k) {
      const double* wk = L + k * D;
      const double c = wk[a];
      for (int64_t b = a; b <= k; ++b) row[b] += c * wk[b];
    }
  }
  for (int64_t a = 0; a < D; ++a)
    for (int64_t b = 0; b < a; ++b) inv[a * D + b] = inv[b * D + a];
}

double logdetFromCholesky(int64_t D, const double* L) {
  double s = 0.0;
  for (int64_t i = 0; i < D; ++i) s += vm::log(L[i * D + i]);
  return 2.0 * s;
}

double lmvgamma(int64_t D, double a) {
  double r = 0.25 * static_cast<double>(D * (D - 1)) * kLogPi;
  for (int64_t i = 1; i <= D; ++i) r += vm::lgamma_pos(a + 0.5 * static_cast<double>(1 - i));
  return r;
}

double mvdigamma(int64_t D, double a) {
  double r = 0.0;
  for (int64_t i = 1; i <= D; ++i) r += vm::digamma_pos(a + 0.5 * static_cast<double>(1 - i));
  return r;
}

// Dirichlet pieces on one row of alpha.
double dirichletLogB(int64_t K, const double* alpha) {
  const double s = reduce8(K, [&](int64_t k) { return alpha[k]; });
  const double lg = reduce8(K, [&](int64_t k) { return vm::lgamma_pos(alpha[k]); });
  return lg - vm::lgamma_pos(s);
}

// Wishart: from eta (D*D + 1) compute S^-1 (=-2 eta1) Cholesky and nu.
struct WishartParts {
  double nu;
  double logdetS;  // log |S| = -log |S^-1|
  bool ok;
};

WishartParts wishartParts(int64_t D, const double* eta, double* L) {
  for (int64_t i = 0; i < D * D; ++i) L[i] = -2.0 * eta[i];
  WishartParts p;
  p.nu = 2.0 * eta[D * D] + static_cast<double>(D + 1);
  p.ok = cholesky(D, L) && p.nu > static_cast<double>(D - 1);
  p.logdetS = p.ok ? -logdetFromCholesky(D, L) : vm::kNaN;
  return p;
}

double wishartElogdet(int64_t D, double nu, double logdetS) {
  return mvdigamma(D, 0.5 * nu) + static_cast<double>(D) * kLog2 + logdetS;
}

}  // namespace

extern "C" {

// ===== Vector helpers =====

void ppc_axpy(int64_t n, double w, const double* x, double* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += w * x[i];
}

void ppc_transpose(int64_t rows, int64_t cols, const double* src, double* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
}

void ppc_axpy_strided(int64_t n, int64_t stride, double w, const double* x, double* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += w * x[i * stride];
}

PPC_ROW_KERNEL void ppc_axpy_transposed(int64_t rows, int64_t cols, int64_t begin, int64_t count, double w,
                                        const double* src, double* dst) {
  const int64_t end = begin + count < cols ? begin + count : cols;
  // Tiles of 32 columns: a source line serves 8 consecutive rows, and each
  // destination row gets a 256-byte run (4 lines, which the prefetchers
  // follow). Measured on K = 100, V = 10473 from memory: 2.4 ms, 8-column
  // tiles 3.7 ms, the strided column reads 2.5-3.3 ms.
  constexpr int64_t kTile = 32;
  int64_t c0 = begin;
  for (; c0 + kTile <= end; c0 += kTile)
    for (int64_t r = 0; r < rows; ++r) {
      double* d = dst + r * cols + c0;
      const double* s = src + c0 * rows + r;
      for (int64_t j = 0; j < kTile; ++j) d[j] += w * s[j * rows];
    }
  for (int64_t c = c0; c < end; ++c)
    for (int64_t r = 0; r < rows; ++r) dst[r * cols + c] += w * src[c * rows + r];
}

namespace {
// splitmix64: a counter-based generator (Steele, Lea & Flood 2014).
uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
/// An Exp(1) draw, the i-th of the stream (seed, stream, element).
double exponentialDraw(int64_t seed, int64_t stream, int64_t element, int64_t i) {
  uint64_t h = mix64(mix64(mix64(uint64_t(seed)) ^ uint64_t(stream)) ^ uint64_t(element));
  h = mix64(h ^ uint64_t(i));
  double u = (double(h >> 11) + 0.5) * 0x1.0p-53;  // in (0, 1)
  return -vm::log(u);
}
}  // namespace

namespace {
__attribute__((always_inline)) inline void randomSimplex(int64_t k, int64_t seed, int64_t stream, int64_t element,
                                                         double* eta, double* stats) {
  // exponentialDraw's hash and logarithm, written out so that the draws vectorize.
  const uint64_t base = mix64(mix64(mix64(uint64_t(seed)) ^ uint64_t(stream)) ^ uint64_t(element));
  for (int64_t i = 0; i < k; ++i) {
    const double u = (double(mix64(base ^ uint64_t(i)) >> 11) + 0.5) * 0x1.0p-53;
    stats[i] = -vm::log(u);
  }
  // One sum in 8 partial sums and one division: a running sum is a chain of
  // k dependent additions, which took about half of LDA's initialization.
  const double inverse = 1.0 / reduce8(k, [&](int64_t i) { return stats[i]; });
  for (int64_t i = 0; i < k; ++i) stats[i] *= inverse;
  if (eta)
    for (int64_t i = 0; i < k; ++i) eta[i] = vm::log(stats[i]);
}
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PPC_RUNTIME_BITCODE)
// The hash multiplies 64-bit lanes and converts them to doubles, which
// vectorize only with AVX-512DQ (vpmullq, vcvtuqq2pd); target_clones cannot
// name it in GCC 12, so the kernel dispatches to this copy itself.
#define PPC_RANDOM_SIMPLEX_DQ 1
__attribute__((target("avx512f,avx512dq,avx512vl"))) void randomSimplexDQ(int64_t k, int64_t seed, int64_t stream,
                                                                          int64_t element, double* eta, double* stats) {
  randomSimplex(k, seed, stream, element, eta, stats);
}
#endif
} // namespace

PPC_ROW_KERNEL void ppc_random_simplex(int64_t k, int64_t seed, int64_t stream, int64_t element, double* eta,
                                       double* stats) {
#ifdef PPC_RANDOM_SIMPLEX_DQ
  static const bool dq = __builtin_cpu_supports("avx512dq");
  if (dq) {
    randomSimplexDQ(k, seed, stream, element, eta, stats);
    return;
  }
#endif
  randomSimplex(k, seed, stream, element, eta, stats);
}

void ppc_random_bernoulli(int64_t seed, int64_t stream, int64_t element, double* eta, double* stats) {
  const double a = exponentialDraw(seed, stream, element, 0), b = exponentialDraw(seed, stream, element, 1);
  stats[0] = a / (a + b);
  eta[0] = vm::log(a) - vm::log(b);
}

double ppc_mean_abs_change(int64_t n, const double* current, double* previous) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    s += std::abs(current[i] - previous[i]);
    previous[i] = current[i];
  }
  return n > 0 ? s / double(n) : 0.0;
}

void ppc_fill(int64_t n, double value, double* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}

void ppc_mul_n(int64_t n, const double* src, double* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] *= src[i];
}

void ppc_mul2_n(int64_t n, const double* a, const double* b, double* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = a[i] * b[i];
}

void ppc_copy_n(int64_t n, const double* src, double* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

PPC_ROW_KERNEL void ppc_exp_shifted_n(int64_t n, const double* src, double* dst, double* shift) {
  const double m = n > 0 ? max8(n, src) : 0.0;
  const int64_t full = n - n % kLanes, rest = n - full;
  for (int64_t i = 0; i < full; ++i) dst[i] = vm::exp(src[i] - m);
  if (rest > 0) {
    double in[kLanes], out[kLanes];
    for (int64_t j = 0; j < kLanes; ++j) in[j] = j < rest ? src[full + j] - m : 0.0;
    for (int64_t j = 0; j < kLanes; ++j) out[j] = vm::exp(in[j]);
    for (int64_t j = 0; j < rest; ++j) dst[full + j] = out[j];
  }
  *shift = m;
}

PPC_ROW_KERNEL void ppc_exp_shifted_transposed(int64_t rows, int64_t cols, int64_t begin, int64_t count,
                                               const double* src, double* dst, double* shifts) {
  const int64_t end = begin + count < cols ? begin + count : cols;
  if (rows <= 0 || begin >= end) return;
  // Column maxima row by row (contiguous), then blocks of columns, so that
  // the reads of a row and the writes of the block's output rows stream.
  for (int64_t c = begin; c < end; ++c) shifts[c] = src[c];
  for (int64_t r = 1; r < rows; ++r)
    for (int64_t c = begin; c < end; ++c) shifts[c] = src[r * cols + c] > shifts[c] ? src[r * cols + c] : shifts[c];
  constexpr int64_t kBlock = 32;
  for (int64_t c0 = begin; c0 < end; c0 += kBlock) {
    const int64_t c1 = c0 + kBlock < end ? c0 + kBlock : end;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = c0; c < c1; ++c) dst[c * rows + r] = vm::exp(src[r * cols + c] - shifts[c]);
  }
}

namespace {
// Out of line, so that the kernels that call them stay small enough to be
// inlined into the plate loops (the JIT does not inline large kernels).
[[gnu::noinline]] void logOfRow(int64_t n, const double* x, double* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = vm::log(x[i]);
}
[[gnu::noinline]] double logOfScalar(double x) { return vm::log(x); }
} // namespace

namespace {
/// probs = prod / sum(prod) (and eta = log probs unless null); returns the sum.
inline double normalizeProduct(int64_t K, const double* prod, double* eta, double* probs) {
  const double s = reduce8(K, [&](int64_t k) { return prod[k]; });
  const double inv = 1.0 / s;
  for (int64_t k = 0; k < K; ++k) probs[k] = prod[k] * inv;
  if (eta)
    logOfRow(K, probs, eta);
  return s;
}
} // namespace

void ppc_categorical_stats_from_product(int64_t K, const double* prod, double* eta, double* probs) {
  normalizeProduct(K, prod, eta, probs);
}

double ppc_categorical_stats_from_product_lognorm(int64_t K, const double* prod, double shift, double* eta,
                                                  double* probs) {
  return logOfScalar(normalizeProduct(K, prod, eta, probs)) + shift;
}

// Rows of a categorical's K cases in explicit vectors of 8 and 4 lanes, then
// scalars: inlined into a loop where K is a constant (LDA's 20 topics), LLVM
// unrolls the per-case loops completely and leaves 20 scalar operations
// that its SLP vectorizer does not pack; vectors survive the unrolling.
namespace {
using Vec8 = double __attribute__((vector_size(64)));
using Vec4 = double __attribute__((vector_size(32)));
// Unaligned rows as vectors, through memcpy (clang keeps a vector type's
// natural alignment whatever `aligned` says); macros, since a function
// taking or returning a vector would have a target-dependent ABI.
#define PPC_LOAD(V, p) ({ V v_; __builtin_memcpy(&v_, (p), sizeof v_); v_; })
#define PPC_STORE(p, v) do { auto v_ = (v); __builtin_memcpy((p), &v_, sizeof v_); } while (0)

/// sum_k a[k] b[k], lanes summed in a fixed tree (independent of the
/// target): the 8-lane products' halves added, the 4-lane tail's products
/// added to that, then (h0 + h2) + (h1 + h3). One tree for the whole row,
/// not one per vector: the per-token dot of LDA's loops is mostly this tree.
inline double dotRow(int64_t K, const double* a, const double* b) {
  using Vec2 = double __attribute__((vector_size(16)));
  Vec8 acc = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  if (K >= 8) { // the first products as they are, not added to zeros
    acc = PPC_LOAD(Vec8, a) * PPC_LOAD(Vec8, b);
    k = 8;
  }
  for (; k + 8 <= K; k += 8) acc += PPC_LOAD(Vec8, a + k) * PPC_LOAD(Vec8, b + k);
  Vec4 h = __builtin_shufflevector(acc, acc, 0, 1, 2, 3) + __builtin_shufflevector(acc, acc, 4, 5, 6, 7);
  if (k + 4 <= K) {
    h += PPC_LOAD(Vec4, a + k) * PPC_LOAD(Vec4, b + k);
    k += 4;
  }
  const Vec2 g = __builtin_shufflevector(h, h, 0, 1) + __builtin_shufflevector(h, h, 2, 3);
  double s = g[0] + g[1];
  for (; k < K; ++k) s += a[k] * b[k];
  return s;
}

/// dst[k] += c * x[k] (times y[k] when y is given).
inline void scaledAddRow(int64_t K, double c, const double* x, const double* y, double* dst) {
  int64_t k = 0;
  for (; k + 8 <= K; k += 8)
    PPC_STORE(dst + k, PPC_LOAD(Vec8, dst + k) +
                           c * (y ? PPC_LOAD(Vec8, x + k) * PPC_LOAD(Vec8, y + k) : PPC_LOAD(Vec8, x + k)));
  if (k + 4 <= K) {
    PPC_STORE(dst + k, PPC_LOAD(Vec4, dst + k) +
                           c * (y ? PPC_LOAD(Vec4, x + k) * PPC_LOAD(Vec4, y + k) : PPC_LOAD(Vec4, x + k)));
    k += 4;
  }
  for (; k < K; ++k) dst[k] += c * (y ? x[k] * y[k] : x[k]);
}
} // namespace

PPC_TOKEN_KERNEL void ppc_dot_inverse_axpy(int64_t K, const double* a, const double* b, double w, double* acc) {
  scaledAddRow(K, w / dotRow(K, a, b), b, nullptr, acc);
}

PPC_TOKEN_KERNEL double ppc_product_axpy_lognorm(int64_t K, const double* a, const double* b, double shift, double w, double* dst) {
  const double s = dotRow(K, a, b);
  scaledAddRow(K, w / s, a, b, dst);
  return logOfScalar(s) + shift;
}

PPC_TOKEN_KERNEL double ppc_product_axpy_norm(int64_t K, const double* a, const double* b, double shift, double w,
                                              double* dst, double* norm) {
  const double s = dotRow(K, a, b);
  scaledAddRow(K, w / s, a, b, dst);
  *norm = s;
  return shift;
}

PPC_ROW_KERNEL double ppc_weighted_log_sum(int64_t n, const double* x, const double* w) {
  if (w) return reduce8(n, [&](int64_t i) { return w[i] * vm::log(x[i]); });
  return reduce8(n, [&](int64_t i) { return vm::log(x[i]); });
}

PPC_TOKEN_KERNEL void ppc_product_axpy(int64_t K, const double* a, const double* b, double w, double* dst) {
  scaledAddRow(K, w / dotRow(K, a, b), a, b, dst);
}

PPC_TOKEN_KERNEL void ppc_prefetch_row(const int64_t* idx, int64_t i, int64_t n, int64_t ahead, const double* table,
                                       int64_t width) {
  if (i + ahead >= n) return;
  const double* row = table + idx[i + ahead] * width;
  const uintptr_t end = reinterpret_cast<uintptr_t>(row + width);
  for (uintptr_t line = reinterpret_cast<uintptr_t>(row) & ~uintptr_t(63); line < end; line += 64)
    __builtin_prefetch(reinterpret_cast<const void*>(line));
}

void ppc_mul_add_n(int64_t n, const double* a, const double* b, double* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] += a[i] * b[i];
}

double ppc_dot(int64_t n, const double* x, const double* y) {
  return reduce8(n, [&](int64_t i) { return x[i] * y[i]; });
}

double ppc_logsumexp(int64_t n, const double* x) {
  if (n <= 0) return -vm::kInf;
  const double m = max8(n, x);
  if (!(m > -vm::kInf) || m == vm::kInf) return m;  // all -inf, +inf, or NaN
  const double s = reduce8(n, [&](int64_t i) { return vm::exp(x[i] - m); });
  return m + vm::log(s);
}

double ppc_softmax_inplace(int64_t n, double* x) {
  if (n <= 0) return -vm::kInf;
  const double m = max8(n, x);
  for (int64_t i = 0; i < n; ++i) x[i] = vm::exp(x[i] - m);
  const double s = reduce8(n, [&](int64_t i) { return x[i]; });
  const double inv = 1.0 / s;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
  return m + vm::log(s);
}

// ===== SPD algebra =====

int ppc_spd_inverse_logdet(int64_t D, const double* A, double* inv, double* logdet, double* scratch) {
  for (int64_t i = 0; i < D * D; ++i) scratch[i] = A[i];
  if (!cholesky(D, scratch)) return 1;
  *logdet = logdetFromCholesky(D, scratch);
  choleskyInverse(D, scratch, inv);
  return 0;
}

// ===== Point masses =====

void ppc_gamma_pointmass_stats(double x, double* stats) {
  stats[0] = x;
  stats[1] = vm::log(x);
}

void ppc_gaussian_pointmass_stats(double x, double* stats) {
  stats[0] = x;
  stats[1] = x * x;
}

void ppc_dirichlet_pointmass_stats(int64_t K, const double* p, double* stats) {
  for (int64_t k = 0; k < K; ++k) stats[k] = vm::log(p[k]);
}

void ppc_mvgaussian_pointmass_stats(int64_t D, const double* x, double* stats) {
  for (int64_t i = 0; i < D; ++i) stats[i] = x[i];
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) stats[D + i * D + j] = x[i] * x[j];
}

int ppc_wishart_pointmass_stats(int64_t D, const double* lambda, double* stats, double* scratch) {
  for (int64_t i = 0; i < D * D; ++i) {
    stats[i] = lambda[i];
    scratch[i] = lambda[i];
  }
  if (!cholesky(D, scratch)) return 1;
  stats[D * D] = logdetFromCholesky(D, scratch);
  return 0;
}

// ===== Dirichlet =====

PPC_ROW_KERNEL void ppc_dirichlet_elog_n(int64_t n, int64_t K, const double* alpha, double* elog) {
  for (int64_t i = 0; i < n; ++i) {
    const double* a = alpha + i * K;
    double* e = elog + i * K;
    const double s = reduce8(K, [&](int64_t k) { return a[k]; });
    digammaRowMinus(K, a, 0.0, s, e);
  }
}

PPC_ROW_KERNEL void ppc_dirichlet_stats_n(int64_t n, int64_t K, const double* eta, double* elog) {
  for (int64_t i = 0; i < n; ++i) {
    const double* a = eta + i * K;
    double* e = elog + i * K;
    const double s = reduce8(K, [&](int64_t k) { return a[k] + 1.0; });
    digammaRowMinus(K, a, 1.0, s, e);
  }
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

// ===== Beta =====

void ppc_beta_p_avglog(double a, double b, double w, double* dst) {
  dst[0] += w * (a - 1.0);
  dst[1] += w * (b - 1.0);
}

double ppc_beta_avglogfactor(double a, double b, const double* stats_p) {
  const double logB = vm::lgamma_pos(a) + vm::lgamma_pos(b) - vm::lgamma_pos(a + b);
  return -logB + (a - 1.0) * stats_p[0] + (b - 1.0) * stats_p[1];
}

// ===== Categorical =====

PPC_ROW_KERNEL void ppc_categorical_stats_n(int64_t n, int64_t K, const double* eta, double* probs) {
  // Blocks of rows at a time, so that the exponentials run as wide as the
  // vectors however small K is: shift each row by its maximum, exponentiate
  // the block as one flat array, normalize each row. Every row gets exactly
  // ppc_softmax_inplace's values (the same operations on each entry).
  constexpr int64_t kBlockRows = 256;
  for (int64_t i0 = 0; i0 < n; i0 += kBlockRows) {
    const int64_t rows = n - i0 < kBlockRows ? n - i0 : kBlockRows;
    double* block = probs + i0 * K;
    for (int64_t i = 0; i < rows; ++i) {
      const double* e = eta + (i0 + i) * K;
      double* p = block + i * K;
      const double m = max8(K, e);
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

// ===== Bernoulli =====

PPC_ROW_KERNEL void ppc_bernoulli_stats_n(int64_t n, const double* eta, double* p) {
  for (int64_t i = 0; i < n; ++i) p[i] = 1.0 / (1.0 + vm::exp(-eta[i]));
}

PPC_ROW_KERNEL double ppc_bernoulli_lognorm_n(int64_t n, const double* eta) {
  return reduce8(n, [&](int64_t i) { return vm::softplus(eta[i]); });
}

PPC_ROW_KERNEL double ppc_bernoulli_entropy_n(int64_t n, const double* p) {
  return -reduce8(n, [&](int64_t i) {
    const double a = p[i], b = 1.0 - p[i];
    return (a > 0.0 ? a * vm::log(a) : 0.0) + (b > 0.0 ? b * vm::log(b) : 0.0);
  });
}

PPC_ROW_KERNEL double ppc_bernoulli_kl_n(int64_t n, const double* p_q, const double* p_p) {
  return reduce8(n, [&](int64_t i) {
    const double a = p_q[i], b = 1.0 - p_q[i];
    return (a > 0.0 ? a * (vm::log(a) - vm::log(p_p[i])) : 0.0) +
           (b > 0.0 ? b * (vm::log(b) - vm::log(1.0 - p_p[i])) : 0.0);
  });
}

void ppc_bernoulli_p_avglog(double ex, double w, double* dst) {
  dst[0] += w * ex;
  dst[1] += w * (1.0 - ex);
}

void ppc_bernoulli_p_avglog_obs_n(int64_t n, const double* ex, const int64_t* pidx, const double* w,
                                  double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    double* d = dst + 2 * row(pidx, i);
    const double wi = weight(w, i);
    d[0] += wi * ex[i];
    d[1] += wi * (1.0 - ex[i]);
  }
}

void ppc_bernoulli_sample_avglog(const double* stats_p, double w, double* dst) {
  dst[0] += w * (stats_p[0] - stats_p[1]);
}

double ppc_bernoulli_avglogfactor(double ex, const double* stats_p) {
  return (ex > 0.0 ? ex * stats_p[0] : 0.0) + (ex < 1.0 ? (1.0 - ex) * stats_p[1] : 0.0);
}

double ppc_bernoulli_avglogfactor_obs_n(int64_t n, const double* ex, const int64_t* pidx, const double* w,
                                        const double* stats_p) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) total += weight(w, i) * ppc_bernoulli_avglogfactor(ex[i], stats_p + 2 * row(pidx, i));
  return total;
}

// ===== Gamma =====

PPC_ROW_KERNEL void ppc_gamma_stats_n(int64_t n, const double* eta, double* stats) {
  for (int64_t i = 0; i < n; ++i) {
    const double b = -eta[2 * i], a = eta[2 * i + 1] + 1.0;
    stats[2 * i] = a / b;
    stats[2 * i + 1] = vm::digamma_pos(a) - vm::log(b);
  }
}

PPC_ROW_KERNEL double ppc_gamma_lognorm_n(int64_t n, const double* eta) {
  return reduce8(n, [&](int64_t i) {
    const double b = -eta[2 * i], a = eta[2 * i + 1] + 1.0;
    return vm::lgamma_pos(a) - a * vm::log(b);
  });
}

PPC_ROW_KERNEL double ppc_gamma_entropy_n(int64_t n, const double* eta) {
  // H = a - log b + lgamma(a) + (1 - a) psi(a)
  return reduce8(n, [&](int64_t i) {
    const double b = -eta[2 * i], a = eta[2 * i + 1] + 1.0;
    return a - vm::log(b) + vm::lgamma_pos(a) + (1.0 - a) * vm::digamma_pos(a);
  });
}

PPC_ROW_KERNEL double ppc_gamma_kl_n(int64_t n, const double* eta_q, const double* eta_p) {
  // KL = (aq - ap) psi(aq) - lgamma(aq) + lgamma(ap) + ap (log bq - log bp) + aq (bp - bq) / bq
  return reduce8(n, [&](int64_t i) {
    const double bq = -eta_q[2 * i], aq = eta_q[2 * i + 1] + 1.0;
    const double bp = -eta_p[2 * i], ap = eta_p[2 * i + 1] + 1.0;
    return (aq - ap) * vm::digamma_pos(aq) - vm::lgamma_pos(aq) + vm::lgamma_pos(ap) +
           ap * (vm::log(bq) - vm::log(bp)) + aq * (bp - bq) / bq;
  });
}

void ppc_gamma_sample_avglog(double shape, const double* stats_rate, double w, double* dst) {
  dst[0] -= w * stats_rate[0];
  dst[1] += w * (shape - 1.0);
}

void ppc_gamma_rate_avglog(double shape, const double* stats_x, double w, double* dst) {
  dst[0] -= w * stats_x[0];
  dst[1] += w * shape;
}

void ppc_gamma_rate_avglog_obs_n(int64_t n, double shape, const double* x, const int64_t* pidx,
                                 const double* w, double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    double* d = dst + 2 * row(pidx, i);
    const double wi = weight(w, i);
    d[0] -= wi * x[i];
    d[1] += wi * shape;
  }
}

double ppc_gamma_avglogfactor(double shape, const double* stats_x, const double* stats_rate) {
  return shape * stats_rate[1] - vm::lgamma_pos(shape) + (shape - 1.0) * stats_x[1] - stats_rate[0] * stats_x[0];
}

double ppc_gamma_avglogfactor_obs_n(int64_t n, double shape, const double* x, const int64_t* pidx,
                                    const double* w, const double* stats_rate) {
  const double lg = vm::lgamma_pos(shape);
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double* s = stats_rate + 2 * row(pidx, i);
    total += weight(w, i) * (shape * s[1] - lg + (shape - 1.0) * vm::log(x[i]) - s[0] * x[i]);
  }
  return total;
}

// ===== Poisson =====

PPC_ROW_KERNEL void ppc_poisson_stats_n(int64_t n, const double* eta, double* mean) {
  for (int64_t i = 0; i < n; ++i) mean[i] = vm::exp(eta[i]);
}

PPC_ROW_KERNEL double ppc_poisson_lognorm_n(int64_t n, const double* eta) {
  return reduce8(n, [&](int64_t i) { return vm::exp(eta[i]); });
}

double ppc_poisson_elogfact(double rate) {
  if (!(rate > 0.0)) return 0.0;  // point mass at 0 (log 0! = 0)
  if (rate > 1000.0) {
    // H(Poisson) = log(2 pi e rate)/2 - 1/(12 rate) - 1/(24 rate^2) - 19/(360 rate^3) + O(rate^-4)
    // and E log x! = H - rate (1 - log rate).
    const double ir = 1.0 / rate;
    const double H = 0.5 * (kLog2Pi + 1.0 + vm::log(rate)) - ir * (1.0 / 12 + ir * (1.0 / 24 + ir * (19.0 / 360)));
    return H - rate * (1.0 - vm::log(rate));
  }
  // Exact sum over the window that holds all but ~1e-20 of the mass.
  const double sd = __builtin_sqrt(rate);
  const double lo = rate - 12.0 * sd - 10.0;
  const int64_t k0 = lo > 0.0 ? static_cast<int64_t>(lo) : 0;
  const int64_t k1 = static_cast<int64_t>(rate + 12.0 * sd + 20.0);
  const double lr = vm::log(rate);
  double s = 0.0;
  for (int64_t k = k0; k <= k1; ++k) {
    const double lf = vm::lgamma_pos(static_cast<double>(k) + 1.0);
    s += vm::exp(static_cast<double>(k) * lr - rate - lf) * lf;
  }
  return s;
}

PPC_ROW_KERNEL double ppc_poisson_entropy_n(int64_t n, const double* eta) {
  // -sum_k p_k log p_k directly (no cancellation between rate log rate and
  // E log x!); the asymptotic series above rate 1000.
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double rate = vm::exp(eta[i]);
    if (rate > 1000.0) {
      const double ir = 1.0 / rate;
      total += 0.5 * (kLog2Pi + 1.0 + eta[i]) - ir * (1.0 / 12 + ir * (1.0 / 24 + ir * (19.0 / 360)));
      continue;
    }
    const double sd = __builtin_sqrt(rate);
    const double lo = rate - 12.0 * sd - 10.0;
    const int64_t k0 = lo > 0.0 ? static_cast<int64_t>(lo) : 0;
    const int64_t k1 = static_cast<int64_t>(rate + 12.0 * sd + 20.0);
    double h = 0.0;
    for (int64_t k = k0; k <= k1; ++k) {
      const double lp = static_cast<double>(k) * eta[i] - rate - vm::lgamma_pos(static_cast<double>(k) + 1.0);
      h -= vm::exp(lp) * lp;
    }
    total += h;
  }
  return total;
}

PPC_ROW_KERNEL double ppc_poisson_kl_n(int64_t n, const double* eta_q, const double* eta_p) {
  // KL = lq (log lq - log lp) - lq + lp
  return reduce8(n, [&](int64_t i) {
    const double lq = vm::exp(eta_q[i]), lp = vm::exp(eta_p[i]);
    return lq * (eta_q[i] - eta_p[i]) - lq + lp;
  });
}

void ppc_poisson_rate_avglog(double ex, double w, double* dst) {
  dst[0] -= w;
  dst[1] += w * ex;
}

void ppc_poisson_rate_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                   double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    double* d = dst + 2 * row(pidx, i);
    const double wi = weight(w, i);
    d[0] -= wi;
    d[1] += wi * x[i];
  }
}

void ppc_poisson_sample_avglog(const double* stats_rate, double w, double* dst) { dst[0] += w * stats_rate[1]; }

double ppc_poisson_avglogfactor(double ex, double elogfact_x, const double* stats_rate) {
  return ex * stats_rate[1] - stats_rate[0] - elogfact_x;
}

double ppc_poisson_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                      const double* stats_rate) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double* s = stats_rate + 2 * row(pidx, i);
    total += weight(w, i) * (x[i] * s[1] - s[0] - vm::lgamma_pos(x[i] + 1.0));
  }
  return total;
}

// ===== Gaussian =====

PPC_ROW_KERNEL void ppc_gaussian_stats_n(int64_t n, const double* eta, double* stats) {
  for (int64_t i = 0; i < n; ++i) {
    const double tau = -2.0 * eta[2 * i + 1];
    const double mu = eta[2 * i] / tau;
    stats[2 * i] = mu;
    stats[2 * i + 1] = mu * mu + 1.0 / tau;
  }
}

PPC_ROW_KERNEL double ppc_gaussian_lognorm_n(int64_t n, const double* eta) {
  return reduce8(n, [&](int64_t i) {
    const double tau = -2.0 * eta[2 * i + 1];
    return 0.5 * eta[2 * i] * eta[2 * i] / tau - 0.5 * vm::log(tau);
  });
}

PPC_ROW_KERNEL double ppc_gaussian_entropy_n(int64_t n, const double* eta) {
  return reduce8(n, [&](int64_t i) { return 0.5 * (1.0 + kLog2Pi - vm::log(-2.0 * eta[2 * i + 1])); });
}

PPC_ROW_KERNEL double ppc_gaussian_kl_n(int64_t n, const double* eta_q, const double* eta_p) {
  // KL = (log(tq/tp) + tp/tq + tp (mq - mp)^2 - 1) / 2
  return reduce8(n, [&](int64_t i) {
    const double tq = -2.0 * eta_q[2 * i + 1], tp = -2.0 * eta_p[2 * i + 1];
    const double d = eta_q[2 * i] / tq - eta_p[2 * i] / tp;
    return 0.5 * (vm::log(tq) - vm::log(tp) + tp / tq + tp * d * d - 1.0);
  });
}

void ppc_gaussian_sample_avglog(const double* stats_mean, const double* stats_prec, double w, double* dst) {
  dst[0] += w * stats_prec[0] * stats_mean[0];
  dst[1] -= 0.5 * w * stats_prec[0];
}

void ppc_gaussian_mean_avglog(const double* stats_x, const double* stats_prec, double w, double* dst) {
  dst[0] += w * stats_prec[0] * stats_x[0];
  dst[1] -= 0.5 * w * stats_prec[0];
}

void ppc_gaussian_mean_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                    const double* stats_prec, double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double wt = weight(w, i) * stats_prec[2 * r];
    dst[2 * r] += wt * x[i];
    dst[2 * r + 1] -= 0.5 * wt;
  }
}

void ppc_gaussian_precision_avglog(const double* stats_x, const double* stats_mean, double w, double* dst) {
  dst[0] -= 0.5 * w * (stats_x[1] - 2.0 * stats_x[0] * stats_mean[0] + stats_mean[1]);
  dst[1] += 0.5 * w;
}

void ppc_gaussian_precision_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                         const double* stats_mean, double* dst) {
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double* m = stats_mean + 2 * r;
    const double wi = weight(w, i);
    dst[2 * r] -= 0.5 * wi * (x[i] * x[i] - 2.0 * x[i] * m[0] + m[1]);
    dst[2 * r + 1] += 0.5 * wi;
  }
}

double ppc_gaussian_avglogfactor(const double* stats_x, const double* stats_mean, const double* stats_prec) {
  const double q = stats_x[1] - 2.0 * stats_x[0] * stats_mean[0] + stats_mean[1];
  return 0.5 * (stats_prec[1] - kLog2Pi) - 0.5 * stats_prec[0] * q;
}

double ppc_gaussian_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                       const double* stats_mean, const double* stats_prec) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double* m = stats_mean + 2 * r;
    const double* t = stats_prec + 2 * r;
    const double q = x[i] * x[i] - 2.0 * x[i] * m[0] + m[1];
    total += weight(w, i) * (0.5 * (t[1] - kLog2Pi) - 0.5 * t[0] * q);
  }
  return total;
}

// ===== MvGaussian =====

int ppc_mvgaussian_stats(int64_t D, const double* eta, double* stats, double* scratch) {
  double* L = scratch;           // D*D
  double* cov = scratch + D * D; // D*D
  for (int64_t i = 0; i < D * D; ++i) L[i] = -2.0 * eta[D + i];
  if (!cholesky(D, L)) return 1;
  choleskyInverse(D, L, cov);
  for (int64_t i = 0; i < D; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < D; ++j) s += cov[i * D + j] * eta[j];
    stats[i] = s;
  }
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) stats[D + i * D + j] = cov[i * D + j] + stats[i] * stats[j];
  return 0;
}

double ppc_mvgaussian_lognorm(int64_t D, const double* eta, double* scratch) {
  double* L = scratch;
  double* y = scratch + D * D;  // D
  for (int64_t i = 0; i < D * D; ++i) L[i] = -2.0 * eta[D + i];
  if (!cholesky(D, L)) return vm::kNaN;
  // mu^T Lambda mu = h^T Lambda^-1 h = |L^-1 h|^2
  double q = 0.0;
  for (int64_t i = 0; i < D; ++i) {
    double s = eta[i];
    for (int64_t k = 0; k < i; ++k) s -= L[i * D + k] * y[k];
    y[i] = s / L[i * D + i];
    q += y[i] * y[i];
  }
  return 0.5 * q - 0.5 * logdetFromCholesky(D, L);
}

double ppc_mvgaussian_entropy(int64_t D, const double* eta, double* scratch) {
  double* L = scratch;
  for (int64_t i = 0; i < D * D; ++i) L[i] = -2.0 * eta[D + i];
  if (!cholesky(D, L)) return vm::kNaN;
  return 0.5 * static_cast<double>(D) * (1.0 + kLog2Pi) - 0.5 * logdetFromCholesky(D, L);
}

double ppc_mvgaussian_kl(int64_t D, const double* eta_q, const double* eta_p, double* scratch) {
  // KL = A(p) - A(q) - <eta_p - eta_q, E_q T>; E_q T needs D + D*D doubles: use the tail of scratch.
  double* stats = scratch + 2 * D * D + D;
  if (ppc_mvgaussian_stats(D, eta_q, stats, scratch)) return vm::kNaN;
  const double Ap = ppc_mvgaussian_lognorm(D, eta_p, scratch);
  const double Aq = ppc_mvgaussian_lognorm(D, eta_q, scratch);
  double inner = 0.0;
  for (int64_t i = 0; i < D + D * D; ++i) inner += (eta_p[i] - eta_q[i]) * stats[i];
  return Ap - Aq - inner;
}

void ppc_mvgaussian_sample_avglog(int64_t D, const double* stats_mean, const double* stats_prec, double w,
                                  double* dst) {
  for (int64_t i = 0; i < D; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < D; ++j) s += stats_prec[i * D + j] * stats_mean[j];
    dst[i] += w * s;
  }
  for (int64_t i = 0; i < D * D; ++i) dst[D + i] -= 0.5 * w * stats_prec[i];
}

void ppc_mvgaussian_mean_avglog(int64_t D, const double* stats_x, const double* stats_prec, double w,
                                double* dst) {
  ppc_mvgaussian_sample_avglog(D, stats_x, stats_prec, w, dst);  // symmetric in x and mean
}

void ppc_mvgaussian_precision_avglog(int64_t D, const double* stats_x, const double* stats_mean, double w,
                                     double* dst) {
  const double* ex = stats_x;
  const double* exx = stats_x + D;
  const double* em = stats_mean;
  const double* emm = stats_mean + D;
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) {
      const double c = exx[i * D + j] - ex[i] * em[j] - em[i] * ex[j] + emm[i * D + j];
      dst[i * D + j] -= 0.5 * w * c;
    }
  dst[D * D] += 0.5 * w;
}

double ppc_mvgaussian_avglogfactor(int64_t D, const double* stats_x, const double* stats_mean,
                                   const double* stats_prec) {
  const double* ex = stats_x;
  const double* exx = stats_x + D;
  const double* em = stats_mean;
  const double* emm = stats_mean + D;
  double tr = 0.0;
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) {
      const double c = exx[j * D + i] - ex[j] * em[i] - em[j] * ex[i] + emm[j * D + i];
      tr += stats_prec[i * D + j] * c;
    }
  return 0.5 * (stats_prec[D * D] - static_cast<double>(D) * kLog2Pi) - 0.5 * tr;
}

// ===== Wishart =====

int ppc_wishart_stats(int64_t D, const double* eta, double* stats, double* scratch) {
  double* L = scratch;
  double* S = scratch + D * D;
  const WishartParts p = wishartParts(D, eta, L);
  if (!p.ok) return 1;
  choleskyInverse(D, L, S);
  for (int64_t i = 0; i < D * D; ++i) stats[i] = p.nu * S[i];
  stats[D * D] = wishartElogdet(D, p.nu, p.logdetS);
  return 0;
}

double ppc_wishart_lognorm_params(int64_t D, double nu, double logdet_S) {
  return 0.5 * nu * logdet_S + 0.5 * nu * static_cast<double>(D) * kLog2 + lmvgamma(D, 0.5 * nu);
}

double ppc_wishart_lognorm(int64_t D, const double* eta, double* scratch) {
  const WishartParts p = wishartParts(D, eta, scratch);
  if (!p.ok) return vm::kNaN;
  return ppc_wishart_lognorm_params(D, p.nu, p.logdetS);
}

double ppc_wishart_entropy(int64_t D, const double* eta, double* scratch) {
  // H = A + nu D / 2 - (nu - D - 1)/2 E log|Lambda|
  const WishartParts p = wishartParts(D, eta, scratch);
  if (!p.ok) return vm::kNaN;
  const double dd = static_cast<double>(D);
  return ppc_wishart_lognorm_params(D, p.nu, p.logdetS) + 0.5 * p.nu * dd -
         0.5 * (p.nu - dd - 1.0) * wishartElogdet(D, p.nu, p.logdetS);
}

double ppc_wishart_kl(int64_t D, const double* eta_q, const double* eta_p, double* scratch) {
  double* stats = scratch + 2 * D * D + D;  // D*D + 1 more doubles
  if (ppc_wishart_stats(D, eta_q, stats, scratch)) return vm::kNaN;
  const double Ap = ppc_wishart_lognorm(D, eta_p, scratch);
  const double Aq = ppc_wishart_lognorm(D, eta_q, scratch);
  double inner = 0.0;
  for (int64_t i = 0; i < D * D + 1; ++i) inner += (eta_p[i] - eta_q[i]) * stats[i];
  return Ap - Aq - inner;
}

void ppc_wishart_sample_avglog(int64_t D, double nu, const double* S_inv, double w, double* dst) {
  for (int64_t i = 0; i < D * D; ++i) dst[i] -= 0.5 * w * S_inv[i];
  dst[D * D] += 0.5 * w * (nu - static_cast<double>(D) - 1.0);
}

double ppc_wishart_avglogfactor(int64_t D, double nu, const double* S_inv, double logdet_S,
                                const double* stats_L) {
  double tr = 0.0;
  for (int64_t i = 0; i < D; ++i)
    for (int64_t j = 0; j < D; ++j) tr += S_inv[i * D + j] * stats_L[j * D + i];
  return 0.5 * (nu - static_cast<double>(D) - 1.0) * stats_L[D * D] - 0.5 * tr -
         ppc_wishart_lognorm_params(D, nu, logdet_S);
}

// ---- plate-slice forms (what the generated code calls) ----

namespace {
// Scratch for the row kernels below: PPC_MV_SCRATCH(D) doubles, freed on return.
struct MvScratch {
  double* p;
  explicit MvScratch(int64_t D)
      : p(static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(PPC_MV_SCRATCH(D) + D * D + 1)))) {}
  ~MvScratch() { std::free(p); }
};
// (x - E m)^T A (x - E m) and tr(A Cov m) without forming Cov m: Cov m = E mm^T - E m E m^T.
inline double covTrace(int64_t D, const double* A, const double* em, const double* emm) {
  double tr = 0.0;
  for (int64_t i = 0; i < D; ++i) {
    const double* a = A + i * D;
    const double* c = emm + i * D;
    double s = 0.0;
    for (int64_t j = 0; j < D; ++j) s += a[j] * (c[j] - em[i] * em[j]);
    tr += s;
  }
  return tr;
}
inline double quadForm(int64_t D, const double* A, const double* x, const double* em) {
  double q = 0.0;
  for (int64_t i = 0; i < D; ++i) {
    const double* a = A + i * D;
    double s = 0.0;
    for (int64_t j = 0; j < D; ++j) s += a[j] * (x[j] - em[j]);
    q += (x[i] - em[i]) * s;
  }
  return q;
}
}  // namespace

PPC_ROW_KERNEL void ppc_mvgaussian_stats_n(int64_t n, int64_t D, const double* eta, double* stats) {
  const int64_t width = D + D * D;
  MvScratch scratch(D);
  for (int64_t i = 0; i < n; ++i)
    if (ppc_mvgaussian_stats(D, eta + i * width, stats + i * width, scratch.p))
      for (int64_t j = 0; j < width; ++j) stats[i * width + j] = vm::kNaN;
}

PPC_ROW_KERNEL double ppc_mvgaussian_entropy_n(int64_t n, int64_t D, const double* eta) {
  MvScratch scratch(D);
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) total += ppc_mvgaussian_entropy(D, eta + i * (D + D * D), scratch.p);
  return total;
}

PPC_ROW_KERNEL void ppc_mvgaussian_mean_avglog_obs_n(int64_t n, int64_t D, const double* x, const int64_t* pidx,
                                                     const double* w, const double* stats_prec, double* dst) {
  const int64_t width = D + D * D, pwidth = D * D + 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double wi = weight(w, i);
    const double* L = stats_prec + r * pwidth;
    const double* xi = x + i * D;
    double* d = dst + r * width;
    for (int64_t a = 0; a < D; ++a) {
      double s = 0.0;
      for (int64_t b = 0; b < D; ++b) s += L[a * D + b] * xi[b];
      d[a] += wi * s;
    }
    const double h = -0.5 * wi;
    for (int64_t j = 0; j < D * D; ++j) d[D + j] += h * L[j];
  }
}

PPC_ROW_KERNEL void ppc_mvgaussian_precision_avglog_obs_n(int64_t n, int64_t D, const double* x,
                                                          const int64_t* pidx, const double* w,
                                                          const double* stats_mean, double* dst) {
  const int64_t width = D + D * D, pwidth = D * D + 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double h = -0.5 * weight(w, i);
    const double* em = stats_mean + r * width;
    const double* emm = em + D;
    const double* xi = x + i * D;
    double* d = dst + r * pwidth;
    for (int64_t a = 0; a < D; ++a) {
      const double ya = xi[a] - em[a];
      for (int64_t b = 0; b < D; ++b)
        d[a * D + b] += h * (ya * (xi[b] - em[b]) + emm[a * D + b] - em[a] * em[b]);
    }
    d[D * D] -= h;
  }
}

PPC_ROW_KERNEL double ppc_mvgaussian_avglogfactor_obs_n(int64_t n, int64_t D, const double* x, const int64_t* pidx,
                                                        const double* w, const double* stats_mean,
                                                        const double* stats_prec) {
  const int64_t width = D + D * D, pwidth = D * D + 1;
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = row(pidx, i);
    const double* em = stats_mean + r * width;
    const double* L = stats_prec + r * pwidth;
    const double q = quadForm(D, L, x + i * D, em) + covTrace(D, L, em, em + D);
    total += weight(w, i) * (0.5 * (L[D * D] - static_cast<double>(D) * kLog2Pi) - 0.5 * q);
  }
  return total;
}

PPC_ROW_KERNEL void ppc_wishart_stats_n(int64_t n, int64_t D, const double* eta, double* stats) {
  const int64_t width = D * D + 1;
  MvScratch scratch(D);
  for (int64_t i = 0; i < n; ++i)
    if (ppc_wishart_stats(D, eta + i * width, stats + i * width, scratch.p))
      for (int64_t j = 0; j < width; ++j) stats[i * width + j] = vm::kNaN;
}

PPC_ROW_KERNEL double ppc_wishart_entropy_n(int64_t n, int64_t D, const double* eta) {
  MvScratch scratch(D);
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) total += ppc_wishart_entropy(D, eta + i * (D * D + 1), scratch.p);
  return total;
}

void ppc_wishart_iso_sample_avglog(int64_t D, double nu, double s, double w, double* dst) {
  const double h = -0.5 * w / s;
  for (int64_t i = 0; i < D; ++i) dst[i * D + i] += h;
  dst[D * D] += 0.5 * w * (nu - static_cast<double>(D) - 1.0);
}

double ppc_wishart_iso_avglogfactor(int64_t D, double nu, double s, const double* stats_L) {
  double tr = 0.0;
  for (int64_t i = 0; i < D; ++i) tr += stats_L[i * D + i];
  const double dd = static_cast<double>(D);
  return 0.5 * (nu - dd - 1.0) * stats_L[D * D] - 0.5 * tr / s -
         ppc_wishart_lognorm_params(D, nu, dd * vm::log(s));
}

// ---- Gaussian statistics of a whole data plate ----
// Loops ordered for the cache: the D x D accumulator (or matrix) row is the
// vectorized inner loop, the data rows (n x D, small) are streamed.

namespace {
// Up to this dimension the plate statistics run over the data rows, 8 rows
// per vector, on the transposed data: a register tile of the D x D moments
// (16 columns wide) would be mostly padding.
constexpr int64_t kSmallDimension = 16;

// x (n x D, row-major) transposed: D columns of n.
double* transposedColumns(int64_t n, int64_t D, const double* x, int64_t extra) {
  double* xt = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(D * n + extra + 1)));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t a = 0; a < D; ++a) xt[a * n + i] = x[i * D + a];
  return xt;
}

PPC_VECTOR_CLONES void weightedMomentsSmall(int64_t n, int64_t k, const double* w, int64_t D, const double* x,
                                            double* means, double* totals) {
  const int64_t width = D + D * D;
  double* xt = transposedColumns(n, D, x, (D + 1) * n);
  double* yt = xt + D * n;    // the weighted columns w_j x_a
  double* wj = yt + D * n;
  for (int64_t j = 0; j < k; ++j) {
    double* m = means + j * width;
    for (int64_t i = 0; i < n; ++i) wj[i] = w[i * k + j];
    for (int64_t a = 0; a < D; ++a)
      for (int64_t i = 0; i < n; ++i) yt[a * n + i] = wj[i] * xt[a * n + i];
    const double total = reduce8(n, [&](int64_t i) { return wj[i]; });
    for (int64_t a = 0; a < D; ++a) {
      const double* ya = yt + a * n;
      m[a] = reduce8(n, [&](int64_t i) { return ya[i]; });
      for (int64_t b = a; b < D; ++b) {
        const double* xb = xt + b * n;
        m[D + a * D + b] = m[D + b * D + a] = reduce8(n, [&](int64_t i) { return ya[i] * xb[i]; });
      }
    }
    totals[j] = total;
    if (total > 0) {
      const double inv = 1.0 / total;
      for (int64_t c = 0; c < width; ++c) m[c] *= inv;
    }
  }
  std::free(xt);
}

PPC_VECTOR_CLONES void momentProductsSmall(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                           const double* offsets, double* out) {
  const int64_t width = D + D * D;
  double* xt = transposedColumns(n, D, x, 2 * n);
  double* t = xt + D * n;
  double* q = t + n;
  for (int64_t j = 0; j < k; ++j) {
    const double* lin = eta + j * width;
    const double* H = lin + D;
    // x^T H x + lin^T x = sum_a x_a (lin_a + sum_{b >= a} U_ab x_b), U_ab = H_ab + H_ba (b > a), U_aa = H_aa
    for (int64_t i = 0; i < n; ++i) q[i] = offsets[j];
    for (int64_t a = 0; a < D; ++a) {
      for (int64_t i = 0; i < n; ++i) t[i] = lin[a];
      for (int64_t b = a; b < D; ++b) {
        const double u = b == a ? H[a * D + a] : H[a * D + b] + H[b * D + a];
        const double* xb = xt + b * n;
        for (int64_t i = 0; i < n; ++i) t[i] += u * xb[i];
      }
      const double* xa = xt + a * n;
      for (int64_t i = 0; i < n; ++i) q[i] += xa[i] * t[i];
    }
    for (int64_t i = 0; i < n; ++i) out[i * k + j] = q[i];
  }
  std::free(xt);
}
}  // namespace

PPC_ROW_KERNEL void ppc_gaussian_weighted_moments(int64_t n, int64_t k, const double* w, int64_t D, const double* x,
                                                  double* means, double* totals, double* memo) {
  if (memo) {  // the same weights as last time (bitwise): means and totals are still theirs
    if (memo[0] == 1.0 && std::memcmp(memo + 1, w, sizeof(double) * static_cast<size_t>(n * k)) == 0) return;
    std::memcpy(memo + 1, w, sizeof(double) * static_cast<size_t>(n * k));
    memo[0] = 1.0;
  }
  if (D <= kSmallDimension) return weightedMomentsSmall(n, k, w, D, x, means, totals);
  // The second moments are Y_j^T X with Y_j = diag(w_j) X: 8 x 16 tiles of the
  // upper half accumulate in registers over the data rows (16 sums per row,
  // the 8 multipliers read straight from Y), the rest by symmetry. X and Y
  // are copied once into rows padded to 16 columns (zeros).
  typedef double v8d __attribute__((vector_size(64)));
  constexpr int64_t kRows = 8, kCols = 16;
  const int64_t width = D + D * D;
  const int64_t Dp = (D + kCols - 1) / kCols * kCols;
  double* xp = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(2 * n * Dp + 1)));
  double* yp = xp + n * Dp;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t a = 0; a < D; ++a) xp[i * Dp + a] = x[i * D + a];
    for (int64_t a = D; a < Dp; ++a) xp[i * Dp + a] = 0.0;
  }
  for (int64_t j = 0; j < k; ++j) {
    double* m = means + j * width;
    double total = 0.0;
    for (int64_t a = 0; a < D; ++a) m[a] = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double wi = w[i * k + j];
      total += wi;
      const double* xi = xp + i * Dp;
      double* yi = yp + i * Dp;
      for (int64_t a = 0; a < Dp; ++a) yi[a] = wi * xi[a];
      for (int64_t a = 0; a < D; ++a) m[a] += yi[a];
    }
    for (int64_t a0 = 0; a0 < D; a0 += kRows)
      for (int64_t b0 = a0 / kCols * kCols; b0 < Dp; b0 += kCols) {  // b >= a: the rest by symmetry
        v8d acc[kRows][2] = {};
        // a0 + 8 <= Dp (a0 is a multiple of 8, Dp of 16): the padded rows of Y are zeros
        for (int64_t i = 0; i < n; ++i) {
          const double* xi = xp + i * Dp + b0;
          const double* yi = yp + i * Dp + a0;
          v8d lo, hi;
          __builtin_memcpy(&lo, xi, sizeof lo);
          __builtin_memcpy(&hi, xi + 8, sizeof hi);
          for (int64_t r = 0; r < kRows; ++r) {
            acc[r][0] += yi[r] * lo;
            acc[r][1] += yi[r] * hi;
          }
        }
        for (int64_t r = 0; r < kRows && a0 + r < D; ++r)
          for (int64_t c = 0; c < kCols && b0 + c < D; ++c)
            if (b0 + c >= a0 + r) {
              m[D + (a0 + r) * D + b0 + c] = acc[r][c / 8][c % 8];
              m[D + (b0 + c) * D + a0 + r] = acc[r][c / 8][c % 8];
            }
      }
    totals[j] = total;
    if (total > 0) {
      const double inv = 1.0 / total;
      for (int64_t c = 0; c < width; ++c) m[c] *= inv;
    }
  }
  std::free(xp);
}

PPC_ROW_KERNEL void ppc_gaussian_moment_products(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                                 const double* offsets, double* out) {
  // x_i^T H_j x_i = x_i^T U_j x_i with U_j the upper triangle of H_j, its
  // off-diagonal entries doubled: half the products of the full form. For 8
  // rows i at a time, (x^T U) in 16-wide column tiles accumulates in
  // registers (only the a <= b rows of U), then is dotted with x. Rows and U
  // are padded to 16 columns (zeros).
  if (D <= kSmallDimension) return momentProductsSmall(n, k, D, x, eta, offsets, out);
  typedef double v8d __attribute__((vector_size(64)));
  constexpr int64_t kRows = 8, kCols = 16;
  const int64_t width = D + D * D;
  const int64_t Dp = (D + kCols - 1) / kCols * kCols, np = (n + kRows - 1) / kRows * kRows;
  double* xp = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(np * Dp + Dp * Dp + np)));
  double* Up = xp + np * Dp;
  double* quad = Up + Dp * Dp;
  for (int64_t i = 0; i < np; ++i)
    for (int64_t a = 0; a < Dp; ++a) xp[i * Dp + a] = i < n && a < D ? x[i * D + a] : 0.0;
  for (int64_t j = 0; j < k; ++j) {
    const double* lin = eta + j * width;
    const double* H = lin + D;
    for (int64_t a = 0; a < Dp; ++a)
      for (int64_t b = 0; b < Dp; ++b)
        Up[a * Dp + b] = a >= D || b >= D || b < a ? 0.0 : (b == a ? H[a * D + a] : H[a * D + b] + H[b * D + a]);
    for (int64_t i0 = 0; i0 < np; i0 += kRows) {
      v8d q[kRows] = {};
      for (int64_t b0 = 0; b0 < Dp; b0 += kCols) {
        v8d acc[kRows][2] = {};
        const int64_t aEnd = b0 + kCols < D ? b0 + kCols : D;  // U_ab = 0 for a > b
        for (int64_t a = 0; a < aEnd; ++a) {
          v8d lo, hi;
          __builtin_memcpy(&lo, Up + a * Dp + b0, sizeof lo);
          __builtin_memcpy(&hi, Up + a * Dp + b0 + 8, sizeof hi);
          for (int64_t r = 0; r < kRows; ++r) {
            const double xa = xp[(i0 + r) * Dp + a];
            acc[r][0] += xa * lo;
            acc[r][1] += xa * hi;
          }
        }
        for (int64_t r = 0; r < kRows; ++r) {
          v8d lo, hi;
          __builtin_memcpy(&lo, xp + (i0 + r) * Dp + b0, sizeof lo);
          __builtin_memcpy(&hi, xp + (i0 + r) * Dp + b0 + 8, sizeof hi);
          q[r] += acc[r][0] * lo + acc[r][1] * hi;
        }
      }
      for (int64_t r = 0; r < kRows; ++r) {
        double s = 0.0;
        for (int c = 0; c < 8; ++c) s += q[r][c];
        quad[i0 + r] = s;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      double s = quad[i];
      for (int64_t a = 0; a < D; ++a) s += lin[a] * x[i * D + a];
      out[i * k + j] = s + offsets[j];
    }
  }
  std::free(xp);
}

// ===== Mixture inner loop =====

double ppc_lda_token(int64_t K, const double* elog_theta, const double* elog_phi_w, double w, double* r,
                     double* dst_theta, double* dst_phi_w) {
  for (int64_t k = 0; k < K; ++k) r[k] = elog_theta[k] + elog_phi_w[k];
  const double m = max8(K, r);
  for (int64_t k = 0; k < K; ++k) r[k] = vm::exp(r[k] - m);
  const double s = reduce8(K, [&](int64_t k) { return r[k]; });
  const double inv = 1.0 / s;
  const double winv = w * inv;
  for (int64_t k = 0; k < K; ++k) {
    const double e = r[k];
    r[k] = e * inv;
    dst_theta[k] += winv * e;
    dst_phi_w[k] += winv * e;
  }
  return w * (m + vm::log(s));
}

double ppc_lda_doc(int64_t n, int64_t K, const int64_t* words, const double* counts, const double* elog_theta,
                   const double* elog_phi_t, double* r, double* dst_theta, double* dst_phi_t) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = words[i];
    total += ppc_lda_token(K, elog_theta, elog_phi_t + v * K, weight(counts, i), r, dst_theta, dst_phi_t + v * K);
  }
  return total;
}

// ===== Gates =====

double ppc_cases_posterior(int64_t K, const double* ell, double* q) {
  if (q != ell)
    for (int64_t k = 0; k < K; ++k) q[k] = ell[k];
  return ppc_softmax_inplace(K, q);
}

double ppc_cases_avglogfactor(int64_t K, const double* q, const double* ell) {
  return reduce8(K, [&](int64_t k) { return q[k] > 0.0 ? q[k] * (ell[k] - vm::log(q[k])) : 0.0; });
}

void ppc_cases_selector_avglog(int64_t k, double branch_avglog, double w, double* dst) {
  dst[k] += w * branch_avglog;
}

void ppc_cases_bernoulli_avglog(double ell_true, double ell_false, double w, double* dst) {
  dst[0] += w * (ell_true - ell_false);
}

void ppc_gate_accumulate(int64_t n, const double* q, int64_t k, const double* msg, double* dst) {
  const double qk = q[k];
  for (int64_t i = 0; i < n; ++i) dst[i] += qk * msg[i];
}

}  // extern "C"
