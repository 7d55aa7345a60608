//===- codegen/transforms/LogBatching.cpp - the ELBO's logarithms after the loop ---===//
//
// A plan transformation (loop fission for vectorization). The fused refresh
// of a product-form categorical (ProductNormalizerFusion.cpp) adds each
// datum's log normalizer to the ELBO, one scalar logarithm per datum:
//
//   for i < n { elbo += w[base + i] * ppc_product_axpy_lognorm(K, a, b, shift, w_i, dst) }
//
// Only the ELBO reads it, so the loop stores the normalizers instead
// (ppc_product_axpy_norm, which returns the shift part) and one call after
// the loop adds sum_i w_i log s_i, a vectorized pass (ppc_weighted_log_sum).
// The same terms, summed in another order. The stored normalizers take one
// row of the largest n doubles, private to the parallel loops around.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <algorithm>

namespace ppc::codegen {
namespace {

class LogBatching {
public:
  explicit LogBatching(Plan &p) : p_(p) {}

  int batched = 0;

  void run(std::vector<Stmt> &body, std::vector<Stmt *> &enclosing) {
    for (size_t i = 0; i < body.size(); ++i) {
      if (body[i].kind != Stmt::Kind::Loop)
        continue;
      enclosing.push_back(&body[i]);
      run(body[i].body, enclosing);
      enclosing.pop_back();
      if (auto after = batch(body[i], enclosing)) {
        body.insert(body.begin() + long(i) + 1, std::move(*after));
        ++i;
      }
    }
  }

private:
  const Expr &expr(ExprId e) const { return p_.exprs[size_t(e)]; }


  /// The largest value the loop bound takes: a constant, or a bound-data
  /// entry (a ragged plate's sizes).
  std::optional<int64_t> largestBound(ExprId bound) const {
    if (auto c = p_.constantOf(bound))
      return c;
    const Expr &x = expr(bound);
    if (x.kind != Expr::Kind::LoadInt || p_.buffers[size_t(x.buffer)].ints.empty())
      return std::nullopt;
    const auto &v = p_.buffers[size_t(x.buffer)].ints;
    return *std::max_element(v.begin(), v.end());
  }

  /// The weight expression w[base + i] (base the same for every i): the
  /// pointer &w[base].
  std::optional<Arg> weights(ExprId scale, int32_t var) const {
    Arg a;
    if (scale == kNoExpr) {
      a.kind = Arg::Kind::Null;
      return a;
    }
    // Copies, not references: p_.intConst below may grow p_.exprs.
    const Expr l = expr(scale);
    if (l.kind != Expr::Kind::LoadDouble || !p_.isBoundData(l.buffer))
      return std::nullopt;
    const Expr ix = expr(l.a);
    ExprId base = kNoExpr;
    auto atVar = [&](ExprId e) { return expr(e).kind == Expr::Kind::LoopVar && expr(e).var == var; };
    if (atVar(l.a))
      base = p_.intConst(0);
    else if (ix.kind == Expr::Kind::AddInt && atVar(ix.b))
      base = ix.a;
    else if (ix.kind == Expr::Kind::AddInt && atVar(ix.a))
      base = ix.b;
    if (base == kNoExpr || p_.usesVar(base, var) || !p_.onlyBoundData(base))
      return std::nullopt;
    a.kind = Arg::Kind::Pointer;
    a.buffer = l.buffer;
    a.expr = base;
    return a;
  }

  std::optional<Stmt> batch(Stmt &loop, std::vector<Stmt *> &enclosing) {
    if (loop.parallel || loop.distributed)
      return std::nullopt;
    for (const Stmt &s : loop.body)
      if (s.kind == Stmt::Kind::ExitBelow)
        return std::nullopt;
    Stmt *target = nullptr;
    for (Stmt &s : loop.body)
      if (s.kind == Stmt::Kind::Call && s.kernel && s.kernel->name == "ppc_product_axpy_lognorm" &&
          s.result == Stmt::Result::Elbo) {
        if (target)
          return std::nullopt; // one per loop: one row of normalizers
        target = &s;
      }
    if (!target)
      return std::nullopt;
    auto largest = largestBound(loop.bound);
    auto w = weights(target->scale, loop.var);
    if (!largest || *largest <= 0 || !w || !p_.onlyBoundData(loop.bound))
      return std::nullopt;
    Buffer norms;
    norms.name = batched == 0 ? "normalizers" : "normalizers." + std::to_string(batched);
    norms.size = *largest;
    p_.buffers.push_back(std::move(norms));
    int32_t id = int32_t(p_.buffers.size() - 1);
    for (Stmt *e : enclosing)
      if (e->parallel || !e->privates.empty())
        e->privates.push_back(id);
    Arg row;
    row.kind = Arg::Kind::Pointer;
    row.buffer = id;
    row.expr = p_.loopVar(loop.var);
    target->kernel = rt::findRuntimeKernel("ppc_product_axpy_norm");
    target->args.push_back(row);
    target->note += " (its logarithm after the loop)";
    Stmt after = edit::kernelCall("ppc_weighted_log_sum",
                                  {edit::intArg(loop.bound), edit::pointerArg(id, p_.intConst(0)), *w},
                                  "the log normalizers of the loop above");
    after.result = Stmt::Result::Elbo;
    after.elboOnly = true;
    ++batched;
    return after;
  }

  Plan &p_;
};

} // namespace

int batchLogNormalizers(Plan &p) {
  LogBatching b(p);
  for (auto &block : p.blocks) {
    std::vector<Stmt *> enclosing;
    b.run(block, enclosing);
  }
  return b.batched;
}

} // namespace ppc::codegen
