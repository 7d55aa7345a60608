// The kernels the schedule and the dense plate statistics call, against
// their definitions: random starts, convergence measures, products of
// exponentials, transposed sums, weighted column means and linear forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/Distributions.h"
#include "runtime/Operators.h"
#include "runtime/VectorIsa.h"
#include "test/unit/runtime/TestUtil.h"

using namespace ppc::rt;

// ---- schedule support and the exponential domain ----

TEST(ScheduleKernels, RandomSimplexIsAPureFunctionOfItsKey) {
  double eta[6], q[6], eta2[6], q2[6];
  ppc_random_simplex(6, 42, 3, 1000, eta, q);
  ppc_random_simplex(6, 42, 3, 1000, eta2, q2);
  double sum = 0;
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(q[k], q2[k]);
    EXPECT_GT(q[k], 0.0);
    EXPECT_NEAR(eta[k], std::log(q[k]), 1e-15);
    sum += q[k];
  }
  EXPECT_NEAR(sum, 1.0, 1e-15);
  // Another element, stream or seed: another draw.
  for (auto [seed, stream, element] : {std::tuple{42, 3, 1001}, std::tuple{42, 4, 1000}, std::tuple{43, 3, 1000}}) {
    ppc_random_simplex(6, seed, stream, element, eta2, q2);
    EXPECT_NE(q[0], q2[0]);
  }
  // Uniform on the simplex: each coordinate has mean 1/K.
  double mean = 0;
  for (int e = 0; e < 20000; ++e) {
    ppc_random_simplex(6, 7, 0, e, eta2, q2);
    mean += q2[2] / 20000;
  }
  EXPECT_NEAR(mean, 1.0 / 6, 0.005);
  // A row wider than the 8 partial sums (and not a multiple of 8) sums to one too.
  std::vector<double> wideEta(101), wide(101);
  ppc_random_simplex(101, 5, 1, 77, wideEta.data(), wide.data());
  double wideSum = 0;
  for (int k = 0; k < 101; ++k) {
    EXPECT_GT(wide[size_t(k)], 0.0);
    wideSum += wide[size_t(k)];
  }
  EXPECT_NEAR(wideSum, 1.0, 1e-14);
  double p, logit;
  ppc_random_bernoulli(1, 2, 3, &logit, &p);
  EXPECT_NEAR(logit, std::log(p / (1 - p)), 1e-12);
}

// The draws are splitmix64's (written out here: the i-th uniform of key
// (seed, stream, element) from the hash of the key's hash with i), and every
// ISA's copy computes the same bits: AVX-512 and AVX2 hash four or eight
// lanes at once (AVX2 builds each 64-bit product from 32-bit ones), SSE2
// one at a time. Rows from 1 to past a few vectors, with their remainders.
TEST(ScheduleKernels, RandomSimplexDrawsTheSameNumbersOnEveryIsa) {
  const auto mix = [](uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  for (int64_t k : {1, 3, 4, 5, 8, 9, 20, 101}) {
    const int64_t seed = 12345, stream = 7, element = 987654321;
    const uint64_t base = mix(mix(mix(uint64_t(seed)) ^ uint64_t(stream)) ^ uint64_t(element));
    std::vector<double> want(static_cast<size_t>(k));
    double total = 0;
    for (int64_t i = 0; i < k; ++i) {
      const double u = (double(mix(base ^ uint64_t(i)) >> 11) + 0.5) * 0x1.0p-53;
      want[size_t(i)] = -std::log(u);
      total += want[size_t(i)];
    }
    std::vector<double> first;
    for (int level = 0; level <= int(hostVectorIsa()); ++level) {
      std::string error;
      ASSERT_TRUE(setVectorIsa(VectorIsa(level), error)) << error;
      SCOPED_TRACE(std::string(describe(VectorIsa(level))) + " k = " + std::to_string(k));
      std::vector<double> eta(static_cast<size_t>(k)), q(static_cast<size_t>(k));
      ppc_random_simplex(k, seed, stream, element, eta.data(), q.data());
      for (int64_t i = 0; i < k; ++i) EXPECT_NEAR(q[size_t(i)], want[size_t(i)] / total, 1e-14 * want[size_t(i)] / total);
      if (first.empty())
        first = q;
      else
        EXPECT_EQ(first, q);
    }
  }
  std::string error;
  ASSERT_TRUE(setVectorIsa(hostVectorIsa(), error));
}

TEST(ScheduleKernels, MeanAbsChangeRemembersTheCurrentValues) {
  double cur[3] = {1, 2, 3}, prev[3] = {1, 1, 1};
  EXPECT_DOUBLE_EQ(ppc_mean_abs_change(3, cur, prev), 1.0);
  EXPECT_DOUBLE_EQ(ppc_mean_abs_change(3, cur, prev), 0.0);
}

TEST(ScheduleKernels, ProductOfShiftedExponentialsIsTheSoftmaxOfTheSum) {
  // Rows of E log theta (3 cases) and a 3 x 4 array of E log phi; the
  // categorical for datum x = 2 is softmax(theta + phi[:, 2]).
  const double theta[3] = {-0.5, -3.0, -1.25};
  const double phi[12] = {-2, -1, -700, -3, -4, -2, -690, -1, -1, -5, -705, -2};
  double rowTable[3], colTable[12], rowShift = 0, colShifts[4];
  ppc_exp_shifted_n(3, theta, rowTable, &rowShift);
  ppc_exp_shifted_transposed(3, 4, 0, 4, phi, colTable, colShifts);
  EXPECT_EQ(rowShift, -0.5);
  const double expectedShifts[4] = {-1, -1, -690, -1};
  for (int c = 0; c < 4; ++c)
    EXPECT_EQ(colShifts[c], expectedShifts[c]);
  double prod[3], probs[3], eta[3];
  ppc_mul2_n(3, rowTable, colTable + 2 * 3, prod);
  const double logNorm =
      ppc_categorical_stats_from_product_lognorm(3, prod, rowShift + colShifts[2], eta, probs);
  double logits[3] = {theta[0] + phi[2], theta[1] + phi[6], theta[2] + phi[10]};
  double expected[3];
  for (int k = 0; k < 3; ++k)
    expected[k] = logits[k];
  EXPECT_NEAR(logNorm, ppc_logsumexp(3, logits), 1e-12);
  ppc_softmax_inplace(3, expected);
  double entropyPlusFactors = 0; // H(q) + sum_k q_k logits_k: the log normalizer at the optimum
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(probs[k], expected[k], 1e-14);
    EXPECT_NEAR(eta[k], std::log(expected[k]), 1e-12);
    entropyPlusFactors += probs[k] * (logits[k] - std::log(probs[k]));
  }
  EXPECT_NEAR(logNorm, entropyPlusFactors, 1e-10);
  double probs2[3];
  ppc_categorical_stats_from_product(3, prod, nullptr, probs2);
  for (int k = 0; k < 3; ++k)
    EXPECT_EQ(probs2[k], probs[k]);
}

// codegen/ProductNormalizerFusion.cpp: the fused kernels equal the stored
// product, its normalization and the message they replace, for row widths
// that exercise every lane path (8, 4 and scalar tails).
TEST(ScheduleKernels, FusedProductKernelsEqualTheirComposition) {
  for (int64_t K : {1, 3, 4, 7, 8, 12, 20, 23, 100}) {
    SCOPED_TRACE(K);
    const size_t n = static_cast<size_t>(K);
    std::vector<double> a(n), b(n), prod(n), probs(n);
    for (int64_t k = 0; k < K; ++k) {
      a[size_t(k)] = std::exp(-0.37 * double((k * 7) % 11));
      b[size_t(k)] = std::exp(-0.53 * double((k * 5) % 13));
    }
    const double w = 2.5, shift = -1.75;
    ppc_mul2_n(K, a.data(), b.data(), prod.data());
    const double logNorm = ppc_categorical_stats_from_product_lognorm(K, prod.data(), shift, nullptr, probs.data());
    // The message to a row that changes with the datum.
    std::vector<double> scatter(n, 1.0), expected(n, 1.0);
    ppc_axpy(K, w, probs.data(), expected.data());
    EXPECT_NEAR(ppc_product_axpy_lognorm(K, a.data(), b.data(), shift, w, scatter.data()), logNorm, 1e-13);
    for (int64_t k = 0; k < K; ++k)
      EXPECT_NEAR(scatter[size_t(k)], expected[size_t(k)], 1e-14 * expected[size_t(k)]);
    // The normalizer stored for a log after the loop (codegen/LogBatching.cpp).
    std::vector<double> scatter2(n, 1.0);
    double norm = 0;
    EXPECT_EQ(ppc_product_axpy_norm(K, a.data(), b.data(), shift, w, scatter2.data(), &norm), shift);
    EXPECT_EQ(scatter2, scatter);
    EXPECT_NEAR(std::log(norm) + shift, logNorm, 1e-13);
    // The message to a row that is the same for every datum: a factored out
    // of two data's sum, multiplied in after it.
    std::vector<double> b2(n), prod2(n), probs2(n);
    for (int64_t k = 0; k < K; ++k)
      b2[size_t(k)] = 0.5 + 0.01 * double(k);
    ppc_mul2_n(K, a.data(), b2.data(), prod2.data());
    ppc_categorical_stats_from_product(K, prod2.data(), nullptr, probs2.data());
    std::vector<double> sum(n, 0.0), acc(n, 0.0), factored(n, 0.0);
    ppc_categorical_probs_avglog(K, probs.data(), w, sum.data());
    ppc_categorical_probs_avglog(K, probs2.data(), 1.0, sum.data());
    ppc_dot_inverse_axpy(K, a.data(), b.data(), w, acc.data());
    ppc_dot_inverse_axpy(K, a.data(), b2.data(), 1.0, acc.data());
    ppc_mul_add_n(K, a.data(), acc.data(), factored.data());
    for (int64_t k = 0; k < K; ++k)
      EXPECT_NEAR(factored[size_t(k)], sum[size_t(k)], 1e-14 * sum[size_t(k)] + 1e-300);
  }
}

// codegen/transforms/GatherDots.cpp: the call on a document's rows adds
// exactly what its loop of per-datum calls adds, in the same order (bit for
// bit), across its chunks of 256 data, with and without weights; so does
// the call on a copy of those rows.
TEST(ScheduleKernels, GatheredDotInverseAxpyEqualsItsLoop) {
  for (int64_t K : {1, 3, 4, 7, 8, 12, 20, 23, 100})
    for (int64_t n : {0, 1, 5, 256, 257, 600}) {
      SCOPED_TRACE(testing::Message() << "K " << K << ", n " << n);
      const int64_t rows = 37;
      std::vector<double> a(static_cast<size_t>(K)), table(static_cast<size_t>(rows * K)), w(static_cast<size_t>(n));
      std::vector<int64_t> idx(static_cast<size_t>(n));
      for (int64_t k = 0; k < K; ++k)
        a[size_t(k)] = std::exp(-0.37 * double((k * 7) % 11));
      for (int64_t r = 0; r < rows * K; ++r)
        table[size_t(r)] = std::exp(-0.11 * double((r * 13) % 29));
      for (int64_t i = 0; i < n; ++i) {
        idx[size_t(i)] = (i * 17 + 3) % rows;
        w[size_t(i)] = double(1 + i % 4);
      }
      for (bool weighted : {true, false}) {
        std::vector<double> looped(static_cast<size_t>(K), 0.25), gathered(static_cast<size_t>(K), 0.25);
        for (int64_t i = 0; i < n; ++i)
          ppc_dot_inverse_axpy(K, a.data(), table.data() + idx[size_t(i)] * K, weighted ? w[size_t(i)] : 1.5,
                               looped.data());
        ppc_dot_inverse_axpy_gather(n, K, a.data(), table.data(), idx.data(), weighted ? w.data() : nullptr, 1.5,
                                    gathered.data());
        EXPECT_EQ(gathered, looped) << (weighted ? "weighted" : "weight 1.5");
        // The element's rows copied out of the table, then read in order
        // (codegen/transforms/LocalRows.cpp).
        std::vector<double> rowsCopy(static_cast<size_t>(n * K), -1.0), fromCopy(static_cast<size_t>(K), 0.25);
        ppc_gather_rows(n, K, table.data(), idx.data(), rowsCopy.data());
        for (int64_t i = 0; i < n; ++i)
          for (int64_t k = 0; k < K; ++k)
            ASSERT_EQ(rowsCopy[size_t(i * K + k)], table[size_t(idx[size_t(i)] * K + k)]);
        ppc_dot_inverse_axpy_rows(n, K, a.data(), rowsCopy.data(), weighted ? w.data() : nullptr, 1.5,
                                  fromCopy.data());
        EXPECT_EQ(fromCopy, looped) << (weighted ? "weighted" : "weight 1.5");
      }
    }
}

TEST(ScheduleKernels, WeightedLogSumIsTheSumOfWeightedLogs) {
  for (int64_t n : {0, 1, 7, 8, 9, 100}) {
    std::vector<double> x(static_cast<size_t>(n)), w(static_cast<size_t>(n));
    double weighted = 0, plain = 0;
    for (int64_t i = 0; i < n; ++i) {
      x[size_t(i)] = 0.001 + 3.7 * double(i);
      w[size_t(i)] = double(1 + i % 3);
      weighted += w[size_t(i)] * std::log(x[size_t(i)]);
      plain += std::log(x[size_t(i)]);
    }
    EXPECT_NEAR(ppc_weighted_log_sum(n, x.data(), w.data()), weighted, 1e-13 * std::max(1.0, std::abs(weighted)));
    EXPECT_NEAR(ppc_weighted_log_sum(n, x.data(), nullptr), plain, 1e-13 * std::max(1.0, std::abs(plain)));
  }
}

TEST(ScheduleKernels, TransposedSumsAddEveryColumnToItsRow) {
  // 7 x 83 from its 83 x 7 (datum-major) form: whole tiles of 32 columns,
  // a partial one, ranges that end past the table (as a parallel loop's).
  const int64_t rows = 7, cols = 83;
  std::vector<double> src(rows * cols), dst(rows * cols), expected(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    src[size_t(i)] = 0.25 * double((i * 37) % 101);
    dst[size_t(i)] = expected[size_t(i)] = 1.0 + double(i % 5);
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      expected[size_t(r * cols + c)] += 0.5 * src[size_t(c * rows + r)];
  for (int64_t begin = 0; begin < cols; begin += 40)
    ppc_axpy_transposed(rows, cols, begin, 40, 0.5, src.data(), dst.data());
  EXPECT_EQ(dst, expected); // one addition per entry: exact
  // Each entry as the strided column read adds it.
  std::vector<double> strided(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    strided[size_t(i)] = 1.0 + double(i % 5);
  for (int64_t r = 0; r < rows; ++r)
    ppc_axpy_strided(cols, rows, 0.5, &src[size_t(r)], &strided[size_t(r * cols)]);
  EXPECT_EQ(dst, strided);
}

TEST(ScheduleKernels, TransposedExponentialsCoverEveryBlockOfColumns) {
  // 3 x 70 (more than two blocks of columns, the last one partial).
  const int64_t rows = 3, cols = 70;
  std::vector<double> src(rows * cols), dst(rows * cols), shifts(cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    src[size_t(i)] = -0.01 * double((i * 37) % 101);
  ppc_exp_shifted_transposed(rows, cols, 0, cols, src.data(), dst.data(), shifts.data());
  // The same table from ranges of columns (as a parallel loop splits it), the last one past the end.
  std::vector<double> dst2(rows * cols), shifts2(cols);
  for (int64_t begin = 0; begin < cols; begin += 25)
    ppc_exp_shifted_transposed(rows, cols, begin, 25, src.data(), dst2.data(), shifts2.data());
  EXPECT_EQ(dst2, dst);
  EXPECT_EQ(shifts2, shifts);
  for (int64_t c = 0; c < cols; ++c) {
    double m = src[size_t(c)];
    for (int64_t r = 1; r < rows; ++r)
      m = std::max(m, src[size_t(r * cols + c)]);
    EXPECT_EQ(shifts[size_t(c)], m);
    for (int64_t r = 0; r < rows; ++r)
      EXPECT_NEAR(dst[size_t(c * rows + r)], std::exp(src[size_t(r * cols + c)] - m), 1e-15);
  }
}

// The column means (W^T X / W's column sums), their totals and the linear
// forms (X H^T + c) that a plate of n rows of D gives, against their
// definitions (a case without weight has means 0).
static void expectColumnMeansAndLinearForms(int64_t n, int64_t k, int64_t D, const std::vector<double> &x,
                                     const std::vector<double> &w, const std::vector<double> &eta,
                                     const std::vector<double> &offsets, const std::vector<double> &means,
                                     const std::vector<double> &totals, const std::vector<double> &out) {
  for (int64_t j = 0; j < k; ++j) {
    double total = 0.0;
    for (int64_t i = 0; i < n; ++i) total += w[size_t(i * k + j)];
    EXPECT_NEAR(totals[size_t(j)], total, 1e-13 * total);
    for (int64_t c = 0; c < D; ++c) {
      double sum = 0.0;
      for (int64_t i = 0; i < n; ++i) sum += w[size_t(i * k + j)] * x[size_t(i * D + c)];
      EXPECT_NEAR(means[size_t(j * D + c)], total > 0 ? sum / total : 0.0, 1e-13) << j << "," << c;
    }
    for (int64_t i = 0; i < n; ++i) {
      double dot = offsets[size_t(j)];
      for (int64_t c = 0; c < D; ++c) dot += x[size_t(i * D + c)] * eta[size_t(j * D + c)];
      EXPECT_NEAR(out[size_t(i * k + j)], dot, 1e-12 * (1 + std::fabs(dot))) << i << "," << j;
    }
  }
}

// A plate of scalars' weighted column means (W^T X) and linear forms
// (X H^T + c), against their definitions, on every vector ISA the CPU runs;
// sizes that exercise the row blocks, the padded columns and the cases
// rounded up to the register tiles. The memo returns the stored means for
// the same weights.
TEST(DenseProducts, WeightedColumnMeansAndLinearFormsMatchTheirDefinitions) {
  for (auto [n, k, D] : {std::tuple<int64_t, int64_t, int64_t>{130, 10, 37}, {7, 3, 1}, {65, 12, 64}}) {
    std::vector<double> x(size_t(n * D)), w(size_t(n * k)), eta(size_t(k * D)), offsets(static_cast<size_t>(k));
    for (size_t i = 0; i < x.size(); ++i) x[i] = (i * 7 + i / 5) % 3 == 0 ? 1.0 : std::sin(0.3 * double(i));
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05 + std::fabs(std::cos(0.7 * double(i)));
    for (int64_t i = 0; i < n; ++i) w[size_t(i * k + k - 1)] = 0.0; // a case with no weight
    for (size_t i = 0; i < eta.size(); ++i) eta[i] = std::cos(0.13 * double(i)) - 0.2;
    for (size_t j = 0; j < offsets.size(); ++j) offsets[j] = 0.5 * double(j) - 1.0;
    for (int level = 0; level <= int(ppc::rt::hostVectorIsa()); ++level) {
      std::string error;
      ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::VectorIsa(level), error)) << error;
      SCOPED_TRACE(std::string(ppc::rt::describe(ppc::rt::VectorIsa(level))) + " n=" + std::to_string(n) +
                   " k=" + std::to_string(k) + " D=" + std::to_string(D));
      std::vector<double> means(size_t(k * D), -1.0), totals(size_t(k), -1.0), out(size_t(n * k), -1.0);
      ppc_weighted_column_means(n, k, w.data(), D, x.data(), means.data(), totals.data(), nullptr);
      ppc_linear_forms(n, k, D, x.data(), eta.data(), offsets.data(), out.data());
      expectColumnMeansAndLinearForms(n, k, D, x, w, eta, offsets, means, totals, out);
    }
  }
  std::string error;
  ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::hostVectorIsa(), error));
  // The memo: the same weights leave the outputs alone; new ones recompute.
  const int64_t n = 4, k = 2, D = 3;
  std::vector<double> x{1, 0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1}, w{0.2, 0.8, 0.5, 0.5, 0.9, 0.1, 0.3, 0.7};
  std::vector<double> means(6), totals(2), memo(size_t(1 + n * k), 0.0);
  ppc_weighted_column_means(n, k, w.data(), D, x.data(), means.data(), totals.data(), memo.data());
  EXPECT_NEAR(means[0], (0.2 + 0.9 + 0.0 * 0.5) / (0.2 + 0.5 + 0.9 + 0.3), 1e-15);
  std::fill(means.begin(), means.end(), -1.0);
  ppc_weighted_column_means(n, k, w.data(), D, x.data(), means.data(), totals.data(), memo.data());
  EXPECT_EQ(means, std::vector<double>(6, -1.0));
  w[0] = 0.4;
  ppc_weighted_column_means(n, k, w.data(), D, x.data(), means.data(), totals.data(), memo.data());
  EXPECT_NEAR(means[0], (0.4 + 0.9) / (0.4 + 0.5 + 0.9 + 0.3), 1e-15);
}

// 0/1 data as the columns of each row's ones and as bits: the same column
// means and linear forms as the dense kernels (against the definitions), on
// every ISA the CPU runs; for numbers of cases that fill one, two and four
// vectors, one that takes the generic loops, and ones the masked kernels
// split unevenly (13: 7 + 6 and 5 + 4 + 4); for rows of one word of bits and
// of two (70 columns: a last word and vector partly past D), and numbers of
// rows that leave the 4-row tiles a remainder; and on ranges of the cases.
TEST(DenseProducts, BinaryDataSumsOverTheOnesEqualTheDenseProducts) {
  for (auto [n, D] : {std::pair<int64_t, int64_t>{67, 29}, {261, 70}}) {
    const int64_t words = (D + 63) / 64;
    std::vector<double> x(size_t(n * D));
    std::vector<int64_t> rows{0}, columns, bits(size_t(n * words), 0);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t c = 0; c < D; ++c) {
        x[size_t(i * D + c)] = (i * 31 + c * 7) % 5 < 2 ? 1.0 : 0.0;
        if (x[size_t(i * D + c)] == 1.0) {
          columns.push_back(c);
          bits[size_t(i * words + c / 64)] |= int64_t(uint64_t(1) << (c % 64));
        }
      }
      rows.push_back(int64_t(columns.size()));
    }
    for (int64_t k : {3, 10, 13, 20, 40}) {
      std::vector<double> w(size_t(n * k)), eta(size_t(k * D)), offsets(static_cast<size_t>(k));
      for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05 + std::fabs(std::sin(0.3 * double(i)));
      for (size_t i = 0; i < eta.size(); ++i) eta[i] = std::cos(0.17 * double(i));
      for (size_t j = 0; j < offsets.size(); ++j) offsets[j] = double(j) - 2.0;
      // With the bits (AVX-512's masks) and without (sparse data: the sums
      // over the ones on every ISA).
      for (int run = 0; run < 2 * (int(ppc::rt::hostVectorIsa()) + 1); ++run) {
        const int level = run / 2;
        const int64_t *masks = run % 2 == 0 ? bits.data() : nullptr;
        std::string error;
        ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::VectorIsa(level), error)) << error;
        SCOPED_TRACE(std::string(ppc::rt::describe(ppc::rt::VectorIsa(level))) + " k=" + std::to_string(k) +
                     " D=" + std::to_string(D) + (masks ? " bits" : " no bits"));
        std::vector<double> means(size_t(k * D)), totals(static_cast<size_t>(k)), out(size_t(n * k));
        ppc_binary_column_means(n, k, w.data(), D, rows.data(), columns.data(), masks, means.data(), totals.data(),
                                nullptr);
        ppc_binary_linear_forms(n, k, D, rows.data(), columns.data(), masks, eta.data(), offsets.data(),
                                out.data());
        expectColumnMeansAndLinearForms(n, k, D, x, w, eta, offsets, means, totals, out);
        // On ranges of the cases (split-cases: one per thread), the same
        // bits as the whole call; a range past k is cut at k, an empty one
        // writes nothing, and unchanged weights (changed = 0) leave all as
        // it was.
        std::vector<double> rMeans(means.size(), -1.0), rTotals(totals.size(), -1.0), rOut(out.size(), -1.0);
        const int64_t a = k / 3, b = 2 * k / 3;
        const double yes = 1.0, no = 0.0;
        for (auto [j0, j1] : {std::pair<int64_t, int64_t>{0, a}, {a, b}, {b, k + 5}, {k, k}}) {
          ppc_binary_column_means_cases(n, k, j0, j1, w.data(), D, rows.data(), columns.data(), masks,
                                        rMeans.data(), rTotals.data(), j0 == 0 ? nullptr : &yes);
          ppc_binary_linear_forms_cases(n, k, j0, j1, D, rows.data(), columns.data(), masks, eta.data(),
                                        offsets.data(), rOut.data());
        }
        EXPECT_EQ(std::memcmp(rMeans.data(), means.data(), sizeof(double) * means.size()), 0);
        EXPECT_EQ(std::memcmp(rTotals.data(), totals.data(), sizeof(double) * totals.size()), 0);
        EXPECT_EQ(std::memcmp(rOut.data(), out.data(), sizeof(double) * out.size()), 0);
        std::vector<double> kept(means.size(), -1.0);
        ppc_binary_column_means_cases(n, k, 0, k, w.data(), D, rows.data(), columns.data(), masks, kept.data(),
                                      rTotals.data(), &no);
        EXPECT_EQ(kept, std::vector<double>(means.size(), -1.0));
      }
    }
  }
  std::string error;
  ASSERT_TRUE(ppc::rt::setVectorIsa(ppc::rt::hostVectorIsa(), error));
}
