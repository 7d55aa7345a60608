//===- codegen/transforms/RowPrefetch.cpp - fetch the rows data will index, ahead ---===//
//
// A plan transformation (DESIGN.md §6: close to the machine's limit). A loop
// over data that reads or updates a row of a large table chosen by the datum
//
//   for i < n { f(K, ..., &table[x[base + i] * K], ...) }
//
// (LDA's tokens: a word's row of the topics' exponential table, then of the
// topics' counts) misses the cache on every datum, and the hardware cannot
// guess the next row. The index is data, known ahead: each iteration starts
// by prefetching the row `ahead` data later (ppc_prefetch_row), so that the
// misses overlap the work instead of following each other. Tables smaller
// than kLargeTable mostly stay in a core's L2 and are left alone (measured
// on AP: K = 100, 8.4 MB tables, 59 -> 51 ms per sweep; K = 20, 1.6 MB,
// no change).
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"

#include <algorithm>
#include <tuple>

namespace ppc::codegen {
namespace {

constexpr int64_t kLargeTable = 4 << 20; // bytes
/// Prefetch about this many bytes ahead (rows of 800 bytes: 5 data ahead;
/// measured on LDA K = 100, where 4 to 6 rows beat 2 by 3% on one thread
/// and two).
constexpr int64_t kAheadBytes = 4096;

class Prefetch {
public:
  explicit Prefetch(Plan &p) : p_(p) {}

  int inserted = 0;

  void run(std::vector<Stmt> &body) {
    for (Stmt &s : body)
      if (s.kind == Stmt::Kind::Loop) {
        run(s.body);
        addTo(s);
      }
  }

private:
  const Expr &expr(ExprId e) const { return p_.exprs[size_t(e)]; }


  struct Indexed {
    int32_t table, data;
    ExprId base; ///< the datum's index is base + i
    int64_t width;
  };

  /// `x[base + i] * width`, x bound data and base the same for every i.
  std::optional<Indexed> indexedRow(const Arg &a, int32_t var) {
    if (a.kind != Arg::Kind::Pointer || a.expr == kNoExpr)
      return std::nullopt;
    const Expr &m = expr(a.expr);
    if (m.kind != Expr::Kind::MulInt)
      return std::nullopt;
    ExprId load = m.a, w = m.b;
    if (expr(load).kind != Expr::Kind::LoadInt)
      std::swap(load, w);
    auto width = p_.constantOf(w);
    if (!width || expr(load).kind != Expr::Kind::LoadInt)
      return std::nullopt;
    // Copies, not references: p_.intConst below may grow p_.exprs.
    const int32_t data = expr(load).buffer;
    const ExprId index = expr(load).a;
    if (p_.buffers[size_t(data)].ints.empty() || p_.buffers[size_t(a.buffer)].size * 8 < kLargeTable)
      return std::nullopt;
    const Expr ix = expr(index);
    auto atVar = [&](ExprId e) { return expr(e).kind == Expr::Kind::LoopVar && expr(e).var == var; };
    ExprId base = kNoExpr;
    if (atVar(index))
      base = p_.intConst(0);
    else if (ix.kind == Expr::Kind::AddInt && atVar(ix.b))
      base = ix.a;
    else if (ix.kind == Expr::Kind::AddInt && atVar(ix.a))
      base = ix.b;
    if (base == kNoExpr || p_.usesVar(base, var) || !p_.onlyBoundData(base))
      return std::nullopt;
    return Indexed{a.buffer, data, base, *width};
  }

  void addTo(Stmt &loop) {
    std::vector<Indexed> rows;
    for (const Stmt &s : loop.body) {
      if (s.kind != Stmt::Kind::Call)
        continue;
      for (const Arg &a : s.args)
        if (auto r = indexedRow(a, loop.var)) {
          bool seen = std::any_of(rows.begin(), rows.end(), [&](const Indexed &o) {
            return o.table == r->table && o.data == r->data && o.base == r->base && o.width == r->width;
          });
          if (!seen)
            rows.push_back(*r);
        }
    }
    std::vector<Stmt> calls;
    for (const Indexed &r : rows) {
      int64_t ahead = std::clamp<int64_t>(kAheadBytes / (r.width * 8), 2, 16);
      calls.push_back(edit::kernelCall(
          "ppc_prefetch_row",
          {edit::pointerArg(r.data, r.base), edit::intArg(p_.loopVar(loop.var)), edit::intArg(loop.bound),
           edit::intArg(p_.intConst(ahead)), edit::pointerArg(r.table, p_.intConst(0)),
           edit::intArg(p_.intConst(r.width))},
          "prefetch " + p_.buffers[size_t(r.table)].name + "'s row " + std::to_string(ahead) + " data ahead"));
      ++inserted;
    }
    loop.body.insert(loop.body.begin(), std::make_move_iterator(calls.begin()), std::make_move_iterator(calls.end()));
  }


  Plan &p_;
};

} // namespace

int prefetchIndexedRows(Plan &p) {
  Prefetch f(p);
  for (auto &block : p.blocks)
    f.run(block);
  return f.inserted;
}

} // namespace ppc::codegen
