//===- codegen/transforms/VarianceSums.cpp - deferred quadratic forms ----===//
//
// A plan transformation after batch-dot (BatchDot.cpp). An inner product
// with known rows, f_i = w.dot(x_i), has forward statistics
// (x_i . mu, x_i^T E[w w^T] x_i): D^2 multiply-adds per row, N D^2 / 2 an
// iteration, several GEMVs' worth. Regression reads the second moments
// only through sums over the rows whose terms are affine in them with the
// same coefficient for every row (the noise precision's message and the
// ELBO: -tau/2 sum_i E[(y_i - f_i - b)^2]), so only
//
//   sum_i x_i^T Cov(w) x_i = tr(Cov(w) X^T X)
//
// is needed, D^2 an iteration from a table of X^T X made once: the data's
// sufficient statistics. The rows then hold (m_i, m_i^2), m_i = x_i . mu
// (one GEMV), and each buffer of such rows gets a shadow (0, T): the sum
// over its rows of what they lack. Through the statements that copy or add
// rows (ppc_copy, ppc_sum_forward, ...: affine in the second moment with
// coefficient 1) the shadow follows the rows: the statement on the shadows
// minus the statement on zeros. A reader that sums (a message to a global,
// an ELBO term) gets the same difference added after its loop.
//
// Applied only where every statement that names such rows is one of those
// (kReaders: the kernel, and which of its arguments must be the same for
// every row) and directly in a loop over all rows; never in a partitioned
// (data-parallel or stochastic) plan, whose sums are per process. The
// final block puts the variances back into the rows that are posteriors'
// statistics (from the statistics of w they were computed with, kept with
// the shadow) and zeroes their shadows, so outputs see the exact rows; a
// later run (the REPL's) stays right either way. Same numbers up to rounding:
// Cov(w) = E[w w^T] - mu mu^T is formed once rather than per row.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

namespace ppc::codegen {
namespace {

/// A kernel that may read rows of (mean, second moment), one letter per
/// argument:
///   S  a row of (mean, second moment), read affinely in the second moment
///      with coefficient 1 (deferred rows, or any other: zeros in the
///      correction)
///   M  a row read for its mean only
///   f  anything, which may differ between rows (zeros in the correction)
///   c  the same for every row (the coefficient of the second moment: a
///      weight, a precision), or null
///   o  the output row of the same form (the rows the shadow follows)
///   r  an accumulator of a sum over the rows (`width` doubles)
///   0  null; 1, 2: that integer
/// `elbo`: the kernel's result is an ELBO term affine in the second moment.
struct Reader {
  std::string_view kernel, args;
  int64_t width = 0;
  bool elbo = false;
};

constexpr Reader kReaders[] = {
    {"ppc_copy", "2So"},
    {"ppc_sum_forward", "SSo"},
    {"ppc_difference_forward", "SSo"},
    {"ppc_sum_to_left", "fMff"},
    {"ppc_sum_to_right", "fMff"},
    {"ppc_difference_to_left", "fMff"},
    {"ppc_difference_to_right", "fMff"},
    // -w/2 (x^2 - 2 x m0 + m1) into the precision's message; the ELBO term
    // -w t0/2 (x^2 - 2 x m0 + m1) + ... (runtime/factors/Gaussian.cpp).
    {"ppc_gaussian_precision_avglog_obs_n", "1f0cSr", 2},
    {"ppc_gaussian_avglogfactor_obs_n", "1f0cSc", 0, true},
};

const Reader *readerOf(const Stmt &s) {
  if (s.kind != Stmt::Kind::Call || !s.kernel)
    return nullptr;
  for (const Reader &r : kReaders)
    if (r.kernel == s.kernel->name && r.args.size() == s.args.size())
      return &r;
  return nullptr;
}

constexpr std::string_view kForward = "ppc_dot_forward_rows";

/// Where a statement runs: block rank (init 0, iteration 1), top-level
/// index, index in that loop's body (-1: the top-level statement itself).
using Position = std::tuple<int, size_t, long>;

struct Source {
  int32_t stats = -1;
  ExprId statsIndex = kNoExpr;
  int32_t X = -1;
  int64_t D = 0;
  int32_t shadow = -1, snapshot = -1;
};

struct Deferred {
  int32_t shadow = -1;
  std::set<int32_t> sources;
  std::vector<Position> writers;
  std::set<int32_t> inputs; ///< the deferred rows its writers read (derived rows)
};

class VarianceSums {
public:
  explicit VarianceSums(Plan &p) : p_(p) {}

  int run() {
    if (p_.partitionedPlate)
      return 0;
    if (!findSources() || !followRows() || !validate())
      return 0;
    apply();
    return int(deferred_.size());
  }

private:
  bool isForward(const Stmt &s) const {
    return s.kind == Stmt::Kind::Call && s.kernel && s.kernel->name == kForward && s.result == Stmt::Result::Discard;
  }

  /// The forward call of a top-level statement (itself, or a loop over blocks of rows around it).
  const Stmt *forwardIn(const Stmt &top) const {
    if (isForward(top))
      return &top;
    if (top.kind == Stmt::Kind::Loop && top.body.size() == 1 && isForward(top.body[0]) && !top.distributed)
      return &top.body[0];
    return nullptr;
  }

  bool findSources() {
    for (int b : {int(Plan::Init), int(Plan::Iteration)})
      for (const Stmt &top : p_.blocks[b]) {
        const Stmt *c = forwardIn(top);
        if (!c)
          continue;
        const auto D = p_.constantOf(c->args[1].expr);
        const Arg &stats = c->args[2], &X = c->args[3], &dst = c->args[4];
        if (!D || stats.kind != Arg::Kind::Pointer || X.kind != Arg::Kind::Pointer || dst.kind != Arg::Kind::Pointer)
          return false;
        const int64_t N = p_.buffers[size_t(dst.buffer)].size / 2;
        if (p_.buffers[size_t(X.buffer)].size != N * *D || !p_.isBoundData(X.buffer))
          return false;
        auto [it, fresh] = sources_.try_emplace(dst.buffer);
        Source &s = it->second;
        if (fresh) {
          s.stats = stats.buffer;
          s.statsIndex = stats.expr;
          s.X = X.buffer;
          s.D = *D;
        } else if (s.stats != stats.buffer || !p_.sameExpr(s.statsIndex, stats.expr) || s.X != X.buffer || s.D != *D) {
          return false;
        }
        Deferred &d = deferred_[dst.buffer];
        d.sources.insert(dst.buffer);
      }
    return !sources_.empty();
  }

  bool deferredArg(const Arg &a) const { return a.kind == Arg::Kind::Pointer && deferred_.count(a.buffer); }

  /// Rows that statements copying or adding deferred rows write are deferred too.
  bool followRows() {
    for (bool grew = true; grew;) {
      grew = false;
      for (int b = 0; b < Plan::NumBlocks; ++b)
        for (const Stmt &top : p_.blocks[b])
          for (const Stmt &c : top.body) { // a loop's (other statements have none)
            const Reader *r = readerOf(c);
            if (!r)
              continue;
            size_t out = r->args.find('o');
            if (out == std::string_view::npos)
              continue;
            std::set<int32_t> sources;
            for (size_t k = 0; k < r->args.size(); ++k)
              if (r->args[k] == 'S' && deferredArg(c.args[k]))
                for (int32_t s : deferred_[c.args[k].buffer].sources)
                  sources.insert(s);
            if (sources.empty() || c.args[out].kind != Arg::Kind::Pointer)
              continue;
            Deferred &d = deferred_[c.args[out].buffer];
            for (int32_t s : sources)
              grew |= d.sources.insert(s).second;
          }
    }
    // A source written also as a copy or sum of rows is not one.
    for (auto &[buffer, source] : sources_)
      if (deferred_[buffer].sources.size() != 1)
        return false;
    return true;
  }

  bool invariantArg(const Arg &a, int32_t var) const {
    if (a.kind == Arg::Kind::Null)
      return true;
    if (a.kind == Arg::Kind::Pointer && deferred_.count(a.buffer))
      return false;
    return a.expr == kNoExpr || !p_.usesVar(a.expr, var);
  }

  bool atRow(const Arg &a, int32_t var) const {
    return a.kind == Arg::Kind::Pointer && edit::isElementRow(p_, a.expr, var, 2);
  }

  /// A call in a top-level loop `loop` that names deferred rows: one of
  /// kReaders with every argument as its letter says.
  bool validReader(const Stmt &loop, const Stmt &c, const Position &at) {
    const Reader *r = readerOf(c);
    if (!r)
      return false;
    const int32_t var = loop.var;
    int32_t written = -1;
    std::set<int32_t> inputs;
    for (size_t k = 0; k < r->args.size(); ++k) {
      const Arg &a = c.args[k];
      switch (r->args[k]) {
      case 'S':
      case 'M':
        if (deferredArg(a)) {
          if (!atRow(a, var))
            return false;
          if (r->args[k] == 'S')
            inputs.insert(a.buffer);
        }
        break;
      case 'f':
        if (deferredArg(a))
          return false;
        break;
      case 'c':
        if (!invariantArg(a, var))
          return false;
        break;
      case 'o':
        if (deferredArg(a)) {
          if (!atRow(a, var))
            return false;
          written = a.buffer;
        }
        break;
      case 'r': {
        // A sum over the loop that nothing else in it reads: its correction after the loop.
        if (a.kind != Arg::Kind::Pointer || deferredArg(a) || !invariantArg(a, var) || !p_.constantOf(a.expr) ||
            (loop.parallel && !std::count(loop.reductions.begin(), loop.reductions.end(), a.buffer)))
          return false;
        for (const Stmt &o : loop.body)
          if (&o != &c && p_.mentions(o, a.buffer))
            return false;
        break;
      }
      case '0':
        if (a.kind != Arg::Kind::Null)
          return false;
        break;
      default: // an integer
        if (a.kind != Arg::Kind::Int || p_.constantOf(a.expr) != int64_t(r->args[k] - '0'))
          return false;
      }
    }
    if (c.result == Stmt::Result::Elbo ? !(r->elbo && (c.scale == kNoExpr || !p_.usesVar(c.scale, var)))
                                        : c.result != Stmt::Result::Discard)
      return false;
    if (written >= 0) {
      Deferred &d = deferred_[written];
      if (d.writers.empty())
        d.inputs = inputs;
      else if (d.inputs != inputs) // every writer adds the same deferred rows
        return false;
      d.writers.push_back(at);
    }
    return true;
  }

  bool mentionsDeferred(const Stmt &s) const {
    for (const auto &[buffer, d] : deferred_)
      if (p_.mentions(s, buffer))
        return true;
    return false;
  }

  bool validate() {
    for (int b = 0; b < Plan::NumBlocks; ++b) {
      const int rank = b == Plan::Init ? 0 : b == Plan::Iteration ? 1 : 2;
      auto &block = p_.blocks[b];
      for (size_t t = 0; t < block.size(); ++t) {
        const Stmt &top = block[t];
        if (!mentionsDeferred(top))
          continue;
        if (b == Plan::Final || b == Plan::Predict) // corrections go to init, iteration and elbo
          return false;
        if (const Stmt *f = forwardIn(top)) {
          if (rank == 2)
            return false;
          deferred_[f->args[4].buffer].writers.push_back({rank, t, -1});
          for (const Arg &a : f->args)
            if (&a != &f->args[4] && deferredArg(a))
              return false;
          continue;
        }
        if (top.kind != Stmt::Kind::Loop || top.distributed || top.batch || !p_.constantOf(top.bound))
          return false;
        for (int32_t b2 : top.privates)
          if (deferred_.count(b2))
            return false;
        for (int32_t b2 : top.reductions)
          if (deferred_.count(b2))
            return false;
        for (size_t k = 0; k < top.body.size(); ++k) {
          const Stmt &c = top.body[k];
          if (!mentionsDeferred(c))
            continue;
          if (c.kind == Stmt::Kind::Zero) {
            // zero a row, then the statement that adds it (the lowering's pair)
            const Arg row = edit::pointerArg(c.buffer, c.index);
            const Reader *next = k + 1 < top.body.size() ? readerOf(top.body[k + 1]) : nullptr;
            size_t out = next ? next->args.find('o') : std::string_view::npos;
            if (c.count != 2 || !atRow(row, top.var) || out == std::string_view::npos ||
                !p_.sameArg(top.body[k + 1].args[out], row))
              return false;
            continue;
          }
          if (!validReader(top, c, {rank, t, long(k)}))
            return false;
          // every loop over deferred rows covers them all
          for (const Arg &a : c.args)
            if (deferredArg(a) && p_.constantOf(top.bound) != p_.buffers[size_t(a.buffer)].size / 2)
              return false;
        }
        if (rank == 2)
          for (const Stmt &c : top.body)
            if (const Reader *r = readerOf(c); r && r->args.find('o') != std::string_view::npos &&
                                                deferredArg(c.args[r->args.find('o')]))
              return false; // rows are written in init and iteration only
      }
    }
    // Each row's variance is put back from its sources' latest statistics:
    // rows derived from other rows are last written after them.
    for (const auto &[buffer, d] : deferred_) {
      if (d.writers.empty())
        return false;
      const Position last = *std::max_element(d.writers.begin(), d.writers.end());
      for (int32_t in : d.inputs) {
        const auto &w = deferred_[in].writers;
        if (w.empty() || *std::max_element(w.begin(), w.end()) >= last)
          return false;
      }
    }
    return true;
  }

  int32_t addBuffer(std::string name, int64_t size, bool memo = false, std::vector<double> values = {}) {
    return edit::addBuffer(p_, std::move(name), size, memo, std::move(values));
  }
  Arg pointer(int32_t buffer) { return edit::pointerArg(buffer, p_.intConst(0)); }
  Stmt zero(int32_t buffer, int64_t count) { return edit::zeroFill(buffer, p_.intConst(0), count); }

  Stmt axpy(int64_t n, double w, int32_t from, const Arg &to) {
    return edit::kernelCall("ppc_axpy", {edit::intArg(p_.intConst(n)), edit::doubleArg(p_.doubleConst(w)), pointer(from), to},
                            "");
  }

  /// The call `c` with deferred rows replaced by their shadows (or zeros),
  /// other rows and anything per row by zeros, the output by `out`.
  Stmt onShadows(const Stmt &c, const Reader &r, bool shadows, const Arg &out) {
    Stmt s = c;
    for (size_t k = 0; k < r.args.size(); ++k) {
      Arg &a = s.args[k];
      switch (r.args[k]) {
      case 'S':
        a = pointer(shadows && deferredArg(c.args[k]) ? deferred_[c.args[k].buffer].shadow : zeros_);
        break;
      case 'M':
      case 'f':
        if (a.kind == Arg::Kind::Pointer)
          a = pointer(zeros_);
        break;
      case 'o':
      case 'r':
        a = out;
        break;
      default:
        break;
      }
    }
    s.note = (c.note.empty() ? "" : c.note + " ") + "(the rows' variance sums)";
    return s;
  }

  void apply() {
    zeros_ = addBuffer("variance.zeros", 2, false, {0.0, 0.0});
    scratch_ = addBuffer("variance.scratch", 2);
    std::map<int32_t, int32_t> grams; // X -> its X^T X over all rows
    for (auto &[buffer, s] : sources_) {
      if (!grams.count(s.X))
        grams[s.X] = edit::dataGram(p_, s.X, s.D);
      s.snapshot = addBuffer("variance." + p_.buffers[size_t(buffer)].name + ".stats", s.D + s.D * s.D);
    }
    for (auto &[buffer, d] : deferred_)
      d.shadow = addBuffer("variance." + p_.buffers[size_t(buffer)].name, 2);
    for (int b : {int(Plan::Init), int(Plan::Iteration), int(Plan::Elbo)}) {
      std::vector<Stmt> out;
      auto &block = p_.blocks[b];
      for (size_t t = 0; t < block.size(); ++t) {
        Stmt &top = block[t];
        if (Stmt *f = const_cast<Stmt *>(forwardIn(top)); f && sources_.count(f->args[4].buffer)) {
          const int32_t F = f->args[4].buffer;
          const Source &s = sources_[F];
          f->kernel = rt::findRuntimeKernel("ppc_dot_forward_rows_mean");
          f->note += " (means; variances summed)";
          out.push_back(std::move(top));
          const Stmt *next = t + 1 < block.size() ? forwardIn(block[t + 1]) : nullptr;
          if (next && next->args[4].buffer == F)
            continue; // the group's last call adds the sum
          const Arg n = edit::intArg(p_.intConst(p_.buffers[size_t(F)].size / 2)), D = edit::intArg(p_.intConst(s.D));
          out.push_back(edit::kernelCall("ppc_dot_variance_sum",
                             {n, D, edit::pointerArg(s.stats, s.statsIndex), pointer(s.X), pointer(grams[s.X]),
                              pointer(s.snapshot), pointer(deferred_[F].shadow)},
                             "sum of the variances of " + p_.buffers[size_t(F)].name + "'s rows (tr(Cov X^T X))"));
          continue;
        }
        std::vector<Stmt> after;
        if (top.kind == Stmt::Kind::Loop)
          for (const Stmt &c : top.body)
            corrections(c, after);
        out.push_back(std::move(top));
        for (Stmt &a : after)
          out.push_back(std::move(a));
      }
      block = std::move(out);
    }
    // The rows the outputs read (posteriors' statistics) made exact; the
    // rest keep their shadows, which stay right for whatever runs next.
    // Two buffers of one source share a pass of its quadratic forms.
    auto &final = p_.blocks[Plan::Final];
    std::map<int32_t, std::vector<int32_t>> bySource; // source -> the output rows it lends variances to
    for (auto &[buffer, d] : deferred_) {
      const int32_t rows = buffer;
      if (std::none_of(p_.posteriors.begin(), p_.posteriors.end(),
                       [&](const Posterior &post) { return post.stats == rows; }))
        continue;
      for (int32_t src : d.sources)
        bySource[src].push_back(buffer);
      final.push_back(zero(d.shadow, 2)); // read by nothing before the variances are back
    }
    for (const auto &[src, outputs] : bySource) {
      const Source &s = sources_[src];
      for (size_t k = 0; k < outputs.size(); k += 2) {
        const bool pair = k + 1 < outputs.size();
        const Arg second = pair ? pointer(outputs[k + 1]) : Arg{Arg::Kind::Null, kNoExpr, -1};
        std::string names = p_.buffers[size_t(outputs[k])].name;
        if (pair)
          names += " and " + p_.buffers[size_t(outputs[k + 1])].name;
        final.push_back(edit::kernelCall(
            "ppc_dot_add_variance_rows",
            {edit::intArg(p_.intConst(p_.buffers[size_t(src)].size / 2)), edit::intArg(p_.intConst(s.D)),
             pointer(s.snapshot), pointer(s.X), pointer(outputs[k]), second},
            "the variances of " + names + "'s rows put back"));
      }
    }
  }

  /// After a loop: what a statement in it does to the shadows.
  void corrections(const Stmt &c, std::vector<Stmt> &after) {
    const Reader *r = readerOf(c);
    if (!r)
      return;
    bool reads = false;
    for (size_t k = 0; k < r->args.size(); ++k)
      reads |= r->args[k] == 'S' && deferredArg(c.args[k]);
    if (!reads)
      return;
    const size_t o = r->args.find('o'), acc = r->args.find('r');
    if (o != std::string_view::npos) {
      const int32_t shadow = deferred_[c.args[o].buffer].shadow;
      after.push_back(zero(shadow, 2));
      after.push_back(onShadows(c, *r, true, pointer(shadow)));
      after.push_back(zero(scratch_, 2));
      after.push_back(onShadows(c, *r, false, pointer(scratch_)));
      after.push_back(axpy(2, -1.0, scratch_, pointer(shadow)));
    } else if (acc != std::string_view::npos) {
      for (bool shadows : {true, false}) {
        after.push_back(zero(scratch_, r->width));
        after.push_back(onShadows(c, *r, shadows, pointer(scratch_)));
        after.push_back(axpy(r->width, shadows ? 1.0 : -1.0, scratch_, c.args[acc]));
      }
    } else if (r->elbo) {
      Stmt plus = onShadows(c, *r, true, Arg{});
      Stmt minus = onShadows(c, *r, false, Arg{});
      minus.scale = p_.mulDouble(c.scale == kNoExpr ? p_.doubleConst(1.0) : c.scale, p_.doubleConst(-1.0));
      after.push_back(std::move(plus));
      after.push_back(std::move(minus));
    }
  }

  Plan &p_;
  std::map<int32_t, Source> sources_;
  std::map<int32_t, Deferred> deferred_;
  int32_t zeros_ = -1, scratch_ = -1;
};

} // namespace

int deferInnerProductVariances(Plan &p) { return VarianceSums(p).run(); }

} // namespace ppc::codegen
