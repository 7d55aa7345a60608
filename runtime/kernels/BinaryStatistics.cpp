//===- runtime/kernels/BinaryStatistics.cpp - sums over 0/1 data's ones ---===//
//
// A Bernoulli datum is 0 or 1, so W^T X and X H^T are sums over each row's
// ones: a row of K additions per one, from the list of their columns (CSR),
// instead of K multiply-adds per entry and a pass over N x D doubles.
// Fashion-MNIST (31.5% ones): a third of the arithmetic and an eighth of the
// memory traffic of the dense products. The K sums of a row are V vectors
// of W (K <= V W), kept in registers.
//
// With AVX-512 the data's bits are mask registers: every entry's multiply
// becomes an addition under the mask of the row's bits (8 columns a byte),
// with the sums in registers over many rows, instead of a load, add and
// store of a column's sums per one. Dense arithmetic, but one operation per
// 8 entries and no stores: on Fashion-MNIST (Zen 5) W^T X takes 1.2 ms
// instead of 4.3 ms and X H^T 1.3 ms instead of 3.2 ms. Sparser data (under
// a seventh of ones: no masks, LinearStatistics.cpp) sums over the ones on
// every ISA. AVX2 has no mask registers, so its copies and SSE2's sum over
// the ones (lanes masked by an AND with a table's 4-bit masks measured
// faster for W^T X, 2.7 ms, but slower for X H^T, 4.3 ms, on Zen 5's AVX2
// path; not taken without a measurement on an AVX2-only host).
//
// Called by the plans of codegen/transforms/LinearStatistics.cpp (on
// ranges of the cases, one per thread, after CaseSplitting.cpp), one copy
// per vector ISA as the dense kernels (runtime/kernels/IsaVectors.h). In
// every kernel, k is the cases computed (a range of them, from the first
// case's column of w, eta, offsets and out) and ws the row stride of w and
// out (all the cases).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/BinaryStatistics.h"

#include "runtime/kernels/IsaVectors.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#ifdef PPC_HAVE_ISA_COPIES
#include <immintrin.h>
#endif

namespace {

using ppc::rt::isa::Lanes;
using ppc::rt::isa::levelWidth;
using ppc::rt::isa::sameWeights;

/// Column-major sums S[c][j] (rows of V W) += w_ij for each one (i, c).
template <int W, int V>
__attribute__((always_inline)) inline void onesColumnSums(int64_t n, int64_t k, const double* w, int64_t ws,
                                                          const int64_t* rows, const int64_t* columns, double* S) {
  constexpr int64_t KP = int64_t(V) * W;
  double wi[KP] = {};
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) wi[j] = w[i * ws + j];
    typename Lanes<W>::Vec wv[V];
    for (int v = 0; v < V; ++v) wv[v] = PPC_VLOAD(W, wi + v * W);
    for (int64_t e = rows[i]; e < rows[i + 1]; ++e) {
      double* sc = S + columns[e] * KP;
      for (int v = 0; v < V; ++v) PPC_VSTORE(sc + v * W, PPC_VLOAD(W, sc + v * W) + wv[v]);
    }
  }
}

/// out[i][j] = offsets[j] + sum of etaT[c][j] over the ones (i, c).
template <int W, int V>
__attribute__((always_inline)) inline void onesLinearForms(int64_t n, int64_t k, const int64_t* rows,
                                                           const int64_t* columns, const double* etaT,
                                                           const double* offsets, double* out, int64_t ws) {
  constexpr int64_t KP = int64_t(V) * W;
  for (int64_t i = 0; i < n; ++i) {
    // Four independent sums (a chain of additions would wait on each one's latency).
    typename Lanes<W>::Vec acc[4][V];
    for (int u = 0; u < 4; ++u)
      for (int v = 0; v < V; ++v) acc[u][v] = PPC_VZERO(W);
    int64_t e = rows[i];
    for (; e + 4 <= rows[i + 1]; e += 4)
      for (int u = 0; u < 4; ++u) {
        const double* ec = etaT + columns[e + u] * KP;
        for (int v = 0; v < V; ++v) acc[u][v] += PPC_VLOAD(W, ec + v * W);
      }
    for (; e < rows[i + 1]; ++e) {
      const double* ec = etaT + columns[e] * KP;
      for (int v = 0; v < V; ++v) acc[0][v] += PPC_VLOAD(W, ec + v * W);
    }
    double row[KP];
    for (int v = 0; v < V; ++v) PPC_VSTORE(row + v * W, (acc[0][v] + acc[1][v]) + (acc[2][v] + acc[3][v]));
    for (int64_t j = 0; j < k; ++j) out[i * ws + j] = row[j] + offsets[j];
  }
}

#ifdef PPC_HAVE_ISA_COPIES
// ---- AVX-512: additions under the masks of the rows' bits ----

/// Row i's bits as bytes: byte b holds columns 8b .. 8b + 7, lowest first.
inline const uint8_t* rowBits(const int64_t* bits, int64_t words, int64_t i) {
  return reinterpret_cast<const uint8_t*>(bits + i * words);
}

/// The sum of a's lanes (not _mm512_reduce_add_pd: GCC 12's warns of its
/// undefined upper halves).
PPC_TARGET_AVX512 inline double laneSum(__m512d a) {
  return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

/// The masked column sums' tile: 2 vectors of 8 columns, and at most 12
/// cases (24 sums in registers).
constexpr int kMaskedColumnVectors = 2;
constexpr int kMaskedColumnCases = 12;
/// The masked linear forms' tile: 4 rows, and at most 5 cases (20 sums; 5
/// rows of 784 parameters fit in L1).
constexpr int kMaskedFormRows = 4;
constexpr int kMaskedFormCases = 5;

/// S[u][c] (rows of DP, a multiple of 16 columns) += w_iu x_ic for rows
/// i0 .. i1 and the KG cases of w (row stride ws).
template <int KG>
PPC_TARGET_AVX512 void maskedColumnSums(int64_t i0, int64_t i1, const double* w, int64_t ws, const int64_t* bits,
                                        int64_t words, int64_t DP, double* S) {
  constexpr int CB = kMaskedColumnVectors;
  for (int64_t c0 = 0; c0 < DP; c0 += 8 * CB) {
    __m512d acc[KG][CB];
    for (int u = 0; u < KG; ++u)
      for (int v = 0; v < CB; ++v) acc[u][v] = _mm512_setzero_pd();
    for (int64_t i = i0; i < i1; ++i) {
      const uint8_t* b = rowBits(bits, words, i) + c0 / 8;
      __mmask8 m[CB];
      for (int v = 0; v < CB; ++v) m[v] = b[v];
      const double* wi = w + i * ws;
      for (int u = 0; u < KG; ++u) {
        const __m512d wu = _mm512_set1_pd(wi[u]);
        for (int v = 0; v < CB; ++v) acc[u][v] = _mm512_mask_add_pd(acc[u][v], m[v], acc[u][v], wu);
      }
    }
    for (int u = 0; u < KG; ++u)
      for (int v = 0; v < CB; ++v) {
        double* s = S + u * DP + c0 + 8 * v;
        _mm512_storeu_pd(s, _mm512_add_pd(_mm512_loadu_pd(s), acc[u][v]));
      }
  }
}

/// out[i][u] (row stride ws) = offsets[u] + sum_c x_ic eta[u][c] for the R
/// rows from i0 and KG cases (eta's rows of DP, a multiple of 8, zero-padded).
template <int KG, int R>
PPC_TARGET_AVX512 void maskedLinearForms(int64_t i0, const int64_t* bits, int64_t words, int64_t DP, const double* eta,
                                         const double* offsets, double* out, int64_t ws) {
  __m512d acc[R][KG];
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < KG; ++u) acc[r][u] = _mm512_setzero_pd();
  for (int64_t cv = 0; cv < DP / 8; ++cv) {
    __mmask8 m[R];
    for (int r = 0; r < R; ++r) m[r] = rowBits(bits, words, i0 + r)[cv];
    for (int u = 0; u < KG; ++u) {
      const __m512d e = _mm512_loadu_pd(eta + u * DP + cv * 8);
      for (int r = 0; r < R; ++r) acc[r][u] = _mm512_mask_add_pd(acc[r][u], m[r], acc[r][u], e);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < KG; ++u) out[(i0 + r) * ws + u] = laneSum(acc[r][u]) + offsets[u];
}

/// Groups of at most G cases, as even as they come: K = 10 is one group of
/// 10 (G = 12) or two of 5 (G = 5).
inline int64_t caseGroup(int64_t k, int G) {
  const int64_t groups = (k + G - 1) / G;
  return (k + groups - 1) / groups;
}

// A group's size as the template argument of its kernel.
#define PPC_CASES_UP_TO_5(CALL)                                                                                  \
  case 1: CALL(1); break;                                                                                        \
  case 2: CALL(2); break;                                                                                        \
  case 3: CALL(3); break;                                                                                        \
  case 4: CALL(4); break;                                                                                        \
  case 5: CALL(5); break;
#define PPC_CASES_6_TO_12(CALL)                                                                                  \
  case 6: CALL(6); break;                                                                                        \
  case 7: CALL(7); break;                                                                                        \
  case 8: CALL(8); break;                                                                                        \
  case 9: CALL(9); break;                                                                                        \
  case 10: CALL(10); break;                                                                                      \
  case 11: CALL(11); break;                                                                                      \
  case 12: CALL(12); break;

/// S (k rows of DP = D rounded up to 16, zeroed) = W^T X for w's k cases.
void maskedColumnSumsAll(int64_t n, int64_t k, const double* w, int64_t ws, const int64_t* bits, int64_t words,
                         int64_t DP, double* S) {
  // Blocks of rows whose bits and weights stay in L1 across the column tiles.
  constexpr int64_t kRowBlock = 256;
  const int64_t G = caseGroup(k, kMaskedColumnCases);
  for (int64_t i0 = 0; i0 < n; i0 += kRowBlock)
    for (int64_t j0 = 0; j0 < k; j0 += G) {
      const int64_t i1 = std::min(n, i0 + kRowBlock);
#define PPC_CALL(KG) maskedColumnSums<KG>(i0, i1, w + j0, ws, bits, words, DP, S + j0 * DP)
      switch (std::min(G, k - j0)) { PPC_CASES_UP_TO_5(PPC_CALL) PPC_CASES_6_TO_12(PPC_CALL) }
#undef PPC_CALL
    }
}

/// out = X eta^T + offsets for k cases (eta: k rows of DP = D rounded up to
/// 8, zero-padded; out's row stride ws).
void maskedLinearFormsAll(int64_t n, int64_t k, const int64_t* bits, int64_t words, int64_t DP, const double* eta,
                          const double* offsets, double* out, int64_t ws) {
  const int64_t G = caseGroup(k, kMaskedFormCases);
  int64_t i0 = 0;
  for (; i0 + kMaskedFormRows <= n; i0 += kMaskedFormRows)
    for (int64_t j0 = 0; j0 < k; j0 += G) {
#define PPC_CALL(KG)                                                                                             \
  maskedLinearForms<KG, kMaskedFormRows>(i0, bits, words, DP, eta + j0 * DP, offsets + j0, out + j0, ws)
      switch (std::min(G, k - j0)) { PPC_CASES_UP_TO_5(PPC_CALL) }
#undef PPC_CALL
    }
  for (; i0 < n; ++i0)
    for (int64_t j0 = 0; j0 < k; j0 += G) {
#define PPC_CALL(KG) maskedLinearForms<KG, 1>(i0, bits, words, DP, eta + j0 * DP, offsets + j0, out + j0, ws)
      switch (std::min(G, k - j0)) { PPC_CASES_UP_TO_5(PPC_CALL) }
#undef PPC_CALL
    }
}
#endif // PPC_HAVE_ISA_COPIES

/// The widths of a row of k sums: V vectors of W, the fewest that hold k
/// (0: more than 4 vectors' worth, the generic loops).
template <int W> constexpr int vectorsFor(int64_t k) { return k <= W ? 1 : k <= 2 * W ? 2 : k <= 4 * W ? 4 : 0; }

#define PPC_ONES_DISPATCH(W, call)                                                                               \
  switch (vectorsFor<W>(k)) {                                                                                    \
  case 1: call(W, 1); return true;                                                                               \
  case 2: call(W, 2); return true;                                                                               \
  case 4: call(W, 4); return true;                                                                               \
  default: return false;                                                                                         \
  }

template <int W>
__attribute__((always_inline)) inline bool onesColumnSumsAnyK(int64_t n, int64_t k, const double* w, int64_t ws,
                                                              const int64_t* rows, const int64_t* columns, double* S) {
#define PPC_CALL(W_, V_) onesColumnSums<W_, V_>(n, k, w, ws, rows, columns, S)
  PPC_ONES_DISPATCH(W, PPC_CALL)
#undef PPC_CALL
}

template <int W>
__attribute__((always_inline)) inline bool onesLinearFormsAnyK(int64_t n, int64_t k, const int64_t* rows,
                                                               const int64_t* columns, const double* etaT,
                                                               const double* offsets, double* out, int64_t ws) {
#define PPC_CALL(W_, V_) onesLinearForms<W_, V_>(n, k, rows, columns, etaT, offsets, out, ws)
  PPC_ONES_DISPATCH(W, PPC_CALL)
#undef PPC_CALL
}

/// Row width (doubles) of the column-major tables: k rounded up to the
/// vectors the level's kernels use.
inline int64_t onesRowWidth(int64_t k, int W) {
  const int v = W == 8 ? vectorsFor<8>(k) : W == 4 ? vectorsFor<4>(k) : vectorsFor<2>(k);
  return v ? int64_t(v) * W : k;
}

#ifdef PPC_HAVE_ISA_COPIES
PPC_TARGET_AVX2 bool onesColumnSumsAvx2(int64_t n, int64_t k, const double* w, int64_t ws, const int64_t* rows,
                                        const int64_t* columns, double* S) {
  return onesColumnSumsAnyK<4>(n, k, w, ws, rows, columns, S);
}
PPC_TARGET_AVX512 bool onesLinearFormsAvx512(int64_t n, int64_t k, const int64_t* rows, const int64_t* columns,
                                             const double* etaT, const double* offsets, double* out, int64_t ws) {
  return onesLinearFormsAnyK<8>(n, k, rows, columns, etaT, offsets, out, ws);
}
PPC_TARGET_AVX2 bool onesLinearFormsAvx2(int64_t n, int64_t k, const int64_t* rows, const int64_t* columns,
                                         const double* etaT, const double* offsets, double* out, int64_t ws) {
  return onesLinearFormsAnyK<4>(n, k, rows, columns, etaT, offsets, out, ws);
}
#endif

/// Cases [j0, j1) of ppc_binary_column_means.
void columnMeansCases(int64_t n, int64_t ws, int64_t j0, int64_t j1, const double* w, int64_t D, const int64_t* rows,
                      const int64_t* columns, const int64_t* bits, double* means, double* totals) {
  j1 = std::min(j1, ws);
  if (j0 >= j1) return;
  const int64_t k = j1 - j0;
  w += j0;
  means += j0 * D;
  totals += j0;
  for (int64_t j = 0; j < k; ++j) totals[j] = 0.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) totals[j] += w[i * ws + j];
  // S[c * KP + j] (column-major: the sums over the ones) or S[j * KP + c]
  // (row-major, KP = D rounded up to 16: the masked sums).
  int64_t KP = 0;
  bool rowMajor = false;
  double* S = nullptr;
#ifdef PPC_HAVE_ISA_COPIES
  if (levelWidth() == 8 && bits) {
    KP = (D + 15) / 16 * 16;
    rowMajor = true;
    S = static_cast<double*>(std::calloc(static_cast<size_t>(k * KP), sizeof(double)));
    maskedColumnSumsAll(n, k, w, ws, bits, (D + 63) / 64, KP, S);
  }
#else
  (void)bits;
#endif
  if (!S) {
    // AVX-512 hosts (sparse data: no masks) run the AVX2 copy: a one's
    // update of its column's sums (load, add, store) in 256-bit vectors took
    // 4.0 ms on Fashion-MNIST against 5.4 ms in 512-bit ones (Zen 5).
    const int W = std::min(levelWidth(), 4);
    KP = onesRowWidth(k, W);
    S = static_cast<double*>(std::calloc(static_cast<size_t>(D * KP), sizeof(double)));
    bool done = false;
#ifdef PPC_HAVE_ISA_COPIES
    if (W == 4) done = onesColumnSumsAvx2(n, k, w, ws, rows, columns, S);
#endif
    if (!done && !onesColumnSumsAnyK<2>(n, k, w, ws, rows, columns, S))
      for (int64_t i = 0; i < n; ++i) // more cases than four vectors hold
        for (int64_t e = rows[i]; e < rows[i + 1]; ++e)
          for (int64_t j = 0; j < k; ++j) S[columns[e] * KP + j] += w[i * ws + j];
  }
  for (int64_t j = 0; j < k; ++j) {
    const double inv = totals[j] > 0 ? 1.0 / totals[j] : 0.0;
    for (int64_t c = 0; c < D; ++c) means[j * D + c] = (rowMajor ? S[j * KP + c] : S[c * KP + j]) * inv;
  }
  std::free(S);
}

/// Cases [j0, j1) of ppc_binary_linear_forms.
void linearFormsCases(int64_t n, int64_t ws, int64_t j0, int64_t j1, int64_t D, const int64_t* rows,
                      const int64_t* columns, const int64_t* bits, const double* eta, const double* offsets,
                      double* out) {
  j1 = std::min(j1, ws);
  if (j0 >= j1) return;
  const int64_t k = j1 - j0;
  eta += j0 * D;
  offsets += j0;
  out += j0;
  const int W = levelWidth();
#ifdef PPC_HAVE_ISA_COPIES
  if (W == 8 && bits) {
    // eta's rows zero-padded to whole vectors (the bits past D are zero too).
    const int64_t DP = (D + 7) / 8 * 8;
    double* etaP = static_cast<double*>(std::calloc(static_cast<size_t>(k * DP), sizeof(double)));
    for (int64_t j = 0; j < k; ++j) std::memcpy(etaP + j * DP, eta + j * D, sizeof(double) * static_cast<size_t>(D));
    maskedLinearFormsAll(n, k, bits, (D + 63) / 64, DP, etaP, offsets, out, ws);
    std::free(etaP);
    return;
  }
#else
  (void)bits;
#endif
  const int64_t KP = onesRowWidth(k, W);
  double* etaT = static_cast<double*>(std::calloc(static_cast<size_t>(D * KP), sizeof(double)));
  for (int64_t j = 0; j < k; ++j)
    for (int64_t c = 0; c < D; ++c) etaT[c * KP + j] = eta[j * D + c];
  bool done = false;
#ifdef PPC_HAVE_ISA_COPIES
  if (W == 8)
    done = onesLinearFormsAvx512(n, k, rows, columns, etaT, offsets, out, ws);
  else if (W == 4)
    done = onesLinearFormsAvx2(n, k, rows, columns, etaT, offsets, out, ws);
#endif
  if (!done && !onesLinearFormsAnyK<2>(n, k, rows, columns, etaT, offsets, out, ws)) {
    // More cases than four vectors hold: the vectors' sums one case at a
    // time (four partial sums, the ones taken in turn), so that a range of
    // the cases that fits in vectors gives the same bits.
    double* part = static_cast<double*>(std::malloc(sizeof(double) * static_cast<size_t>(4 * k)));
    for (int64_t i = 0; i < n; ++i) {
      std::memset(part, 0, sizeof(double) * static_cast<size_t>(4 * k));
      for (int64_t e = rows[i], u = 0; e < rows[i + 1]; ++e, u = (u + 1) % 4) {
        // The last ones (fewer than four) all go to the first sum, as in the vectors.
        const int64_t to = rows[i + 1] - e <= (rows[i + 1] - rows[i]) % 4 ? 0 : u;
        for (int64_t j = 0; j < k; ++j) part[to * k + j] += etaT[columns[e] * KP + j];
      }
      for (int64_t j = 0; j < k; ++j)
        out[i * ws + j] = ((part[j] + part[k + j]) + (part[2 * k + j] + part[3 * k + j])) + offsets[j];
    }
    std::free(part);
  }
  std::free(etaT);
}

}  // namespace

extern "C" {

PPC_DISPATCHED_KERNEL void ppc_binary_column_means(int64_t n, int64_t k, const double* w, int64_t D,
                                                   const int64_t* rows, const int64_t* columns, const int64_t* bits,
                                                   double* means, double* totals, double* memo) {
  if (memo && sameWeights(n * k, w, memo)) return; // means and totals are still theirs
  columnMeansCases(n, k, 0, k, w, D, rows, columns, bits, means, totals);
}

PPC_DISPATCHED_KERNEL void ppc_binary_column_means_cases(int64_t n, int64_t k, int64_t j0, int64_t j1,
                                                         const double* w, int64_t D, const int64_t* rows,
                                                         const int64_t* columns, const int64_t* bits, double* means,
                                                         double* totals, const double* changed) {
  if (changed && changed[0] == 0.0) return;
  columnMeansCases(n, k, j0, j1, w, D, rows, columns, bits, means, totals);
}

PPC_DISPATCHED_KERNEL void ppc_binary_linear_forms(int64_t n, int64_t k, int64_t D, const int64_t* rows,
                                                   const int64_t* columns, const int64_t* bits, const double* eta,
                                                   const double* offsets, double* out) {
  linearFormsCases(n, k, 0, k, D, rows, columns, bits, eta, offsets, out);
}

PPC_DISPATCHED_KERNEL void ppc_binary_linear_forms_cases(int64_t n, int64_t k, int64_t j0, int64_t j1, int64_t D,
                                                         const int64_t* rows, const int64_t* columns,
                                                         const int64_t* bits, const double* eta,
                                                         const double* offsets, double* out) {
  linearFormsCases(n, k, j0, j1, D, rows, columns, bits, eta, offsets, out);
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

namespace ppc::rt::factors {

namespace {
const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_binary_column_means),
    PPC_SYMBOL(ppc_binary_column_means_cases),
    PPC_SYMBOL(ppc_binary_linear_forms),
    PPC_SYMBOL(ppc_binary_linear_forms_cases),
};
} // namespace

extern const KernelGroup kBinaryStatisticsKernels = {"BinaryStatistics", kSymbols};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
