//===- codegen/transforms/BatchStatistics.cpp - data-plate sums as matrix products ---===//
//
// A plan transformation (DESIGN.md §4: vectorization). For an observed
// Gaussian or MvGaussian factor, E_q[log f(x | parents)] is affine in the
// datum's sufficient statistics T(x) = (x, x x^T): it is <T(x), eta> + c,
// where eta is the factor's message to its sample (the natural parameters
// of E log f as a function of x) and c is its value at T = 0. So are its
// messages to the parents. The mixtures' loops over (datum n, case k)
//
//   for n { for k { dst[k] += msg(x_n; w_nk, parents[k]) } }          (A)
//   for n { for k { elbo += w_nk * elbo(x_n; parents[k]) } }          (C)
//   for n { ...; for k { ev[n][k] += elbo(x_n; parents[k]) }; ... }   (B)
//
// make N K calls of O(D^2) each, every one re-reading its parents' D x D
// rows. Instead, (A) and (C) become one weighted mean of the data's
// statistics per case, mean_k = sum_n w_nk T(x_n) / W_k, and one call of the
// factor's latent kernel per case with that mean and weight W_k; (B) becomes
// <T(x_n), eta_k> + c_k for all (n, k), hoisted out of the loop over n (its
// parents do not change inside it). Both are blocked kernels over the data
// rows (runtime/Operators.h) that never form T(x) (O(N D) memory). Same
// sums in another order: results agree to rounding.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Catalogue.h"
#include "runtime/Symbols.h"

#include <map>
#include <tuple>
#include <optional>

namespace ppc::codegen {
namespace {

/// An observed-sample kernel of a factor whose data statistics we tabulate.
struct ObservedKernel {
  Family family;
  bool elbo;               ///< the ELBO term (else a message to a parameter)
  std::string_view latent; ///< the same with the sample's statistics given
  std::string_view toSample, elboLatent;
};

std::optional<ObservedKernel> observedKernel(std::string_view name) {
  for (Family f : {Family::Gaussian, Family::MvGaussian}) {
    const FactorOperators &ops = factorOperators(f);
    ObservedKernel k{f, false, "", ops.toArgument[0].kernel, ops.elboKernel};
    for (size_t a = 1; a < ops.toArgument.size(); ++a)
      if (!ops.toArgument[a].observedKernel.empty() && ops.toArgument[a].observedKernel == name) {
        k.latent = ops.toArgument[a].kernel;
        return k;
      }
    if (ops.observedElboKernel == name) {
      k.elbo = true;
      k.latent = ops.elboKernel;
      return k;
    }
  }
  return std::nullopt;
}

class Batcher {
public:
  explicit Batcher(Plan &p) : p_(p) {}

  /// `top`: the statements of a block, run once each in order; there, the
  /// weighted moments of one (data, weights) pair are computed once until a
  /// statement names the weights again (the scheduler's repeated updates of
  /// one parent between two updates of the mixture's indicators).
  void run(std::vector<Stmt> &body, bool top = true) {
    std::vector<Stmt> out;
    if (top)
      moments_.clear();
    for (Stmt &s : body) {
      if (s.kind == Stmt::Kind::Loop) {
        run(s.body, false);
        if (std::optional<std::vector<Stmt>> r = weightedSums(s, top)) {
          out.insert(out.end(), std::make_move_iterator(r->begin()), std::make_move_iterator(r->end()));
          ++changed;
          continue;
        }
        const size_t before = out.size();
        hoistEvidence(s, out);
        changed += out.size() > before;
      }
      if (top)
        for (auto it = moments_.begin(); it != moments_.end();)
          it = mentions(s, it->first.second) ? moments_.erase(it) : std::next(it);
      out.push_back(std::move(s));
    }
    body = std::move(out);
  }

private:
  // ---- expressions ----
  const Expr &expr(ExprId e) const { return p_.exprs[size_t(e)]; }
  bool isVar(ExprId e, int32_t v) const { return e != kNoExpr && expr(e).kind == Expr::Kind::LoopVar && expr(e).var == v; }
  /// v * c (v when c = 1)
  bool isVarTimes(ExprId e, int32_t v, int64_t c) const {
    if (c == 1 && isVar(e, v))
      return true;
    if (e == kNoExpr || expr(e).kind != Expr::Kind::MulInt)
      return false;
    const Expr &m = expr(e);
    return (isVar(m.a, v) && p_.constantOf(m.b) == c) || (isVar(m.b, v) && p_.constantOf(m.a) == c);
  }
  /// n * K + k: entry (n, k) of a row-major n x K matrix
  bool isEntry(ExprId e, int32_t n, int64_t K, int32_t k) const {
    if (e == kNoExpr || expr(e).kind != Expr::Kind::AddInt)
      return false;
    const Expr &a = expr(e);
    return (isVarTimes(a.a, n, K) && isVar(a.b, k)) || (isVarTimes(a.b, n, K) && isVar(a.a, k));
  }
  bool uses(ExprId e, int32_t v) const {
    if (e == kNoExpr)
      return false;
    const Expr &x = expr(e);
    return (x.kind == Expr::Kind::LoopVar && x.var == v) || uses(x.a, v) || uses(x.b, v);
  }
  /// buffer[n * K + k], a double load
  std::optional<int32_t> entryLoad(ExprId e, int32_t n, int64_t K, int32_t k) const {
    if (e == kNoExpr || expr(e).kind != Expr::Kind::LoadDouble || !isEntry(expr(e).a, n, K, k))
      return std::nullopt;
    return expr(e).buffer;
  }

  // ---- the call's arguments ----
  struct Match {
    ObservedKernel kernel;
    int64_t D = 1;
    size_t x = 0;          ///< index of the data pointer
    int32_t data = -1;     ///< its buffer
    std::vector<Arg> parents; ///< the parents' statistics (pointers over k)
  };

  /// A call of an observed kernel on one datum x_n (n = `n`), its parents'
  /// rows depending on k only.
  std::optional<Match> matchCall(const Stmt &c, int32_t n, int32_t k) const {
    if (c.kind != Stmt::Kind::Call || !c.kernel)
      return std::nullopt;
    auto ok = observedKernel(c.kernel->name);
    if (!ok)
      return std::nullopt;
    Match m;
    m.kernel = *ok;
    size_t i = 1;
    if (ok->family == Family::MvGaussian) {
      auto D = p_.constantOf(c.args[1].expr);
      if (!D)
        return std::nullopt;
      m.D = *D;
      i = 2;
    }
    // (1, [D,] x, pidx, W, parents..., [dst])
    if (p_.constantOf(c.args[0].expr) != 1 || c.args[i].kind != Arg::Kind::Pointer ||
        !isVarTimes(c.args[i].expr, n, m.D) || c.args[i + 1].kind != Arg::Kind::Null)
      return std::nullopt;
    m.x = i;
    m.data = c.args[i].buffer;
    size_t parents = ok->elbo ? c.args.size() : c.args.size() - 1;
    for (size_t j = i + 3; j < parents; ++j) {
      if (c.args[j].kind != Arg::Kind::Pointer || uses(c.args[j].expr, n) || !uses(c.args[j].expr, k))
        return std::nullopt;
      m.parents.push_back(c.args[j]);
    }
    return m;
  }

  // ---- buffers ----
  int32_t buffer(const std::string &name, int64_t size) {
    Buffer b;
    b.name = name;
    b.size = size;
    p_.buffers.push_back(std::move(b));
    return int32_t(p_.buffers.size() - 1);
  }
  Arg ptr(int32_t buffer, ExprId index) const { return edit::pointerArg(buffer, index); }
  Arg intArg(int64_t v) { return edit::intArg(p_.intConst(v)); }
  Arg doubleArg(ExprId e) const { return edit::doubleArg(e); }
  Stmt call(std::string_view kernel, std::vector<Arg> args, std::string note) const {
    return edit::kernelCall(kernel, std::move(args), std::move(note));
  }
  /// [D] prefix of a family's kernels
  void dimension(std::vector<Arg> &args, const Match &m) {
    if (m.kernel.family == Family::MvGaussian)
      args.push_back(intArg(m.D));
  }

  // ---- (A) and (C) ----
  std::optional<std::vector<Stmt>> weightedSums(const Stmt &s, bool top) {
    if (s.distributed || s.body.size() != 1 || s.body[0].kind != Stmt::Kind::Loop)
      return std::nullopt;
    const Stmt &inner = s.body[0];
    auto N = p_.constantOf(s.bound), K = p_.constantOf(inner.bound);
    if (!N || !K || inner.body.size() != 1)
      return std::nullopt;
    const Stmt &c = inner.body[0];
    auto m = matchCall(c, s.var, inner.var);
    if (!m)
      return std::nullopt;
    const Arg &W = c.args[m->x + 2];
    std::optional<int32_t> weights;
    if (m->kernel.elbo) {
      if (c.result != Stmt::Result::Elbo || W.kind != Arg::Kind::Null)
        return std::nullopt;
      weights = entryLoad(c.scale, s.var, *K, inner.var);
    } else {
      if (c.result != Stmt::Result::Discard || W.kind != Arg::Kind::TempPointer)
        return std::nullopt;
      weights = entryLoad(W.expr, s.var, *K, inner.var);
      const Arg &dst = c.args.back();
      if (dst.kind != Arg::Kind::Pointer || uses(dst.expr, s.var))
        return std::nullopt;
    }
    if (!weights)
      return std::nullopt;
    const int64_t width = m->D + m->D * m->D;
    std::vector<Stmt> out;
    auto key = std::make_pair(m->data, *weights);
    auto known = top ? moments_.find(key) : moments_.end();
    int32_t means, totals;
    if (known != moments_.end()) {
      std::tie(means, totals) = known->second;
    } else {
      // One set of buffers per (data, weights) pair in every block, with a
      // memo of the weights: the ELBO's moments at the end of an iteration
      // are those the next iteration starts with.
      auto shared = shared_.find(key);
      if (shared == shared_.end()) {
        const std::string base = p_.buffers[size_t(m->data)].name;
        int32_t meanRows = buffer(base + ".mean." + std::to_string(p_.buffers.size()), *K * width);
        int32_t caseTotals = buffer(base + ".total." + std::to_string(p_.buffers.size()), *K);
        int32_t weightsSeen = buffer(base + ".memo." + std::to_string(p_.buffers.size()), 1 + *N * *K);
        p_.buffers[size_t(weightsSeen)].memo = true;
        shared = shared_.emplace(key, std::make_tuple(meanRows, caseTotals, weightsSeen)).first;
      }
      int32_t memo;
      std::tie(means, totals, memo) = shared->second;
      // The memo stands for the data too: only data bound once (a filled
      // buffer) at a call on the whole plate (top level) may use it.
      Arg memoArg = ptr(memo, p_.intConst(0));
      if (!top || p_.buffers[size_t(m->data)].doubles.empty())
        memoArg = Arg{Arg::Kind::Null, kNoExpr, -1};
      out.push_back(call("ppc_gaussian_weighted_moments",
                         {intArg(*N), intArg(*K), ptr(*weights, p_.intConst(0)), intArg(m->D),
                          ptr(m->data, p_.intConst(0)), ptr(means, p_.intConst(0)), ptr(totals, p_.intConst(0)),
                          memoArg},
                         "the data's statistics averaged with weights " + p_.buffers[size_t(*weights)].name +
                             " (memo: unless they are unchanged)"));
      if (top)
        moments_[key] = {means, totals};
    }
    Stmt loop = inner;
    loop.body.clear();
    ExprId k = p_.loopVar(inner.var);
    std::vector<Arg> args;
    dimension(args, *m);
    args.push_back(ptr(means, p_.mul(k, p_.intConst(width))));
    args.insert(args.end(), m->parents.begin(), m->parents.end());
    ExprId total = p_.loadDouble(totals, k);
    Stmt latent;
    if (m->kernel.elbo) {
      latent = call(m->kernel.latent, std::move(args), c.note + " (from weighted means)");
      latent.result = Stmt::Result::Elbo;
      latent.elboOnly = c.elboOnly;
      latent.scale = total;
    } else {
      args.push_back(doubleArg(total));
      args.push_back(c.args.back());
      latent = call(m->kernel.latent, std::move(args), c.note + " (from weighted means)");
    }
    loop.body.push_back(std::move(latent));
    out.push_back(std::move(loop));
    return out;
  }

  // ---- (B) ----
  void hoistEvidence(Stmt &s, std::vector<Stmt> &before) {
    auto N = p_.constantOf(s.bound);
    if (!N)
      return;
    for (Stmt &inner : s.body) {
      if (inner.kind != Stmt::Kind::Loop || inner.body.size() != 1)
        continue;
      auto K = p_.constantOf(inner.bound);
      const Stmt &c = inner.body[0];
      auto m = K ? matchCall(c, s.var, inner.var) : std::nullopt;
      if (!m || !m->kernel.elbo || c.result != Stmt::Result::Slot || c.scale != kNoExpr ||
          c.args[m->x + 2].kind != Arg::Kind::Null || !isEntry(c.index, s.var, *K, inner.var))
        continue;
      // The parents must not change inside the loop: no other statement names their buffers.
      bool touched = false;
      for (const Stmt &o : s.body)
        if (&o != &inner)
          for (const Arg &pa : m->parents)
            touched = touched || mentions(o, pa.buffer);
      if (touched)
        continue;
      const int64_t width = m->D + m->D * m->D;
      std::string base = p_.buffers[size_t(m->data)].name;
      int32_t eta = buffer(base + ".evidence.eta." + std::to_string(p_.buffers.size()), *K * width);
      int32_t offsets = buffer(base + ".evidence.offset." + std::to_string(p_.buffers.size()), *K);
      int32_t evidence = buffer(base + ".evidence." + std::to_string(p_.buffers.size()), *N * *K);
      Buffer zero;
      zero.name = base + ".zero";
      zero.size = width;
      zero.doubles.assign(size_t(width), 0.0);
      p_.buffers.push_back(std::move(zero));
      int32_t zeros = int32_t(p_.buffers.size() - 1);
      // Per case: eta_k (the message to the sample) and c_k (the term at T = 0).
      Stmt perCase = inner;
      perCase.body.clear();
      ExprId k = p_.loopVar(inner.var);
      Stmt z;
      z.kind = Stmt::Kind::Zero;
      z.buffer = eta;
      z.index = p_.mul(k, p_.intConst(width));
      z.count = width;
      perCase.body.push_back(z);
      std::vector<Arg> args;
      dimension(args, *m);
      args.insert(args.end(), m->parents.begin(), m->parents.end());
      args.push_back(doubleArg(p_.doubleConst(1.0)));
      args.push_back(ptr(eta, p_.mul(k, p_.intConst(width))));
      perCase.body.push_back(call(m->kernel.toSample, std::move(args), "E log p(x | case) as a function of T(x)"));
      Stmt zc = z;
      zc.buffer = offsets;
      zc.index = k;
      zc.count = 1;
      perCase.body.push_back(zc);
      args.clear();
      dimension(args, *m);
      args.push_back(ptr(zeros, p_.intConst(0)));
      args.insert(args.end(), m->parents.begin(), m->parents.end());
      Stmt offset = call(m->kernel.latent, std::move(args), "its value at T(x) = 0");
      offset.result = Stmt::Result::Slot;
      offset.buffer = offsets;
      offset.index = k;
      perCase.body.push_back(std::move(offset));
      before.push_back(std::move(perCase));
      before.push_back(call("ppc_gaussian_moment_products",
                            {intArg(*N), intArg(*K), intArg(m->D), ptr(m->data, p_.intConst(0)), ptr(eta, p_.intConst(0)),
                             ptr(offsets, p_.intConst(0)), ptr(evidence, p_.intConst(0))},
                            c.note + " for every datum and case"));
      // In the loop: the row of the datum.
      ExprId row = p_.mul(p_.loopVar(s.var), p_.intConst(*K));
      Stmt add = call("ppc_axpy", {intArg(*K), doubleArg(p_.doubleConst(1.0)), ptr(evidence, row), ptr(c.buffer, row)},
                      c.note);
      inner = std::move(add);
    }
  }

  static bool mentions(const Stmt &s, int32_t buffer) {
    if (s.buffer == buffer)
      return true;
    for (const Arg &a : s.args)
      if (a.buffer == buffer)
        return true;
    for (const Stmt &b : s.body)
      if (mentions(b, buffer))
        return true;
    return false;
  }

  Plan &p_;
public:
  int changed = 0; ///< loops batched
private:
  std::map<std::pair<int32_t, int32_t>, std::pair<int32_t, int32_t>> moments_; ///< (data, weights) -> (means, totals)
  /// (data, weights) -> (means, totals, memo), across blocks
  std::map<std::pair<int32_t, int32_t>, std::tuple<int32_t, int32_t, int32_t>> shared_;
};

} // namespace

int batchObservedStatistics(Plan &p) {
  Batcher b(p);
  for (auto &block : p.blocks)
    b.run(block);
  return b.changed;
}

} // namespace ppc::codegen
