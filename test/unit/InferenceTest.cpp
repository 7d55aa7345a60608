// End-to-end inference: mixtures, the plan transformations and lowering
// choices against runs without them, JIT = interpreter on every example,
// threads, nested schedules and the JIT's code release. Closed forms and
// published values are in ExactPosteriorTest.cpp.
#include "FitSupport.h"

#include <Eigen/Dense>
#include <cmath>
#include <gtest/gtest.h>
#include <numeric>

using namespace ppc;
using namespace ppc::testing;
#include <set>
#if defined(__SANITIZE_ADDRESS__)
// The allocator's statistics (libasan; GCC ships no header for them).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace {

// ---- mixtures ---------------------------------------------------------------------

TEST(Inference, OldFaithfulHasTwoClusters) {
  auto f = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, FitOptions{});
  ASSERT_TRUE(f->ok) << f->error;
  EXPECT_TRUE(f->summary.converged);
  double m0 = f->stats("eruptionMean", 0)[0], m1 = f->stats("eruptionMean", 1)[0];
  double w0 = f->stats("waitingMean", 0)[0], w1 = f->stats("waitingMean", 1)[0];
  if (m0 > m1) {
    std::swap(m0, m1);
    std::swap(w0, w1);
  }
  // The short and the long eruptions (R's faithful: about 2.04 / 54.5 and 4.29 / 80.0).
  EXPECT_NEAR(m0, 2.04, 0.05);
  EXPECT_NEAR(w0, 54.5, 0.5);
  EXPECT_NEAR(m1, 4.29, 0.05);
  EXPECT_NEAR(w1, 80.0, 0.5);
}

// In one dimension a Wishart(2a, 1/(2b)) precision is a Gamma(a, b) one and
// MvGaussian is Gaussian: the full-covariance mixture on one column of Old
// Faithful must run the univariate mixture's iterations exactly.
TEST(Inference, OneDimensionalFullMixtureIsTheUnivariateMixture) {
  FitOptions o;
  o.run.maxIterations = 30;
  o.run.tolerance = 0;
  auto uni = fit("@Model class M(K: Long = 2) {\n"
                 "  val weights = Dirichlet(1.0, K)\n"
                 "  val mean = (0L until K).map(_ => Gaussian(3.5, 0.1))\n"
                 "  val prec = (0L until K).map(_ => Gamma(1.5, 2.0))\n"
                 "  val cluster = ?.map(_ => Categorical(weights))\n"
                 "  val eruptions = cluster.map(z => Gaussian(mean(z), prec(z)))\n"
                 "}\n",
                 {examplePath("data/faithful.csv")}, o);
  o.map["eruptions"] = "eruptions";
  auto full = fit("@Model class M(K: Long = 2) {\n"
                  "  val weights = Dirichlet(1.0, K)\n"
                  "  val mean = (0L until K).map(_ => MvGaussian(3.5, 0.1, 1))\n"
                  "  val prec = (0L until K).map(_ => Wishart(3.0, 0.25, 1))\n"
                  "  val cluster = ?.map(_ => Categorical(weights))\n"
                  "  val eruptions = cluster.map(z => MvGaussian(mean(z), prec(z)))\n"
                  "}\n",
                  {examplePath("data/faithful.csv")}, o);
  ASSERT_TRUE(uni->ok) << uni->error;
  ASSERT_TRUE(full->ok) << full->error;
  ASSERT_EQ(uni->summary.elbo.size(), full->summary.elbo.size());
  for (size_t i = 0; i < uni->summary.elbo.size(); ++i)
    EXPECT_NEAR(full->summary.elbo[i], uni->summary.elbo[i], 1e-9 * std::abs(uni->summary.elbo[i])) << i;
  for (int k = 0; k < 2; ++k) {
    EXPECT_NEAR(full->stats("mean", k)[0], uni->stats("mean", k)[0], 1e-9);
    EXPECT_NEAR(full->stats("prec", k)[0], uni->stats("prec", k)[0], 1e-9);
  }
}

// Full covariance on both columns: the two eruption types, now with their
// correlation (R's faithful: about 2.04 / 54.5 and 4.29 / 80.0).
TEST(Inference, OldFaithfulFullCovarianceHasTwoClusters) {
  FitOptions o;
  o.map["x"] = "eruptions,waiting";
  o.params = {{"K", "2"}};
  auto f = fit(readAll(examplePath("gaussian_mixture_full.ppl")), {examplePath("data/faithful.csv")}, o);
  ASSERT_TRUE(f->ok) << f->error;
  EXPECT_TRUE(f->summary.converged);
  const double *a = f->stats("mean", 0), *b = f->stats("mean", 1);
  if (a[0] > b[0])
    std::swap(a, b);
  EXPECT_NEAR(a[0], 2.04, 0.05);
  EXPECT_NEAR(a[1], 54.5, 0.5);
  EXPECT_NEAR(b[0], 4.29, 0.05);
  EXPECT_NEAR(b[1], 80.0, 0.5);
  // Within each cluster, duration and waiting time are positively correlated:
  // the precision matrix's off-diagonal entry is negative.
  for (int k = 0; k < 2; ++k)
    EXPECT_LT(f->stats("precision", k)[1], 0.0);
}

// codegen/transforms/BatchStatistics.cpp: the data-plate sums of a full-covariance
// mixture as weighted moments and moment products give the iterations of the
// call-per-(datum, case) plan, to rounding, on 64-dimensional digits.
TEST(Inference, BatchedGaussianStatisticsEqualPerDatumCalls) {
  FitOptions o;
  o.map["x"] = "p*";
  o.params = {{"K", "4"}, {"D", "64"}, {"nu0", "64"}, {"s0", "0.01"}, {"p0", "0.01"}};
  o.run.maxIterations = 8;
  o.run.tolerance = 0;
  auto batched = fit(readAll(examplePath("gaussian_mixture_full.ppl")), {examplePath("data/digits_counts.csv")}, o);
  o.disabled.push_back("batch-statistics");
  auto perDatum = fit(readAll(examplePath("gaussian_mixture_full.ppl")), {examplePath("data/digits_counts.csv")}, o);
  ASSERT_TRUE(batched->ok) << batched->error;
  ASSERT_TRUE(perDatum->ok) << perDatum->error;
  std::string plan = codegen::printPlan(*batched->plan), plain = codegen::printPlan(*perDatum->plan);
  EXPECT_NE(plan.find("ppc_gaussian_weighted_moments"), std::string::npos);
  EXPECT_NE(plan.find("ppc_gaussian_moment_products"), std::string::npos);
  EXPECT_EQ(plan.find("ppc_mvgaussian_avglogfactor_obs_n"), std::string::npos);
  EXPECT_NE(plain.find("ppc_mvgaussian_avglogfactor_obs_n"), std::string::npos);
  // One set of moment buffers, memoized on the weights, for the iteration and
  // the ELBO: the ELBO's moments are those the next iteration starts with.
  auto count = [&](const std::string &what) {
    size_t n = 0;
    for (size_t at = plan.find(what); at != std::string::npos; at = plan.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("(memo)\n"), 1u);
  EXPECT_EQ(count("ppc_gaussian_weighted_moments("), 2u);
  EXPECT_EQ(count("&data.x.memo."), 2u);
  ASSERT_EQ(batched->summary.elbo.size(), perDatum->summary.elbo.size());
  for (size_t i = 0; i < batched->summary.elbo.size(); ++i)
    EXPECT_NEAR(batched->summary.elbo[i], perDatum->summary.elbo[i], 1e-9 * std::abs(perDatum->summary.elbo[i])) << i;
  for (size_t i = 1; i < batched->summary.elbo.size(); ++i)
    EXPECT_GE(batched->summary.elbo[i], batched->summary.elbo[i - 1] - 1e-9 * std::abs(batched->summary.elbo[i]));
}

TEST(Inference, SameSeedSameAnswerOtherSeedOtherStart) {
  FitOptions o;
  o.run.maxIterations = 3;
  auto a = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, o);
  auto b = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, o);
  o.run.seed = 7;
  auto c = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, o);
  ASSERT_TRUE(a->ok && b->ok && c->ok);
  EXPECT_EQ(a->summary.elbo, b->summary.elbo);
  EXPECT_NE(a->summary.elbo, c->summary.elbo);
}

// ---- JIT = interpreter on every example -------------------------------------------

struct Example {
  std::string model;
  std::vector<std::string> files;
  std::map<std::string, std::string> map, params;
  std::optional<std::string> weight;
};

std::vector<Example> examples() {
  std::string coins = "x\n", noise = "y\n";
  for (int i = 0; i < 40; ++i)
    coins += std::to_string((i * 7 + i / 3) % 3 == 0 ? 1 : 0) + "\n";
  for (int i = 0; i < 60; ++i)
    noise += std::to_string(i % 3 == 2 ? 5.0 + 0.1 * (i % 7) : 0.3 * std::sin(double(i))) + "\n";
  return {
      {"lda.ppl", {examplePath("data/ap_small_d200_w500.csv")}, {{"theta", "doc"}, {"x", "word"}},
       {{"V", "500"}, {"K", "5"}}, "count"},
      {"dirichlet_multinomial_mixture.ppl", {examplePath("data/ap_small_d200_w500.csv")},
       {{"z", "doc"}, {"x", "word"}}, {{"V", "500"}}, "count"},
      {"gaussian_mixture.ppl", {examplePath("data/faithful.csv")}, {}, {}, std::nullopt},
      {"gaussian_mixture_full.ppl", {examplePath("data/faithful.csv")}, {{"x", "eruptions,waiting"}}, {}, std::nullopt},
      {"gaussian_mixture_full.ppl", {examplePath("data/digits_counts.csv")}, {{"x", "p*"}},
       {{"K", "4"}, {"D", "64"}, {"nu0", "64"}, {"s0", "0.01"}, {"p0", "0.01"}}, std::nullopt},
      {"clinical_trial.ppl", {examplePath("data/clinical_trial.csv")}, {{"g", "group"}}, {}, std::nullopt},
      {"bernoulli_mixture.ppl", {examplePath("data/digits_binary.csv")}, {{"x", "p*"}}, {}, std::nullopt},
      {"poisson_gamma.ppl", {examplePath("data/digits_counts.csv")}, {{"x", "p*"}}, {}, std::nullopt},
      {"two_coins.ppl", {tempFile("coins.csv", coins)}, {}, {}, std::nullopt},
      {"noise_models.ppl", {tempFile("noise.csv", noise)}, {}, {}, std::nullopt},
      {"pumps.ppl", {examplePath("data/pumps.csv")}, {}, {}, std::nullopt},
      {"linear_regression.ppl", {examplePath("data/boston_standardized.csv")}, {{"y", "medv"}}, {}, std::nullopt},
      {"bayesian_pca.ppl", {examplePath("data/wine_standardized.csv")}, {}, {}, std::nullopt},
      {"matrix_factorisation.ppl", {examplePath("data/house_votes_train.csv")}, {}, {}, std::nullopt},
      {"hierarchical_regression.ppl", {examplePath("data/iris_groups.csv")},
       {{"s", "species"}, {"x", "sepal_length"}, {"y", "petal_length"}}, {}, std::nullopt},
      {"logistic_regression.ppl", {examplePath("data/house_votes_party_train.csv")}, {{"y", "republican"}}, {},
       std::nullopt},
      {"hmm_nile.ppl", {examplePath("data/nile.csv")}, {{"y", "flow"}}, {}, std::nullopt},
      {"local_level_nile.ppl", {examplePath("data/nile.csv")}, {{"y", "flow"}}, {}, std::nullopt},
  };
}

/// An example's run: its mapping, parameters and weights, 5 iterations, no
/// tolerance.
FitOptions exampleOptions(const Example &ex, int threads = 1) {
  FitOptions o;
  o.map = ex.map;
  o.params = ex.params;
  o.weight = ex.weight;
  o.threads = threads;
  o.run.maxIterations = 5;
  o.run.tolerance = 0;
  return o;
}

/// Two runs of one model agree: ELBO traces to `elboTol` relative, every
/// posterior's statistics entry by entry to `statsTol` relative (0: equal);
/// scratch posteriors (the last element's rows only) only if `withScratch`.
void expectSameRun(const Fit &a, const Fit &b, double elboTol, double statsTol, bool withScratch) {
  ASSERT_EQ(a.summary.elbo.size(), b.summary.elbo.size());
  for (size_t i = 0; i < a.summary.elbo.size(); ++i)
    EXPECT_NEAR(a.summary.elbo[i], b.summary.elbo[i], elboTol * std::abs(b.summary.elbo[i]));
  for (const codegen::Posterior &p : a.plan->posteriors) {
    if (p.scratch && !withScratch)
      continue;
    const std::vector<double> &x = a.inference->buffer(p.stats), &y = b.inference->buffer(p.stats);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_NEAR(x[i], y[i], statsTol * std::max(1.0, std::abs(y[i]))) << p.variable->name << "[" << i << "]";
  }
}

TEST(Inference, JitEqualsInterpreterOnEveryExample) {
  for (const Example &ex : examples()) {
    SCOPED_TRACE(ex.model);
    FitOptions o = exampleOptions(ex);
    auto jit = fit(readAll(examplePath(ex.model)), ex.files, o);
    o.engine = "interp";
    auto interp = fit(readAll(examplePath(ex.model)), ex.files, o);
    ASSERT_TRUE(jit->ok) << jit->error;
    ASSERT_TRUE(interp->ok) << interp->error;
    ASSERT_EQ(jit->summary.elbo.size(), interp->summary.elbo.size());
    for (size_t i = 0; i < jit->summary.elbo.size(); ++i)
      EXPECT_NEAR(jit->summary.elbo[i], interp->summary.elbo[i], 1e-12 * std::abs(interp->summary.elbo[i]));
    // Every posterior, element by element.
    for (const codegen::Posterior &p : jit->plan->posteriors) {
      const std::vector<double> &a = jit->inference->buffer(p.eta), &b = interp->inference->buffer(p.eta);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i)
        ASSERT_NEAR(a[i], b[i], 1e-12 * std::max(1.0, std::abs(b[i]))) << p.variable->name << "[" << i << "]";
    }
    // VMP never decreases the ELBO (the run checks it; make sure it ran).
    for (size_t i = 1; i < jit->summary.elbo.size(); ++i)
      EXPECT_GE(jit->summary.elbo[i], jit->summary.elbo[i - 1] - 1e-9 * std::abs(jit->summary.elbo[i]));
  }
}

// codegen/transforms/LinearStatistics.cpp: a mixture of product-Bernoulli
// components (the 8x8 binarised digits) with its per-(datum, pixel, case)
// messages, ELBO terms and evidence as weighted column means and linear
// forms gives the iterations of the call-per-entry plan, to rounding; every
// example with and without it, one thread and two, runs the same.
TEST(Inference, BatchedLinearStatisticsEqualPerEntryCalls) {
  FitOptions o;
  o.map["x"] = "p*";
  o.run.maxIterations = 10;
  o.run.tolerance = 0;
  auto batched = fit(readAll(examplePath("bernoulli_mixture.ppl")), {examplePath("data/digits_binary.csv")}, o);
  o.disabled.push_back("batch-linear");
  auto perEntry = fit(readAll(examplePath("bernoulli_mixture.ppl")), {examplePath("data/digits_binary.csv")}, o);
  ASSERT_TRUE(batched->ok) << batched->error;
  ASSERT_TRUE(perEntry->ok) << perEntry->error;
  std::string plan = codegen::printPlan(*batched->plan), plain = codegen::printPlan(*perEntry->plan);
  EXPECT_NE(plan.find("ppc_binary_column_means"), std::string::npos);
  EXPECT_NE(plan.find("ppc_binary_linear_forms"), std::string::npos);
  EXPECT_EQ(plan.find("ppc_bernoulli_avglogfactor_obs_n"), std::string::npos);
  EXPECT_EQ(plan.find("ppc_bernoulli_p_avglog_obs_n"), std::string::npos);
  EXPECT_NE(plain.find("ppc_bernoulli_avglogfactor_obs_n"), std::string::npos);
  expectSameRun(*batched, *perEntry, 1e-10, 1e-8, /*withScratch=*/false);
  for (size_t i = 1; i < batched->summary.elbo.size(); ++i)
    EXPECT_GE(batched->summary.elbo[i], batched->summary.elbo[i - 1] - 1e-9 * std::abs(batched->summary.elbo[i]));
  for (const Example &ex : examples())
    for (int threads : {1, 2}) {
      SCOPED_TRACE(ex.model + " threads " + std::to_string(threads));
      FitOptions e = exampleOptions(ex, threads);
      auto with = fit(readAll(examplePath(ex.model)), ex.files, e);
      e.disabled.push_back("batch-linear");
      auto without = fit(readAll(examplePath(ex.model)), ex.files, e);
      ASSERT_TRUE(with->ok && without->ok);
      expectSameRun(*with, *without, 1e-10, 1e-8, /*withScratch=*/false);
    }
}

// codegen/transforms/RowKernelFission.cpp: statistics and entropies of all rows after
// the loop give the same posteriors as one row per iteration of it (the ELBO
// terms summed in another order), on one thread and on two; and it applies
// (the mixtures' indicators and the documents' topic mixes).
TEST(Inference, RowKernelFissionKeepsEveryExamplesIterations) {
  size_t hoisted = 0;
  for (const Example &ex : examples()) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(ex.model + " threads " + std::to_string(threads));
      FitOptions o = exampleOptions(ex, threads);
      auto whole = fit(readAll(examplePath(ex.model)), ex.files, o);
      o.disabled.push_back("row-fission");
      auto perRow = fit(readAll(examplePath(ex.model)), ex.files, o);
      ASSERT_TRUE(whole->ok) << whole->error;
      ASSERT_TRUE(perRow->ok) << perRow->error;
      if (threads == 1 && codegen::printPlan(*whole->plan).find("(all rows)") != std::string::npos)
        ++hoisted;
      expectSameRun(*whole, *perRow, 1e-12, 1e-12, /*withScratch=*/true);
    }
  }
  EXPECT_GE(hoisted, 6u);
}

// codegen/transforms/BatchDot.cpp: inner products with known rows on blocks
// of rows (and X^T X tabulated) give the same traces and posteriors as the
// per-datum calls, on one thread and on two, for every example; it applies to
// the regression, on a data set long enough for several blocks too, with the
// variances summed and the messages from the data's tables.
TEST(Inference, BatchDotKeepsEveryExamplesIterations) {
  size_t batched = 0, tabulated = 0;
  std::vector<Example> all = examples();
  {
    std::string rows = "x0,x1,x2,y\n"; // 5000 rows: two whole blocks of 2048 and the rest
    for (int i = 0; i < 5000; ++i) {
      double a = std::sin(0.37 * i), b = std::cos(0.11 * i), c = double(i % 13) / 13.0;
      rows += std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(c) + "," +
              std::to_string(1.5 * a - 2.0 * b + 0.5 * c + 0.1 * std::sin(5.3 * i)) + "\n";
    }
    Example long_ = {"linear_regression.ppl", {tempFile("long_regression.csv", rows)}, {{"x", "x*"}},
                     {{"D", "3"}}, std::nullopt};
    all.push_back(long_);
  }
  for (const Example &ex : all) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(ex.model + " threads " + std::to_string(threads));
      FitOptions o = exampleOptions(ex, threads);
      auto blocked = fit(readAll(examplePath(ex.model)), ex.files, o);
      o.disabled.push_back("batch-dot");
      auto perDatum = fit(readAll(examplePath(ex.model)), ex.files, o);
      ASSERT_TRUE(blocked->ok) << blocked->error;
      ASSERT_TRUE(perDatum->ok) << perDatum->error;
      const std::string plan = codegen::printPlan(*blocked->plan);
      if (threads == 1 && plan.find("ppc_dot_to_operand_") != std::string::npos)
        ++batched;
      if (threads == 1 && plan.find("ppc_dot_variance_sum") != std::string::npos &&
          plan.find("ppc_dot_to_operand_affine") != std::string::npos)
        ++tabulated;
      expectSameRun(*blocked, *perDatum, 1e-10, 1e-9, /*withScratch=*/true);
    }
  }
  EXPECT_GE(batched, 2u); // the regression on Boston and on the long data set
  // ... where variance-sums and affine-rows then read X once an iteration
  // (VarianceSums.cpp, AffineRows.cpp): the same runs as per datum.
  EXPECT_GE(tabulated, 2u);
}

// codegen/transforms/ProductNormalizerFusion.cpp: products normalized and sent on in
// one call (rows never stored; a factor common to a sum multiplied in after
// it) give the same traces and posteriors as the three calls with stored
// rows, on one thread and on two; and it applies (LDA's sweeps and refresh).
TEST(Inference, ProductNormalizerFusionKeepsEveryExamplesIterations) {
  size_t factored = 0, scattered = 0;
  for (const Example &ex : examples()) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(ex.model + " threads " + std::to_string(threads));
      FitOptions o = exampleOptions(ex, threads);
      // ppc's default schedules (nested for LDA), without data-dependent exits.
      o.localSchedule = passes::PassContext::LocalSchedule::Auto;
      o.localIterations = 3;
      o.localRestart = true;
      auto fused = fit(readAll(examplePath(ex.model)), ex.files, o);
      o.disabled.push_back("fuse-normalizers");
      auto stored = fit(readAll(examplePath(ex.model)), ex.files, o);
      ASSERT_TRUE(fused->ok) << fused->error;
      ASSERT_TRUE(stored->ok) << stored->error;
      if (threads == 1) {
        std::string plan = codegen::printPlan(*fused->plan);
        factored += plan.find("ppc_dot_inverse_axpy") != std::string::npos;
        scattered += plan.find("ppc_product_axpy_norm") != std::string::npos;
      }
      // Scratch rows are never stored when fused.
      expectSameRun(*fused, *stored, 1e-11, 1e-10, /*withScratch=*/false);
    }
  }
  EXPECT_GE(factored, 1u);
  EXPECT_GE(scattered, 1u);
}

// codegen/transforms/LogBatching.cpp: the refresh's log normalizers summed after the
// loop change the ELBO's rounding only, and no posterior (bitwise).
TEST(Inference, LogBatchingChangesOnlyTheElbosRounding) {
  size_t batched = 0;
  for (const Example &ex : examples()) {
    SCOPED_TRACE(ex.model);
    FitOptions o = exampleOptions(ex);
    o.localSchedule = passes::PassContext::LocalSchedule::Auto;
    o.localIterations = 3;
    o.localRestart = true;
    auto after = fit(readAll(examplePath(ex.model)), ex.files, o);
    o.disabled.push_back("batch-logs");
    auto inLoop = fit(readAll(examplePath(ex.model)), ex.files, o);
    ASSERT_TRUE(after->ok && inLoop->ok) << after->error << inLoop->error;
    batched += codegen::printPlan(*after->plan).find("ppc_weighted_log_sum") != std::string::npos;
    expectSameRun(*after, *inLoop, 1e-12, 0, /*withScratch=*/false);
  }
  EXPECT_GE(batched, 1u);
}

// codegen/transforms/RowPrefetch.cpp: prefetching the rows later tokens read changes
// no value (bitwise), and applies to tables of 4 MiB or more.
TEST(Inference, RowPrefetchChangesNoValue) {
  FitOptions o;
  o.map = {{"theta", "doc"}, {"x", "word"}};
  o.params = {{"V", "6000"}, {"K", "100"}};
  o.weight = "count";
  o.localSchedule = passes::PassContext::LocalSchedule::Auto;
  o.localIterations = 2;
  o.run.maxIterations = 3;
  o.run.tolerance = 0;
  std::string model = readAll(examplePath("lda.ppl"));
  std::vector<std::string> files = {examplePath("data/ap_small_d200_w500.csv")};
  auto with = fit(model, files, o);
  o.disabled.push_back("prefetch");
  auto without = fit(model, files, o);
  ASSERT_TRUE(with->ok && without->ok) << with->error << without->error;
  EXPECT_NE(codegen::printPlan(*with->plan).find("ppc_prefetch_row"), std::string::npos);
  EXPECT_EQ(codegen::printPlan(*without->plan).find("ppc_prefetch_row"), std::string::npos);
  expectSameRun(*with, *without, 0, 0, /*withScratch=*/false);
}

// codegen/transforms/RowBlocking.cpp: running the documents in batches, their tokens by
// blocks of the topic tables' rows, reorders sums only (LDA's sweep and the
// Dirichlet-multinomial mixture's counts, 8 MiB tables: V = 10,000,
// K = 100; one local sweep, the plain sweep of bench/lda_sweep.py). On one
// thread and two, with the JIT and the interpreter; the tokens also in
// descending word order within each document (a permutation per document).
TEST(Inference, RowBlockingReordersOnlySums) {
  // The small corpus's 500 words spread over 10,000 (word w -> 20 w), so
  // that its tokens reach rows of the whole table: blocks of 512 rows.
  struct Token {
    int doc, word;
    std::string count;
  };
  std::vector<Token> tokens;
  std::istringstream lines(readAll(examplePath("data/ap_small_d200_w500.csv")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    Token t;
    char count[32] = {0};
    ASSERT_EQ(std::sscanf(line.c_str(), "%d,%d,%31s", &t.doc, &t.word, count), 3) << line;
    t.count = count;
    tokens.push_back(t);
  }
  auto csv = [&](const std::string &name) {
    std::string text = "doc,word,count\n";
    for (const Token &t : tokens)
      text += std::to_string(t.doc) + "," + std::to_string(20 * t.word) + "," + t.count + "\n";
    return tempFile(name, text);
  };
  std::string ascending = csv("ascending.csv");
  std::stable_sort(tokens.begin(), tokens.end(),
                   [](const Token &a, const Token &b) { return std::pair{a.doc, -a.word} < std::pair{b.doc, -b.word}; });
  std::string descending = csv("descending.csv");
  struct Case {
    std::string model, local, file;
  };
  for (const Case &c : {Case{"lda.ppl", "theta", ascending}, Case{"lda.ppl", "theta", descending},
                        Case{"dirichlet_multinomial_mixture.ppl", "z", ascending}}) {
    for (int threads : {1, 2})
      for (std::string engine : {"jit", "interp"}) {
        SCOPED_TRACE(c.model + " " + c.file + " threads " + std::to_string(threads) + " " + engine);
        FitOptions o;
        o.map = {{c.local, "doc"}, {"x", "word"}};
        o.params = {{"V", "10000"}, {"K", "100"}};
        o.weight = "count";
        o.localSchedule = passes::PassContext::LocalSchedule::Auto;
        o.localIterations = 1;
        o.localTolerance = 0;
        o.localRestart = false;
        o.run.maxIterations = 3;
        o.run.tolerance = 0;
        o.threads = threads;
        o.engine = engine;
        std::string model = readAll(examplePath(c.model));
        auto blocked = fit(model, {c.file}, o);
        o.disabled.push_back("block-rows");
        auto inOrder = fit(model, {c.file}, o);
        ASSERT_TRUE(blocked->ok && inOrder->ok) << blocked->error << inOrder->error;
        std::string plan = codegen::printPlan(*blocked->plan);
        EXPECT_NE(plan.find("in batches of"), std::string::npos);
        EXPECT_EQ(plan.find("blockorder") != std::string::npos, c.file.find("descending") != std::string::npos);
        EXPECT_EQ(codegen::printPlan(*inOrder->plan).find("in batches of"), std::string::npos);
        expectSameRun(*blocked, *inOrder, 1e-12, 1e-9, /*withScratch=*/false);
      }
  }
}

// codegen/transforms/ColumnFission.cpp: the topics' datum-major counts added to their
// rows by tiles (V = 2000, K = 100: a 1.6 MB table) give the same run, entry
// by entry the same additions; on one thread and two, JIT and interpreter.
TEST(Inference, ColumnFissionChangesNothing) {
  std::string text = "doc,word,count\n";
  std::istringstream lines(readAll(examplePath("data/ap_small_d200_w500.csv")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    int doc = 0, word = 0;
    char count[32] = {0};
    ASSERT_EQ(std::sscanf(line.c_str(), "%d,%d,%31s", &doc, &word, count), 3) << line;
    text += std::to_string(doc) + "," + std::to_string(4 * word) + "," + count + "\n";
  }
  const std::string file = tempFile("spread.csv", text);
  for (const char *modelFile : {"lda.ppl", "dirichlet_multinomial_mixture.ppl"})
    for (int threads : {1, 2})
      for (std::string engine : {"jit", "interp"}) {
        SCOPED_TRACE(std::string(modelFile) + " threads " + std::to_string(threads) + " " + engine);
        FitOptions o;
        o.map = {{std::string(modelFile) == "lda.ppl" ? "theta" : "z", "doc"}, {"x", "word"}};
        o.params = {{"V", "2000"}, {"K", "100"}};
        o.weight = "count";
        o.localSchedule = passes::PassContext::LocalSchedule::Auto;
        o.run.maxIterations = 3;
        o.run.tolerance = 0;
        o.threads = threads;
        o.engine = engine;
        std::string model = readAll(examplePath(modelFile));
        auto split = fit(model, {file}, o);
        o.disabled.push_back("column-fission");
        auto strided = fit(model, {file}, o);
        ASSERT_TRUE(split->ok && strided->ok) << split->error << strided->error;
        EXPECT_NE(codegen::printPlan(*split->plan).find("ppc_axpy_transposed"), std::string::npos);
        EXPECT_EQ(codegen::printPlan(*strided->plan).find("ppc_axpy_transposed"), std::string::npos);
        expectSameRun(*split, *strided, 0, 0, /*withScratch=*/false);
      }
}

// codegen/transforms/EntropySharing.cpp: a Dirichlet's entropy from the log normalizers
// its statistics stored gives every example the same statistics bit for bit
// and the same ELBO but for the order of its sums; JIT and interpreter.
TEST(Inference, EntropySharingChangesOnlyTheElboRounding) {
  std::set<std::string> shared;
  for (const Example &ex : examples())
    for (std::string engine : {"jit", "interp"}) {
      SCOPED_TRACE(ex.model + " " + engine);
      FitOptions o = exampleOptions(ex);
      o.engine = engine;
      auto withSharing = fit(readAll(examplePath(ex.model)), ex.files, o);
      o.disabled.push_back("share-entropy");
      auto without = fit(readAll(examplePath(ex.model)), ex.files, o);
      ASSERT_TRUE(withSharing->ok && without->ok) << withSharing->error << without->error;
      if (codegen::printPlan(*withSharing->plan).find("ppc_dirichlet_entropy_lognorm_n") != std::string::npos)
        shared.insert(ex.model);
      EXPECT_EQ(codegen::printPlan(*without->plan).find("lognorm_n"), std::string::npos);
      expectSameRun(*withSharing, *without, 1e-13, 0, /*withScratch=*/true);
    }
  // The topics (LDA), the clusters' word distributions and the mixture weights.
  for (const char *model : {"lda.ppl", "dirichlet_multinomial_mixture.ppl", "gaussian_mixture.ppl"})
    EXPECT_EQ(shared.count(model), 1u) << model;
}

// Nested schedules (--local-iters N --local-restart): per document, the
// locals restart from their initialization (the random topic indicators),
// sweep N times, then send their messages to the topics.
TEST(Inference, NestedLocalSchedulesRunAndAgree) {
  for (bool restart : {false, true}) {
    SCOPED_TRACE(restart ? "restart" : "no restart");
    FitOptions o;
    o.map = {{"theta", "doc"}, {"x", "word"}};
    o.params = {{"V", "500"}, {"K", "5"}};
    o.weight = "count";
    o.localIterations = 3;
    o.localRestart = restart;
    o.run.maxIterations = 200;
    std::string model = readAll(examplePath("lda.ppl"));
    std::vector<std::string> files = {examplePath("data/ap_small_d200_w500.csv")};
    auto jit = fit(model, files, o);
    ASSERT_TRUE(jit->ok) << jit->error;
    EXPECT_TRUE(jit->summary.converged);
    // Symmetry is broken: the topics differ.
    const double *t0 = jit->stats("phi", 0), *t1 = jit->stats("phi", 1);
    double diff = 0;
    for (int w = 0; w < 500; ++w)
      diff += std::abs(t0[w] - t1[w]);
    EXPECT_GT(diff, 1.0);
    o.engine = "interp";
    o.run.maxIterations = 3;
    o.run.tolerance = 0;
    auto interp = fit(model, files, o);
    o.engine = "jit";
    auto jit3 = fit(model, files, o);
    ASSERT_TRUE(interp->ok && jit3->ok);
    for (size_t i = 0; i < 3; ++i)
      EXPECT_NEAR(jit3->summary.elbo[i], interp->summary.elbo[i], 1e-12 * std::abs(interp->summary.elbo[i]));
  }
}

/// ppc's defaults for LDA: the nested schedule with restarts (tools/ppc.cpp).
FitOptions ldaDefaults() {
  FitOptions o;
  o.map = {{"theta", "doc"}, {"x", "word"}};
  o.params = {{"V", "500"}, {"K", "5"}};
  o.weight = "count";
  o.localSchedule = passes::PassContext::LocalSchedule::Auto;
  o.localIterations = 10;
  o.localTolerance = 1e-3;
  o.localRestart = true;
  return o;
}

// The exponential-domain categorical updates are the same algorithm as the
// softmax of summed messages: equal ELBO traces up to rounding. The product
// form also takes the indicators' ELBO terms from their log normalizers
// (after the refresh that ends each document's sweeps); the softmax form
// evaluates the entropies and expected log factors term by term, so equal
// traces check that identity too.
TEST(Inference, ProductFormEqualsSoftmaxOfMessages) {
  FitOptions o = ldaDefaults();
  o.localTolerance = 0; // no data-dependent early exits: the same sweeps
  o.run.maxIterations = 10;
  o.run.tolerance = 0;
  std::string model = readAll(examplePath("lda.ppl"));
  std::vector<std::string> files = {examplePath("data/ap_small_d200_w500.csv")};
  auto product = fit(model, files, o);
  o.disabled.push_back("product-form");
  auto softmax = fit(model, files, o);
  ASSERT_TRUE(product->ok && softmax->ok) << product->error << softmax->error;
  bool usesProducts = false;
  for (const codegen::Buffer &b : product->plan->buffers)
    usesProducts = usesProducts || b.name == "phi.q.expcols";
  EXPECT_TRUE(usesProducts);
  std::string productPlan = codegen::printPlan(*product->plan), softmaxPlan = codegen::printPlan(*softmax->plan);
  EXPECT_NE(productPlan.find("ppc_product_axpy_norm"), std::string::npos);
  EXPECT_NE(productPlan.find("ppc_weighted_log_sum"), std::string::npos);
  EXPECT_EQ(productPlan.find("H q(x.1)"), std::string::npos);
  EXPECT_NE(softmaxPlan.find("H q(x.1)"), std::string::npos);
  for (size_t i = 0; i < 10; ++i)
    EXPECT_NEAR(product->summary.elbo[i], softmax->summary.elbo[i], 1e-9 * std::abs(softmax->summary.elbo[i]));
}

// Memory O(nnz + D K + K V): the per-token indicators of the nested schedule
// live in scratch rows of one document, never in a tokens x topics buffer.
TEST(Inference, NestedScheduleKeepsNoTokensByTopicsBuffer) {
  FitOptions o = ldaDefaults();
  o.run.maxIterations = 2;
  std::string model = readAll(examplePath("lda.ppl"));
  auto f = fit(model, {examplePath("data/ap_small_d200_w500.csv")}, o);
  ASSERT_TRUE(f->ok) << f->error;
  int64_t nnz = 0, maxDocument = 0;
  for (const codegen::Buffer &b : f->plan->buffers) {
    if (b.name == "data.x.int")
      nnz = b.size;
    if (b.name == "sizes.P.x")
      for (int64_t s : b.ints)
        maxDocument = std::max(maxDocument, s);
  }
  ASSERT_GT(nnz, 1000);
  for (const codegen::Buffer &b : f->plan->buffers) {
    SCOPED_TRACE(b.name);
    EXPECT_LE(b.size, std::max<int64_t>({nnz, 500 * 5, 200 * 5, maxDocument * 5}));
  }
  // The indicators are not an output (rows of the last document only).
  for (const rt::PosteriorTable &t : f->inference->posteriors())
    EXPECT_NE(t.variable, "x.1");
}

// ppc's default schedule for LDA was chosen by measurement (docs/inference.md):
// on this subset too, it ends at a better optimum than the plain schedule,
// with a trace that never decreases (run() fails on a decrease).
TEST(Inference, NestedScheduleBeatsPlainOnLda) {
  FitOptions nested = ldaDefaults();
  nested.run.maxIterations = 60;
  nested.run.tolerance = 1e-7;
  FitOptions plain = nested;
  plain.localSchedule = passes::PassContext::LocalSchedule::Plain;
  plain.localIterations = 1;
  plain.localRestart = false;
  plain.run.maxIterations = 300;
  std::string model = readAll(examplePath("lda.ppl"));
  std::vector<std::string> files = {examplePath("data/ap_small_d200_w500.csv")};
  auto a = fit(model, files, nested), b = fit(model, files, plain);
  ASSERT_TRUE(a->ok && b->ok) << a->error << b->error;
  EXPECT_GT(a->elbo(), b->elbo());
}

// Parallel loops: each chunk sums into its own copies, merged in chunk
// order. The JIT (threads) and the interpreter (chunks in sequence) give the
// same numbers; another thread count changes only the rounding of the sums.
TEST(Inference, ThreadsChangeOnlyTheRounding) {
  FitOptions o = ldaDefaults();
  o.localTolerance = 0;
  o.run.maxIterations = 5;
  o.run.tolerance = 0;
  std::string model = readAll(examplePath("lda.ppl"));
  std::vector<std::string> files = {examplePath("data/ap_small_d200_w500.csv")};
  auto one = fit(model, files, o);
  o.threads = 2;
  auto two = fit(model, files, o);
  o.threads = 3;
  auto three = fit(model, files, o);
  // Whether a loop's chunks ran on the pool's threads or one after another
  // (ParallelRunner's choice, from the time its last run took) never shows.
  auto threeAgain = fit(model, files, o);
  ASSERT_TRUE(threeAgain->ok);
  EXPECT_EQ(threeAgain->summary.elbo, three->summary.elbo);
  o.engine = "interp";
  auto threeInterp = fit(model, files, o);
  ASSERT_TRUE(one->ok && two->ok && three->ok && threeInterp->ok);
  bool parallel = false;
  for (const codegen::Stmt &s : two->plan->blocks[codegen::Plan::Iteration])
    parallel = parallel || (s.kind == codegen::Stmt::Kind::Loop && s.parallel && !s.reductions.empty());
  EXPECT_TRUE(parallel);
  for (size_t i = 0; i < 5; ++i) {
    double e = one->summary.elbo[i];
    EXPECT_NEAR(two->summary.elbo[i], e, 1e-9 * std::abs(e));
    EXPECT_NEAR(three->summary.elbo[i], e, 1e-9 * std::abs(e));
    EXPECT_NEAR(threeInterp->summary.elbo[i], three->summary.elbo[i], 1e-12 * std::abs(e));
  }
  // Old Faithful (the plain schedule, parallel loops over the data points).
  FitOptions g;
  g.run.maxIterations = 20;
  g.run.tolerance = 0;
  auto g1 = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, g);
  g.threads = 2;
  auto g2 = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, g);
  ASSERT_TRUE(g1->ok && g2->ok) << g1->error << g2->error;
  for (size_t i = 0; i < 20; ++i)
    EXPECT_NEAR(g2->summary.elbo[i], g1->summary.elbo[i], 1e-9 * std::abs(g1->summary.elbo[i]));
}

// The mixture of unigrams' cluster update (the schedule updates pi, then
// phi, then z): q(z_d = k) is the softmax over k of E log pi_k + sum over
// the document's words of count * E log phi_k[word], computed here from the
// final statistics of pi and phi and the CSV, against z's statistics (the
// plan sums the words' evidence for all clusters at once from phi's
// datum-major copy). 200 documents, V = 500, K = 5 and K = 20.
TEST(Inference, MixtureOfUnigramsClustersFollowTheirDefinition) {
  std::map<int, std::vector<std::pair<int, double>>> words;
  std::istringstream lines(readAll(examplePath("data/ap_small_d200_w500.csv")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    int doc = 0, word = 0;
    double count = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%d,%d,%lf", &doc, &word, &count), 3) << line;
    words[doc].emplace_back(word, count);
  }
  for (int K : {5, 20}) {
    SCOPED_TRACE("K = " + std::to_string(K));
    FitOptions o;
    o.map = {{"z", "doc"}, {"x", "word"}};
    o.params = {{"V", "500"}, {"K", std::to_string(K)}};
    o.weight = "count";
    o.run.maxIterations = 3;
    o.run.tolerance = 0;
    auto f = fit(readAll(examplePath("dirichlet_multinomial_mixture.ppl")), {examplePath("data/ap_small_d200_w500.csv")}, o);
    ASSERT_TRUE(f->ok) << f->error;
    EXPECT_NE(codegen::printPlan(*f->plan).find("(all cases, datum-major)"), std::string::npos);
    const double *pi = f->stats("pi");
    for (const auto &[doc, tokens] : words) {
      std::vector<double> logit(static_cast<size_t>(K));
      for (int k = 0; k < K; ++k) {
        logit[size_t(k)] = pi[k];
        for (const auto &[word, count] : tokens)
          logit[size_t(k)] += count * f->stats("phi", k)[word];
      }
      double top = *std::max_element(logit.begin(), logit.end()), sum = 0;
      for (double &l : logit)
        sum += (l = std::exp(l - top));
      const double *z = f->stats("z", doc);
      for (int k = 0; k < K; ++k)
        ASSERT_NEAR(z[k], logit[size_t(k)] / sum, 1e-9) << "document " << doc << ", cluster " << k;
    }
  }
}

// ParallelRunner::chunkStarts: chunks at equal shares of the elements'
// cumulative cost (codegen/transforms/ChunkBalancing.cpp), at the boundary nearest each
// share; without costs, equal counts.
TEST(Inference, ChunksSplitAtEqualCost) {
  using codegen::ParallelRunner;
  EXPECT_EQ(ParallelRunner::chunkStarts(nullptr, 5, 2), (std::vector<int64_t>{0, 2, 5}));
  const int64_t heavyLast[] = {0, 1, 2, 3, 13};
  EXPECT_EQ(ParallelRunner::chunkStarts(heavyLast, 4, 2), (std::vector<int64_t>{0, 3, 4}));
  const int64_t heavyFirst[] = {0, 10, 11, 12, 13, 14};
  EXPECT_EQ(ParallelRunner::chunkStarts(heavyFirst, 5, 2), (std::vector<int64_t>{0, 1, 5}));
  const int64_t even[] = {0, 2, 4, 6, 8, 10, 12};
  EXPECT_EQ(ParallelRunner::chunkStarts(even, 6, 3), (std::vector<int64_t>{0, 2, 4, 6}));
  // More chunks than costly elements: empty chunks, never overlapping ones.
  const int64_t one[] = {0, 0, 100, 100};
  EXPECT_EQ(ParallelRunner::chunkStarts(one, 3, 3), (std::vector<int64_t>{0, 1, 2, 3}));
}

[[maybe_unused]] long residentKiB() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0)
      return std::atol(line.c_str() + 6);
  return 0;
}

// Recompiling many times in one session does not grow memory: the code of a
// dropped engine is released (ORC resource trackers).
#if defined(__SANITIZE_ADDRESS__)
/// The JIT's code: executable mappings without a file.
long executableAnonymousMappings() {
  std::ifstream maps("/proc/self/maps");
  long n = 0;
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode >> path;
    n += perms.size() > 2 && perms[2] == 'x' && path.empty();
  }
  return n;
}
#endif

TEST(Inference, DroppedEnginesReleaseTheirCode) {
  FitOptions o;
  o.run.maxIterations = 1;
  std::string model = readAll(examplePath("gaussian_mixture.ppl"));
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(fit(model, {examplePath("data/faithful.csv")}, o)->ok);
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer resident memory also holds the allocator's
  // quarantine, shadow and stack depot, which grow by design: what is
  // checked instead is that the engines give back their code (the JIT's
  // executable mappings) and their heap (the bytes still allocated).
  const long codeBefore = executableAnonymousMappings();
  const size_t heapBefore = __sanitizer_get_current_allocated_bytes();
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(fit(model, {examplePath("data/faithful.csv")}, o)->ok);
  EXPECT_LE(executableAnonymousMappings() - codeBefore, 2) << "JIT code mappings kept over 100 compilations";
  const long heapGrown = (long(__sanitizer_get_current_allocated_bytes()) - long(heapBefore)) / 1024;
  EXPECT_LT(heapGrown, 8 * 1024) << "allocated memory grew by " << heapGrown << " KiB over 100 compilations";
#else
  long before = residentKiB();
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(fit(model, {examplePath("data/faithful.csv")}, o)->ok);
  long grown = residentKiB() - before;
  EXPECT_LT(grown, 8 * 1024) << "resident memory grew by " << grown << " KiB over 100 compilations";
#endif
}

} // namespace
