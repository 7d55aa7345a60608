//===- codegen/transforms/ColumnFission.cpp - datum-major sums added by tiles ---===//
//
// A plan transformation (DESIGN.md §4: loop fission). A posterior whose
// messages are summed datum-major (LDA's topic counts: one K-wide row per
// word, so that a token adds to one contiguous row) adds column k of that
// sum to its row k when it is updated:
//
//   parallel for k < K { zero eta[k]; eta[k] += F[k]; ppc_axpy_strided(V, K, w, &B[k], &eta[k * V]); stats(k) }
//
// Each call reads V entries K apart: one 64-byte line per entry, every line
// of B fetched K/8 times over the loop (at K = 100 and V = 10473, 1M line
// reads of an 8 MB table that is not in L2). The iterations of a parallel
// loop are independent, so the loop splits around the call: the statements
// before it for every k, then every column at once by tiles (a parallel
// loop over blocks of columns, ppc_axpy_transposed: B's rows read whole),
// then the statements after it for every k. Only loops without private
// rows, sums, exits or ELBO terms, whose strided call reads column k of a K-wide table
// into row k, of a table of 1 MiB or more; the same values, the same
// additions in the same order per entry. Measured on AP at K = 100: the
// strided loop 6.1% of a sweep's samples on one thread, its replacement 4.9%
// (the tiles 3.7%); on two threads 6.7% and 4.5%.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <optional>

namespace ppc::codegen {
namespace {

/// Columns per call of the parallel loop (as the exponential table's blocks).
constexpr int64_t kColumns = 512;
/// Smaller datum-major tables stay in L2, where the strided reads are cheap
/// and the two extra loops would only add the threads' handovers.
constexpr int64_t kLargeTable = 1 << 20; // bytes

class Fission {
public:
  explicit Fission(Plan &p) : p_(p) {}
  int changed = 0;

  void run(std::vector<Stmt> &block) {
    std::vector<Stmt> out;
    for (Stmt &s : block)
      split(std::move(s), out);
    block = std::move(out);
  }

private:
  /// The loop, or the loops it splits into, appended to `out`.
  void split(Stmt loop, std::vector<Stmt> &out) {
    if (!splittable(loop)) {
      out.push_back(std::move(loop));
      return;
    }
    for (size_t i = 0; i < loop.body.size(); ++i) {
      const Stmt &c = loop.body[i];
      auto width = columnOfRow(c, loop);
      if (!width)
        continue;
      Stmt before = withBody(loop, {});
      for (size_t j = 0; j < i; ++j)
        before.body.push_back(std::move(loop.body[j]));
      if (!before.body.empty())
        out.push_back(std::move(before));
      out.push_back(byTiles(c, *width, *p_.constantOf(loop.bound)));
      Stmt after = withBody(loop, {});
      for (size_t j = i + 1; j < loop.body.size(); ++j)
        after.body.push_back(std::move(loop.body[j]));
      ++changed;
      if (!after.body.empty())
        split(std::move(after), out); // another column further on
      return;
    }
    out.push_back(std::move(loop));
  }

  bool splittable(const Stmt &s) const {
    if (s.kind != Stmt::Kind::Loop || !s.parallel || !s.privates.empty() || !s.reductions.empty() || s.batch ||
        s.costs >= 0 || s.distributed || !p_.constantOf(s.bound))
      return false;
    for (const Stmt &c : s.body)
      if ((c.kind != Stmt::Kind::Call && c.kind != Stmt::Kind::Zero) || c.result != Stmt::Result::Discard)
        return false; // an exit, an inner loop or ELBO terms (their order would change): keep the body whole
    return true;
  }

  /// `ppc_axpy_strided(V, K, w, &B[k], &dst[k * V])` in a loop `for k < K`
  /// with a constant w: V, the row width.
  std::optional<int64_t> columnOfRow(const Stmt &c, const Stmt &loop) const {
    if (c.kind != Stmt::Kind::Call || c.kernel->name != "ppc_axpy_strided" || c.args.size() != 5 ||
        c.args[3].kind != Arg::Kind::Pointer || c.args[4].kind != Arg::Kind::Pointer)
      return std::nullopt;
    auto width = p_.constantOf(c.args[0].expr), stride = p_.constantOf(c.args[1].expr);
    auto rows = p_.constantOf(loop.bound);
    if (!width || !stride || *stride != *rows || !p_.doubleConstantOf(c.args[2].expr) ||
        p_.buffers[size_t(c.args[3].buffer)].size * 8 < kLargeTable)
      return std::nullopt;
    // The source at k and the destination at k * V, for every k.
    for (int64_t k = 0; k < *rows; ++k) {
      auto src = p_.evaluate(c.args[3].expr, loop.var, k), dst = p_.evaluate(c.args[4].expr, loop.var, k);
      if (!src || !dst || *src != k || *dst != k * *width)
        return std::nullopt;
    }
    return width;
  }

  Stmt byTiles(const Stmt &strided, int64_t width, int64_t rows) {
    const int64_t blocks = (width + kColumns - 1) / kColumns;
    Stmt call = strided;
    call.kernel = rt::findRuntimeKernel("ppc_axpy_transposed");
    Stmt loop = edit::freshLoop(p_, blocks);
    loop.parallel = blocks > 1;
    const auto integer = edit::intArg;
    Arg src = strided.args[3], dst = strided.args[4];
    src.expr = p_.intConst(0);
    dst.expr = p_.intConst(0);
    call.args = {integer(p_.intConst(rows)), integer(p_.intConst(width)),
                 integer(p_.mul(p_.loopVar(loop.var), p_.intConst(kColumns))), integer(p_.intConst(kColumns)),
                 strided.args[2], src, dst};
    call.note = p_.buffers[size_t(src.buffer)].name + "'s columns added to " + p_.buffers[size_t(dst.buffer)].name +
                "'s rows, by tiles";
    loop.body.push_back(std::move(call));
    return loop;
  }

  static Stmt withBody(const Stmt &loop, std::vector<Stmt> body) {
    Stmt s;
    s.kind = Stmt::Kind::Loop;
    s.var = loop.var;
    s.bound = loop.bound;
    s.parallel = true;
    s.plate = loop.plate;
    s.note = loop.note;
    s.body = std::move(body);
    return s;
  }

  Plan &p_;
};

} // namespace

int splitColumnSums(Plan &p) {
  Fission f(p);
  for (auto &block : p.blocks)
    f.run(block);
  return f.changed;
}

} // namespace ppc::codegen
