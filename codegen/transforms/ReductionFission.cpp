//===- codegen/transforms/ReductionFission.cpp - sums over the rows after the row work ---===//
//
// A plan transformation (DESIGN.md §4: loop fission for vectorization). A
// fused loop over a plate's elements that computes each element's rows and
// also adds each element's message to a global, e.g. a regression's
// intercept,
//
//   parallel for i < N sum b.B { ...row i...; ppc_sum_to_right(&eta[i*2], &stats[i*2], 1.0, &b.B[0]) }
//
// stays scalar. The sum is a reduction in a fixed order, which LLVM's loop
// vectorizer may not reorder, and ppc's sums do not depend on the vector
// width. So the calls that add into the loop's reductions move to a loop of
// their own right after it, over the same elements, split into the same
// chunks, reading the rows the first loop left. The sums are the same, in
// the same order. The first loop, now free of them, vectorizes (the logistic
// link's bound, four rows at a time on AVX2).
//
// Split only where the row work left is a link's bound (heavy(): where
// vectorizing it pays for the second pass). A call moves only when:
//   - every row it reads is its element's own row, which no statement after
//     it in the loop names;
//   - every other buffer it reads is bound data or named by no other
//     statement of the loop;
//   - its scalar arguments read only bound data;
//   - no statement left behind names the reduction it adds to.
// Only flat loop bodies are split (no inner loops, no early exits); loops of
// a data-parallel run's partitioned plate are left alone.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <algorithm>

namespace ppc::codegen {
namespace {

class Fission {
public:
  explicit Fission(Plan &p) : p_(p) {}

  int split = 0;

  void run(std::vector<Stmt> &block) {
    std::vector<Stmt> out;
    for (Stmt &s : block) {
      if (s.kind == Stmt::Kind::Loop)
        run(s.body);
      out.push_back(std::move(s));
      if (out.back().kind == Stmt::Kind::Loop) {
        std::optional<Stmt> sums = splitOff(out.back());
        if (sums)
          out.push_back(std::move(*sums));
      }
    }
    block = std::move(out);
  }

private:
  const Expr &expr(ExprId e) const { return p_.exprs[size_t(e)]; }

  bool isReduction(const Stmt &loop, int32_t b) const {
    return std::count(loop.reductions.begin(), loop.reductions.end(), b) > 0;
  }
  bool isPrivate(const Stmt &loop, int32_t b) const {
    return std::count(loop.privates.begin(), loop.privates.end(), b) > 0;
  }

  /// The width of the element's row that `index` names (PlanEdits.h).
  std::optional<int64_t> rowWidth(ExprId index, int32_t var) const { return edit::elementRowWidth(p_, index, var); }

  /// Every mention of `buffer` in s is the element's row of `width`.
  bool onlyRow(const Stmt &s, int32_t buffer, int32_t var, int64_t width) const {
    if (s.kind != Stmt::Kind::Call && s.kind != Stmt::Kind::Zero)
      return !p_.mentions(s, buffer);
    if (s.buffer == buffer &&
        (rowWidth(s.index, var) != width || (s.kind == Stmt::Kind::Zero && s.count > width)))
      return false;
    for (const Arg &a : s.args) {
      if (a.kind == Arg::Kind::Pointer && a.buffer == buffer && rowWidth(a.expr, var) != width)
        return false;
      if (a.kind != Arg::Kind::Pointer && p_.loads(a.expr, buffer))
        return false;
    }
    return !p_.loads(s.scale, buffer) && !p_.loads(s.index, buffer);
  }

  /// Row work that pays for the second pass over the rows once vectorized:
  /// a non-conjugate link's bound (square roots, exponentials, divisions per
  /// row). Measured on 10^6 x 50 (AVX2): the logistic model's iteration 3%
  /// faster split; linear regression's rows (copies and a few
  /// multiply-adds) 5% slower, so its loops stay whole.
  static bool heavy(const Stmt &s) {
    if (s.kind != Stmt::Kind::Call || !s.kernel)
      return false;
    const std::string_view name = s.kernel->name;
    return name.starts_with("ppc_sigmoid_") || name.starts_with("ppc_softmax_");
  }

  /// The reduction call `c` (at `at` in the loop's body) can run after the loop.
  std::optional<int32_t> movable(const Stmt &loop, size_t at) const {
    const Stmt &c = loop.body[at];
    if (c.kind != Stmt::Kind::Call || !c.kernel || c.result != Stmt::Result::Discard || c.scale != kNoExpr)
      return std::nullopt;
    // The last pointer is the sum the call adds to: one of the loop's reductions, the same entry for every element.
    const Arg *sum = nullptr;
    for (const Arg &a : c.args)
      if (a.kind == Arg::Kind::Pointer)
        sum = &a;
    if (!sum || !isReduction(loop, sum->buffer) || p_.usesVar(sum->expr, loop.var) ||
        !p_.onlyBoundData(sum->expr))
      return std::nullopt;
    for (const Arg &a : c.args) {
      if (&a == sum || a.kind == Arg::Kind::Null)
        continue;
      if (a.kind != Arg::Kind::Pointer) { // a scalar: the same after the loop
        if (!p_.onlyBoundData(a.expr))
          return std::nullopt;
        continue;
      }
      if (isPrivate(loop, a.buffer) || isReduction(loop, a.buffer) || !p_.onlyBoundData(a.expr))
        return std::nullopt;
      if (p_.isBoundData(a.buffer))
        continue;
      const std::optional<int64_t> width = rowWidth(a.expr, loop.var);
      for (size_t k = 0; k < loop.body.size(); ++k) {
        if (k == at || !p_.mentions(loop.body[k], a.buffer))
          continue;
        // Written or read after the call, or a global another statement
        // names, or another element's row: it may not hold then what the call read.
        if (k > at || !width || !onlyRow(loop.body[k], a.buffer, loop.var, *width))
          return std::nullopt;
      }
    }
    return sum->buffer;
  }

  /// The loop's reduction calls, moved to a loop of their own (none: the
  /// loop stays as it is).
  std::optional<Stmt> splitOff(Stmt &loop) {
    if (loop.reductions.empty() || loop.distributed || loop.batch != 0)
      return std::nullopt;
    for (const Stmt &s : loop.body)
      if (s.kind != Stmt::Kind::Call && s.kind != Stmt::Kind::Zero)
        return std::nullopt;
    std::vector<std::optional<int32_t>> sums(loop.body.size());
    for (size_t k = 0; k < loop.body.size(); ++k)
      sums[k] = movable(loop, k);
    // A sum that a statement staying behind names stays behind with all its calls.
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t k = 0; k < loop.body.size(); ++k) {
        if (sums[k])
          continue;
        for (size_t j = 0; j < loop.body.size(); ++j)
          if (sums[j] && p_.mentions(loop.body[k], *sums[j])) {
            const int32_t b = *sums[j];
            for (auto &s : sums)
              if (s == b)
                s.reset();
            changed = true;
          }
      }
    }
    bool work = false, moved = false;
    for (size_t k = 0; k < loop.body.size(); ++k) {
      moved = moved || sums[k].has_value();
      work = work || (!sums[k] && heavy(loop.body[k]));
    }
    if (!moved || !work) // nothing to move, or too little left to pay for a second pass
      return std::nullopt;

    Stmt after;
    after.kind = Stmt::Kind::Loop;
    after.var = p_.loopVars++;
    after.bound = loop.bound;
    after.parallel = loop.parallel;
    after.plate = loop.plate;
    after.costs = loop.costs;
    std::vector<Stmt> kept;
    for (size_t k = 0; k < loop.body.size(); ++k) {
      if (!sums[k]) {
        kept.push_back(std::move(loop.body[k]));
        continue;
      }
      Stmt c = std::move(loop.body[k]);
      for (Arg &a : c.args)
        a.expr = renamed(a.expr, loop.var, after.var);
      if (std::count(after.reductions.begin(), after.reductions.end(), *sums[k]) == 0)
        after.reductions.push_back(*sums[k]);
      after.body.push_back(std::move(c));
    }
    loop.body = std::move(kept);
    std::vector<int32_t> left;
    for (int32_t b : loop.reductions)
      if (std::count(after.reductions.begin(), after.reductions.end(), b) == 0)
        left.push_back(b);
    loop.reductions = std::move(left);
    ++split;
    return after;
  }

  /// e with loop variable `from` read as `to`.
  ExprId renamed(ExprId id, int32_t from, int32_t to) {
    if (id == kNoExpr || !p_.usesVar(id, from))
      return id;
    const Expr x = expr(id); // a copy: the builders below grow p_.exprs
    switch (x.kind) {
    case Expr::Kind::LoopVar: return p_.loopVar(to);
    case Expr::Kind::AddInt: return p_.add(renamed(x.a, from, to), renamed(x.b, from, to));
    case Expr::Kind::MulInt: return p_.mul(renamed(x.a, from, to), renamed(x.b, from, to));
    case Expr::Kind::LoadInt: return p_.loadInt(x.buffer, renamed(x.a, from, to));
    case Expr::Kind::LoadDouble: return p_.loadDouble(x.buffer, renamed(x.a, from, to));
    case Expr::Kind::IntToDouble: return p_.intToDouble(renamed(x.a, from, to));
    case Expr::Kind::AddDouble: return p_.addDouble(renamed(x.a, from, to), renamed(x.b, from, to));
    case Expr::Kind::MulDouble: return p_.mulDouble(renamed(x.a, from, to), renamed(x.b, from, to));
    case Expr::Kind::SubDouble: return p_.subDouble(renamed(x.a, from, to), renamed(x.b, from, to));
    default: return id;
    }
  }

  Plan &p_;
};

} // namespace

int splitReductions(Plan &p) {
  Fission f(p);
  for (auto &block : p.blocks)
    f.run(block);
  return f.split;
}

} // namespace ppc::codegen
