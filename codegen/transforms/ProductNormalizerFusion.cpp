//===- codegen/transforms/ProductNormalizerFusion.cpp - messages from unstored products ---===//
//
// A plan transformation (DESIGN.md §4: fusion). A categorical in product form
// (Plan.cpp) is computed, normalized and consumed by three calls per datum,
// two of which store a row only the next one reads:
//
//   for i < n {
//     ppc_mul2_n(K, &a[..], &b[..], &F[i*K])                  // product
//     ppc_categorical_stats_from_product(K, &F[i*K], null, &S[i*K])
//     ppc_categorical_probs_avglog(K, &S[i*K], w_i, &t[..])   // message
//   }
//
// When nothing reads those rows before they are written again (liveness over
// the plan's loops, below), the three become one call that computes the
// normalizer and adds the message without storing either row:
//
//   * factored: the message goes to the same row t for every i and the
//     row a does not change with i (LDA: the tokens' counts to their
//     document's topic mix, whose exponential table is a). Then
//     sum_i w_i a*b_i/s_i = a * sum_i (w_i/s_i) b_i: the loop accumulates
//     the sum (ppc_dot_inverse_axpy, a dot product and an axpy per datum)
//     and one ppc_mul_add_n after the loop multiplies a in;
//     (A loop that runs no iteration then adds a * 0: the same unless a
//     holds inf or NaN, which an exponential table shifted by its maximum
//     never does.)
//   * otherwise: ppc_product_axpy[_lognorm] adds w_i a*b_i/s_i to the
//     datum's row (LDA's refresh: the counts to each word's topics), and
//     returns the log normalizer when the ELBO took it from the product.
//
// The same values up to rounding (the sums associate differently).
//
//===----------------------------------------------------------------------===//
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <algorithm>
#include <string_view>

namespace ppc::codegen {
namespace {

/// The arguments a kernel only writes (whole rows): writing them ends the
/// life of what the row held before.
std::vector<size_t> writeOnlyArgs(std::string_view kernel) {
  if (kernel == "ppc_mul2_n")
    return {3};
  if (kernel == "ppc_copy_n" || kernel == "ppc_fill")
    return {2};
  if (kernel == "ppc_categorical_stats_from_product")
    return {2, 3};
  if (kernel == "ppc_categorical_stats_from_product_lognorm")
    return {3, 4};
  return {};
}

class Fusion {
public:
  explicit Fusion(Plan &p) : p_(p) {}

  void run(std::vector<Stmt> &block) {
    std::vector<Frame> frames{{&block, 0, nullptr}};
    visit(frames);
  }

  int fused = 0;

private:
  /// A body, the position of the statement being looked at in it, and the
  /// loop whose body it is (null: a block).
  struct Frame {
    std::vector<Stmt> *body;
    size_t pos;
    Stmt *loop;
  };
  enum class Touch { None, Kill, Use };

  const Expr &expr(ExprId e) const { return p_.exprs[size_t(e)]; }

  void visit(std::vector<Frame> &frames) {
    std::vector<Stmt> &body = *frames.back().body;
    for (size_t i = 0; i < body.size(); ++i) {
      frames.back().pos = i;
      if (body[i].kind != Stmt::Kind::Loop)
        continue;
      frames.push_back({&body[i].body, 0, &body[i]});
      visit(frames);
      frames.pop_back();
      i += fuseIn(frames, i);
    }
  }

  static bool isCall(const Stmt &s, std::string_view kernel) {
    return s.kind == Stmt::Kind::Call && s.kernel && s.kernel->name == kernel;
  }
  static bool discards(const Stmt &s) { return s.result == Stmt::Result::Discard && s.scale == kNoExpr; }

  bool sameExpr(ExprId a, ExprId b) const { return p_.sameExpr(a, b); }
  bool sameArg(const Arg &a, const Arg &b) const { return p_.sameArg(a, b); }

  /// `var * width` (row `var` of rows of `width` doubles).
  bool isRow(ExprId e, int32_t var, int64_t width) const {
    if (e == kNoExpr)
      return false;
    const Expr &x = expr(e);
    auto isVar = [&](ExprId a) { return a != kNoExpr && expr(a).kind == Expr::Kind::LoopVar && expr(a).var == var; };
    if (isVar(e))
      return width == 1;
    if (x.kind != Expr::Kind::MulInt)
      return false;
    return (isVar(x.a) && p_.constantOf(x.b) == width) || (isVar(x.b) && p_.constantOf(x.a) == width);
  }

  // ---- liveness of the rows a fused loop no longer stores -------------------

  /// The rows are those of `rows` (its bound, `width` doubles each).
  struct Rows {
    const Stmt *loop;
    int64_t width;
  };

  /// What s does first to buffer b. `in` is the loop whose body s is in.
  Touch touch(const Stmt &s, int32_t b, const Stmt *in, const Rows &r) const {
    switch (s.kind) {
    case Stmt::Kind::Zero:
    case Stmt::Kind::ExitBelow:
      return p_.mentions(s, b) ? Touch::Use : Touch::None;
    case Stmt::Kind::Call: {
      bool kill = false;
      std::vector<size_t> writes = s.kernel ? writeOnlyArgs(s.kernel->name) : std::vector<size_t>{};
      if (s.buffer == b || p_.loads(s.index, b) || p_.loads(s.scale, b))
        return Touch::Use;
      for (size_t i = 0; i < s.args.size(); ++i) {
        const Arg &a = s.args[i];
        if (p_.loads(a.expr, b))
          return Touch::Use;
        if (a.buffer != b)
          continue;
        // A write of row i (all its entries) of a loop over the same rows
        // overwrites every row.
        if (std::count(writes.begin(), writes.end(), i) && in && sameExpr(in->bound, r.loop->bound) &&
            isRow(a.expr, in->var, r.width) && p_.constantOf(s.args[0].expr) == r.width)
          kill = true;
        else
          return Touch::Use;
      }
      return kill ? Touch::Kill : Touch::None;
    }
    case Stmt::Kind::Loop: {
      if (p_.loads(s.bound, b))
        return Touch::Use;
      const bool overRows = sameExpr(s.bound, r.loop->bound);
      const bool runs = overRows || p_.constantOf(s.bound).value_or(0) >= 1;
      bool exited = false;
      for (size_t i = 0; i < s.body.size(); ++i) {
        const Stmt &t = s.body[i];
        Touch x = touch(t, b, &s, r);
        if (x == Touch::Use)
          return Touch::Use;
        if (t.kind == Stmt::Kind::ExitBelow)
          exited = true;
        if (x != Touch::Kill)
          continue;
        // Row i written here: every row once the loop has run to its end
        // (no exit), and no later statement may read another row first.
        if (t.kind == Stmt::Kind::Call) {
          for (size_t j = i + 1; j < s.body.size(); ++j)
            if (!onlyRowOf(s.body[j], b, s.var, r.width))
              return Touch::Use;
          for (const Stmt &e : s.body)
            exited = exited || e.kind == Stmt::Kind::ExitBelow;
        }
        return runs && !exited ? Touch::Kill : Touch::None;
      }
      return Touch::None;
    }
    }
    return Touch::Use;
  }

  /// Every mention of b in s is row `var`.
  bool onlyRowOf(const Stmt &s, int32_t b, int32_t var, int64_t width) const {
    if (s.buffer == b || p_.loads(s.index, b) || p_.loads(s.bound, b) || p_.loads(s.scale, b))
      return false;
    for (const Arg &a : s.args)
      if (p_.loads(a.expr, b) || (a.buffer == b && !isRow(a.expr, var, width)))
        return false;
    for (const Stmt &c : s.body)
      if (!onlyRowOf(c, b, var, width))
        return false;
    return true;
  }

  /// Nothing reads b after frames[level]'s statement before writing it.
  bool deadAfter(const std::vector<Frame> &frames, size_t level, int32_t b, const Rows &r) const {
    const Frame &f = frames[level];
    const std::vector<Stmt> &body = *f.body;
    // What statement j of this body does first to b. Only a whole loop
    // overwrites every row: a single call writes one row (of this frame's
    // loop, whatever its bound), so it counts as a read here.
    auto at = [&](size_t j) {
      Touch x = touch(body[j], b, f.loop, r);
      return x == Touch::Kill && body[j].kind != Stmt::Kind::Loop ? Touch::Use : x;
    };
    bool exits = false;
    for (size_t j = f.pos + 1; j < body.size(); ++j) {
      exits = exits || body[j].kind == Stmt::Kind::ExitBelow;
      Touch x = at(j);
      if (x == Touch::Use)
        return false;
      if (x == Touch::Kill)
        // Without an exit before it, every path overwrites b; an exit
        // leaves the loop first: what follows the loop decides.
        return !exits || (f.loop && deadAfter(frames, level - 1, b, r));
    }
    if (!f.loop)
      return false; // the end of a block: the next block may read it
    // The next iteration, up to the statement itself (which overwrites b).
    for (size_t j = 0; j <= f.pos; ++j) {
      Touch x = at(j);
      if (x == Touch::Use)
        return false;
      if (x == Touch::Kill)
        break;
    }
    // A private row of a parallel loop's element ends with the element (no
    // element reads it before writing it: checked above); otherwise what
    // follows the loop decides.
    if (std::count(f.loop->privates.begin(), f.loop->privates.end(), b))
      return true;
    return deadAfter(frames, level - 1, b, r);
  }

  // ---- the rewrite -----------------------------------------------------------

  /// Fuses the patterns in the body of the loop at frames.back().body[at];
  /// returns how many statements were inserted before it.
  size_t fuseIn(std::vector<Frame> &frames, size_t at) {
    Stmt &loop = (*frames.back().body)[at];
    frames.back().pos = at;
    size_t inserted = 0;
    std::vector<Stmt> &body = loop.body;
    for (size_t i = 0; i + 2 < body.size(); ++i) {
      Stmt &prod = body[i], &norm = body[i + 1], &use = body[i + 2];
      if (!isCall(prod, "ppc_mul2_n") || !discards(prod))
        continue;
      const bool lognorm = isCall(norm, "ppc_categorical_stats_from_product_lognorm");
      if (!lognorm && !(isCall(norm, "ppc_categorical_stats_from_product") && discards(norm)))
        continue;
      const Arg &K = prod.args[0], &a = prod.args[1], &b = prod.args[2], &F = prod.args[3];
      const Arg &normIn = norm.args[1], &eta = norm.args[lognorm ? 3 : 2], &S = norm.args[lognorm ? 4 : 3];
      auto width = p_.constantOf(K.expr);
      if (!width || !sameArg(norm.args[0], K) || !sameArg(normIn, F) || eta.kind != Arg::Kind::Null ||
          F.kind != Arg::Kind::Pointer || S.kind != Arg::Kind::Pointer || F.buffer == S.buffer ||
          !isRow(F.expr, loop.var, *width) || !isRow(S.expr, loop.var, *width))
        continue;
      // The message: w * S to the row t.
      Arg w, t;
      if (isCall(use, "ppc_categorical_probs_avglog") && sameArg(use.args[0], K) && sameArg(use.args[1], S)) {
        w = use.args[2];
        t = use.args[3];
      } else if (isCall(use, "ppc_axpy") && sameArg(use.args[0], K) && sameArg(use.args[2], S)) {
        w = use.args[1];
        t = use.args[3];
      } else {
        continue;
      }
      if (!discards(use) || t.kind != Arg::Kind::Pointer || t.buffer == F.buffer || t.buffer == S.buffer ||
          t.buffer == a.buffer || t.buffer == b.buffer ||
          a.buffer == F.buffer || a.buffer == S.buffer || b.buffer == F.buffer || b.buffer == S.buffer ||
          p_.loads(w.expr, F.buffer) || p_.loads(w.expr, S.buffer))
        continue;
      // Only these three statements name the rows, and nothing after the loop
      // reads them before writing them.
      bool alone = true;
      for (size_t j = 0; j < body.size(); ++j)
        if (j < i || j > i + 2)
          alone = alone && !p_.mentions(body[j], F.buffer) && !p_.mentions(body[j], S.buffer);
      const Rows rows{&loop, *width};
      if (!alone || !deadAfter(frames, frames.size() - 1, F.buffer, rows) ||
          !deadAfter(frames, frames.size() - 1, S.buffer, rows))
        continue;
      // The factored form: a and t the same for every datum.
      bool invariant = !lognorm && !loop.parallel && !p_.usesVar(a.expr, loop.var) && !p_.usesVar(t.expr, loop.var) &&
                       t.buffer != a.buffer && t.buffer != b.buffer && !p_.mentions(use, a.buffer) &&
                       !p_.loads(w.expr, t.buffer) && !p_.loads(b.expr, t.buffer);
      for (size_t j = 0; invariant && j < body.size(); ++j)
        if (j != i && j != i + 2)
          invariant = !p_.mentions(body[j], t.buffer) && !p_.mentions(body[j], a.buffer);
      for (int32_t loaded : loadedBuffers(a.expr, loadedBuffers(t.expr, {})))
        for (size_t j = 0; invariant && j < body.size(); ++j)
          invariant = !writesTo(body[j], loaded);
      Stmt fusedCall = prod;
      fusedCall.note = norm.note + ", " + use.note + " (fused)";
      if (invariant) {
        int32_t acc = accumulator(t, *width, frames);
        fusedCall.kernel = rt::findRuntimeKernel("ppc_dot_inverse_axpy");
        fusedCall.args = {K, a, b, w, pointer(acc)};
        fusedCall.note = norm.note + ", " + use.note + " (factored: " + p_.buffers[size_t(acc)].name + ")";
        Stmt zero;
        zero.kind = Stmt::Kind::Zero;
        zero.buffer = acc;
        zero.index = p_.intConst(0);
        zero.count = *width;
        zero.note = "the factored sum";
        Stmt after = prod;
        after.kernel = rt::findRuntimeKernel("ppc_mul_add_n");
        after.args = {K, a, pointer(acc), t};
        after.note = use.note + " (times the factor)";
        body[i] = std::move(fusedCall);
        body.erase(body.begin() + long(i) + 1, body.begin() + long(i) + 3);
        std::vector<Stmt> &outer = *frames.back().body;
        outer.insert(outer.begin() + long(at) + 1, std::move(after));
        outer.insert(outer.begin() + long(at), std::move(zero));
        ++inserted;
        ++at;
        frames.back().pos = at;
        ++fused;
        // The loop moved: look for more in its (now shorter) body.
        return inserted + fuseIn(frames, at);
      }
      fusedCall.kernel = rt::findRuntimeKernel(lognorm ? "ppc_product_axpy_lognorm" : "ppc_product_axpy");
      fusedCall.args = lognorm ? std::vector<Arg>{K, a, b, norm.args[2], w, t} : std::vector<Arg>{K, a, b, w, t};
      fusedCall.result = norm.result;
      fusedCall.scale = norm.scale;
      fusedCall.buffer = norm.buffer;
      fusedCall.index = norm.index;
      body[i] = std::move(fusedCall);
      body.erase(body.begin() + long(i) + 1, body.begin() + long(i) + 3);
      ++fused;
    }
    return inserted;
  }

  std::vector<int32_t> loadedBuffers(ExprId e, std::vector<int32_t> into) const {
    if (e == kNoExpr)
      return into;
    const Expr &x = expr(e);
    if (x.kind == Expr::Kind::LoadDouble || x.kind == Expr::Kind::LoadInt)
      into.push_back(x.buffer);
    return loadedBuffers(x.b, loadedBuffers(x.a, std::move(into)));
  }

  bool writesTo(const Stmt &s, int32_t b) const {
    if (s.kind == Stmt::Kind::Zero || (s.kind == Stmt::Kind::Call && s.result >= Stmt::Result::Slot))
      if (s.buffer == b)
        return true;
    if (s.kind == Stmt::Kind::Call)
      for (const Arg &a : s.args)
        if (a.buffer == b && a.kind == Arg::Kind::Pointer)
          return true; // conservatively: a kernel may write any pointer it gets
    for (const Stmt &c : s.body)
      if (writesTo(c, b))
        return true;
    return false;
  }

  Arg pointer(int32_t buffer) const {
    Arg a;
    a.kind = Arg::Kind::Pointer;
    a.buffer = buffer;
    a.expr = p_.intConst(0);
    return a;
  }

  /// A row of `width` doubles for the factored sum into t, private to the
  /// parallel loops around it (one per thread).
  int32_t accumulator(const Arg &t, int64_t width, std::vector<Frame> &frames) {
    Buffer acc;
    acc.name = p_.buffers[size_t(t.buffer)].name + ".factored";
    for (int n = 2; std::any_of(p_.buffers.begin(), p_.buffers.end(), [&](const Buffer &o) { return o.name == acc.name; });
         ++n)
      acc.name = p_.buffers[size_t(t.buffer)].name + ".factored." + std::to_string(n);
    acc.size = width;
    p_.buffers.push_back(std::move(acc));
    int32_t id = int32_t(p_.buffers.size() - 1);
    for (Frame &f : frames)
      if (f.loop && (f.loop->parallel || !f.loop->privates.empty()))
        f.loop->privates.push_back(id);
    return id;
  }

  Plan &p_;
};

} // namespace

int fuseProductNormalizers(Plan &p) {
  Fusion f(p);
  for (auto &block : p.blocks)
    f.run(block);
  return f.fused;
}

} // namespace ppc::codegen
