//===- bench/dense_products/DenseProducts.cpp - ppc's products vs OpenBLAS -===//
//
//   ppc_dense_products [x86-64|x86-64-v3|x86-64-v4]
//
// The dense products of a mixture's iteration, timed with ppc's kernels
// (runtime/kernels/PlateStatistics.cpp, the copy of the level given:
// runtime/VectorIsa.h) and with OpenBLAS doing the same arithmetic (run it
// with OPENBLAS_CORETYPE=Haswell for the AVX2 kernels, SkylakeX for
// AVX-512; bench/dense_products.py does):
//   * a Gaussian mixture's weighted second moments, N = 1797, D = 64,
//     K = 10 (digits): ppc_gaussian_weighted_moments against one dsyrk of
//     sqrt(w_k) X per case (the triangle only, as ppc);
//   * its quadratic forms x^T H_k x for every datum and case: against one
//     dtrmm per case (the triangle of H_k, as ppc) and one dgemm of X by all
//     the H_k;
//   * a Bernoulli mixture's two products, N = 10000, D = 784, K = 10
//     (Fashion-MNIST's shape, 31.5% ones): ppc's binary kernels
//     (ppc_binary_column_means, ppc_binary_linear_forms: with AVX-512,
//     additions under the rows' bits as masks; otherwise sums over the
//     ones) and its dense kernels
//     (ppc_weighted_column_means, ppc_linear_forms) against dgemm.
// Prints the median milliseconds of 15 runs of each and the largest relative
// difference between the two (they must agree to rounding).
//
//===----------------------------------------------------------------------===//
#include "runtime/VectorIsa.h"
#include "runtime/kernels/BinaryStatistics.h"
#include "runtime/kernels/PlateStatistics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

extern "C" {
// OpenBLAS's CBLAS (the enums' values are CBLAS's).
void cblas_dsyrk(int order, int uplo, int trans, int n, int k, double alpha, const double *a, int lda, double beta,
                 double *c, int ldc);
void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha, const double *a, int lda,
                 const double *b, int ldb, double beta, double *c, int ldc);
void cblas_dtrmm(int order, int side, int uplo, int transa, int diag, int m, int n, double alpha, const double *a,
                 int lda, double *b, int ldb);
char *openblas_get_corename(void);
void openblas_set_num_threads(int);
}

namespace {
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112, kUpper = 121, kRight = 142, kNonUnit = 131;

template <class F> double medianMs(F f) {
  std::vector<double> t;
  for (int r = 0; r < 15; ++r) {
    auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2] * 1e3;
}

double relDiff(const std::vector<double> &a, const std::vector<double> &b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1.0, std::abs(b[i])));
  return worst;
}

void row(const char *what, double mflop, double ppc, double blas, double diff, const char *blasWhat) {
  std::printf("  %-34s %7.1f M  ppc %6.2f ms  OpenBLAS %-6s %6.2f ms  (%.2fx)  agree to %.0e\n", what, mflop, ppc,
              blasWhat, blas, blas / ppc, diff);
}
} // namespace

int main(int argc, char **argv) {
  std::string level = argc > 1 ? argv[1] : std::string(ppc::rt::cpuNameOf(ppc::rt::hostVectorIsa()));
  auto isa = ppc::rt::vectorIsaFromCpuName(level);
  std::string error;
  if (!isa || !ppc::rt::setVectorIsa(*isa, error)) {
    std::fprintf(stderr, "ppc_dense_products: %s\n", isa ? error.c_str() : "unknown level");
    return 1;
  }
  openblas_set_num_threads(1);
  std::printf("ppc's %s kernels against OpenBLAS's %s kernels, one thread, medians of 15 runs:\n",
              std::string(ppc::rt::describe(*isa)).c_str(), openblas_get_corename());
  std::mt19937 g(1);
  std::uniform_real_distribution<double> u(0, 1);
  { // Gaussian mixture on digits
    const int n = 1797, D = 64, K = 10, width = D + D * D;
    std::vector<double> x(size_t(n) * D), w(size_t(n) * K), means(size_t(K) * width), totals(K);
    for (auto &v : x) v = std::floor(17 * u(g));
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += (w[size_t(i) * K + k] = u(g));
      for (int k = 0; k < K; ++k) w[size_t(i) * K + k] /= s;
    }
    const double ppcMoments = medianMs([&] {
      ppc_gaussian_weighted_moments(n, K, w.data(), D, x.data(), means.data(), totals.data(), nullptr);
    });
    std::vector<double> y(size_t(n) * D), S(size_t(K) * D * D), check(size_t(K) * D * D), mine(size_t(K) * D * D);
    const double blasMoments = medianMs([&] {
      for (int k = 0; k < K; ++k) {
        for (int i = 0; i < n; ++i) {
          const double s = std::sqrt(w[size_t(i) * K + k]);
          for (int a = 0; a < D; ++a) y[size_t(i) * D + a] = s * x[size_t(i) * D + a];
        }
        cblas_dsyrk(kRowMajor, kUpper, kTrans, D, n, 1.0, y.data(), D, 0.0, S.data() + size_t(k) * D * D, D);
      }
    });
    for (int k = 0; k < K; ++k)
      for (int a = 0; a < D; ++a)
        for (int b = a; b < D; ++b) {
          check[size_t(k) * D * D + a * D + b] = S[size_t(k) * D * D + a * D + b];
          mine[size_t(k) * D * D + a * D + b] = means[size_t(k) * width + D + a * D + b] * totals[k];
        }
    row("GMM weighted second moments", n * double(D) * D * K / 2e6, ppcMoments, blasMoments, relDiff(mine, check),
        "dsyrk");
    std::vector<double> eta(size_t(K) * width), offsets(K, 0.0), out(size_t(n) * K), ref(size_t(n) * K);
    for (auto &v : eta) v = u(g) - 0.5;
    for (int k = 0; k < K; ++k) // no linear term: the quadratic forms alone
      for (int a = 0; a < D; ++a) eta[size_t(k) * width + a] = 0;
    const double ppcQuad = medianMs([&] {
      ppc_gaussian_moment_products(n, K, D, x.data(), eta.data(), offsets.data(), out.data());
    });
    std::vector<double> U(size_t(D) * D), Z(size_t(n) * D);
    const double blasTrmm = medianMs([&] {
      for (int k = 0; k < K; ++k) {
        const double *H = eta.data() + size_t(k) * width + D;
        for (int a = 0; a < D; ++a)
          for (int b = 0; b < D; ++b) U[a * D + b] = b < a ? 0 : b == a ? H[a * D + a] : H[a * D + b] + H[b * D + a];
        std::copy(x.begin(), x.end(), Z.begin());
        cblas_dtrmm(kRowMajor, kRight, kUpper, kNoTrans, kNonUnit, n, D, 1.0, U.data(), D, Z.data(), D);
        for (int i = 0; i < n; ++i) {
          double s = 0;
          for (int a = 0; a < D; ++a) s += Z[size_t(i) * D + a] * x[size_t(i) * D + a];
          ref[size_t(i) * K + k] = s;
        }
      }
    });
    row("GMM quadratic forms", n * double(D) * D * K / 2e6, ppcQuad, blasTrmm, relDiff(out, ref), "dtrmm");
    std::vector<double> Hall(size_t(D) * K * D), Zall(size_t(n) * K * D);
    const double blasGemm = medianMs([&] {
      for (int k = 0; k < K; ++k)
        for (int a = 0; a < D; ++a)
          for (int b = 0; b < D; ++b) Hall[size_t(a) * K * D + k * D + b] = eta[size_t(k) * width + D + a * D + b];
      cblas_dgemm(kRowMajor, kNoTrans, kNoTrans, n, K * D, D, 1.0, x.data(), D, Hall.data(), K * D, 0.0,
                  Zall.data(), K * D);
      for (int i = 0; i < n; ++i)
        for (int k = 0; k < K; ++k) {
          double s = 0;
          for (int a = 0; a < D; ++a) s += Zall[size_t(i) * K * D + k * D + a] * x[size_t(i) * D + a];
          ref[size_t(i) * K + k] = s;
        }
    });
    row("GMM quadratic forms (full)", n * double(D) * D * K / 1e6, ppcQuad, blasGemm, relDiff(out, ref), "dgemm");
  }
  { // Bernoulli mixture on Fashion-MNIST's shape
    const int n = 10000, D = 784, K = 10;
    std::vector<double> x(size_t(n) * D), w(size_t(n) * K), eta(size_t(K) * D), offsets(K, 0.0);
    const int words = (D + 63) / 64;
    std::vector<int64_t> rows{0}, columns, bits(size_t(n) * words, 0);
    for (int i = 0; i < n; ++i) {
      for (int c = 0; c < D; ++c)
        if ((x[size_t(i) * D + c] = u(g) < 0.315 ? 1.0 : 0.0) == 1.0) {
          columns.push_back(c);
          bits[size_t(i) * words + c / 64] |= int64_t(uint64_t(1) << (c % 64));
        }
      rows.push_back(int64_t(columns.size()));
    }
    for (auto &v : w) v = u(g);
    for (auto &v : eta) v = u(g) - 0.5;
    std::vector<double> means(size_t(K) * D), totals(K), dense(size_t(K) * D), counts(size_t(K) * D);
    const double ppcOnes = medianMs([&] {
      ppc_binary_column_means(n, K, w.data(), D, rows.data(), columns.data(), bits.data(), means.data(), totals.data(), nullptr);
    });
    const double ppcDense = medianMs([&] {
      ppc_weighted_column_means(n, K, w.data(), D, x.data(), dense.data(), totals.data(), nullptr);
    });
    const double blasCounts = medianMs([&] {
      cblas_dgemm(kRowMajor, kTrans, kNoTrans, K, D, n, 1.0, w.data(), K, x.data(), D, 0.0, counts.data(), D);
    });
    for (int k = 0; k < K; ++k)
      for (int c = 0; c < D; ++c) means[size_t(k) * D + c] *= totals[k], dense[size_t(k) * D + c] *= totals[k];
    row("Bernoulli W^T X, binary kernel", n * double(D) * K / 1e6, ppcOnes, blasCounts, relDiff(means, counts),
        "dgemm");
    row("Bernoulli W^T X, dense", n * double(D) * K / 1e6, ppcDense, blasCounts, relDiff(dense, counts), "dgemm");
    std::vector<double> out(size_t(n) * K), outDense(size_t(n) * K), ref(size_t(n) * K);
    const double ppcOnesForms = medianMs([&] {
      ppc_binary_linear_forms(n, K, D, rows.data(), columns.data(), bits.data(), eta.data(), offsets.data(), out.data());
    });
    const double ppcDenseForms = medianMs([&] {
      ppc_linear_forms(n, K, D, x.data(), eta.data(), offsets.data(), outDense.data());
    });
    const double blasForms = medianMs([&] {
      cblas_dgemm(kRowMajor, kNoTrans, kTrans, n, K, D, 1.0, x.data(), D, eta.data(), D, 0.0, ref.data(), K);
    });
    row("Bernoulli X H^T, binary kernel", n * double(D) * K / 1e6, ppcOnesForms, blasForms, relDiff(out, ref),
        "dgemm");
    row("Bernoulli X H^T, dense", n * double(D) * K / 1e6, ppcDenseForms, blasForms, relDiff(outDense, ref), "dgemm");
  }
  return 0;
}
