// The hand-built plan the plan transformations' tests share
// (PlanTransformTest.cpp, PlanLoopTransformTest.cpp): a categorical in
// product form over N data, and the helpers that build its statements.
#pragma once

#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ppc::plantest {

using codegen::Arg;
using codegen::ExprId;
using codegen::Plan;
using codegen::Stmt;
namespace edit = codegen::edit;

constexpr int64_t K = 4, N = 3;

/// A categorical in product form over N data, in the loop `for i < N`:
///   F[i] = a * table[x[i]];  S[i] = F[i] / sum;  message(S[i]) -> t (or table counts)
struct ProductPlan {
  Plan p;
  int32_t a, table, x, w, F, S, t, counts, u, flag;
  int32_t var = 0;

  ProductPlan() {
    a = buffer("a", K);
    table = buffer("table", 10 * K);
    x = buffer("x", N, true);
    w = buffer("w", N);
    F = buffer("F", N * K);
    S = buffer("S", N * K);
    t = buffer("t", K);
    counts = buffer("counts", 10 * K);
    u = buffer("u", N * K);
    flag = buffer("flag", 1);
  }
  int32_t buffer(const std::string &name, int64_t size, bool isInt = false) {
    codegen::Buffer b;
    b.name = name;
    b.size = size;
    b.isInt = isInt;
    p.buffers.push_back(b);
    return int32_t(p.buffers.size() - 1);
  }
  Arg ptr(int32_t b, ExprId index) { return edit::pointerArg(b, index); }
  Arg num(ExprId e, Arg::Kind kind) {
    Arg r;
    r.kind = kind;
    r.expr = e;
    return r;
  }
  Arg null() {
    Arg r;
    r.kind = Arg::Kind::Null;
    return r;
  }
  Stmt call(const char *kernel, std::vector<Arg> args) {
    Stmt s = edit::kernelCall(kernel, std::move(args), "");
    EXPECT_NE(s.kernel, nullptr) << kernel;
    return s;
  }
  Stmt zero(int32_t b, ExprId index, int64_t count) { return edit::zeroFill(b, index, count); }
  Stmt loop(int32_t v, int64_t bound, std::vector<Stmt> body) {
    return edit::loopOver(v, p.intConst(bound), std::move(body));
  }
  ExprId row(int32_t v) { return p.mul(p.loopVar(v), p.intConst(K)); }
  Arg k() { return num(p.intConst(K), Arg::Kind::Int); }

  /// The three calls for datum i (loop variable v); `toCounts`: the message
  /// goes to the datum's row of `counts` instead of the shared row t.
  Stmt productLoop(int32_t v, bool toCounts = false, int32_t countsBuffer = -1) {
    ExprId xi = p.loadInt(x, p.loopVar(v));
    ExprId wi = p.loadDouble(w, p.loopVar(v));
    std::vector<Stmt> body;
    body.push_back(call("ppc_mul2_n", {k(), ptr(a, p.intConst(0)), ptr(table, p.mul(xi, p.intConst(K))), ptr(F, row(v))}));
    body.push_back(call("ppc_categorical_stats_from_product", {k(), ptr(F, row(v)), null(), ptr(S, row(v))}));
    if (toCounts)
      body.push_back(call("ppc_axpy", {k(), num(wi, Arg::Kind::Double), ptr(S, row(v)),
                                       ptr(countsBuffer >= 0 ? countsBuffer : counts, p.mul(xi, p.intConst(K)))}));
    else
      body.push_back(call("ppc_categorical_probs_avglog", {k(), ptr(S, row(v)), num(wi, Arg::Kind::Double), ptr(t, p.intConst(0))}));
    return loop(v, N, std::move(body));
  }

  /// for e < 2 (parallel, F and S private to its element) { product loop; after... }
  void inElementLoop(std::vector<Stmt> after, bool toCounts = false) {
    std::vector<Stmt> body;
    body.push_back(productLoop(1, toCounts));
    for (Stmt &s : after)
      body.push_back(std::move(s));
    Stmt outer = loop(0, 2, std::move(body));
    outer.parallel = true;
    outer.privates = {F, S};
    p.blocks[Plan::Iteration].push_back(std::move(outer));
    p.loopVars = 4;
  }
  std::string printed() const { return codegen::printPlan(p); }
};

} // namespace ppc::plantest
