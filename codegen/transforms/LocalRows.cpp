//===- codegen/transforms/LocalRows.cpp - an element's table rows, copied once ---===//
//
// A plan transformation (DESIGN.md §4). After gather-dots, each sweep of an
// element's local variables reads its data's rows of a global table (LDA:
// every sweep of a document reads its words' rows of the topics'
// exponential table, 1.6 MB at K = 20, larger than a small L2):
//
//   for e < E {
//     for s < 10 {  // local sweeps
//       ppc_dot_inverse_axpy_gather(n(e), K, a, &T[0], &idx[base(e)], w, c, acc)
//     }
//   }
//
// The element's rows are copied out of the table once, before its sweeps,
// into a buffer of the largest element's rows (private to each thread), and
// the sweeps read them from there, one after another:
//
//   for e < E {
//     ppc_gather_rows(n(e), K, &T[0], &idx[base(e)], &T.rows[0])
//     for s < 10 { ppc_dot_inverse_axpy_rows(n(e), K, a, &T.rows[0], w, c, acc) }
//   }
//
// A loop after the sweeps over the same data (the ELBO's pass, which adds
// the tokens' statistics to the topics' counts) reads its rows from the copy
// too. The same values (a copy is exact) in the same order. Applies where the
// sweeps loop runs more than once, the rows' count and start read only
// bound data and the element, nothing in the element's loop writes the
// table (every statement naming it is a kernel that only reads it there),
// and the copy fits in kBudget bytes.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <algorithm>
#include <string_view>

namespace ppc::codegen {
namespace {

/// The largest copy (bytes): half of a small L2, so that the copy and what
/// the sweeps read besides stay in it.
constexpr int64_t kBudget = 256 * 1024;

/// The kernels that only read a table row at argument `index`.
bool readsOnly(std::string_view kernel, size_t index) {
  if (kernel == "ppc_dot_inverse_axpy_gather")
    return index == 3;
  if (kernel == "ppc_dot_inverse_axpy" || kernel == "ppc_product_axpy" || kernel == "ppc_product_axpy_norm" ||
      kernel == "ppc_product_axpy_lognorm")
    return index == 2;
  if (kernel == "ppc_prefetch_row")
    return index == 4;
  return false;
}

class LocalRows {
public:
  explicit LocalRows(Plan &p) : p_(p) {}

  int changed = 0;

  void run(std::vector<Stmt> &block) {
    for (Stmt &s : block)
      if (s.kind == Stmt::Kind::Loop) {
        run(s.body);
        element(s);
      }
  }

private:
  /// s names `table` only as a row that a kernel reads.
  bool onlyReads(const Stmt &s, int32_t table) const {
    if (s.kind == Stmt::Kind::Loop)
      return std::all_of(s.body.begin(), s.body.end(), [&](const Stmt &b) { return onlyReads(b, table); }) &&
             std::count(s.privates.begin(), s.privates.end(), table) == 0 &&
             std::count(s.reductions.begin(), s.reductions.end(), table) == 0;
    if (s.kind != Stmt::Kind::Call)
      return s.buffer != table;
    if (s.buffer == table)
      return false;
    for (size_t i = 0; i < s.args.size(); ++i)
      if (s.args[i].kind == Arg::Kind::Pointer && s.args[i].buffer == table && !readsOnly(s.kernel->name, i))
        return false;
    return true;
  }

  /// The loop `element` over a plate's elements: its sweeps loops' gathered sums.
  void element(Stmt &element) {
    const auto elements = p_.constantOf(element.bound);
    if (!elements || *elements <= 0 || element.batch || element.distributed)
      return;
    for (size_t at = 0; at < element.body.size(); ++at) {
      Stmt &sweeps = element.body[at];
      const auto times = sweeps.kind == Stmt::Kind::Loop ? p_.constantOf(sweeps.bound) : std::nullopt;
      if (!times || *times < 2 || sweeps.batch)
        continue;
      for (Stmt &c : sweeps.body) {
        if (!isDiscardedCall(c, "ppc_dot_inverse_axpy_gather"))
          continue;
        const Arg n = c.args[0], K = c.args[1], table = c.args[3], idx = c.args[4];
        const auto width = p_.constantOf(K.expr);
        if (!width || *width <= 0 || table.kind != Arg::Kind::Pointer || p_.constantOf(table.expr) != 0 ||
            idx.kind != Arg::Kind::Pointer || p_.usesVar(n.expr, sweeps.var) || p_.usesVar(idx.expr, sweeps.var) ||
            !p_.onlyBoundData(n.expr) || !p_.onlyBoundData(idx.expr) || !onlyReads(element, table.buffer))
          continue;
        // The largest element's rows.
        int64_t most = 0;
        bool known = true;
        for (int64_t e = 0; e < *elements && known; ++e) {
          const auto rows = p_.evaluate(n.expr, element.var, e);
          known = rows.has_value();
          most = known ? std::max(most, *rows) : most;
        }
        if (!known || most <= 0 || most > kBudget / (8 * *width))
          continue;
        const int32_t copy = edit::addBuffer(p_, p_.buffers[size_t(table.buffer)].name + ".rows", most * *width,
                                             /*memo=*/true);
        if (element.parallel)
          element.privates.push_back(copy);
        const Arg rows = edit::pointerArg(copy, p_.intConst(0));
        Stmt gather = edit::kernelCall("ppc_gather_rows", {n, K, table, idx, rows},
                                       "the element's rows of " + p_.buffers[size_t(table.buffer)].name);
        c = edit::kernelCall("ppc_dot_inverse_axpy_rows", {n, K, c.args[2], rows, c.args[5], c.args[6], c.args[7]},
                             c.note + " (from the element's rows)");
        element.body.insert(element.body.begin() + long(at), std::move(gather));
        for (size_t later = at + 2; later < element.body.size(); ++later)
          readCopy(element.body[later], n, idx, table.buffer, copy, *width);
        ++changed;
        break; // `sweeps` moved: the next statement is it again
      }
    }
  }

  /// A loop after the sweeps over the same data (the ELBO's pass) that
  /// reads the table at its datum's row reads the copy's row instead.
  void readCopy(Stmt &loop, const Arg &n, const Arg &idx, int32_t table, int32_t copy, int64_t width) {
    if (loop.kind != Stmt::Kind::Loop || loop.parallel || loop.batch || !p_.sameExpr(loop.bound, n.expr))
      return;
    for (Stmt &c : loop.body)
      for (size_t i = 0; c.kind == Stmt::Kind::Call && i < c.args.size(); ++i) {
        Arg &a = c.args[i];
        if (a.kind != Arg::Kind::Pointer || a.buffer != table || !readsOnly(c.kernel->name, i))
          continue;
        const auto row = edit::gatheredRow(p_, a.expr, loop.var, width);
        if (row && row->first == idx.buffer && p_.sameExpr(row->second, idx.expr)) {
          a = edit::pointerArg(copy, p_.mul(p_.loopVar(loop.var), p_.intConst(width)));
          c.note += " (the table's rows from the element's copy)";
        }
      }
  }

  Plan &p_;
};

} // namespace

int copyLocalRows(Plan &p) {
  LocalRows l(p);
  for (auto &block : p.blocks)
    l.run(block);
  return l.changed;
}

} // namespace ppc::codegen
