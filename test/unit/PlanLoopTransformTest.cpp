// Plan transformations that reorder or split loops (row blocking, column
// fission, entropy sharing, chunk balancing) on hand-built plans, and the
// plan's verifier and pass manager. The product-form transformations are in
// PlanTransformTest.cpp.
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

// codegen/transforms/RowBlocking.cpp on two elements of a parallel loop, each with its
// data (x, offsets o, sizes n) in a data loop that scatters the element's
// private row into the rows of a large table (4-double rows: blocks of
// 25,600 rows; x up to 80,000: four blocks).
struct BlockedPlan {
  ProductPlan pp;
  int32_t o, n, own;
  Plan &p = pp.p;

  explicit BlockedPlan(std::vector<int64_t> x, bool exitInside = false) {
    p.buffers[size_t(pp.table)].size = int64_t(1) << 20; // 8 MiB
    p.buffers[size_t(pp.x)].ints = std::move(x);
    p.buffers[size_t(pp.x)].size = int64_t(p.buffers[size_t(pp.x)].ints.size());
    p.buffers[size_t(pp.w)].doubles.assign(p.buffers[size_t(pp.x)].ints.size(), 1.0);
    p.buffers[size_t(pp.w)].size = p.buffers[size_t(pp.x)].size;
    o = pp.buffer("o", 3, true);
    n = pp.buffer("n", 2, true);
    p.buffers[size_t(o)].ints = {0, 5, 9};
    p.buffers[size_t(n)].ints = {5, 4};
    own = pp.buffer("own", K);
    // parallel for e < 2 private own { own = F[e]; for t < n[e] { table[x[o[e] + t]] += w * own }; elbo += f(own) }
    ExprId e = p.loopVar(0), datum = p.add(p.loadInt(o, e), p.loopVar(1));
    std::vector<Stmt> data;
    data.push_back(pp.call("ppc_axpy", {pp.k(), pp.num(p.loadDouble(pp.w, datum), Arg::Kind::Double),
                                        pp.ptr(own, p.intConst(0)),
                                        pp.ptr(pp.table, p.mul(p.loadInt(pp.x, datum), p.intConst(K)))}));
    if (exitInside) {
      Stmt exit;
      exit.kind = Stmt::Kind::ExitBelow;
      exit.buffer = pp.flag;
      exit.index = p.intConst(0);
      data.push_back(exit);
    }
    Stmt dataLoop = pp.loop(1, 0, std::move(data));
    dataLoop.bound = p.loadInt(n, e);
    std::vector<Stmt> body;
    body.push_back(pp.call("ppc_copy_n", {pp.k(), pp.ptr(pp.F, pp.row(0)), pp.ptr(own, p.intConst(0))}));
    body.push_back(std::move(dataLoop));
    Stmt last = pp.call("ppc_weighted_log_sum", {pp.k(), pp.ptr(own, p.intConst(0)), pp.ptr(pp.w, p.intConst(0))});
    last.result = Stmt::Result::Elbo;
    body.push_back(std::move(last));
    Stmt outer = pp.loop(0, 2, std::move(body));
    outer.parallel = true;
    outer.privates = {own};
    outer.reductions = {pp.table};
    p.blocks[Plan::Iteration].push_back(std::move(outer));
    p.loopVars = 2;
    p.exprs.shrink_to_fit();
  }
  const codegen::Buffer *named(const std::string &name) const {
    for (const codegen::Buffer &b : p.buffers)
      if (b.name == name)
        return &b;
    return nullptr;
  }
};

TEST(RowBlocking, BatchesTheElementsAndVisitsTheirDataByBlocks) {
  BlockedPlan bp({0, 26000, 26001, 52000, 80000, 1, 27000, 60000, 79000});
  ASSERT_EQ(codegen::blockIndexedRows(bp.p, 2 << 20), 1);
  std::string plan = bp.pp.printed();
  // Each element's count of data below each block boundary, from the data.
  const codegen::Buffer *blocks = bp.named("x.blocks");
  ASSERT_NE(blocks, nullptr) << plan;
  EXPECT_EQ(blocks->ints, (std::vector<int64_t>{0, 1, 3, 4, 5, 0, 1, 2, 3, 4}));
  EXPECT_EQ(bp.named("x.blockorder"), nullptr) << "sorted data need no permutation";
  // The element's private row: one copy per element of the batch.
  EXPECT_NE(plan.find("parallel for i0 < 2 by 256 (i2 of them) private own.batch sum table"), std::string::npos) << plan;
  EXPECT_NE(plan.find("for i3 < i2  // the batch's elements {\n"
                      "      ppc_copy_n(4, &F[((i0 + i3) * 4)], &own.batch[(i3 * 4)])"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("for i4 < 4  // blocks of the table's rows"), std::string::npos) << plan;
  EXPECT_NE(plan.find("ppc_axpy(4, w[(o[(i0 + i5)] + (x.blocks[(((i0 + i5) * 5) + i4)] + i6))], &own.batch[(i5 * 4)], "
                      "&table[(x[(o[(i0 + i5)] + (x.blocks[(((i0 + i5) * 5) + i4)] + i6))] * 4)])"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("elbo += ppc_weighted_log_sum(4, &own.batch[(i7 * 4)], &w[0])"), std::string::npos) << plan;
}

TEST(RowBlocking, UnsortedDataGoThroughAPermutation) {
  BlockedPlan bp({52000, 0, 80000, 26001, 26000, 1, 27000, 60000, 79000});
  ASSERT_EQ(codegen::blockIndexedRows(bp.p, 2 << 20), 1);
  const codegen::Buffer *order = bp.named("x.blockorder");
  ASSERT_NE(order, nullptr);
  // Element 0's data in the order of their rows (equal rows keep theirs).
  EXPECT_EQ(order->ints, (std::vector<int64_t>{1, 4, 3, 0, 2, 0, 1, 2, 3}));
  EXPECT_NE(bp.pp.printed().find("x.blockorder[(o[(i0 + i5)] + (x.blocks[(((i0 + i5) * 5) + i4)] + i6))]"),
            std::string::npos)
      << bp.pp.printed();
}

TEST(RowBlocking, LeavesLoopsItCannotReorder) {
  // A per-element exit (a convergence test) ties the element's statements
  // to their order.
  BlockedPlan withExit({0, 26000, 26001, 52000, 80000, 1, 27000, 60000, 79000}, /*exitInside=*/true);
  EXPECT_EQ(codegen::blockIndexedRows(withExit.p, 2 << 20), 0);
  // Data spread over more blocks than they fill: most (element, block)
  // pairs would be empty.
  BlockedPlan sparse({0, 30000, 300000, 600000, 900000, 1, 2, 3, 4});
  EXPECT_EQ(codegen::blockIndexedRows(sparse.p, 2 << 20), 0);
  // A table that fits in L2 (4-row blocks of 1,024 entries: no need).
  BlockedPlan small({0, 26000, 26001, 52000, 80000, 1, 27000, 60000, 79000});
  small.p.buffers[size_t(small.pp.table)].size = 1024;
  EXPECT_EQ(codegen::blockIndexedRows(small.p, 2 << 20), 0);
  EXPECT_EQ(small.named("x.blocks"), nullptr);
  // A core with 1 MiB of L2: a block's rows and the batch's would not stay
  // in it together.
  BlockedPlan smallCache({0, 26000, 26001, 52000, 80000, 1, 27000, 60000, 79000});
  EXPECT_EQ(codegen::blockIndexedRows(smallCache.p, 1 << 20), 0);
}

TEST(RowBlocking, BlocksGrowWithTheCache) {
  // 4 MiB of L2: blocks of 51,200 rows of 32 bytes (1600 KiB), two of them
  // below row 80,000 (the batch: 800 KiB of 64-byte rows, capped at 256).
  BlockedPlan bp({0, 26000, 26001, 52000, 80000, 1, 27000, 60000, 79000});
  ASSERT_EQ(codegen::blockIndexedRows(bp.p, 4 << 20), 1);
  const codegen::Buffer *blocks = bp.named("x.blocks");
  ASSERT_NE(blocks, nullptr) << bp.pp.printed();
  EXPECT_EQ(blocks->ints, (std::vector<int64_t>{0, 3, 5, 0, 2, 4}));
}

// codegen/transforms/ColumnFission.cpp: parallel for k < 4 { zero eta[k]; eta[k] +=
// column k of the datum-major B (V x 4); stats(eta[k]) }, V = 65536 (2 MiB).
struct ColumnPlan {
  ProductPlan pp;
  Plan &p = pp.p;
  static constexpr int64_t V = 65536;
  int32_t B, eta, stats;
  ColumnPlan() {
    B = pp.buffer("B", V * K);
    eta = pp.buffer("eta", K * V);
    stats = pp.buffer("stats", K * V);
  }
  Stmt topics(bool privateRow = false) {
    ExprId row = p.mul(p.loopVar(0), p.intConst(V));
    std::vector<Stmt> body;
    body.push_back(pp.zero(eta, row, V));
    body.push_back(pp.call("ppc_axpy_strided", {pp.num(p.intConst(V), Arg::Kind::Int), pp.k(),
                                                pp.num(p.doubleConst(1.0), Arg::Kind::Double),
                                                pp.ptr(B, p.loopVar(0)), pp.ptr(eta, row)}));
    body.push_back(pp.call("ppc_dirichlet_stats_n", {pp.num(p.intConst(1), Arg::Kind::Int),
                                                     pp.num(p.intConst(V), Arg::Kind::Int), pp.ptr(eta, row),
                                                     pp.ptr(stats, row)}));
    Stmt l = pp.loop(0, K, std::move(body));
    l.parallel = true;
    if (privateRow)
      l.privates = {pp.F};
    p.loopVars = 1;
    return l;
  }
};

TEST(ColumnFission, SplitsTheLoopAroundTheColumnsAddedByTiles) {
  ColumnPlan cp;
  cp.p.blocks[Plan::Iteration].push_back(cp.topics());
  EXPECT_EQ(codegen::splitColumnSums(cp.p), 1);
  const std::string plan = cp.pp.printed();
  EXPECT_NE(plan.find("iteration {\n"
                      "  parallel for i0 < 4 {\n"
                      "    zero eta[(i0 * 65536) +: 65536]\n"
                      "  }\n"
                      "  parallel for i1 < 128 {\n"
                      "    ppc_axpy_transposed(4, 65536, (i1 * 512), 512, 1.0, &B[0], &eta[0])  // B's columns added "
                      "to eta's rows, by tiles\n"
                      "  }\n"
                      "  parallel for i0 < 4 {\n"
                      "    ppc_dirichlet_stats_n(1, 65536, &eta[(i0 * 65536)], &stats[(i0 * 65536)])\n"
                      "  }\n"
                      "}\n"),
            std::string::npos)
      << plan;
}

TEST(ColumnFission, SplitsAgainAtASecondColumnAndDropsEmptyLoops) {
  // parallel for k { strided(B); strided(B2) }: no statements before the
  // first call or between the two, none after the last.
  ColumnPlan cp;
  int32_t B2 = cp.pp.buffer("B2", ColumnPlan::V * K);
  Stmt l = cp.topics();
  l.body.erase(l.body.begin()); // the zero-fill
  l.body.pop_back();            // the statistics
  Stmt second = l.body[0];
  second.args[3].buffer = B2;
  l.body.push_back(second);
  cp.p.blocks[Plan::Iteration].push_back(std::move(l));
  EXPECT_EQ(codegen::splitColumnSums(cp.p), 2);
  const std::vector<Stmt> &it = cp.p.blocks[Plan::Iteration];
  ASSERT_EQ(it.size(), 2u) << cp.pp.printed();
  EXPECT_EQ(it[0].body[0].args[5].buffer, cp.B) << cp.pp.printed();
  EXPECT_EQ(it[1].body[0].args[5].buffer, B2) << cp.pp.printed();
}

TEST(ColumnFission, LeavesLoopsItCannotSplit) {
  // Private rows carry values from one statement of an element to the next.
  ColumnPlan withPrivate;
  withPrivate.p.blocks[Plan::Iteration].push_back(withPrivate.topics(/*privateRow=*/true));
  EXPECT_EQ(codegen::splitColumnSums(withPrivate.p), 0);
  // A serial loop.
  ColumnPlan serial;
  serial.p.blocks[Plan::Iteration].push_back(serial.topics());
  serial.p.blocks[Plan::Iteration].back().parallel = false;
  EXPECT_EQ(codegen::splitColumnSums(serial.p), 0);
  // A table that fits in L2 (V = 1024, 32 KiB).
  ColumnPlan small;
  small.p.buffers[size_t(small.B)].size = 1024 * K;
  small.p.blocks[Plan::Iteration].push_back(small.topics());
  EXPECT_EQ(codegen::splitColumnSums(small.p), 0);
  // ELBO terms in the loop: splitting would reorder their sum.
  ColumnPlan withElbo;
  Stmt e = withElbo.topics();
  e.body.back().result = Stmt::Result::Elbo;
  withElbo.p.blocks[Plan::Iteration].push_back(std::move(e));
  EXPECT_EQ(codegen::splitColumnSums(withElbo.p), 0);
  // A weight that is not a constant.
  ColumnPlan weighted;
  Stmt wl = weighted.topics();
  wl.body[1].args[2].expr = weighted.p.loadDouble(weighted.pp.w, weighted.p.intConst(0));
  weighted.p.blocks[Plan::Iteration].push_back(std::move(wl));
  EXPECT_EQ(codegen::splitColumnSums(weighted.p), 0);
  // The destination not at row k (k * V + 1).
  ColumnPlan offset;
  Stmt ol = offset.topics();
  ol.body[1].args[4].expr = offset.p.add(offset.p.mul(offset.p.loopVar(0), offset.p.intConst(ColumnPlan::V)),
                                         offset.p.intConst(1));
  offset.p.blocks[Plan::Iteration].push_back(std::move(ol));
  EXPECT_EQ(codegen::splitColumnSums(offset.p), 0);
  // Row k reads column perm[k], which is k for k = 1, 2 but not for k = 3.
  ColumnPlan permuted;
  int32_t perm = permuted.pp.buffer("perm", K, true);
  permuted.p.buffers[size_t(perm)].ints = {0, 1, 2, 0};
  Stmt pl = permuted.topics();
  pl.body[1].args[3].expr = permuted.p.loadInt(perm, permuted.p.loopVar(0));
  permuted.p.blocks[Plan::Iteration].push_back(std::move(pl));
  EXPECT_EQ(codegen::splitColumnSums(permuted.p), 0);
  // Row k reads another column than k.
  ColumnPlan shifted;
  Stmt l = shifted.topics();
  l.body[1].args[3].expr = shifted.p.add(shifted.p.loopVar(0), shifted.p.intConst(1));
  shifted.p.blocks[Plan::Iteration].push_back(std::move(l));
  EXPECT_EQ(codegen::splitColumnSums(shifted.p), 0);
}

// codegen/transforms/EntropySharing.cpp: parallel for k < 4 { zero eta[k]; eta[k] +=
// F[k] }; parallel for k < 4 { stats(eta[k]) } in the iteration block, and
// parallel for k < 4 { elbo += entropy(eta[k], stats[k]) } in the ELBO block.
struct EntropyPlan {
  ProductPlan pp;
  Plan &p = pp.p;
  static constexpr int64_t W = 6;
  int32_t prior, eta, stats;
  EntropyPlan() {
    prior = pp.buffer("prior", K * W);
    eta = pp.buffer("phi.q.eta", K * W);
    stats = pp.buffer("phi.q.stats", K * W);
    p.loopVars = 3;
  }
  ExprId row(int32_t var) { return p.mul(p.loopVar(var), p.intConst(W)); }
  Arg integer(int64_t v) { return pp.num(p.intConst(v), Arg::Kind::Int); }
  Stmt parallel(int32_t var, int64_t bound, std::vector<Stmt> body) {
    Stmt l = pp.loop(var, bound, std::move(body));
    l.parallel = true;
    return l;
  }
  Stmt update() {
    return parallel(0, K, {pp.zero(eta, row(0), W), pp.call("ppc_axpy", {integer(W), pp.num(p.doubleConst(1.0), Arg::Kind::Double),
                                                      pp.ptr(prior, row(0)), pp.ptr(eta, row(0))})});
  }
  Stmt statsCall(int32_t var, int64_t rows = 1) {
    return pp.call("ppc_dirichlet_stats_n", {integer(rows), integer(W), pp.ptr(eta, var < 0 ? p.intConst(0) : row(var)),
                                             pp.ptr(stats, var < 0 ? p.intConst(0) : row(var))});
  }
  Stmt entropyCall(int32_t var, int64_t rows = 1) {
    Stmt c = pp.call("ppc_dirichlet_entropy_n", {integer(rows), integer(W),
                                                 pp.ptr(eta, var < 0 ? p.intConst(0) : row(var)),
                                                 pp.ptr(stats, var < 0 ? p.intConst(0) : row(var))});
    c.result = Stmt::Result::Elbo;
    return c;
  }
  /// The loops above; `entropyRows`: the ELBO loop's bound.
  void build(int64_t entropyRows = K) {
    p.blocks[Plan::Iteration].push_back(update());
    p.blocks[Plan::Iteration].push_back(parallel(1, K, {statsCall(1)}));
    p.blocks[Plan::Elbo].push_back(parallel(2, entropyRows, {entropyCall(2)}));
  }
};

TEST(LgammaSharing, TheStatisticsStoreTheLogNormalizersTheEntropyReads) {
  EntropyPlan ep;
  ep.build();
  EXPECT_EQ(codegen::shareEntropies(ep.p), 1);
  const std::string plan = ep.pp.printed();
  EXPECT_NE(plan.find("buffer phi.q.lognorm : f64[4]\n"), std::string::npos) << plan;
  EXPECT_NE(plan.find("  parallel for i1 < 4 {\n"
                      "    ppc_dirichlet_stats_lognorm_n(1, 6, &phi.q.eta[(i1 * 6)], &phi.q.stats[(i1 * 6)], "
                      "&phi.q.lognorm[i1])  // (and its rows' log normalizers)\n"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("elbo {\n"
                      "  parallel for i2 < 4 {\n"
                      "    elbo += ppc_dirichlet_entropy_lognorm_n(1, 6, &phi.q.eta[(i2 * 6)], &phi.q.stats[(i2 * 6)], "
                      "&phi.q.lognorm[i2])"),
            std::string::npos)
      << plan;
}

TEST(LgammaSharing, CallsOnAllRowsAtOnce) {
  // After codegen/transforms/RowKernelFission.cpp: one call on the 4 rows in each block.
  EntropyPlan ep;
  ep.p.blocks[Plan::Iteration].push_back(ep.update());
  ep.p.blocks[Plan::Iteration].push_back(ep.statsCall(-1, K));
  ep.p.blocks[Plan::Elbo].push_back(ep.entropyCall(-1, K));
  EXPECT_EQ(codegen::shareEntropies(ep.p), 1);
  const std::string plan = ep.pp.printed();
  EXPECT_NE(plan.find("ppc_dirichlet_stats_lognorm_n(4, 6, &phi.q.eta[0], &phi.q.stats[0], &phi.q.lognorm[0])"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("ppc_dirichlet_entropy_lognorm_n(4, 6, &phi.q.eta[0], &phi.q.stats[0], &phi.q.lognorm[0])"),
            std::string::npos)
      << plan;
}

TEST(LgammaSharing, TheUpdateInTheStatisticsLoop) {
  // parallel for k { zero eta[k]; eta[k] += prior[k]; stats(k) }: each
  // element updates its own row before its statistics (LDA at small K).
  auto plan = [](bool parallel, bool useAfter) {
    auto ep = std::make_unique<EntropyPlan>();
    Stmt l = ep->update();
    l.parallel = parallel;
    l.body.push_back(ep->statsCall(0));
    if (useAfter)
      l.body.push_back(ep->update().body[1]);
    ep->p.blocks[Plan::Iteration].push_back(std::move(l));
    ep->p.blocks[Plan::Elbo].push_back(ep->parallel(2, K, {ep->entropyCall(2)}));
    return ep;
  };
  auto inParallel = plan(true, false);
  EXPECT_EQ(codegen::shareEntropies(inParallel->p), 1) << inParallel->pp.printed();
  // A serial loop's later iterations could change an earlier row.
  auto serial = plan(false, false);
  EXPECT_EQ(codegen::shareEntropies(serial->p), 0) << serial->pp.printed();
  // The row changes again after its statistics.
  auto after = plan(true, true);
  EXPECT_EQ(codegen::shareEntropies(after->p), 0) << after->pp.printed();
}

TEST(LgammaSharing, LeavesEntropiesWhoseParametersMayHaveChanged) {
  auto unchanged = [](EntropyPlan &ep, const char *why) {
    const std::string before = ep.pp.printed();
    EXPECT_EQ(codegen::shareEntropies(ep.p), 0) << why;
    EXPECT_EQ(ep.pp.printed(), before) << why;
  };
  // The parameters change after their statistics.
  EntropyPlan after;
  after.build();
  after.p.blocks[Plan::Iteration].push_back(after.update());
  unchanged(after, "parameters written after the statistics");
  // The ELBO block reads them in another call too.
  EntropyPlan other;
  other.build();
  Stmt lognorm = other.pp.call("ppc_dirichlet_lognorm_n", {other.integer(K), other.integer(EntropyPlan::W),
                                                           other.pp.ptr(other.eta, other.p.intConst(0))});
  lognorm.result = Stmt::Result::Elbo;
  other.p.blocks[Plan::Elbo].push_back(lognorm);
  unchanged(other, "another reader in the ELBO block");
  // The entropy reads rows the statistics loop does not cover the same way.
  EntropyPlan fewer;
  fewer.build(/*entropyRows=*/3);
  unchanged(fewer, "other rows");
  // The statistics loop may leave early.
  EntropyPlan exits;
  exits.build();
  exits.p.blocks[Plan::Iteration][1].body.insert(exits.p.blocks[Plan::Iteration][1].body.begin(), [&] {
    Stmt e;
    e.kind = Stmt::Kind::ExitBelow;
    e.buffer = exits.pp.flag;
    e.index = exits.p.intConst(0);
    return e;
  }());
  unchanged(exits, "an exit");
  // Private rows in the statistics loop (a data plate's element loop).
  EntropyPlan privates;
  privates.build();
  privates.p.blocks[Plan::Iteration][1].privates = {privates.pp.F};
  unchanged(privates, "private rows");
  // No statistics in the iteration block (the init block's do not count:
  // the ELBO block runs after an iteration).
  EntropyPlan initOnly;
  initOnly.p.blocks[Plan::Init].push_back(initOnly.parallel(1, K, {initOnly.statsCall(1)}));
  initOnly.p.blocks[Plan::Elbo].push_back(initOnly.parallel(2, K, {initOnly.entropyCall(2)}));
  unchanged(initOnly, "statistics only in init");
  // Statistics of another row at each k (offset by one row).
  EntropyPlan shifted;
  shifted.build();
  Stmt &s = shifted.p.blocks[Plan::Iteration][1].body[0];
  s.args[2].expr = s.args[3].expr = shifted.p.add(shifted.row(1), shifted.p.intConst(EntropyPlan::W));
  shifted.p.buffers[size_t(shifted.eta)].size = shifted.p.buffers[size_t(shifted.stats)].size = (K + 1) * 6;
  unchanged(shifted, "other rows at each k");
}

// codegen/transforms/ChunkBalancing.cpp: the element loop's cumulative cost, 8 per
// element plus its data (5 and 4); a loop without data loops gets none.
TEST(ChunkBalancing, CostsTheElementsByTheirData) {
  BlockedPlan bp({0, 26000, 26001, 52000, 80000, 1, 27000, 60000, 79000});
  ProductPlan flat;
  flat.inElementLoop({});
  EXPECT_EQ(codegen::balanceChunks(flat.p), 0);
  ASSERT_EQ(codegen::balanceChunks(bp.p), 1);
  const codegen::Buffer *costs = bp.named("costs.0");
  ASSERT_NE(costs, nullptr);
  EXPECT_EQ(costs->ints, (std::vector<int64_t>{0, 13, 25}));
  EXPECT_NE(bp.pp.printed().find("parallel for i0 < 2 split by costs.0 private own"), std::string::npos)
      << bp.pp.printed();
}

} // namespace

// codegen/plan/PlanVerifier.cpp: a well-formed plan passes; each kind of
// breakage is caught and named.
TEST(PlanVerifier, CatchesEachKindOfBrokenPlan) {
  auto broken = [](const std::function<void(ProductPlan &)> &breakIt) {
    ProductPlan pp;
    pp.inElementLoop({});
    std::string error;
    EXPECT_TRUE(codegen::verifyPlan(pp.p, error)) << error;
    breakIt(pp);
    error.clear();
    EXPECT_FALSE(codegen::verifyPlan(pp.p, error)) << pp.printed();
    return error;
  };
  auto innerCall = [](ProductPlan &pp) -> Stmt & { return pp.p.blocks[Plan::Iteration][0].body[0].body[0]; };
  EXPECT_NE(broken([&](ProductPlan &pp) { innerCall(pp).args.pop_back(); }).find("3 arguments for a kernel of 4"),
            std::string::npos);
  EXPECT_NE(broken([&](ProductPlan &pp) { innerCall(pp).args[0] = pp.num(pp.p.doubleConst(4), Arg::Kind::Double); })
                .find("a double where the kernel takes 'l'"),
            std::string::npos);
  EXPECT_NE(broken([&](ProductPlan &pp) { innerCall(pp).args[3].expr = pp.row(7); }).find("i7 is read outside its loop"),
            std::string::npos);
  EXPECT_NE(broken([&](ProductPlan &pp) { innerCall(pp).args[1].buffer = 99; }).find("a pointer into #99"),
            std::string::npos);
  EXPECT_NE(broken([&](ProductPlan &pp) { pp.p.blocks[Plan::Iteration][0].parallel = false; })
                .find("has per-thread buffers, costs or processes but is not parallel"),
            std::string::npos);
  EXPECT_NE(broken([&](ProductPlan &pp) { pp.p.blocks[Plan::Iteration][0].body[0].var = 0; })
                .find("nested in a loop of the same variable"),
            std::string::npos);
  EXPECT_NE(broken([&](ProductPlan &pp) {
              Stmt &c = innerCall(pp);
              c.result = Stmt::Result::Elbo; // ppc_mul2_n returns nothing
            }).find("its result is used but the kernel returns 'v'"),
            std::string::npos);
  EXPECT_NE(broken([&](ProductPlan &pp) {
              Stmt exit;
              exit.kind = Stmt::Kind::ExitBelow;
              exit.buffer = pp.flag;
              exit.index = pp.p.intConst(0);
              pp.p.blocks[Plan::Final].push_back(exit);
            }).find("final block: an exit outside any loop"),
            std::string::npos);
  EXPECT_NE(broken([&](ProductPlan &pp) { innerCall(pp).elboOnly = true; }) // its result is discarded
                .find("marked an ELBO term only, but its result does not go to the ELBO"),
            std::string::npos);
  EXPECT_NE(broken([&](ProductPlan &pp) { pp.p.blocks[Plan::Iteration][0].elboOnly = true; })
                .find("a statement other than a call marked an ELBO term only"),
            std::string::npos);
  EXPECT_NE(broken([&](ProductPlan &pp) { pp.p.buffers[size_t(pp.a)].doubles = {1.0}; })
                .find("buffer a has 1 initial values for 4 entries"),
            std::string::npos);
  EXPECT_NE(broken([&](ProductPlan &pp) {
              Stmt z = pp.zero(pp.t, pp.p.loadDouble(pp.w, pp.p.intConst(0)), K);
              pp.p.blocks[Plan::Init].push_back(z);
            }).find("a floating-point expression where an integer one is needed"),
            std::string::npos);
}

// codegen/transforms/PlanPassManager.h: pipelines by name, in the order given;
// counts of changes in the timing report; --verify-each names the step that
// broke the plan.
TEST(PlanPassManager, RunsTheNamedTransformationsInOrderAndChecksEachStep) {
  codegen::PlanPassManager pm;
  std::string error;
  EXPECT_FALSE(pm.addPipeline("fold-products,nosuch", error));
  EXPECT_NE(error.find("unknown plan transformation 'nosuch'; available plan transformations: fold-products "),
            std::string::npos)
      << error;
  EXPECT_TRUE(pm.addPipeline("", error));
  EXPECT_TRUE(pm.passes().empty());
  ASSERT_TRUE(pm.addPipeline("parallel-zero,fold-products", error)) << error;
  ASSERT_EQ(pm.passes().size(), 2u);
  EXPECT_EQ(pm.passes()[0]->name, "parallel-zero");
  EXPECT_EQ(pm.passes()[1]->name, "fold-products");
  // Every registered transformation is in the default pipeline, once, in the registry's order.
  codegen::PlanPassManager all;
  ASSERT_TRUE(all.addPipeline(codegen::defaultPlanPipeline(), error)) << error;
  ASSERT_EQ(all.passes().size(), codegen::registeredPlanPasses().size());
  for (size_t i = 0; i < all.passes().size(); ++i)
    EXPECT_EQ(all.passes()[i], &codegen::registeredPlanPasses()[i]);

  codegen::PlanOptions options;
  EXPECT_TRUE(options.disable("product-form"));
  EXPECT_FALSE(options.lowering.productForm);
  EXPECT_TRUE(options.disable("prefetch"));
  EXPECT_TRUE(options.disabled.count("prefetch"));
  EXPECT_FALSE(options.disable("lower")); // the lowering itself is not optional

  // A transformation that breaks the plan is caught right after it, by name.
  passes::PassManagerOptions verify;
  verify.verifyEach = true;
  verify.timePasses = true;
  codegen::PlanPassManager checked(verify);
  static const codegen::PlanPassInfo breaker{"breaker", "drops a kernel argument", [](Plan &p) {
                                               p.blocks[Plan::Iteration][0].body[0].body[0].args.pop_back();
                                               return 1;
                                             }};
  ASSERT_TRUE(checked.addPipeline("fold-products", error));
  checked.addPass(breaker);
  ProductPlan pp;
  pp.inElementLoop({});
  std::string dump;
  llvm::raw_string_ostream dumpOS(dump);
  EXPECT_FALSE(checked.run(pp.p, dumpOS, error));
  EXPECT_NE(error.find("the plan is invalid after 'breaker': iteration block: call of ppc_mul2_n: 3 arguments"),
            std::string::npos)
      << error;
  std::string times;
  llvm::raw_string_ostream timeOS(times);
  checked.instrumentation().printTimes(timeOS, "Plan pass execution timing report");
  EXPECT_NE(times.find("fold-products  (0 changes)"), std::string::npos) << times;
  EXPECT_NE(times.find("breaker  (1 change)"), std::string::npos) << times;
}
