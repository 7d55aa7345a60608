//===- runtime/kernels/BinaryStatistics.cpp - sums over 0/1 data's ones ---===//
//
// A Bernoulli datum is 0 or 1, so W^T X and X H^T are sums over each row's
// ones: a row of K additions per one, from the list of their columns (CSR),
// instead of K multiply-adds per entry and a pass over N x D doubles.
// Fashion-MNIST (31.5% ones): a third of the arithmetic and an eighth of the
// memory traffic of the dense products. The K sums of a row are V vectors
// of W (K <= V W), kept in registers.
//
// Called by the plans of codegen/transforms/LinearStatistics.cpp, one copy
// per vector ISA as the dense kernels (runtime/kernels/IsaVectors.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/BinaryStatistics.h"

#include "runtime/kernels/IsaVectors.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace {

using ppc::rt::isa::Lanes;
using ppc::rt::isa::levelWidth;
using ppc::rt::isa::sameWeights;

/// Column-major sums S[c][j] (rows of V W) += w_ij for each one (i, c).
template <int W, int V>
__attribute__((always_inline)) inline void onesColumnSums(int64_t n, int64_t k, const double* w, const int64_t* rows,
                                                          const int64_t* columns, double* S, double* totals) {
  constexpr int64_t KP = int64_t(V) * W;
  double wi[KP] = {};
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      wi[j] = w[i * k + j];
      totals[j] += wi[j];
    }
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
                                                           const double* offsets, double* out) {
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
    for (int64_t j = 0; j < k; ++j) out[i * k + j] = row[j] + offsets[j];
  }
}

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
__attribute__((always_inline)) inline bool onesColumnSumsAnyK(int64_t n, int64_t k, const double* w, const int64_t* rows,
                                                              const int64_t* columns, double* S, double* totals) {
#define PPC_CALL(W_, V_) onesColumnSums<W_, V_>(n, k, w, rows, columns, S, totals)
  PPC_ONES_DISPATCH(W, PPC_CALL)
#undef PPC_CALL
}

template <int W>
__attribute__((always_inline)) inline bool onesLinearFormsAnyK(int64_t n, int64_t k, const int64_t* rows,
                                                               const int64_t* columns, const double* etaT,
                                                               const double* offsets, double* out) {
#define PPC_CALL(W_, V_) onesLinearForms<W_, V_>(n, k, rows, columns, etaT, offsets, out)
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
PPC_TARGET_AVX2 bool onesColumnSumsAvx2(int64_t n, int64_t k, const double* w, const int64_t* rows,
                                        const int64_t* columns, double* S, double* totals) {
  return onesColumnSumsAnyK<4>(n, k, w, rows, columns, S, totals);
}
PPC_TARGET_AVX512 bool onesLinearFormsAvx512(int64_t n, int64_t k, const int64_t* rows, const int64_t* columns,
                                             const double* etaT, const double* offsets, double* out) {
  return onesLinearFormsAnyK<8>(n, k, rows, columns, etaT, offsets, out);
}
PPC_TARGET_AVX2 bool onesLinearFormsAvx2(int64_t n, int64_t k, const int64_t* rows, const int64_t* columns,
                                         const double* etaT, const double* offsets, double* out) {
  return onesLinearFormsAnyK<4>(n, k, rows, columns, etaT, offsets, out);
}
#endif

}  // namespace

extern "C" {

PPC_DISPATCHED_KERNEL void ppc_binary_column_means(int64_t n, int64_t k, const double* w, int64_t D,
                                                   const int64_t* rows, const int64_t* columns, double* means,
                                                   double* totals, double* memo) {
  if (memo && sameWeights(n * k, w, memo)) return; // means and totals are still theirs
  // AVX-512 hosts run the AVX2 copy: a one's update of its column's sums
  // (load, add, store) in 256-bit vectors takes 4.0 ms on Fashion-MNIST
  // against 5.4 ms in 512-bit ones (AMD Zen 5; the same bytes stored).
  const int W = std::min(levelWidth(), 4);
  const int64_t KP = onesRowWidth(k, W);
  double* S = static_cast<double*>(std::calloc(static_cast<size_t>(D * KP), sizeof(double)));
  for (int64_t j = 0; j < k; ++j) totals[j] = 0.0;
  bool done = false;
#ifdef PPC_HAVE_ISA_COPIES
  if (W == 4) done = onesColumnSumsAvx2(n, k, w, rows, columns, S, totals);
#endif
  if (!done && !onesColumnSumsAnyK<2>(n, k, w, rows, columns, S, totals))
    for (int64_t i = 0; i < n; ++i) { // more cases than four vectors hold
      const double* wi = w + i * k;
      for (int64_t j = 0; j < k; ++j) totals[j] += wi[j];
      for (int64_t e = rows[i]; e < rows[i + 1]; ++e)
        for (int64_t j = 0; j < k; ++j) S[columns[e] * KP + j] += wi[j];
    }
  for (int64_t j = 0; j < k; ++j) {
    const double inv = totals[j] > 0 ? 1.0 / totals[j] : 0.0;
    for (int64_t c = 0; c < D; ++c) means[j * D + c] = S[c * KP + j] * inv;
  }
  std::free(S);
}

PPC_DISPATCHED_KERNEL void ppc_binary_linear_forms(int64_t n, int64_t k, int64_t D, const int64_t* rows,
                                                   const int64_t* columns, const double* eta,
                                                   const double* offsets, double* out) {
  const int W = levelWidth();
  const int64_t KP = onesRowWidth(k, W);
  double* etaT = static_cast<double*>(std::calloc(static_cast<size_t>(D * KP), sizeof(double)));
  for (int64_t j = 0; j < k; ++j)
    for (int64_t c = 0; c < D; ++c) etaT[c * KP + j] = eta[j * D + c];
  bool done = false;
#ifdef PPC_HAVE_ISA_COPIES
  if (W == 8)
    done = onesLinearFormsAvx512(n, k, rows, columns, etaT, offsets, out);
  else if (W == 4)
    done = onesLinearFormsAvx2(n, k, rows, columns, etaT, offsets, out);
#endif
  if (!done && !onesLinearFormsAnyK<2>(n, k, rows, columns, etaT, offsets, out))
    for (int64_t i = 0; i < n; ++i) { // more cases than four vectors hold
      double* oi = out + i * k;
      for (int64_t j = 0; j < k; ++j) oi[j] = offsets[j];
      for (int64_t e = rows[i]; e < rows[i + 1]; ++e)
        for (int64_t j = 0; j < k; ++j) oi[j] += etaT[columns[e] * KP + j];
    }
  std::free(etaT);
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
    PPC_SYMBOL(ppc_binary_linear_forms),
};
} // namespace

extern const KernelGroup kBinaryStatisticsKernels = {"BinaryStatistics", kSymbols};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
