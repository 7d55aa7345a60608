//===- codegen/transforms/BatchDot.cpp - inner products with known rows ---===//
//
// A plan transformation. An inner product w.dot(x(i)) with x a known input
// (regression's design matrix) is lowered per datum: in the loop over the
// data, its forward statistics (x_i . E w, x_i^T E[w w^T] x_i) and its
// message to w (e0_i x_i, e1_i x_i x_i^T), each a call on one row:
//
//   for i < N {
//     zero m.F[i*2 +: 2]; ppc_dot_forward(D, &w.stats[0], 1, &X[i*D], 0, &m.F[i*2])
//     ...
//     ppc_dot_to_left(D, &m.eta[i*2], &X[i*D], 0, wt, &w.B[0])        (a sum over i)
//   }
//
// Where the loop reads w's statistics only there, the forward calls move
// before the loop and the messages after it, as calls on blocks of rows
// (ppc_dot_forward_rows, ppc_dot_to_operand_rows): the same numbers (each
// row's forward statistics are computed alone; the message's sum is taken
// in another order). Rows of a block stream through cache once per call,
// and when every row's e1 is the same (a Gaussian child with a global
// precision), the message's second part is e1 X^T X from a table of the
// block's rows computed once (a memo buffer): the data's sufficient
// statistics, tabulated.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace ppc::codegen {
namespace {

/// Rows per call (and per table of X^T X).
constexpr int64_t kRowsPerBlock = 2048;

class BatchDot {
public:
  explicit BatchDot(Plan &p) : p_(p) {}

  void run(std::vector<Stmt> &block) {
    std::vector<Stmt> out;
    for (Stmt &s : block) {
      if (s.kind != Stmt::Kind::Loop || s.distributed || s.batch || s.body.empty()) {
        out.push_back(std::move(s));
        continue;
      }
      std::vector<Stmt> before, after;
      extract(s, before, after);
      for (Stmt &b : before)
        out.push_back(std::move(b));
      if (!s.body.empty())
        out.push_back(std::move(s));
      for (Stmt &a : after)
        out.push_back(std::move(a));
    }
    block = std::move(out);
  }

  int changed = 0;

private:
  const Expr &expr(ExprId e) const { return p_.exprs[size_t(e)]; }

  /// index == var * width
  bool atRow(ExprId index, int32_t var, int64_t width) const { return edit::isElementRow(p_, index, var, width); }

  bool invariant(ExprId e, int32_t var) const { return e == kNoExpr || !p_.usesVar(e, var); }

  /// Statements of `loop` other than `skip` that name `buffer`.
  bool mentionedElsewhere(const Stmt &loop, int32_t buffer, const Stmt *skip, const Stmt *skip2 = nullptr) const {
    for (const Stmt &o : loop.body)
      if (&o != skip && &o != skip2 && p_.mentions(o, buffer))
        return true;
    return std::count(loop.privates.begin(), loop.privates.end(), buffer) > 0;
  }

  static bool isCall(const Stmt &s, std::string_view name) {
    return s.kind == Stmt::Kind::Call && s.kernel && s.kernel->name == name && s.result == Stmt::Result::Discard;
  }

  /// The rows operand (a bound-data row per datum, `full` 0) and the other (loop-invariant full statistics).
  bool knownRows(const Stmt &loop, const Arg &ptr, const Arg &full, int64_t D) const {
    return ptr.kind == Arg::Kind::Pointer && p_.isBoundData(ptr.buffer) && atRow(ptr.expr, loop.var, D) &&
           full.kind == Arg::Kind::Int && p_.constantOf(full.expr) == 0;
  }

  void extract(Stmt &loop, std::vector<Stmt> &before, std::vector<Stmt> &after) {
    const auto bound = p_.constantOf(loop.bound);
    for (size_t j = 0; j < loop.body.size();) {
      Stmt &c = loop.body[j];
      if (isCall(c, "ppc_dot_forward") && j > 0 && forward(loop, j, before)) {
        loop.body.erase(loop.body.begin() + long(j - 1), loop.body.begin() + long(j + 1));
        --j;
        ++changed;
        continue;
      }
      if ((isCall(c, "ppc_dot_to_left") || isCall(c, "ppc_dot_to_right")) && message(loop, j, bound, after)) {
        loop.body.erase(loop.body.begin() + long(j));
        ++changed;
        continue;
      }
      ++j;
    }
  }

  /// zero dst[i*2 +: 2]; ppc_dot_forward(D, a, full, b, full, &dst[i*2]) -> before the loop.
  bool forward(Stmt &loop, size_t j, std::vector<Stmt> &before) {
    const Stmt &c = loop.body[j], &z = loop.body[j - 1];
    const auto D = p_.constantOf(c.args[0].expr);
    const Arg &dst = c.args[5];
    if (!D || z.kind != Stmt::Kind::Zero || z.buffer != dst.buffer || z.count != 2 || !atRow(z.index, loop.var, 2) ||
        !atRow(dst.expr, loop.var, 2))
      return false;
    int rows = knownRows(loop, c.args[3], c.args[4], *D) ? 3 : knownRows(loop, c.args[1], c.args[2], *D) ? 1 : 0;
    if (!rows)
      return false;
    const Arg &stats = c.args[rows == 3 ? 1 : 3], &statsFull = c.args[rows == 3 ? 2 : 4];
    if (stats.kind != Arg::Kind::Pointer || !invariant(stats.expr, loop.var) ||
        p_.constantOf(statsFull.expr) != 1 || mentionedElsewhere(loop, stats.buffer, &c))
      return false;
    // Nothing before the call in the loop reads the rows it writes.
    for (size_t k = 0; k + 1 < j; ++k)
      if (p_.mentions(loop.body[k], dst.buffer))
        return false;
    const Arg X = c.args[size_t(rows)];
    callsOnRowBlocks(p_, loop.bound, kRowsPerBlock, loop.parallel, {}, [&](ExprId first, ExprId count, ExprId) {
      Stmt r;
      r.kind = Stmt::Kind::Call;
      r.kernel = rt::findRuntimeKernel("ppc_dot_forward_rows");
      r.args = {edit::intArg(count), c.args[0], stats, rowsFrom(X, first, *D), rowsFrom(dst, first, 2)};
      r.note = c.note + " (all rows)";
      return r;
    }, before);
    return true;
  }

  /// ppc_dot_to_*(D, &eta[i*2], &X[i*D], 0, w, &dst[c]) summed over the loop -> after it.
  bool message(Stmt &loop, size_t j, std::optional<int64_t> bound, std::vector<Stmt> &after) {
    const Stmt &c = loop.body[j];
    const auto D = p_.constantOf(c.args[0].expr);
    const Arg &eta = c.args[1], &weight = c.args[4], &dst = c.args[5];
    if (!D || eta.kind != Arg::Kind::Pointer || !atRow(eta.expr, loop.var, 2) || !knownRows(loop, c.args[2], c.args[3], *D) ||
        weight.kind != Arg::Kind::Double || !invariant(weight.expr, loop.var) || dst.kind != Arg::Kind::Pointer ||
        !invariant(dst.expr, loop.var) || mentionedElsewhere(loop, dst.buffer, &c))
      return false;
    // The weight reads nothing the loop writes; the rows of eta are final
    // when the call runs (nothing after it names them).
    for (const Stmt &o : loop.body)
      if (&o != &c && weight.expr != kNoExpr && o.buffer >= 0 && p_.loads(weight.expr, o.buffer))
        return false;
    for (size_t k = j + 1; k < loop.body.size(); ++k)
      if (p_.mentions(loop.body[k], eta.buffer))
        return false;
    const bool reduced = std::count(loop.reductions.begin(), loop.reductions.end(), dst.buffer) > 0;
    if (loop.parallel && !reduced)
      return false;
    loop.reductions.erase(std::remove(loop.reductions.begin(), loop.reductions.end(), dst.buffer),
                          loop.reductions.end());
    // One table of X^T X per call (callsOnRowBlocks: whole blocks, then the rest).
    int64_t blocks = 1;
    if (bound && *bound >= 2 * kRowsPerBlock)
      blocks = *bound / kRowsPerBlock + (*bound % kRowsPerBlock ? 1 : 0);
    // The tables of one data matrix are shared by its calls (the same blocks).
    auto key = std::make_pair(c.args[2].buffer, blocks);
    auto known = grams_.find(key);
    if (known == grams_.end()) {
      Buffer gram;
      gram.name = "gram." + p_.buffers[size_t(c.args[2].buffer)].name;
      gram.size = blocks * (1 + *D * *D);
      gram.memo = true;
      known = grams_.emplace(key, int32_t(p_.buffers.size())).first;
      p_.buffers.push_back(std::move(gram));
    }
    const int32_t g = known->second;
    const Arg X = c.args[2];
    callsOnRowBlocks(p_, loop.bound, kRowsPerBlock, loop.parallel, {dst.buffer},
                     [&](ExprId first, ExprId count, ExprId block) {
      Stmt r;
      r.kind = Stmt::Kind::Call;
      r.kernel = rt::findRuntimeKernel("ppc_dot_to_operand_rows");
      Arg table; // the call's own table
      table.kind = Arg::Kind::Pointer;
      table.buffer = g;
      table.expr = p_.mul(block, p_.intConst(1 + *D * *D));
      r.args = {edit::intArg(count), c.args[0], rowsFrom(eta, first, 2), rowsFrom(X, first, *D), weight, table, dst};
      r.note = c.note + " (all rows)";
      return r;
    }, after);
    return true;
  }

  /// (data matrix, blocks) -> its tables of X^T X.
  std::map<std::pair<int32_t, int64_t>, int32_t> grams_;

  Arg rowsFrom(const Arg &row, ExprId first, int64_t width) {
    Arg a = row;
    a.expr = p_.mul(first, p_.intConst(width));
    return a;
  }

  Plan &p_;
};

} // namespace

int batchInnerProducts(Plan &p) {
  BatchDot b(p);
  for (auto &block : p.blocks)
    b.run(block);
  return b.changed;
}

} // namespace ppc::codegen
