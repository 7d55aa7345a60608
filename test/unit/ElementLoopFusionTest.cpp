// fuse-element-loops (codegen/transforms/ElementLoopFusion.cpp) on hand-built
// plans: which loops fuse, where the fused loop goes, and which stay apart.
// The examples' runs with and without it agree bit for bit
// (test/lit/plan/fuse-element-loops.test).
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"

#include <gtest/gtest.h>

#include <string>

using namespace ppc;
using codegen::Arg;
using codegen::ExprId;
using codegen::Plan;
using codegen::Stmt;
namespace edit = codegen::edit;

namespace {

constexpr int64_t K = 4, N = 3;

/// Buffers of N rows of K (u, v, w), one of 2N rows (wide), bound data
/// (data, N rows of K) and a global (g, K).
struct LoopsPlan {
  Plan p;
  int32_t u, v, w, wide, data, g;

  LoopsPlan() {
    u = buffer("u", N * K);
    v = buffer("v", N * K);
    w = buffer("w", N * K);
    wide = buffer("wide", 2 * N * K);
    data = edit::addBuffer(p, "data", N * K, false, std::vector<double>(N * K, 1.0));
    g = buffer("g", K);
  }
  int32_t buffer(const std::string &name, int64_t size) { return edit::addBuffer(p, name, size); }
  ExprId row(int32_t var, int64_t width = K) { return p.mul(p.loopVar(var), p.intConst(width)); }
  /// y[dst] += x[src] over K entries.
  Stmt axpy(int32_t x, ExprId src, int32_t y, ExprId dst) {
    return edit::kernelCall("ppc_axpy", {edit::intArg(p.intConst(K)), edit::doubleArg(p.doubleConst(1.0)),
                                         edit::pointerArg(x, src), edit::pointerArg(y, dst)},
                            "");
  }
  Stmt loop(int64_t bound, std::vector<Stmt> body, bool parallel = false) {
    Stmt s;
    s.kind = Stmt::Kind::Loop;
    s.var = p.loopVars++;
    s.bound = p.intConst(bound);
    s.parallel = parallel;
    s.body = std::move(body);
    return s;
  }
  /// A loop over the N rows: body(var).
  template <class Body> Stmt rows(Body body, bool parallel = false, int64_t bound = N) {
    const int32_t var = p.loopVars;
    Stmt s = loop(bound, {}, parallel);
    EXPECT_EQ(s.var, var);
    s.body = body(var);
    return s;
  }
  std::vector<Stmt> &iteration() { return p.blocks[Plan::Iteration]; }
  int fuse() {
    const int n = codegen::fuseElementLoops(p);
    std::string error;
    EXPECT_TRUE(codegen::verifyPlan(p, error)) << error;
    return n;
  }
};

/// The loop's statement `at` names buffer `b` at the row of the loop's variable.
void expectRowOf(LoopsPlan &t, const Stmt &loop, size_t at, int32_t b) {
  ASSERT_LT(at, loop.body.size());
  const Stmt &s = loop.body[at];
  bool found = false;
  for (const Arg &a : s.args)
    if (a.kind == Arg::Kind::Pointer && a.buffer == b)
      found = found || edit::isElementRow(t.p, a.expr, loop.var, K);
  if (s.kind == Stmt::Kind::Zero && s.buffer == b)
    found = edit::isElementRow(t.p, s.index, loop.var, K);
  EXPECT_TRUE(found) << "statement " << at << " of the fused loop";
}

TEST(ElementLoopFusion, RowLoopsFuseAcrossAStatementTheSecondDoesNotTouch) {
  LoopsPlan t;
  // u[i] = data[i];  g += data[0] (touches neither u nor v);  v[j] += u[j] (parallel)
  t.iteration().push_back(t.rows([&](int32_t i) {
    return std::vector<Stmt>{edit::zeroFill(t.u, t.row(i), K), t.axpy(t.data, t.row(i), t.u, t.row(i))};
  }));
  t.iteration().push_back(t.axpy(t.data, t.p.intConst(0), t.g, t.p.intConst(0)));
  t.iteration().push_back(t.rows([&](int32_t j) { return std::vector<Stmt>{t.axpy(t.u, t.row(j), t.v, t.row(j))}; },
                                 /*parallel=*/true));
  EXPECT_EQ(t.fuse(), 1);
  ASSERT_EQ(t.iteration().size(), 2u);
  const Stmt &fused = t.iteration()[0];
  ASSERT_EQ(fused.kind, Stmt::Kind::Loop);
  EXPECT_TRUE(fused.parallel); // one of them was, and no element touches another's rows
  ASSERT_EQ(fused.body.size(), 3u);
  expectRowOf(t, fused, 0, t.u);
  expectRowOf(t, fused, 1, t.u);
  expectRowOf(t, fused, 2, t.v); // the second loop's variable renamed to the first's
  EXPECT_EQ(t.iteration()[1].kind, Stmt::Kind::Call);
}

TEST(ElementLoopFusion, TheFirstLoopSinksPastWhatTheSecondNeedsFirst) {
  LoopsPlan t;
  // u[i] = 0;  v[0] += data[0] (the second loop's buffer);  v[j] += data[j]
  t.iteration().push_back(t.rows([&](int32_t i) { return std::vector<Stmt>{edit::zeroFill(t.u, t.row(i), K)}; }));
  t.iteration().push_back(t.axpy(t.data, t.p.intConst(0), t.v, t.p.intConst(0)));
  t.iteration().push_back(
      t.rows([&](int32_t j) { return std::vector<Stmt>{t.axpy(t.data, t.row(j), t.v, t.row(j))}; }));
  EXPECT_EQ(t.fuse(), 1);
  ASSERT_EQ(t.iteration().size(), 2u);
  EXPECT_EQ(t.iteration()[0].kind, Stmt::Kind::Call); // v's first row before the loop that adds to it
  EXPECT_EQ(t.iteration()[1].kind, Stmt::Kind::Loop);
  EXPECT_FALSE(t.iteration()[1].parallel);
}

TEST(ElementLoopFusion, AStatementBetweenThatTouchesBothKeepsThemApart) {
  LoopsPlan t;
  // u[i] = 0;  v[0] += u[0] (the first's rows into the second's);  v[j] += data[j]
  t.iteration().push_back(t.rows([&](int32_t i) { return std::vector<Stmt>{edit::zeroFill(t.u, t.row(i), K)}; }));
  t.iteration().push_back(t.axpy(t.u, t.p.intConst(0), t.v, t.p.intConst(0)));
  t.iteration().push_back(
      t.rows([&](int32_t j) { return std::vector<Stmt>{t.axpy(t.data, t.row(j), t.v, t.row(j))}; }));
  EXPECT_EQ(t.fuse(), 0);
  EXPECT_EQ(t.iteration().size(), 3u);
}

TEST(ElementLoopFusion, LoopsThatReachAnotherElementsRowsStayApart) {
  // Each loop below touches a buffer it changes away from its own row.
  auto build = [](LoopsPlan &t, int variant) {
    t.iteration().push_back(t.rows([&](int32_t i) { return std::vector<Stmt>{t.axpy(t.data, t.row(i), t.u, t.row(i))}; }));
    t.iteration().push_back(t.rows([&](int32_t j) {
      switch (variant) {
      case 0: // the next element's row
        return std::vector<Stmt>{t.axpy(t.u, t.p.mul(t.p.add(t.p.loopVar(j), t.p.intConst(1)), t.p.intConst(K)), t.v,
                                        t.row(j))};
      case 1: // the whole buffer
        return std::vector<Stmt>{t.axpy(t.u, t.p.intConst(0), t.v, t.row(j))};
      case 2: // rows of another width (the buffer is not N rows of it)
        return std::vector<Stmt>{t.axpy(t.u, t.row(j), t.wide, t.row(j))};
      case 3: { // an ELBO term (its sum would change order)
        Stmt dot = edit::kernelCall("ppc_dot", {edit::intArg(t.p.intConst(K)), edit::pointerArg(t.u, t.row(j)),
                                                edit::pointerArg(t.v, t.row(j))},
                                    "");
        dot.result = Stmt::Result::Elbo;
        return std::vector<Stmt>{dot};
      }
      default: // a zero-fill past the row
        return std::vector<Stmt>{edit::zeroFill(t.u, t.row(j), K + 1)};
      }
    }));
  };
  for (int variant = 0; variant < 5; ++variant) {
    LoopsPlan t;
    build(t, variant);
    EXPECT_EQ(t.fuse(), 0) << "variant " << variant;
    EXPECT_EQ(t.iteration().size(), 2u) << "variant " << variant;
  }
  // Loops over different counts stay apart too.
  LoopsPlan t;
  t.iteration().push_back(t.rows([&](int32_t i) { return std::vector<Stmt>{edit::zeroFill(t.u, t.row(i), K)}; }));
  t.iteration().push_back(t.rows([&](int32_t j) { return std::vector<Stmt>{edit::zeroFill(t.v, t.row(j), K)}; },
                                 false, N - 1));
  EXPECT_EQ(t.fuse(), 0);
}

TEST(ElementLoopFusion, ARunOfLoopsBecomesOne) {
  LoopsPlan t;
  t.iteration().push_back(t.rows([&](int32_t i) { return std::vector<Stmt>{edit::zeroFill(t.u, t.row(i), K)}; }));
  t.iteration().push_back(t.rows([&](int32_t i) { return std::vector<Stmt>{t.axpy(t.data, t.row(i), t.u, t.row(i))}; }, true));
  t.iteration().push_back(t.rows([&](int32_t i) { return std::vector<Stmt>{t.axpy(t.u, t.row(i), t.v, t.row(i))}; }));
  t.iteration().push_back(t.rows([&](int32_t i) { return std::vector<Stmt>{t.axpy(t.v, t.row(i), t.w, t.row(i))}; }));
  EXPECT_EQ(t.fuse(), 3);
  ASSERT_EQ(t.iteration().size(), 1u);
  EXPECT_EQ(t.iteration()[0].body.size(), 4u);
  expectRowOf(t, t.iteration()[0], 3, t.w);
}

} // namespace
