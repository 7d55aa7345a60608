//===- codegen/transforms/RowKernelFission.cpp - whole-plate statistics and entropies ---===//
//
// A plan transformation (DESIGN.md §4: loop fission for vectorization). The
// schedule's fused loops update a posterior element by element and end with
// its statistics, one row per call:
//
//   for i < N { ...; eta[i] = ...; ppc_categorical_stats_n(1, K, &eta[i*K], &stats[i*K]) }
//   for i < N { elbo += ...; elbo += ppc_categorical_entropy_n(1, K, &stats[i*K]) }
//
// A row kernel (runtime/VecMath.h, PPC_ROW_KERNEL) called on one row of K
// entries runs at most K lanes wide: for a mixture's K = 6 indicators it is
// scalar, exp and log one entry at a time. When the rows are that narrow
// (fewer than 16 doubles), nothing else in the loop
// reads or writes those rows except at row i, and the call is the body's
// last statement, the call moves after the loop and covers all N rows at
// once, whose entries the kernel processes as one flat array. The same
// values (every row kernel computes each row on its own), ELBO terms summed
// in another order. A parallel loop gets a parallel loop over blocks of rows
// (and one call for the rest), so that threads still share the work. Inner
// loops too: an array of posteriors updated in a nest (row (i * D + j) in
// the loop over j) gets one call per iteration of the outer loop.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <algorithm>
#include <string_view>

namespace ppc::codegen {
namespace {

/// Rows per call of the parallel loop that replaces a parallel loop's calls.
constexpr int64_t kRowsPerBlock = 64;
/// Only rows narrower than this move: a wider row already fills the vectors
/// (two of AVX-512's 8 lanes), and its call in the loop finds the row the
/// loop just wrote in cache (LDA's topics: 10473 entries each).
constexpr int64_t kNarrowRow = 16;

class Fission {
public:
  explicit Fission(Plan &p) : p_(p) {}

  void run(std::vector<Stmt> &block) {
    std::vector<Stmt> out;
    for (Stmt &s : block) {
      if (s.kind != Stmt::Kind::Loop || s.distributed) {
        out.push_back(std::move(s));
        continue;
      }
      // Inner loops first: a nest over an array of posteriors (a Bernoulli
      // mixture's K x D Beta parameters) updates row (i * D + j) in its
      // inner loop; that loop's calls move after it, inside the outer one.
      run(s.body);
      std::vector<Stmt> after;
      while (!s.body.empty() && hoistable(s, s.body.back())) {
        after.push_back(std::move(s.body.back()));
        s.body.pop_back();
      }
      // The loop's header, for the calls that leave it.
      Stmt header;
      header.kind = Stmt::Kind::Loop;
      header.var = s.var;
      header.bound = s.bound;
      header.parallel = s.parallel;
      if (!s.body.empty())
        out.push_back(std::move(s));
      // `after` holds the hoisted calls last first.
      hoisted += int(after.size());
      for (auto c = after.rbegin(); c != after.rend(); ++c)
        wholePlate(header, std::move(*c), out);
    }
    block = std::move(out);
  }

private:
  const Expr &expr(ExprId e) const { return p_.exprs[size_t(e)]; }

  /// The element's row that `index` names (PlanEdits.h).
  using Row = edit::ElementRow;
  std::optional<Row> rowOf(ExprId index, int32_t var) const { return edit::elementRow(p_, index, var); }
  bool sameRow(const Row &a, const Row &b) const {
    if (a.width != b.width || (a.base == kNoExpr) != (b.base == kNoExpr))
      return false;
    return a.base == kNoExpr || p_.sameExpr(a.base, b.base);
  }

  static bool rowKernel(std::string_view name) {
    auto endsWith = [&](std::string_view tail) {
      return name.size() >= tail.size() && name.substr(name.size() - tail.size()) == tail;
    };
    // Each row of these is one posterior element's natural parameters or
    // statistics: the kernel's row stride is the family's width, the one the
    // plan indexes rows with.
    return endsWith("_stats_n") || endsWith("_entropy_n");
  }

  /// The call's buffers are rows of the loop's element only, everywhere in the loop.
  bool hoistable(const Stmt &loop, const Stmt &c) const {
    if (c.kind != Stmt::Kind::Call || !c.kernel || !rowKernel(c.kernel->name) || c.args.empty() ||
        p_.constantOf(c.args[0].expr) != 1 || c.args[0].kind != Arg::Kind::Int || c.scale != kNoExpr ||
        (c.result != Stmt::Result::Discard && c.result != Stmt::Result::Elbo))
      return false;
    std::optional<Row> row;
    std::vector<int32_t> buffers;
    for (const Arg &a : c.args) {
      // A row width that changes with the element cannot cover all rows.
      if (a.kind == Arg::Kind::Int && !p_.constantOf(a.expr))
        return false;
      if (a.kind == Arg::Kind::Int || a.kind == Arg::Kind::Null)
        continue;
      if (a.kind != Arg::Kind::Pointer)
        return false;
      auto r = rowOf(a.expr, loop.var);
      if (!r || (row && !sameRow(*r, *row)))
        return false;
      row = r;
      buffers.push_back(a.buffer);
    }
    if (!row || row->width >= kNarrowRow)
      return false;
    // A loop that may end early (a nested schedule's sweeps) does not visit every row.
    for (const Stmt &o : loop.body)
      if (o.kind == Stmt::Kind::ExitBelow)
        return false;
    for (int32_t b : buffers)
      if (std::count(loop.privates.begin(), loop.privates.end(), b) ||
          std::count(loop.reductions.begin(), loop.reductions.end(), b))
        return false;
    for (const Stmt &o : loop.body)
      if (&o != &c && !onlyRow(o, buffers, loop.var, *row))
        return false;
    return true;
  }

  /// Every mention of `buffers` in s is the element's row.
  bool onlyRow(const Stmt &s, const std::vector<int32_t> &buffers, int32_t var, const Row &row) const {
    auto named = [&](int32_t b) { return std::count(buffers.begin(), buffers.end(), b) > 0; };
    auto atRow = [&](ExprId index) {
      auto r = rowOf(index, var);
      return r && sameRow(*r, row);
    };
    if (s.buffer >= 0 && named(s.buffer) && !atRow(s.index))
      return false;
    for (const Arg &a : s.args)
      if (a.buffer >= 0 && named(a.buffer) && !atRow(a.expr))
        return false;
    if (mentionsIn(s.bound, named) || mentionsIn(s.scale, named) || mentionsIn(s.index, named))
      return false;
    for (const Arg &a : s.args)
      if (mentionsIn(a.expr, named))
        return false;
    for (const Stmt &b : s.body)
      if (!onlyRow(b, buffers, var, row))
        return false;
    return true;
  }

  /// An expression loading from one of the buffers (a load names no row we can check).
  template <class Named> bool mentionsIn(ExprId e, const Named &named) const {
    if (e == kNoExpr)
      return false;
    const Expr &x = expr(e);
    if ((x.kind == Expr::Kind::LoadDouble || x.kind == Expr::Kind::LoadInt) && named(x.buffer))
      return true;
    return mentionsIn(x.a, named) || mentionsIn(x.b, named);
  }

  /// The call on the element rows [first, first + count) instead of row `var`.
  Stmt onRows(const Stmt &c, int32_t var, ExprId first, ExprId count) {
    Stmt r = c;
    r.args[0].expr = count;
    for (Arg &a : r.args)
      if (a.kind == Arg::Kind::Pointer) {
        const Row row = *rowOf(a.expr, var);
        a.expr = p_.mul(row.base == kNoExpr ? first : p_.add(row.base, first), p_.intConst(row.width));
      }
    r.note = c.note + " (all rows)";
    return r;
  }

  void wholePlate(const Stmt &loop, Stmt c, std::vector<Stmt> &out) {
    if (!loop.parallel) {
      out.push_back(onRows(c, loop.var, p_.intConst(0), loop.bound));
      return;
    }
    callsOnRowBlocks(p_, loop.bound, kRowsPerBlock, true, {},
                     [&](ExprId first, ExprId count, ExprId) { return onRows(c, loop.var, first, count); }, out);
  }

  Plan &p_;

public:
  int hoisted = 0; ///< calls moved after their loop
};

} // namespace

int hoistRowKernels(Plan &p) {
  Fission f(p);
  for (auto &block : p.blocks)
    f.run(block);
  return f.hoisted;
}

} // namespace ppc::codegen
