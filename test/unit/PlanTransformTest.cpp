// Plan transformations on hand-built plans: what each one may and may not
// change (codegen/transforms/ProductNormalizerFusion.cpp's liveness of the rows it
// stops storing). The loop transformations, the verifier and the pass
// manager are in PlanLoopTransformTest.cpp; the examples' end-to-end
// agreement is in InferenceTest.cpp.
#include "test/unit/PlanTestSupport.h"
#include "codegen/transforms/PlanPassManager.h"

#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>

#include <functional>
#include <memory>
#include <string>

using namespace ppc;
using namespace ppc::plantest;

namespace {

TEST(ProductNormalizerFusion, FactorsTheSharedFactorOutOfASumIntoOneRow) {
  ProductPlan pp;
  pp.inElementLoop({});
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 1);
  std::string plan = pp.printed();
  EXPECT_NE(plan.find("zero t.factored[0 +: 4]"), std::string::npos) << plan;
  EXPECT_NE(plan.find("ppc_dot_inverse_axpy(4, &a[0], &table[(x[i1] * 4)], w[i1], &t.factored[0])"), std::string::npos)
      << plan;
  EXPECT_NE(plan.find("ppc_mul_add_n(4, &a[0], &t.factored[0], &t[0])"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("&F["), std::string::npos) << plan;
  EXPECT_NE(plan.find("private F S t.factored"), std::string::npos) << plan;
}

TEST(ProductNormalizerFusion, ScattersToARowThatChangesWithTheDatum) {
  ProductPlan pp;
  pp.inElementLoop({}, /*toCounts=*/true);
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 1);
  std::string plan = pp.printed();
  EXPECT_NE(plan.find("ppc_product_axpy(4, &a[0], &table[(x[i1] * 4)], w[i1], &counts[(x[i1] * 4)])"), std::string::npos)
      << plan;
}

TEST(ProductNormalizerFusion, KeepsRowsThatAreReadLater) {
  ProductPlan pp;
  // The probabilities of datum 0 are read after the loop.
  std::vector<Stmt> after;
  after.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.S, pp.p.intConst(0)), pp.ptr(pp.u, pp.p.intConst(0))}));
  pp.inElementLoop(std::move(after));
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 0) << pp.printed();
}

TEST(ProductNormalizerFusion, KeepsRowsTheNextBlockMayRead) {
  ProductPlan pp;
  // Not in an element's loop: the rows outlive the block.
  pp.p.blocks[Plan::Iteration].push_back(pp.productLoop(1));
  pp.p.loopVars = 4;
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 0) << pp.printed();
}

TEST(ProductNormalizerFusion, ARowOverwrittenBeforeItIsReadIsDead) {
  ProductPlan pp;
  // A later loop over the same rows writes each row, then reads it.
  std::vector<Stmt> body;
  body.push_back(pp.call("ppc_fill", {pp.k(), pp.num(pp.p.doubleConst(1.0), Arg::Kind::Double), pp.ptr(pp.S, pp.row(2))}));
  body.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.S, pp.row(2)), pp.ptr(pp.u, pp.row(2))}));
  body.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.a, pp.p.intConst(0)), pp.ptr(pp.F, pp.row(2))}));
  std::vector<Stmt> after;
  after.push_back(pp.loop(2, N, std::move(body)));
  pp.inElementLoop(std::move(after));
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 1) << pp.printed();
}

TEST(ProductNormalizerFusion, AReadBeforeTheOverwriteKeepsTheRows) {
  ProductPlan pp;
  // The later loop reads row j before writing it.
  std::vector<Stmt> body;
  body.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.S, pp.row(2)), pp.ptr(pp.u, pp.row(2))}));
  body.push_back(pp.call("ppc_fill", {pp.k(), pp.num(pp.p.doubleConst(1.0), Arg::Kind::Double), pp.ptr(pp.S, pp.row(2))}));
  std::vector<Stmt> after;
  after.push_back(pp.loop(2, N, std::move(body)));
  pp.inElementLoop(std::move(after));
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 0) << pp.printed();
}

TEST(ProductNormalizerFusion, AnOverwriteOfAnotherRowFirstKeepsTheRows) {
  ProductPlan pp;
  // The later loop writes row j, then reads row 2: at j = 0 it reads row 2
  // before iteration j = 2 writes it.
  std::vector<Stmt> body;
  body.push_back(pp.call("ppc_fill", {pp.k(), pp.num(pp.p.doubleConst(1.0), Arg::Kind::Double), pp.ptr(pp.S, pp.row(2))}));
  body.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.S, pp.p.intConst(2 * K)), pp.ptr(pp.u, pp.row(2))}));
  std::vector<Stmt> after;
  after.push_back(pp.loop(2, N, std::move(body)));
  pp.inElementLoop(std::move(after));
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 0) << pp.printed();
}

TEST(ProductNormalizerFusion, AnOverwriteThatMayExitEarlyIsNotOne) {
  ProductPlan pp;
  // The overwriting loop may leave before writing every row; the rows are
  // read after it.
  std::vector<Stmt> body;
  Stmt exit;
  exit.kind = Stmt::Kind::ExitBelow;
  exit.buffer = pp.flag;
  exit.index = pp.p.intConst(0);
  exit.threshold = 0.5;
  body.push_back(pp.call("ppc_fill", {pp.k(), pp.num(pp.p.doubleConst(1.0), Arg::Kind::Double), pp.ptr(pp.S, pp.row(2))}));
  body.push_back(std::move(exit));
  std::vector<Stmt> after;
  after.push_back(pp.loop(2, N, std::move(body)));
  after.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.S, pp.p.intConst(2 * K)), pp.ptr(pp.u, pp.p.intConst(0))}));
  pp.inElementLoop(std::move(after));
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 0) << pp.printed();
}

// for d < N (not parallel, F and S not private) { product loop; after... }; then `tail` after it.
void inSharedLoop(ProductPlan &pp, std::vector<Stmt> after, std::vector<Stmt> tail) {
  std::vector<Stmt> body;
  body.push_back(pp.productLoop(1));
  for (Stmt &s : after)
    body.push_back(std::move(s));
  pp.p.blocks[Plan::Iteration].push_back(pp.loop(0, N, std::move(body)));
  for (Stmt &s : tail)
    pp.p.blocks[Plan::Iteration].push_back(std::move(s));
  pp.p.loopVars = 4;
}

/// for j < N { fill F[j]; fill S[j] }: every row of both overwritten.
Stmt overwriteBoth(ProductPlan &pp, int64_t count = K) {
  std::vector<Stmt> body;
  Arg n = pp.num(pp.p.intConst(count), Arg::Kind::Int), one = pp.num(pp.p.doubleConst(1.0), Arg::Kind::Double);
  body.push_back(pp.call("ppc_fill", {n, one, pp.ptr(pp.F, pp.row(2))}));
  body.push_back(pp.call("ppc_fill", {n, one, pp.ptr(pp.S, pp.row(2))}));
  return pp.loop(2, N, std::move(body));
}

TEST(ProductNormalizerFusion, AnOverwriteOfEveryRowByALaterLoopMakesThemDead) {
  ProductPlan pp;
  std::vector<Stmt> after, tail;
  after.push_back(overwriteBoth(pp));
  tail.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.S, pp.p.intConst(0)), pp.ptr(pp.u, pp.p.intConst(0))}));
  inSharedLoop(pp, std::move(after), std::move(tail));
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 1) << pp.printed();
}

TEST(ProductNormalizerFusion, ACallWritingOneRowOfAnEqualBoundLoopIsNotAnOverwrite) {
  ProductPlan pp;
  // The outer loop has the rows loop's bound (N): F[d] is one row of F,
  // and row 2 is read before the outer loop's iteration d = 2 writes it.
  std::vector<Stmt> after;
  after.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.a, pp.p.intConst(0)), pp.ptr(pp.F, pp.row(0))}));
  after.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.F, pp.p.intConst(2 * K)), pp.ptr(pp.u, pp.p.intConst(0))}));
  std::vector<Stmt> body;
  Arg one = pp.num(pp.p.doubleConst(1.0), Arg::Kind::Double);
  body.push_back(pp.call("ppc_fill", {pp.k(), one, pp.ptr(pp.S, pp.row(2))}));
  after.push_back(pp.loop(2, N, std::move(body)));
  inSharedLoop(pp, std::move(after), {});
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 0) << pp.printed();
}

TEST(ProductNormalizerFusion, AnExitBeforeTheOverwriteLetsLaterReadersSeeTheRows) {
  ProductPlan pp;
  // The outer loop may leave before the overwrite; after it, row 0 of S is read.
  Stmt exit;
  exit.kind = Stmt::Kind::ExitBelow;
  exit.buffer = pp.flag;
  exit.index = pp.p.intConst(0);
  exit.threshold = 0.5;
  std::vector<Stmt> after, tail;
  after.push_back(std::move(exit));
  after.push_back(overwriteBoth(pp));
  tail.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.S, pp.p.intConst(0)), pp.ptr(pp.u, pp.p.intConst(0))}));
  inSharedLoop(pp, std::move(after), std::move(tail));
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 0) << pp.printed();
}

TEST(ProductNormalizerFusion, APartialRowWriteIsNotAnOverwrite) {
  ProductPlan pp;
  std::vector<Stmt> after, tail;
  after.push_back(overwriteBoth(pp, K - 1));
  tail.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.S, pp.p.intConst(0)), pp.ptr(pp.u, pp.p.intConst(0))}));
  inSharedLoop(pp, std::move(after), std::move(tail));
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 0) << pp.printed();
}

TEST(ProductNormalizerFusion, AMessageIntoAFactorsOwnBufferStaysUnfused) {
  ProductPlan pp;
  std::vector<Stmt> body;
  body.push_back(pp.productLoop(1, /*toCounts=*/true, /*countsBuffer=*/pp.table));
  Stmt outer = pp.loop(0, 2, std::move(body));
  outer.parallel = true;
  outer.privates = {pp.F, pp.S};
  pp.p.blocks[Plan::Iteration].push_back(std::move(outer));
  pp.p.loopVars = 4;
  EXPECT_EQ(codegen::fuseProductNormalizers(pp.p), 0) << pp.printed();
}

// codegen/transforms/GatherDots.cpp: a factored sum's loop over an element's
// data becomes one call on its index and weight rows, read from where the
// loop's first datum reads them; anything else stays a loop.
struct GatherPlan : ProductPlan {
  GatherPlan() {
    p.buffers[size_t(x)].ints = {1, 2, 3};
    p.buffers[size_t(w)].doubles = {0.5, 1.5, 2.5};
    p.loopVars = 4;
  }
  /// for i1 < N { ppc_dot_inverse_axpy(K, &a[0], &table[tableIndex], weight, &t[0]) }
  int run(ExprId tableIndex, ExprId weight, int32_t accBuffer = -1) {
    Stmt c = call("ppc_dot_inverse_axpy", {k(), ptr(a, p.intConst(0)), ptr(table, tableIndex),
                                           num(weight, Arg::Kind::Double), ptr(accBuffer >= 0 ? accBuffer : t, p.intConst(0))});
    p.blocks[Plan::Iteration].push_back(loop(1, N, {std::move(c)}));
    p.exprs.shrink_to_fit(); // the next new expression moves them
    return codegen::gatherFactoredDots(p);
  }
  ExprId i() { return p.loopVar(1); }
  ExprId gathered(ExprId position) { return p.mul(p.loadInt(x, position), p.intConst(K)); }
};

TEST(GatherDots, OneCallOnTheIndexAndWeightRows) {
  GatherPlan g;
  EXPECT_EQ(g.run(g.gathered(g.i()), g.p.loadDouble(g.w, g.i())), 1);
  EXPECT_NE(g.printed().find("ppc_dot_inverse_axpy_gather(3, 4, &a[0], &table[0], &x[0], &w[0], 1.0, &t[0])"),
            std::string::npos) << g.printed();
}

TEST(GatherDots, RowsFromWhereTheFirstDatumReadsThem) {
  GatherPlan g;
  EXPECT_EQ(g.run(g.gathered(g.p.add(g.p.intConst(1), g.i())), g.p.loadDouble(g.w, g.p.add(g.i(), g.p.intConst(2)))),
            1);
  EXPECT_NE(g.printed().find("ppc_dot_inverse_axpy_gather(3, 4, &a[0], &table[0], &x[1], &w[2], 1.0, &t[0])"),
            std::string::npos) << g.printed();
}

TEST(GatherDots, AWeightTheSameForEveryDatumIsPassedAsIs) {
  GatherPlan g;
  EXPECT_EQ(g.run(g.gathered(g.i()), g.p.loadDouble(g.w, g.p.intConst(2))), 1);
  EXPECT_NE(g.printed().find("ppc_dot_inverse_axpy_gather(3, 4, &a[0], &table[0], &x[0], null, w[2], &t[0])"),
            std::string::npos) << g.printed();
}

TEST(GatherDots, OtherLoopsStayLoops) {
  { // the weight reads the sum the loop adds to
    GatherPlan g;
    EXPECT_EQ(g.run(g.gathered(g.i()), g.p.loadDouble(g.t, g.p.intConst(0))), 0) << g.printed();
  }
  { // every other datum
    GatherPlan g;
    EXPECT_EQ(g.run(g.gathered(g.p.mul(g.i(), g.p.intConst(2))), g.p.doubleConst(1.0)), 0) << g.printed();
  }
  { // the row plus an offset: not the start of a row of the table
    GatherPlan g;
    EXPECT_EQ(g.run(g.p.add(g.gathered(g.i()), g.p.intConst(1)), g.p.doubleConst(1.0)), 0) << g.printed();
  }
  { // an index the run changes (not bound data)
    GatherPlan g;
    g.p.buffers[size_t(g.x)].ints.clear();
    EXPECT_EQ(g.run(g.gathered(g.i()), g.p.doubleConst(1.0)), 0) << g.printed();
  }
  { // the sum into the table it reads
    GatherPlan g;
    EXPECT_EQ(g.run(g.gathered(g.i()), g.p.doubleConst(1.0), g.table), 0) << g.printed();
  }
}

// codegen/transforms/LocalRows.cpp: an element's rows of the table, read by
// each of its sweeps, are copied once before them; not where the element's
// loop also writes the table, nor for a single sweep.
struct LocalRowsPlan : GatherPlan {
  /// for e < 2 { [write]; for s < sweeps { ppc_dot_inverse_axpy_gather(N, K, &a[0], &table[0], &x[0], &w[0], 1.0, &t[0]) } }
  /// `after`: then for i3 < N { ppc_product_axpy_norm(K, &a[0], &table[x[i3 + shiftRow] * K], ...) }
  int run(int64_t sweeps, bool writeTable, bool after = false, int64_t shiftRow = 0) {
    Stmt c = call("ppc_dot_inverse_axpy_gather", {num(p.intConst(N), Arg::Kind::Int), k(), ptr(a, p.intConst(0)),
                                                  ptr(table, p.intConst(0)), ptr(x, p.intConst(0)),
                                                  ptr(w, p.intConst(0)), num(p.doubleConst(1.0), Arg::Kind::Double),
                                                  ptr(t, p.intConst(0))});
    std::vector<Stmt> body;
    if (writeTable)
      body.push_back(call("ppc_axpy", {k(), num(p.doubleConst(1.0), Arg::Kind::Double), ptr(a, p.intConst(0)),
                                       ptr(table, p.intConst(0))}));
    body.push_back(loop(2, sweeps, {std::move(c)}));
    if (after) {
      const ExprId datum = p.add(p.loopVar(3), p.intConst(shiftRow));
      const ExprId word = p.mul(p.loadInt(x, datum), p.intConst(K));
      Stmt norm = call("ppc_product_axpy_norm",
                       {k(), ptr(a, p.intConst(0)), ptr(table, word), num(p.doubleConst(0.0), Arg::Kind::Double),
                        num(p.loadDouble(w, p.loopVar(3)), Arg::Kind::Double), ptr(counts, word),
                        ptr(u, p.loopVar(3))});
      norm.result = Stmt::Result::Elbo;
      body.push_back(loop(3, N, {std::move(norm)}));
    }
    p.blocks[Plan::Iteration].push_back(loop(0, 2, std::move(body)));
    return codegen::copyLocalRows(p);
  }
};

TEST(LocalRows, CopiesTheElementsRowsOnceForItsSweeps) {
  LocalRowsPlan l;
  EXPECT_EQ(l.run(3, false), 1);
  const std::string plan = l.printed();
  EXPECT_NE(plan.find("buffer table.rows : f64[12] (memo)"), std::string::npos) << plan;
  EXPECT_NE(plan.find("ppc_gather_rows(3, 4, &table[0], &x[0], &table.rows[0])"), std::string::npos) << plan;
  EXPECT_NE(plan.find("ppc_dot_inverse_axpy_rows(3, 4, &a[0], &table.rows[0], &w[0], 1.0, &t[0])"), std::string::npos)
      << plan;
  EXPECT_LT(plan.find("ppc_gather_rows"), plan.find("for i2 < 3")) << plan;
}

TEST(LocalRows, TheElboPassOverTheSameDataReadsTheCopy) {
  LocalRowsPlan l;
  EXPECT_EQ(l.run(3, false, /*after=*/true), 1);
  std::string plan = l.printed();
  EXPECT_NE(plan.find("ppc_product_axpy_norm(4, &a[0], &table.rows[(i3 * 4)], 0.0, w[i3], &counts[(x[i3] * 4)], &u[i3])"),
            std::string::npos)
      << plan;
  // Data other than the copy's (one datum on): the table's rows.
  LocalRowsPlan shifted;
  EXPECT_EQ(shifted.run(3, false, /*after=*/true, /*shiftRow=*/1), 1);
  plan = shifted.printed();
  EXPECT_NE(plan.find("ppc_product_axpy_norm(4, &a[0], &table[(x[(i3 + 1)] * 4)]"), std::string::npos) << plan;
}

TEST(LocalRows, LeavesATableTheElementWritesAndASingleSweep) {
  LocalRowsPlan written;
  EXPECT_EQ(written.run(3, true), 0) << written.printed();
  LocalRowsPlan once;
  EXPECT_EQ(once.run(1, false), 0) << once.printed();
}

// codegen/transforms/DeferStats.cpp on two elements, each with a loop of 3
// sweeps that refreshes the element's exponential table from its statistics
// (LDA's documents):
//   for e < 2 { [restart: for r < 1 { stats; exp }] [exit]
//               for s < 3 { eta += a; stats; exp; [a read of stats] }
//               elbo += entropy(eta, stats) }
struct DeferStatsPlan : ProductPlan {
  int32_t eta = buffer("eta", 2 * K), stats = buffer("stats", 2 * K), exp = buffer("exp", 2 * K),
          shift = buffer("shift", 2);

  /// The statistics, then their exponentials, of element e's row (`rowVar`: of the row of that loop variable instead).
  std::vector<Stmt> pair(int32_t rowVar = 0) {
    std::vector<Stmt> out;
    out.push_back(call("ppc_dirichlet_stats_n",
                       {num(p.intConst(1), Arg::Kind::Int), k(), ptr(eta, row(rowVar)), ptr(stats, row(rowVar))}));
    out.push_back(call("ppc_exp_shifted_n",
                       {k(), ptr(stats, row(rowVar)), ptr(exp, row(rowVar)), ptr(shift, p.loopVar(rowVar))}));
    return out;
  }
  int run(bool restart, bool exitBetween, bool readInSweeps, int32_t rowVar = 0) {
    std::vector<Stmt> element;
    if (restart)
      element.push_back(loop(1, 1, pair()));
    if (exitBetween) {
      Stmt exit;
      exit.kind = Stmt::Kind::ExitBelow;
      exit.buffer = flag;
      exit.index = p.intConst(0);
      exit.threshold = 0.5;
      element.push_back(std::move(exit));
    }
    std::vector<Stmt> sweep;
    sweep.push_back(call("ppc_axpy", {k(), num(p.doubleConst(1.0), Arg::Kind::Double), ptr(a, p.intConst(0)),
                                      ptr(eta, row(0))}));
    for (Stmt &s : pair(rowVar))
      sweep.push_back(std::move(s));
    if (readInSweeps)
      sweep.push_back(call("ppc_axpy", {k(), num(p.doubleConst(1.0), Arg::Kind::Double), ptr(stats, row(0)),
                                        ptr(t, p.intConst(0))}));
    element.push_back(loop(2, 3, std::move(sweep)));
    Stmt entropy = call("ppc_dirichlet_entropy_n",
                        {num(p.intConst(1), Arg::Kind::Int), k(), ptr(eta, row(0)), ptr(stats, row(0))});
    entropy.result = Stmt::Result::Elbo;
    element.push_back(std::move(entropy));
    p.blocks[Plan::Iteration].push_back(loop(0, 2, std::move(element)));
    p.loopVars = 3;
    p.exprs.shrink_to_fit(); // the next new expression moves them
    return codegen::deferLoopStatistics(p);
  }
  size_t count(const std::string &plan, const std::string &what) const {
    size_t n = 0;
    for (size_t at = plan.find(what); at != std::string::npos; at = plan.find(what, at + 1))
      ++n;
    return n;
  }
};

TEST(DeferStats, ComputesTheExponentialsInTheLoopAndTheStatisticsAfterIt) {
  DeferStatsPlan d;
  EXPECT_EQ(d.run(false, false, false), 1);
  const std::string plan = d.printed();
  EXPECT_NE(plan.find("ppc_dirichlet_exp_stats(4, &eta[(i0 * 4)], &exp[(i0 * 4)], &shift[i0])"), std::string::npos)
      << plan;
  EXPECT_EQ(d.count(plan, "ppc_exp_shifted_n"), 0u) << plan;
  // Once, after the sweeps and before the entropy reads them.
  EXPECT_EQ(d.count(plan, "ppc_dirichlet_stats_n(1, 4, &eta[(i0 * 4)], &stats[(i0 * 4)])"), 1u) << plan;
  EXPECT_LT(plan.find("ppc_dirichlet_exp_stats"), plan.find("ppc_dirichlet_stats_n")) << plan;
  EXPECT_LT(plan.find("ppc_dirichlet_stats_n"), plan.find("ppc_dirichlet_entropy_n")) << plan;
}

TEST(DeferStats, LeavesOutStatisticsTheNextStatementComputesAgain) {
  DeferStatsPlan restart;
  EXPECT_EQ(restart.run(true, false, false), 2);
  std::string plan = restart.printed();
  EXPECT_EQ(restart.count(plan, "ppc_dirichlet_exp_stats"), 2u) << plan;
  EXPECT_EQ(restart.count(plan, "ppc_dirichlet_stats_n"), 1u) << plan;
  // An exit between the restart and the sweeps: its statistics stay.
  DeferStatsPlan exit;
  EXPECT_EQ(exit.run(true, true, false), 2);
  plan = exit.printed();
  EXPECT_EQ(exit.count(plan, "ppc_dirichlet_stats_n"), 2u) << plan;
}

TEST(DeferStats, LeavesALoopThatReadsTheStatisticsOrMovesTheirRow) {
  DeferStatsPlan read;
  EXPECT_EQ(read.run(false, false, true), 0) << read.printed();
  DeferStatsPlan moving;  // each sweep its own row: no one row to compute after the loop
  EXPECT_EQ(moving.run(false, false, false, /*rowVar=*/2), 0) << moving.printed();
}

// codegen/transforms/RowPrefetch.cpp: a table of 4 MiB or more read at a datum's row
// gets that row prefetched 16 data ahead (32-byte rows); small tables not.
TEST(RowPrefetch, PrefetchesTheRowOfTheDatumAhead) {
  ProductPlan pp;
  pp.p.buffers[size_t(pp.table)].size = 1 << 20; // 8 MiB
  pp.p.buffers[size_t(pp.x)].ints = {1, 2, 3};
  pp.p.blocks[Plan::Iteration].push_back(pp.productLoop(1, /*toCounts=*/true));
  pp.p.loopVars = 4;
  pp.p.exprs.shrink_to_fit(); // the next new expression moves them
  EXPECT_EQ(codegen::prefetchIndexedRows(pp.p), 1);
  std::string plan = pp.printed();
  EXPECT_NE(plan.find("ppc_prefetch_row(&x[0], i1, 3, 16, &table[0], 4)"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("&counts[0], 4)"), std::string::npos) << plan;
}

// codegen/transforms/LogBatching.cpp: the log normalizers of a loop whose weights are
// w[i] are summed after it from &w[0].
TEST(LogBatching, SumsTheWeightedLogsAfterTheLoop) {
  ProductPlan pp;
  pp.p.buffers[size_t(pp.w)].doubles = {1, 2, 3};
  ExprId xi = pp.p.loadInt(pp.x, pp.p.loopVar(1)), wi = pp.p.loadDouble(pp.w, pp.p.loopVar(1));
  Stmt c = pp.call("ppc_product_axpy_lognorm",
                   {pp.k(), pp.ptr(pp.a, pp.p.intConst(0)), pp.ptr(pp.table, pp.p.mul(xi, pp.p.intConst(K))),
                    pp.num(pp.p.doubleConst(0.5), Arg::Kind::Double), pp.num(wi, Arg::Kind::Double),
                    pp.ptr(pp.counts, pp.p.mul(xi, pp.p.intConst(K)))});
  c.result = Stmt::Result::Elbo;
  c.scale = wi;
  std::vector<Stmt> body;
  body.push_back(std::move(c));
  pp.p.blocks[Plan::Iteration].push_back(pp.loop(1, N, std::move(body)));
  pp.p.loopVars = 4;
  pp.p.exprs.shrink_to_fit();
  EXPECT_EQ(codegen::batchLogNormalizers(pp.p), 1);
  std::string plan = pp.printed();
  EXPECT_NE(plan.find("ppc_product_axpy_norm(4, &a[0], &table[(x[i1] * 4)], 0.5, w[i1], &counts[(x[i1] * 4)], "
                      "&normalizers[i1])"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("elbo += ppc_weighted_log_sum(3, &normalizers[0], &w[0])"), std::string::npos) << plan;
}

} // namespace

// codegen/transforms/ProductIdentityFolding.cpp: `fill 1; mul a; mul b` on one
// row becomes `mul2 a b`; a fill of another value, or a multiply into another
// row, is left alone.
TEST(ProductIdentityFolding, FoldsTheIdentityAndTwoFactorsIntoOneCall) {
  ProductPlan pp;
  Plan &p = pp.p;
  auto fill = [&](double v, int32_t dst) {
    return pp.call("ppc_fill", {pp.k(), pp.num(p.doubleConst(v), Arg::Kind::Double), pp.ptr(dst, pp.row(1))});
  };
  auto mul = [&](int32_t src, int32_t dst) {
    return pp.call("ppc_mul_n", {pp.k(), pp.ptr(src, p.intConst(0)), pp.ptr(dst, pp.row(1))});
  };
  p.blocks[Plan::Iteration].push_back(
      pp.loop(1, N, {fill(1.0, pp.F), mul(pp.a, pp.F), mul(pp.t, pp.F), fill(2.0, pp.S), mul(pp.a, pp.S),
                     fill(1.0, pp.u), mul(pp.a, pp.F)}));
  p.loopVars = 2;
  EXPECT_EQ(codegen::foldProductIdentities(p), 2);
  const std::vector<Stmt> &body = p.blocks[Plan::Iteration][0].body;
  ASSERT_EQ(body.size(), 5u) << pp.printed();
  EXPECT_EQ(body[0].kernel->name, "ppc_mul2_n");
  EXPECT_EQ(body[0].args[1].buffer, pp.a);
  EXPECT_EQ(body[0].args[2].buffer, pp.t);
  EXPECT_EQ(body[0].args[3].buffer, pp.F);
  EXPECT_EQ(body[1].kernel->name, "ppc_fill"); // fill 2: not the identity
  EXPECT_EQ(body[2].kernel->name, "ppc_mul_n");
  EXPECT_EQ(body[3].kernel->name, "ppc_fill"); // the next multiply goes to another row
  EXPECT_EQ(body[4].kernel->name, "ppc_mul_n");
  std::string error;
  EXPECT_TRUE(codegen::verifyPlan(p, error)) << error;
}
