//===- runtime/kernels/ProductForm.cpp - categorical posteriors as products ---===//
//
// q(z) = normalize(prod_j exp(m_j)): exponential tables of the parents and
// the per-datum products, normalizations and messages that read them
// (codegen/plan/ProductForm.cpp, codegen/transforms/ProductNormalizerFusion.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/ProductForm.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

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
  const double m = n > 0 ? maxOfLanes(n, [&](int64_t i) { return src[i]; }) : 0.0;
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

/// dotRow's lane partials: h = the 8-lane products' halves added, plus the
/// products of a 4-lane tail; returns the first entry not in h.
[[gnu::always_inline]] inline int64_t dotRowPartials(int64_t K, const double* a, const double* b, Vec4& h) {
  Vec8 acc = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  if (K >= 8) { // the first products as they are, not added to zeros
    acc = PPC_LOAD(Vec8, a) * PPC_LOAD(Vec8, b);
    k = 8;
  }
  for (; k + 8 <= K; k += 8) acc += PPC_LOAD(Vec8, a + k) * PPC_LOAD(Vec8, b + k);
  h = __builtin_shufflevector(acc, acc, 0, 1, 2, 3) + __builtin_shufflevector(acc, acc, 4, 5, 6, 7);
  if (k + 4 <= K) {
    h += PPC_LOAD(Vec4, a + k) * PPC_LOAD(Vec4, b + k);
    k += 4;
  }
  return k;
}

/// sum_k a[k] b[k], lanes summed in a fixed tree (independent of the
/// target): dotRowPartials's h, then (h0 + h2) + (h1 + h3), then the last
/// K % 4 products. One tree for the whole row, not one per vector: the
/// per-token dot of LDA's loops is mostly this tree.
inline double dotRow(int64_t K, const double* a, const double* b) {
  using Vec2 = double __attribute__((vector_size(16)));
  Vec4 h;
  int64_t k = dotRowPartials(K, a, b, h);
  const Vec2 g = __builtin_shufflevector(h, h, 0, 1) + __builtin_shufflevector(h, h, 2, 3);
  double s = g[0] + g[1];
  for (; k < K; ++k) s += a[k] * b[k];
  return s;
}

/// dotRow of four rows, as one vector `s`: the four trees' last two levels
/// by one transposition of their partials (the same additions of the same
/// values, so the same sums), which takes half the shuffles and additions
/// of four separate trees and leaves the sums in one vector to divide.
[[gnu::always_inline]] inline void dotFourRows(int64_t K, const double* a, const double* r0, const double* r1,
                                               const double* r2, const double* r3, Vec4& s) {
  Vec4 h0, h1, h2, h3;
  const int64_t k = dotRowPartials(K, a, r0, h0);
  dotRowPartials(K, a, r1, h1);
  dotRowPartials(K, a, r2, h2);
  dotRowPartials(K, a, r3, h3);
  // u = (h0_0 + h0_2, h0_1 + h0_3, h2_0 + h2_2, h2_1 + h2_3); v likewise for rows 1 and 3.
  const Vec4 u = __builtin_shufflevector(h0, h2, 0, 1, 4, 5) + __builtin_shufflevector(h0, h2, 2, 3, 6, 7);
  const Vec4 v = __builtin_shufflevector(h1, h3, 0, 1, 4, 5) + __builtin_shufflevector(h1, h3, 2, 3, 6, 7);
  s = __builtin_shufflevector(u, v, 0, 4, 2, 6) + __builtin_shufflevector(u, v, 1, 5, 3, 7);
  for (int64_t j = k; j < K; ++j) {
    s[0] += a[j] * r0[j];
    s[1] += a[j] * r1[j];
    s[2] += a[j] * r2[j];
    s[3] += a[j] * r3[j];
  }
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

extern "C++" {
namespace {
/// acc += sum_i c_i row(i), c_i = w_i / (a . row(i)): in chunks, the data's
/// dot products, then the divisions, then the sum. In one pass per datum,
/// each datum's sum waits on its dot product's lane sums and a division
/// (about 40 cycles); apart, the dot products and the divisions of
/// different data overlap. 1.3x the throughput of LDA's per-token loop on
/// AVX2; the same values, in the same order, as one call per datum. The
/// dot products four rows at a time (dotFourRows) and their divisions as
/// one vector: 1.71 -> 1.51 ns a token at K = 20 on the AVX2 path, 1.77 ->
/// 1.51 on AVX-512 (Zen 5; the kernel alone, inlined as the JIT does).
template <class Row>
[[gnu::always_inline]] inline void dotInverseAxpyRows(int64_t n, int64_t K, const double* a, Row row,
                                                      const double* w, double weight, double* acc) {
  constexpr int64_t kChunk = 256;
  double c[kChunk];
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t m = n - i0 < kChunk ? n - i0 : kChunk;
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) {
      Vec4 dots;
      dotFourRows(K, a, row(i0 + i), row(i0 + i + 1), row(i0 + i + 2), row(i0 + i + 3), dots);
      const Vec4 num = w ? PPC_LOAD(Vec4, w + i0 + i) : Vec4{weight, weight, weight, weight};
      PPC_STORE(c + i, num / dots);
    }
    for (; i < m; ++i) c[i] = (w ? w[i0 + i] : weight) / dotRow(K, a, row(i0 + i));
    for (int64_t j = 0; j < m; ++j) scaledAddRow(K, c[j], row(i0 + j), nullptr, acc);
  }
}
} // namespace
} // extern "C++"

PPC_TOKEN_KERNEL void ppc_dot_inverse_axpy_gather(int64_t n, int64_t K, const double* a, const double* table,
                                                  const int64_t* rows, const double* w, double weight, double* acc) {
  dotInverseAxpyRows(n, K, a, [&](int64_t i) { return table + rows[i] * K; }, w, weight, acc);
}

PPC_TOKEN_KERNEL void ppc_dot_inverse_axpy_rows(int64_t n, int64_t K, const double* a, const double* rows,
                                                const double* w, double weight, double* acc) {
  dotInverseAxpyRows(n, K, a, [&](int64_t i) { return rows + i * K; }, w, weight, acc);
}

PPC_TOKEN_KERNEL void ppc_gather_rows(int64_t n, int64_t K, const double* table, const int64_t* rows, double* dst) {
  // One memcpy per row: vector loads and stores where K is a constant. An
  // element loop is unrolled into K scalar copies (the compiler cannot rule
  // out that dst overlaps the table), which made the copy 3x slower.
  // The rows are chosen by the data, so the hardware cannot fetch them
  // ahead: each row four ahead is prefetched while this one is copied (LDA
  // on AP: the 1.6 MB table is in L3, not L2).
  constexpr int64_t kAhead = 4;
  for (int64_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      const double* next = table + rows[i + kAhead] * K;
      for (int64_t c = 0; c < K; c += 8) __builtin_prefetch(next + c);
      __builtin_prefetch(next + K - 1);
    }
    __builtin_memcpy(dst + i * K, table + rows[i] * K, sizeof(double) * size_t(K));
  }
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

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_exp_shifted_n)
PPC_DECLARE_CLONES(ppc_exp_shifted_transposed)
PPC_DECLARE_CLONES(ppc_weighted_log_sum)

namespace ppc::rt::factors {

namespace {
const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_fill),
    PPC_SYMBOL(ppc_mul_n),
    PPC_SYMBOL(ppc_mul2_n),
    PPC_SYMBOL(ppc_copy_n),
    PPC_ROW_SYMBOL(ppc_exp_shifted_n),
    PPC_ROW_SYMBOL(ppc_exp_shifted_transposed),
    PPC_SYMBOL(ppc_categorical_stats_from_product),
    PPC_SYMBOL(ppc_categorical_stats_from_product_lognorm),
    PPC_SYMBOL(ppc_dot_inverse_axpy),
    PPC_SYMBOL(ppc_dot_inverse_axpy_gather),
    PPC_SYMBOL(ppc_dot_inverse_axpy_rows),
    PPC_SYMBOL(ppc_gather_rows),
    PPC_SYMBOL(ppc_product_axpy_lognorm),
    PPC_SYMBOL(ppc_product_axpy_norm),
    PPC_ROW_SYMBOL(ppc_weighted_log_sum),
    PPC_SYMBOL(ppc_product_axpy),
    PPC_SYMBOL(ppc_prefetch_row),
    PPC_SYMBOL(ppc_mul_add_n),
};
} // namespace

extern const KernelGroup kProductFormKernels = {"ProductForm", kSymbols};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
