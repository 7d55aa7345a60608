//===- codegen/transforms/RowBlocking.cpp - data loops in blocks of a table's rows ---===//
//
// A plan transformation (DESIGN.md §6: close to the machine's limit). The
// elements of a parallel loop each run loops over their data that read or
// update rows of a large table chosen by the datum:
//
//   parallel for e < N {
//     rows of e;  for t < n[e] { f(&table[x[o[e] + t] * K], &own[e * K]) };  rows of e
//   }
//
// (LDA's documents: each token reads its word's row of the topics' tables).
// In this order every datum's row comes from beyond the core's L2, and two
// threads contend for the shared cache. The loop's iterations are
// independent (that is what `parallel` says; their sums are reductions), so
// the statements of different elements may interleave as long as each
// element's own run in order. Batches of S elements then visit their data
// by blocks of W table rows, so that a block's rows are loaded once per
// batch and stay in L2 while the batch's elements use them:
//
//   parallel for e0 < N in batches of S (c elements) {
//     for j < c { rows of e0 + j }
//     for b < B { for j < c { for u < P[e][b + 1] - P[e][b] { f at t = P[e][b] + u } } }
//     for j < c { rows of e0 + j }
//   }
//
// P[e][b] counts e's data below block b (bound data, computed here from x,
// which must be sorted within each element's data for the blocks to be
// ranges; otherwise a permutation per element gives the sorted order). A
// loop around such data loops with a constant bound (a fixed number of
// local sweeps) runs around the batch's stages; the element's private
// buffers get one copy per element of the batch. Not for loops with a
// per-element exit (a local convergence test). Measured on AP, K = 100, one
// local sweep: the rows of the documents' loop in ppc's order took 32 ms
// (1 thread) and 18.7 ms (2), in blocks of 256 documents by 256 words 23.8
// and 14.0 ms (bench/row_traffic); see docs/performance.md.
//
//===----------------------------------------------------------------------===//
#include "codegen/transforms/Transforms.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

namespace ppc::codegen {
namespace {

constexpr int64_t kLargeTable = 4 << 20; // bytes; as RowPrefetch: smaller tables stay in L2
/// The L2 cache (per core) below which blocks do not pay: a block's rows
/// and the batch's rows must both stay in it. Measured on AP at K = 100,
/// one thread: with 2 MiB (Intel Xeon) blocks made the sweep 45.7 -> 42.9
/// ms; with 1 MiB (AMD EPYC) every block and batch size tried (128-800 KB
/// blocks, 32-256 elements) was slower than the elements' order (55-76 ms
/// against 47 ms).
constexpr int64_t kMinL2 = 2 << 20;
/// A block's rows of every large table one data loop reads: 25/64 of L2
/// (800 KiB of 2 MiB: blocks of 512 rows at K = 100, two 800-byte rows per
/// datum; 256 and 1024 were no faster) ...
constexpr int64_t blockBytesOf(int64_t l2Bytes) { return l2Bytes / 64 * 25; }
/// ... and the batch's elements' own rows, alongside (400 KiB of 2 MiB).
constexpr int64_t batchBytesOf(int64_t l2Bytes) { return l2Bytes / 128 * 25; }
constexpr int64_t kMaxBatch = 256, kMinBatch = 16;
/// The batch's copies of the private buffers, per thread, at most.
constexpr int64_t kPrivateBytes = 4 << 20;

/// The base of data indexed as `x[t]` (no expression: zero).
constexpr ExprId kZeroBase = -2;

/// A data loop: `for t < n(e)` whose body reads rows `table[x[base(e) + t] * width]`.
struct DataLoop {
  int32_t data = -1;
  ExprId base = kNoExpr;
  int64_t rowBytes = 0; ///< the large tables' rows one datum reads, in bytes
  int64_t width = 0;
};

class Blocking {
public:
  Blocking(Plan &p, int64_t l2Bytes)
      : p_(p), blockBytes_(blockBytesOf(l2Bytes)), batchBytes_(batchBytesOf(l2Bytes)) {}

  int blocked = 0;

  void run(std::vector<Stmt> &block) {
    for (Stmt &s : block)
      if (s.kind == Stmt::Kind::Loop && s.parallel && s.batch == 0)
        tryLoop(s);
  }

private:
  const Expr &expr(ExprId e) const { return p_.exprs[size_t(e)]; }

  // ---- analysis -------------------------------------------------------------

  static bool hasExit(const std::vector<Stmt> &body) {
    for (const Stmt &s : body)
      if (s.kind == Stmt::Kind::ExitBelow || (s.kind == Stmt::Kind::Loop && hasExit(s.body)))
        return true;
    return false;
  }

  /// e reads no loop variable but `var` (and no buffer but bound data).
  bool onlyVar(ExprId e, int32_t var) const {
    if (e == kNoExpr)
      return true;
    const Expr &x = expr(e);
    if (x.kind == Expr::Kind::LoopVar && x.var != var)
      return false;
    if ((x.kind == Expr::Kind::LoadInt || x.kind == Expr::Kind::LoadDouble) && !p_.isBoundData(x.buffer))
      return false;
    return onlyVar(x.a, var) && onlyVar(x.b, var);
  }

  bool sameExpr(ExprId a, ExprId b) const { return p_.sameExpr(a, b); }

  std::optional<int64_t> evaluate(ExprId e, int32_t var, int64_t v) const { return p_.evaluate(e, var, v); }

  /// The row `x[base + t] * width` of a large table that argument `a` points
  /// to, x bound data and base reading no loop variable but the element's.
  std::optional<DataLoop> indexedRow(const Arg &a, int32_t t, int32_t element) const {
    if (a.kind != Arg::Kind::Pointer || expr(a.expr).kind != Expr::Kind::MulInt)
      return std::nullopt;
    const Expr &m = expr(a.expr);
    ExprId load = m.a, w = m.b;
    if (expr(load).kind != Expr::Kind::LoadInt)
      std::swap(load, w);
    auto width = p_.constantOf(w);
    if (!width || *width <= 0 || expr(load).kind != Expr::Kind::LoadInt ||
        p_.buffers[size_t(a.buffer)].size * 8 < kLargeTable)
      return std::nullopt;
    const int32_t data = expr(load).buffer;
    if (p_.buffers[size_t(data)].ints.empty())
      return std::nullopt;
    const Expr &ix = expr(expr(load).a);
    auto atT = [&](ExprId e) { return expr(e).kind == Expr::Kind::LoopVar && expr(e).var == t; };
    ExprId base = kNoExpr;
    if (atT(expr(load).a))
      base = kZeroBase;
    else if (ix.kind == Expr::Kind::AddInt && atT(ix.b))
      base = ix.a;
    else if (ix.kind == Expr::Kind::AddInt && atT(ix.a))
      base = ix.b;
    if (base == kNoExpr || (base != kZeroBase && !onlyVar(base, element)))
      return std::nullopt;
    return DataLoop{data, base, *width * 8, *width};
  }

  /// s is a data loop of the element: its bound reads the element's
  /// variable only, and its body reads rows of large tables through one
  /// datum (the first found; other data's rows just come along).
  std::optional<DataLoop> dataLoop(const Stmt &s, int32_t element) const {
    if (s.kind != Stmt::Kind::Loop || !onlyVar(s.bound, element))
      return std::nullopt;
    std::optional<DataLoop> found;
    std::vector<int32_t> tables;
    for (const Stmt &c : s.body) {
      if (c.kind != Stmt::Kind::Call)
        continue;
      for (const Arg &a : c.args) {
        auto r = indexedRow(a, s.var, element);
        if (!r)
          continue;
        if (!found) {
          found = r;
          found->rowBytes = 0;
        }
        if (r->data == found->data && sameExpr(r->base, found->base) &&
            std::find(tables.begin(), tables.end(), a.buffer) == tables.end()) {
          tables.push_back(a.buffer);
          found->rowBytes += r->rowBytes;
          found->width = std::max(found->width, r->width);
        }
      }
    }
    return found;
  }

  /// Loops around data loops with a constant bound (a fixed number of sweeps).
  bool sweepLoop(const Stmt &s, int32_t element) const {
    if (s.kind != Stmt::Kind::Loop || !p_.constantOf(s.bound))
      return false;
    for (const Stmt &c : s.body)
      if (dataLoop(c, element) || sweepLoop(c, element))
        return true;
    return false;
  }

  void collect(const std::vector<Stmt> &body, int32_t element, std::vector<const Stmt *> &loops) const {
    for (const Stmt &s : body)
      if (dataLoop(s, element))
        loops.push_back(&s);
      else if (sweepLoop(s, element))
        collect(s.body, element, loops);
  }

  static void buffersRead(const Plan &p, ExprId e, std::vector<int32_t> &out) {
    if (e == kNoExpr)
      return;
    const Expr &x = p.exprs[size_t(e)];
    if (x.kind == Expr::Kind::LoadInt || x.kind == Expr::Kind::LoadDouble)
      out.push_back(x.buffer);
    buffersRead(p, x.a, out);
    buffersRead(p, x.b, out);
  }
  void buffersUsed(const std::vector<Stmt> &body, std::vector<int32_t> &out) const {
    for (const Stmt &s : body) {
      for (ExprId e : {s.bound, s.index, s.scale})
        buffersRead(p_, e, out);
      if (s.kind == Stmt::Kind::Zero || s.result == Stmt::Result::Slot || s.result == Stmt::Result::SlotProduct)
        out.push_back(s.buffer);
      for (const Arg &a : s.args) {
        buffersRead(p_, a.expr, out);
        if (a.kind == Arg::Kind::Pointer)
          out.push_back(a.buffer);
      }
      buffersUsed(s.body, out);
    }
  }

  // ---- the blocked loop -----------------------------------------------------

  /// The blocks of one data loop's data: P[e * (blocks + 1) + b], and a
  /// permutation where some element's data is not sorted.
  struct Blocks {
    int32_t starts = -1, order = -1;
    ExprId base = kNoExpr; ///< where the element's data start
  };

  void tryLoop(Stmt &loop) {
    const int32_t element = loop.var;
    if (hasExit(loop.body))
      return;
    std::vector<const Stmt *> loops;
    collect(loop.body, element, loops);
    if (loops.empty())
      return;
    auto n = evaluate(loop.bound, -1, 0);
    if (!n || *n <= 0)
      return;
    // One block width for the loop: the widest datum's rows fill a block.
    int64_t rowBytes = 0, width = 0;
    for (const Stmt *s : loops) {
      DataLoop d = *dataLoop(*s, element);
      rowBytes = std::max(rowBytes, d.rowBytes);
      width = std::max(width, d.width);
    }
    const int64_t blockRows = std::max<int64_t>(1, blockBytes_ / rowBytes);
    int64_t batch = std::clamp<int64_t>(batchBytes_ / (2 * width * 8), kMinBatch, kMaxBatch);

    // The private buffers the body uses get a copy per element of a batch.
    std::vector<int32_t> used;
    buffersUsed(loop.body, used);
    std::vector<int32_t> expanded;
    int64_t privateBytes = 0;
    for (int32_t b : loop.privates)
      if (std::find(used.begin(), used.end(), b) != used.end()) {
        expanded.push_back(b);
        privateBytes += p_.buffers[size_t(b)].size * 8;
      }
    while (batch > kMinBatch && batch * privateBytes > kPrivateBytes)
      batch /= 2;
    if (batch * privateBytes > kPrivateBytes)
      return;

    // Each data loop's blocks, from the data; worth it only when a block
    // of an element holds a datum on average (short elements in a wide
    // table would mostly visit empty blocks).
    std::map<const Stmt *, Blocks> blocks;
    int64_t blockCount = 0;
    const size_t buffersBefore = p_.buffers.size();
    made_.clear();
    for (const Stmt *s : loops) {
      auto b = makeBlocks(*s, *dataLoop(*s, element), element, *n, blockRows, blockCount);
      if (!b) {
        p_.buffers.resize(buffersBefore);
        return;
      }
      blocks[s] = *b;
    }

    // The new body, statement by statement.
    loop.batch = batch;
    loop.batchVar = p_.loopVars++;
    for (int32_t b : expanded) {
      Buffer copy;
      copy.name = p_.buffers[size_t(b)].name + ".batch";
      copy.size = p_.buffers[size_t(b)].size * batch;
      copy.isInt = p_.buffers[size_t(b)].isInt;
      copy.memo = !copy.isInt; // rows of the elements being processed: nothing to save
      p_.buffers.push_back(copy);
      copies_[b] = int32_t(p_.buffers.size() - 1);
      strides_[b] = p_.buffers[size_t(b)].size;
    }
    for (int32_t &b : loop.privates)
      if (copies_.count(b))
        b = copies_[b];
    element_ = element;
    batchVar_ = loop.batchVar;
    blockCount_ = blockCount;
    blocks_ = &blocks;
    loop.body = blockBody(loop.body);
    loop.note += (loop.note.empty() ? "" : "; ") + std::string("in batches of ") + std::to_string(batch) +
                 " elements, their data by blocks of " + std::to_string(blockRows) + " rows";
    copies_.clear();
    strides_.clear();
    ++blocked;
  }

  std::optional<Blocks> makeBlocks(const Stmt &s, const DataLoop &d, int32_t element, int64_t n, int64_t blockRows,
                                   int64_t &blockCount) {
    const std::vector<int64_t> &x = p_.buffers[size_t(d.data)].ints;
    std::vector<int64_t> base(static_cast<size_t>(n)), size(static_cast<size_t>(n));
    int64_t total = 0, rows = 0;
    for (int64_t e = 0; e < n; ++e) {
      auto b = d.base == kZeroBase ? std::optional<int64_t>(0) : evaluate(d.base, element, e);
      auto c = evaluate(s.bound, element, e);
      if (!b || !c || *b < 0 || *c < 0 || *b + *c > int64_t(x.size()))
        return std::nullopt;
      base[size_t(e)] = *b;
      size[size_t(e)] = *c;
      total += *c;
      for (int64_t t = 0; t < *c; ++t) {
        if (x[size_t(*b + t)] < 0)
          return std::nullopt;
        rows = std::max(rows, x[size_t(*b + t)] + 1);
      }
    }
    const int64_t count = (rows + blockRows - 1) / blockRows;
    if (count < 2 || total < n * count)
      return std::nullopt;
    if (blockCount && blockCount != count)
      return std::nullopt;
    blockCount = count;
    Buffer starts, order;
    starts.name = p_.buffers[size_t(d.data)].name + ".blocks";
    starts.isInt = true;
    starts.size = n * (count + 1);
    starts.ints.assign(size_t(starts.size), 0);
    order.name = p_.buffers[size_t(d.data)].name + ".blockorder";
    order.isInt = true;
    order.size = int64_t(x.size());
    order.ints.assign(x.size(), 0);
    bool sorted = true;
    for (int64_t e = 0; e < n; ++e) {
      const int64_t *xs = x.data() + base[size_t(e)];
      int64_t *at = starts.ints.data() + e * (count + 1);
      int64_t *perm = order.ints.data() + base[size_t(e)];
      std::iota(perm, perm + size[size_t(e)], int64_t(0));
      sorted = sorted && std::is_sorted(xs, xs + size[size_t(e)]);
      std::stable_sort(perm, perm + size[size_t(e)], [&](int64_t a, int64_t b) { return xs[a] < xs[b]; });
      for (int64_t t = 0; t < size[size_t(e)]; ++t)
        ++at[xs[t] / blockRows + 1];
      for (int64_t b = 0; b < count; ++b)
        at[b + 1] += at[b];
    }
    // Two data loops over the same data (LDA's sweep and refresh) share them.
    for (const Made &m : made_)
      if (m.data == d.data && m.base == base && p_.buffers[size_t(m.blocks.starts)].ints == starts.ints)
        return m.blocks;
    Blocks out;
    p_.buffers.push_back(std::move(starts));
    out.starts = int32_t(p_.buffers.size() - 1);
    if (!sorted) {
      p_.buffers.push_back(std::move(order));
      out.order = int32_t(p_.buffers.size() - 1);
    }
    out.base = d.base;
    made_.push_back(Made{d.data, std::move(base), out});
    return out;
  }

  /// The body of the batch loop: runs of element statements become loops
  /// over the batch; data loops, loops over the blocks.
  std::vector<Stmt> blockBody(std::vector<Stmt> &body) {
    std::vector<Stmt> out, rows;
    auto flush = [&] {
      if (rows.empty())
        return;
      Stmt each;
      each.kind = Stmt::Kind::Loop;
      each.var = p_.loopVars++;
      each.bound = p_.loopVar(batchVar_);
      each.note = "the batch's elements";
      Substitution sub = forElement(each.var);
      for (Stmt &s : rows)
        each.body.push_back(rewrite(s, sub));
      rows.clear();
      out.push_back(std::move(each));
    };
    for (Stmt &s : body) {
      if (auto it = blocks_->find(&s); it != blocks_->end()) {
        flush();
        out.push_back(dataStage(s, it->second));
      } else if (sweepLoop(s, element_)) {
        flush();
        Stmt sweeps = s;
        sweeps.body = blockBody(s.body);
        out.push_back(std::move(sweeps));
      } else {
        rows.push_back(std::move(s));
      }
    }
    flush();
    return out;
  }

  /// for b < blocks { for j < c { for u < P[e][b + 1] - P[e][b] { body at t } } }
  Stmt dataStage(Stmt &s, const Blocks &b) {
    Stmt blocksLoop, each, data;
    blocksLoop.kind = each.kind = data.kind = Stmt::Kind::Loop;
    blocksLoop.var = p_.loopVars++;
    each.var = p_.loopVars++;
    data.var = p_.loopVars++;
    blocksLoop.bound = p_.intConst(blockCount_);
    blocksLoop.note = "blocks of the table's rows";
    each.bound = p_.loopVar(batchVar_);
    each.note = "the batch's elements";
    Substitution sub = forElement(each.var);
    ExprId e = sub.element;
    ExprId at = p_.add(p_.mul(e, p_.intConst(blockCount_ + 1)), p_.loopVar(blocksLoop.var));
    ExprId first = p_.loadInt(b.starts, at), next = p_.loadInt(b.starts, p_.add(at, p_.intConst(1)));
    data.bound = p_.add(next, p_.mul(first, p_.intConst(-1)));
    data.note = s.note.empty() ? "the element's data in the block" : s.note + " (in the block)";
    data.plate = s.plate;
    ExprId position = p_.add(first, p_.loopVar(data.var));
    if (b.order >= 0) {
      ExprId base = b.base == kZeroBase ? p_.intConst(0) : substitute(b.base, sub);
      position = p_.loadInt(b.order, p_.add(base, position));
    }
    sub.vars[s.var] = position;
    for (Stmt &c : s.body)
      data.body.push_back(rewrite(c, sub));
    each.body.push_back(std::move(data));
    blocksLoop.body.push_back(std::move(each));
    return blocksLoop;
  }

  // ---- substitution -----------------------------------------------------------

  struct Substitution {
    std::map<int32_t, ExprId> vars; ///< loop variables -> their values
    ExprId element = kNoExpr;       ///< the element: batch start + j
    ExprId slot = kNoExpr;          ///< j, the element's copy of the private buffers
    std::map<ExprId, ExprId> memo;
  };

  Substitution forElement(int32_t j) {
    Substitution sub;
    sub.slot = p_.loopVar(j);
    sub.element = p_.add(p_.loopVar(element_), sub.slot);
    sub.vars[element_] = sub.element;
    return sub;
  }

  /// The index of a private buffer's entry in the element's copy.
  ExprId privateIndex(int32_t buffer, ExprId index, Substitution &sub) {
    return p_.add(substitute(index, sub), p_.mul(sub.slot, p_.intConst(strides_.at(buffer))));
  }

  ExprId substitute(ExprId id, Substitution &sub) {
    if (id == kNoExpr)
      return id;
    if (auto it = sub.memo.find(id); it != sub.memo.end())
      return it->second;
    const Expr x = expr(id); // a copy: the builders below grow p_.exprs
    ExprId r = id;
    switch (x.kind) {
    case Expr::Kind::LoopVar:
      if (auto v = sub.vars.find(x.var); v != sub.vars.end())
        r = v->second;
      break;
    case Expr::Kind::AddInt: r = p_.add(substitute(x.a, sub), substitute(x.b, sub)); break;
    case Expr::Kind::MulInt: r = p_.mul(substitute(x.a, sub), substitute(x.b, sub)); break;
    case Expr::Kind::LoadInt:
    case Expr::Kind::LoadDouble: {
      bool copy = copies_.count(x.buffer) != 0;
      int32_t buffer = copy ? copies_[x.buffer] : x.buffer;
      ExprId index = copy ? privateIndex(x.buffer, x.a, sub) : substitute(x.a, sub);
      r = x.kind == Expr::Kind::LoadInt ? p_.loadInt(buffer, index) : p_.loadDouble(buffer, index);
      break;
    }
    case Expr::Kind::IntToDouble: r = p_.intToDouble(substitute(x.a, sub)); break;
    case Expr::Kind::AddDouble: r = p_.addDouble(substitute(x.a, sub), substitute(x.b, sub)); break;
    case Expr::Kind::MulDouble: r = p_.mulDouble(substitute(x.a, sub), substitute(x.b, sub)); break;
    case Expr::Kind::SubDouble: r = p_.subDouble(substitute(x.a, sub), substitute(x.b, sub)); break;
    default: break;
    }
    sub.memo[id] = r;
    return r;
  }

  /// Where statement s touches buffer `buffer` at `index`: the element's copy.
  void relocate(int32_t &buffer, ExprId &index, Substitution &sub) {
    if (auto it = copies_.find(buffer); it != copies_.end()) {
      index = privateIndex(buffer, index, sub);
      buffer = it->second;
    } else {
      index = substitute(index, sub);
    }
  }

  Stmt rewrite(Stmt &s, Substitution &sub) {
    Stmt r = std::move(s);
    r.bound = substitute(r.bound, sub);
    r.scale = substitute(r.scale, sub);
    if (r.kind == Stmt::Kind::Zero || r.result == Stmt::Result::Slot || r.result == Stmt::Result::SlotProduct)
      relocate(r.buffer, r.index, sub);
    else
      r.index = substitute(r.index, sub);
    for (Arg &a : r.args) {
      if (a.kind == Arg::Kind::Pointer)
        relocate(a.buffer, a.expr, sub);
      else
        a.expr = substitute(a.expr, sub);
    }
    for (Stmt &c : r.body)
      c = rewrite(c, sub);
    return r;
  }

  Plan &p_;
  const int64_t blockBytes_, batchBytes_;
  int32_t element_ = -1, batchVar_ = -1;
  int64_t blockCount_ = 0;
  const std::map<const Stmt *, Blocks> *blocks_ = nullptr;
  std::map<int32_t, int32_t> copies_;   ///< private buffer -> its batch copy
  std::map<int32_t, int64_t> strides_;  ///< private buffer -> entries per element
  struct Made {
    int32_t data;
    std::vector<int64_t> base; ///< each element's first datum
    Blocks blocks;
  };
  std::vector<Made> made_; ///< this loop's blocks so far
};

} // namespace

int blockIndexedRows(Plan &p, int64_t l2Bytes) {
  if (l2Bytes < kMinL2)
    return 0;
  // The blocks that run every iteration (init and final run once: their
  // loops are not worth the batch's copies of the private buffers).
  Blocking b(p, l2Bytes);
  b.run(p.blocks[Plan::Iteration]);
  b.run(p.blocks[Plan::Elbo]);
  return b.blocked;
}

} // namespace ppc::codegen
