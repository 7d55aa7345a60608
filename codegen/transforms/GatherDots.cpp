//===- codegen/transforms/GatherDots.cpp - a factored sum's loop as one call ---===//
//
// A plan transformation (DESIGN.md §4). The factored message of a categorical
// in product form (ProductNormalizerFusion.cpp) is a loop over the data of
// one element with one call per datum, its row of the table chosen by the
// datum (LDA's tokens, each its word's row of the topics' exponential table):
//
//   for i < sizes[d] {
//     ppc_dot_inverse_axpy(K, &a[..], &T[(idx[base + i] * K)], w[base + i], &acc[0])
//   }
//
// becomes one call on the data's index and weight rows:
//
//   ppc_dot_inverse_axpy_gather(sizes[d], K, &a[..], &T[0], &idx[base], &w[base], 1.0, &acc[0])
//
// which computes the data's dot products, then their divisions, then the
// sum, chunk by chunk: the datum-to-datum wait on each division goes, and
// the sum is the same, added in the same order. Applies to a loop whose
// body is that one call, with a and acc the same for every datum and the
// datum's row and weight read at (something the loop does not change) + i;
// loops that other transformations gave more (prefetches, batches of
// elements) stay as they are.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <optional>

namespace ppc::codegen {
namespace {

class GatherDots {
public:
  explicit GatherDots(Plan &p) : p_(p) {}

  int changed = 0;

  void run(std::vector<Stmt> &block) {
    for (Stmt &s : block) {
      if (s.kind != Stmt::Kind::Loop)
        continue;
      run(s.body);
      if (std::optional<Stmt> call = gathered(s)) {
        s = std::move(*call);
        ++changed;
      }
    }
  }

private:
  const Expr &expr(ExprId e) const { return p_.exprs[size_t(e)]; }

  std::optional<Stmt> gathered(const Stmt &loop) {
    if (loop.parallel || loop.distributed || loop.batch || !loop.privates.empty() || !loop.reductions.empty() ||
        loop.body.size() != 1 || !isDiscardedCall(loop.body[0], "ppc_dot_inverse_axpy"))
      return std::nullopt;
    const Stmt &c = loop.body[0];
    const int32_t var = loop.var;
    const Arg &K = c.args[0], &a = c.args[1], &b = c.args[2], &w = c.args[3], &acc = c.args[4];
    const auto width = p_.constantOf(K.expr);
    if (!width || *width <= 0 || a.kind != Arg::Kind::Pointer || b.kind != Arg::Kind::Pointer ||
        acc.kind != Arg::Kind::Pointer || w.kind != Arg::Kind::Double || p_.usesVar(a.expr, var) ||
        p_.usesVar(acc.expr, var) || acc.buffer == a.buffer || acc.buffer == b.buffer)
      return std::nullopt;
    auto row = edit::gatheredRow(p_, b.expr, var, *width);
    if (!row)
      return std::nullopt;
    Arg weights, weight = w;
    weights.kind = Arg::Kind::Null;
    if (p_.usesVar(w.expr, var)) {
      // Copies, not a reference: offsetOf adds expressions to the plan.
      const Expr x = expr(w.expr);
      std::optional<ExprId> base;
      if (x.kind == Expr::Kind::LoadDouble && p_.isBoundData(x.buffer))
        base = edit::offsetOf(p_, x.a, var);
      if (!base)
        return std::nullopt;
      weights = edit::pointerArg(x.buffer, *base);
      weight = edit::doubleArg(p_.doubleConst(1.0));
    } else if (w.expr != kNoExpr && p_.loads(w.expr, acc.buffer)) {
      return std::nullopt;
    }
    return edit::kernelCall("ppc_dot_inverse_axpy_gather",
                            {edit::intArg(loop.bound), K, a, edit::pointerArg(b.buffer, p_.intConst(0)),
                             edit::pointerArg(row->first, row->second), weights, weight, acc},
                            c.note + " (all data)");
  }

  Plan &p_;
};

} // namespace

int gatherFactoredDots(Plan &p) {
  GatherDots g(p);
  for (auto &block : p.blocks)
    g.run(block);
  return g.changed;
}

} // namespace ppc::codegen
