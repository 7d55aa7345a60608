//===- codegen/transforms/ElementLoopFusion.cpp - one loop per element's work ---===//
//
// A plan transformation (DESIGN.md §4: loop fusion). A mixture's global
// updates are a run of loops over its components, one per schedule
// statement or message: on digits (K = 10, D = 64)
//
//   for k < K { zero mean.B[k] }            (the weighted moments between)
//   for k < K { ppc_mvgaussian_mean_avglog(..., &mean.B[k * W]) }
//   parallel for k < K { mean.q.eta[k] = ...; ppc_mvgaussian_stats_n(1, ...) }
//   for k < K { zero precision.B[k] }
//   ...                                     (eight loops, then the weights'
//   for k < K { ppc_mvgaussian_sample_avglog(...) }      statements, then one)
//
// Each iteration of each loop touches only its component's rows, so the
// loops fuse into one, run component by component: one parallel loop (a
// thread's components' messages, posteriors and SPD factorizations on that
// thread, each component's 33 KB rows in cache from one statement to the
// next), where three parallel loops took turns with five loops on the
// calling thread.
//
// Two loops over the same elements fuse when every buffer that statements
// change is accessed, in both, only at the row of the loop's element (index
// var * width, one width per buffer, the buffer exactly `bound` rows; a
// kernel given a pointer to an element's row touches that row only, as the
// other row transformations assume): then no element's statements read or
// write another's rows, and the fused loop may run its elements in any
// order, on any thread, so it is parallel when one of them was. Statements
// between the two move out of the way when they touch none of the buffers
// of the loop that crosses them. Loops with ELBO terms stay apart (their
// sum would change order), as do nests and loops with per-thread copies.
// Every kernel call computes what it did from the same inputs: the same
// bits.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"

#include <map>
#include <optional>

namespace ppc::codegen {
namespace {

/// The rows a fusable loop's iteration touches: buffer -> row width, for
/// every buffer that is not bound data (which no statement changes).
using RowWidths = std::map<int32_t, int64_t>;

class ElementLoopFusion {
public:
  explicit ElementLoopFusion(Plan &p) : p_(p) {}

  int run(std::vector<Stmt> &block) {
    int fused = 0;
    for (size_t i = 0; i < block.size(); ++i) {
      auto rows = footprint(block[i]);
      if (!rows)
        continue;
      for (size_t j = i + 1; j < block.size(); ++j) {
        auto other = footprint(block[j]);
        if (!other || !p_.sameExpr(block[i].bound, block[j].bound) || !compatible(*rows, *other))
          continue;
        // The statements between stay in order; one of the loops crosses them.
        const bool hoist = crossable(block, i + 1, j, *other);
        if (!hoist && !crossable(block, i + 1, j, *rows))
          continue;
        Stmt merged = fuse(std::move(block[i]), std::move(block[j]));
        for (auto [buffer, width] : *other)
          (*rows)[buffer] = width;
        if (hoist) {
          block[i] = std::move(merged);
          block.erase(block.begin() + std::ptrdiff_t(j));
        } else {
          block[j] = std::move(merged);
          block.erase(block.begin() + std::ptrdiff_t(i));
          i = j - 1;
        }
        ++fused;
        j = i; // look again from the merged loop
      }
    }
    return fused;
  }

private:
  const Expr &expr(ExprId e) const { return p_.exprs[size_t(e)]; }

  /// The rows a loop's iteration touches, or none if it cannot fuse.
  std::optional<RowWidths> footprint(const Stmt &loop) const {
    if (loop.kind != Stmt::Kind::Loop || loop.distributed || loop.batch != 0 || loop.costs >= 0 ||
        !loop.privates.empty() || !loop.reductions.empty() || !p_.constantOf(loop.bound))
      return std::nullopt;
    const int64_t bound = *p_.constantOf(loop.bound);
    RowWidths rows;
    bool ok = bound > 1;
    auto row = [&](int32_t buffer, ExprId index, int64_t extent = 1) {
      loadsAtRows(index, loop.var, bound, rows, ok);
      ok = ok && atElementRow(buffer, index, loop.var, bound, extent, rows);
    };
    for (const Stmt &s : loop.body) {
      switch (s.kind) {
      case Stmt::Kind::Zero: row(s.buffer, s.index, s.count); break;
      case Stmt::Kind::Call:
        if (s.result == Stmt::Result::Elbo || s.elboOnly)
          return std::nullopt;
        if (s.result == Stmt::Result::Slot || s.result == Stmt::Result::SlotProduct)
          row(s.buffer, s.index);
        loadsAtRows(s.scale, loop.var, bound, rows, ok);
        for (const Arg &a : s.args) {
          if (a.kind == Arg::Kind::Pointer)
            row(a.buffer, a.expr);
          else
            loadsAtRows(a.expr, loop.var, bound, rows, ok);
        }
        break;
      default: return std::nullopt; // nests, exits
      }
      if (!ok)
        return std::nullopt;
    }
    return rows;
  }

  /// The loads in e: from bound data anywhere, from other buffers only at
  /// the element's row.
  void loadsAtRows(ExprId e, int32_t var, int64_t bound, RowWidths &rows, bool &ok) const {
    if (e == kNoExpr || !ok)
      return;
    const Expr &x = expr(e);
    if (x.kind == Expr::Kind::LoadInt || x.kind == Expr::Kind::LoadDouble)
      ok = atElementRow(x.buffer, x.a, var, bound, 1, rows);
    loadsAtRows(x.a, var, bound, rows, ok);
    loadsAtRows(x.b, var, bound, rows, ok);
  }

  /// buffer[index ..+ extent) lies in the row of loop variable `var`'s
  /// element, the buffer `bound` such rows of one width throughout the loop
  /// (recorded in `rows`); bound data may be read anywhere.
  bool atElementRow(int32_t buffer, ExprId index, int32_t var, int64_t bound, int64_t extent,
                    RowWidths &rows) const {
    if (p_.isBoundData(buffer))
      return true;
    auto width = edit::elementRowWidth(p_, index, var);
    auto known = rows.find(buffer);
    if (!width || *width < extent || p_.buffers[size_t(buffer)].size != bound * *width ||
        (known != rows.end() && known->second != *width))
      return false;
    rows[buffer] = *width;
    return true;
  }

  static bool compatible(const RowWidths &a, const RowWidths &b) {
    for (auto [buffer, width] : b)
      if (auto it = a.find(buffer); it != a.end() && it->second != width)
        return false;
    return true;
  }

  /// Statements [from, to) of the block name none of the buffers of `rows`.
  bool crossable(const std::vector<Stmt> &block, size_t from, size_t to, const RowWidths &rows) const {
    for (size_t s = from; s < to; ++s)
      for (auto [buffer, width] : rows)
        if (p_.mentions(block[s], buffer))
          return false;
    return true;
  }

  /// a's body, then b's with b's loop variable renamed to a's.
  Stmt fuse(Stmt a, Stmt b) {
    std::map<ExprId, ExprId> memo;
    for (Stmt &s : b.body) {
      s.index = rename(s.index, b.var, a.var, memo);
      s.scale = rename(s.scale, b.var, a.var, memo);
      for (Arg &arg : s.args)
        arg.expr = rename(arg.expr, b.var, a.var, memo);
      a.body.push_back(std::move(s));
    }
    a.parallel = a.parallel || b.parallel;
    if (a.plate != b.plate)
      a.plate = nullptr;
    a.note = "element loops fused";
    return a;
  }

  ExprId rename(ExprId id, int32_t from, int32_t to, std::map<ExprId, ExprId> &memo) {
    if (id == kNoExpr || !p_.usesVar(id, from))
      return id;
    if (auto it = memo.find(id); it != memo.end())
      return it->second;
    const Expr x = expr(id); // a copy: the builders grow p_.exprs
    ExprId r = id;
    switch (x.kind) {
    case Expr::Kind::LoopVar: r = p_.loopVar(to); break;
    case Expr::Kind::AddInt: r = p_.add(rename(x.a, from, to, memo), rename(x.b, from, to, memo)); break;
    case Expr::Kind::MulInt: r = p_.mul(rename(x.a, from, to, memo), rename(x.b, from, to, memo)); break;
    case Expr::Kind::LoadInt: r = p_.loadInt(x.buffer, rename(x.a, from, to, memo)); break;
    case Expr::Kind::LoadDouble: r = p_.loadDouble(x.buffer, rename(x.a, from, to, memo)); break;
    case Expr::Kind::IntToDouble: r = p_.intToDouble(rename(x.a, from, to, memo)); break;
    case Expr::Kind::AddDouble: r = p_.addDouble(rename(x.a, from, to, memo), rename(x.b, from, to, memo)); break;
    case Expr::Kind::MulDouble: r = p_.mulDouble(rename(x.a, from, to, memo), rename(x.b, from, to, memo)); break;
    case Expr::Kind::SubDouble: r = p_.subDouble(rename(x.a, from, to, memo), rename(x.b, from, to, memo)); break;
    default: break;
    }
    memo[id] = r;
    return r;
  }

  Plan &p_;
};

} // namespace

int fuseElementLoops(Plan &p) {
  ElementLoopFusion f(p);
  int fused = 0;
  for (auto &block : p.blocks)
    fused += f.run(block);
  return fused;
}

} // namespace ppc::codegen
