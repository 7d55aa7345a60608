//===- codegen/transforms/LinearStatistics.cpp - batch-linear ------------===//
//
// A plan transformation, the twin of batch-statistics (BatchStatistics.cpp)
// for observed factors whose datum is a scalar entering linearly: a
// Bernoulli's E_q[log f(x | p)] = x (E log p - E log(1-p)) + E log(1-p), and
// its message to p is w (x, 1 - x). A mixture of product-Bernoulli
// components (latent class analysis, binarised images) loops over datum n,
// column d and case k:
//
//   for n { for d { for k { dst[k][d] += msg(x_nd; w_nk) } } }                (A)
//   for n { ...; for d { for k { elbo += w_nk * elbo(x_nd; p_kd) } }; ... }  (C)
//   for n { ...; for d { for k { ev[n][k] += elbo(x_nd; p_kd) } }; ... }     (B)
//
// N D K calls of a few flops each, reading the data N K D times. Instead,
// (A) and (C) become the weighted means of each column per case, mean_kd =
// sum_n w_nk x_nd / W_k (one product W^T X, memoized on the weights as the
// Gaussian moments are), then the factor's latent kernel per (k, d) with that
// mean and weight W_k; (B) becomes sum_d x_nd eta_kd + c_k for every (n, k)
// (one product X H^T) before the loop over n, its parents unchanged inside
// it. (C) is taken out of its loop over n when the loop's other statements
// are only ELBO terms (they cannot write what it reads). Data of zeros and
// ones bound once (all a Bernoulli's are) is listed as the columns of each
// row's ones (CSR index buffers computed here) and as bit masks, and the
// products become sums over the ones (ppc_binary_column_means,
// ppc_binary_linear_forms). Same sums in another order: results agree to
// rounding.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace ppc::codegen {
namespace {

constexpr std::string_view kMessage = "ppc_bernoulli_p_avglog_obs_n";
constexpr std::string_view kElbo = "ppc_bernoulli_avglogfactor_obs_n";

class LinearBatcher {
public:
  explicit LinearBatcher(Plan &p) : p_(p) {}
  int changed = 0;

  void run(std::vector<Stmt> &body, bool top) {
    std::vector<Stmt> out;
    if (top)
      means_.clear();
    for (Stmt &s : body) {
      if (s.kind == Stmt::Kind::Loop && !s.distributed) {
        if (std::optional<std::vector<Stmt>> r = messages(s, top)) {
          out.insert(out.end(), std::make_move_iterator(r->begin()), std::make_move_iterator(r->end()));
          ++changed;
          continue;
        }
        // In program order: the hoisted evidence, the loop (which may change
        // the weights: means computed before it are stale), then the ELBO
        // terms taken out of it, from means computed after it.
        std::vector<Stmt> before, after;
        hoistEvidence(s, before);
        out.insert(out.end(), std::make_move_iterator(before.begin()), std::make_move_iterator(before.end()));
        forgetStaleMeans(s, top);
        elboOutOfLoop(s, after, top);
        changed += !before.empty() || !after.empty();
        out.push_back(std::move(s));
        out.insert(out.end(), std::make_move_iterator(after.begin()), std::make_move_iterator(after.end()));
        continue;
      }
      forgetStaleMeans(s, top);
      out.push_back(std::move(s));
    }
    body = std::move(out);
  }

private:
  // ---- expressions ----
  const Expr &expr(ExprId e) const { return p_.exprs[size_t(e)]; }
  bool isVar(ExprId e, int32_t v) const {
    return e != kNoExpr && expr(e).kind == Expr::Kind::LoopVar && expr(e).var == v;
  }
  bool isVarTimes(ExprId e, int32_t v, int64_t c) const {
    if (c == 1 && isVar(e, v))
      return true;
    if (e == kNoExpr || expr(e).kind != Expr::Kind::MulInt)
      return false;
    const Expr &m = expr(e);
    return (isVar(m.a, v) && p_.constantOf(m.b) == c) || (isVar(m.b, v) && p_.constantOf(m.a) == c);
  }
  /// row * C + col: entry (row, col) of a row-major matrix of C columns.
  bool isEntry(ExprId e, int32_t row, int64_t C, int32_t col) const {
    if (e == kNoExpr || expr(e).kind != Expr::Kind::AddInt)
      return false;
    const Expr &a = expr(e);
    return (isVarTimes(a.a, row, C) && isVar(a.b, col)) || (isVarTimes(a.b, row, C) && isVar(a.a, col));
  }
  std::optional<int32_t> entryLoad(ExprId e, int32_t row, int64_t C, int32_t col) const {
    if (e == kNoExpr || expr(e).kind != Expr::Kind::LoadDouble || !isEntry(expr(e).a, row, C, col))
      return std::nullopt;
    return expr(e).buffer;
  }

  // ---- the nests ----
  /// `for a { for b { call } }` over a datum's columns d and the cases k, in
  /// either order.
  struct Nest {
    const Stmt *call = nullptr;
    int32_t d = -1, k = -1; ///< loop variables
    int64_t D = 0, K = 0;
  };
  std::optional<Nest> nest(const Stmt &outer, std::string_view kernel) const {
    if (outer.kind != Stmt::Kind::Loop || outer.parallel || outer.body.size() != 1 ||
        outer.body[0].kind != Stmt::Kind::Loop)
      return std::nullopt;
    const Stmt &inner = outer.body[0];
    auto B1 = p_.constantOf(outer.bound), B2 = p_.constantOf(inner.bound);
    if (!B1 || !B2 || inner.body.size() != 1 || inner.body[0].kind != Stmt::Kind::Call || !inner.body[0].kernel ||
        inner.body[0].kernel->name != kernel)
      return std::nullopt;
    Nest n;
    n.call = &inner.body[0];
    // The datum's column is the loop its data pointer reads with; the other is the case.
    n.d = outer.var;
    n.k = inner.var;
    n.D = *B1;
    n.K = *B2;
    return n;
  }

  /// The call's datum is x[n * D + d], one per call, with no parent index;
  /// its parent (the last pointer) depends on k (and d), not on n.
  bool datumAndParent(const Stmt &c, int32_t n, Nest &m, int32_t &data) const {
    if (c.args.size() != 5 || p_.constantOf(c.args[0].expr) != 1 || c.args[1].kind != Arg::Kind::Pointer ||
        c.args[2].kind != Arg::Kind::Null || c.args[4].kind != Arg::Kind::Pointer)
      return false;
    if (!isEntry(c.args[1].expr, n, m.D, m.d)) {
      std::swap(m.d, m.k);
      std::swap(m.D, m.K);
      if (!isEntry(c.args[1].expr, n, m.D, m.d))
        return false;
    }
    data = c.args[1].buffer;
    const ExprId parent = c.args[4].expr;
    return !p_.usesVar(parent, n) && p_.usesVar(parent, m.k);
  }

  /// Bound 0/1 data's ones, listed once: the columns of each row's ones
  /// (CSR: rows, columns) and, where at least a seventh of the entries are
  /// ones, the rows as bit masks (bits: (D + 63) / 64 words a row, bit
  /// c % 64 of word c / 64 for column c; -1: none). Each ISA's kernels take
  /// the form they are fastest with. The masks cost every entry an addition:
  /// on 10000 x 784 random 0/1 data, K = 10 (Zen 5, AVX-512), both products
  /// took 2.5 ms with them at any density and 1.8, 2.6 and 6.3 ms over 10%,
  /// 15% and 31.5% of ones; and sparse data of many columns would not want
  /// N D / 8 bytes of masks.
  struct Ones {
    int32_t rows, columns, bits;
  };
  static constexpr int64_t kMaskDensity = 7; ///< masks where ones * kMaskDensity >= N D
  std::optional<Ones> ones(int32_t data, int64_t N, int64_t D) {
    if (auto known = ones_.find(data); known != ones_.end())
      return known->second;
    const std::vector<double> &x = p_.buffers[size_t(data)].doubles;
    if (x.empty() || int64_t(x.size()) != N * D)
      return std::nullopt;
    for (double v : x)
      if (v != 0.0 && v != 1.0)
        return std::nullopt;
    std::vector<int64_t> rows(size_t(N + 1), 0), columns;
    for (int64_t i = 0; i < N; ++i) {
      for (int64_t c = 0; c < D; ++c)
        if (x[size_t(i * D + c)] == 1.0)
          columns.push_back(c);
      rows[size_t(i + 1)] = int64_t(columns.size());
    }
    if (columns.empty()) // no ones at all: the dense kernels need no index
      return ones_[data] = std::nullopt;
    const std::string base = p_.buffers[size_t(data)].name;
    Ones o{buffer(base + ".ones.rows", N + 1), buffer(base + ".ones.columns", int64_t(columns.size())), -1};
    if (int64_t(columns.size()) * kMaskDensity >= N * D) {
      const int64_t words = (D + 63) / 64;
      std::vector<int64_t> bits(size_t(N * words), 0);
      for (int64_t i = 0; i < N; ++i)
        for (int64_t e = rows[size_t(i)]; e < rows[size_t(i + 1)]; ++e) {
          const int64_t c = columns[size_t(e)];
          bits[size_t(i * words + c / 64)] |= int64_t(uint64_t(1) << (c % 64));
        }
      o.bits = buffer(base + ".ones.bits", N * words);
      p_.buffers[size_t(o.bits)].isInt = true;
      p_.buffers[size_t(o.bits)].ints = std::move(bits);
    }
    p_.buffers[size_t(o.rows)].isInt = p_.buffers[size_t(o.columns)].isInt = true;
    p_.buffers[size_t(o.rows)].ints = std::move(rows);
    p_.buffers[size_t(o.columns)].ints = std::move(columns);
    return ones_[data] = o;
  }

  // ---- buffers and calls ----
  int32_t buffer(const std::string &name, int64_t size) {
    Buffer b;
    b.name = name;
    b.size = size;
    p_.buffers.push_back(std::move(b));
    return int32_t(p_.buffers.size() - 1);
  }
  Arg ptr(int32_t buffer, ExprId index) const { return Arg{Arg::Kind::Pointer, index, buffer}; }
  /// The ones' bit masks, or null where there are none (sparse data).
  Arg bitsArg(const Ones &o) const {
    return o.bits >= 0 ? ptr(o.bits, p_.intConst(0)) : Arg{Arg::Kind::Null, kNoExpr, -1};
  }
  Arg intArg(int64_t v) { return Arg{Arg::Kind::Int, p_.intConst(v), -1}; }
  Arg doubleArg(ExprId e) const { return Arg{Arg::Kind::Double, e, -1}; }
  Stmt call(std::string_view kernel, std::vector<Arg> args, std::string note) const {
    return edit::kernelCall(kernel, std::move(args), std::move(note));
  }

  /// The weighted column means of (data, weights), computed by one call at
  /// `out` unless a statement before in the block left them current.
  std::pair<int32_t, int32_t> columnMeans(int32_t data, int32_t weights, int64_t N, int64_t K, int64_t D,
                                          bool top, std::vector<Stmt> &out) {
    auto key = std::make_pair(data, weights);
    if (top)
      if (auto known = means_.find(key); known != means_.end())
        return known->second;
    auto shared = shared_.find(key);
    if (shared == shared_.end()) {
      const std::string base = p_.buffers[size_t(data)].name;
      int32_t means = buffer(base + ".colmean." + std::to_string(p_.buffers.size()), K * D);
      int32_t totals = buffer(base + ".coltotal." + std::to_string(p_.buffers.size()), K);
      int32_t memo = buffer(base + ".colmemo." + std::to_string(p_.buffers.size()), 1 + N * K);
      p_.buffers[size_t(memo)].memo = true;
      shared = shared_.emplace(key, std::make_tuple(means, totals, memo)).first;
    }
    auto [means, totals, memo] = shared->second;
    // The memo stands for the data too: only data bound once (a filled buffer)
    // at a call on the whole plate (top level) may use it.
    Arg memoArg = ptr(memo, p_.intConst(0));
    if (!top || p_.buffers[size_t(data)].doubles.empty())
      memoArg = Arg{Arg::Kind::Null, kNoExpr, -1};
    const std::string note =
        "each column's mean per case, weights " + p_.buffers[size_t(weights)].name + " (memo: unless they are unchanged)";
    if (auto index = ones(data, N, D))
      out.push_back(call("ppc_binary_column_means",
                         {intArg(N), intArg(K), ptr(weights, p_.intConst(0)), intArg(D), ptr(index->rows, p_.intConst(0)),
                          ptr(index->columns, p_.intConst(0)), bitsArg(*index), ptr(means, p_.intConst(0)),
                          ptr(totals, p_.intConst(0)), memoArg},
                         note + ", over the ones"));
    else
      out.push_back(call("ppc_weighted_column_means",
                         {intArg(N), intArg(K), ptr(weights, p_.intConst(0)), intArg(D), ptr(data, p_.intConst(0)),
                          ptr(means, p_.intConst(0)), ptr(totals, p_.intConst(0)), memoArg},
                         note));
    if (top)
      means_[key] = {means, totals};
    return {means, totals};
  }

  void forgetStaleMeans(const Stmt &s, bool top) {
    if (top)
      for (auto it = means_.begin(); it != means_.end();)
        it = p_.mentions(s, it->first.second) ? means_.erase(it) : std::next(it);
  }

  /// The latent kernel per (d, k), in the nest's own loops and order.
  Stmt perCase(const Stmt &outer, Stmt latent) {
    Stmt inner = outer.body[0];
    inner.body.clear();
    inner.body.push_back(std::move(latent));
    Stmt l = outer;
    l.body.clear();
    l.body.push_back(std::move(inner));
    return l;
  }

  // ---- (A) ----
  std::optional<std::vector<Stmt>> messages(const Stmt &s, bool top) {
    auto N = p_.constantOf(s.bound);
    if (!N || s.body.size() != 1)
      return std::nullopt;
    auto m = nest(s.body[0], kMessage);
    if (!m)
      return std::nullopt;
    const Stmt &c = *m->call;
    int32_t data = -1;
    if (c.result != Stmt::Result::Discard || !datumAndParent(c, s.var, *m, data) ||
        c.args[3].kind != Arg::Kind::TempPointer)
      return std::nullopt;
    auto weights = entryLoad(c.args[3].expr, s.var, m->K, m->k);
    if (!weights)
      return std::nullopt;
    std::vector<Stmt> out;
    auto [means, totals] = columnMeans(data, *weights, *N, m->K, m->D, top, out);
    ExprId k = p_.loopVar(m->k), d = p_.loopVar(m->d);
    Stmt latent = call("ppc_bernoulli_p_avglog",
                       {doubleArg(p_.loadDouble(means, p_.add(p_.mul(k, p_.intConst(m->D)), d))),
                        doubleArg(p_.loadDouble(totals, k)), c.args[4]},
                       c.note + " (from weighted means)");
    out.push_back(perCase(s.body[0], std::move(latent)));
    return out;
  }

  // ---- (C) ----
  void elboOutOfLoop(Stmt &s, std::vector<Stmt> &after, bool top) {
    auto N = p_.constantOf(s.bound);
    if (!N || !top)
      return;
    // The loop's other statements must be ELBO terms only.
    for (const Stmt &o : s.body)
      if (!nest(o, kElbo) && !(o.kind == Stmt::Kind::Call && o.result == Stmt::Result::Elbo))
        return;
    std::vector<Stmt> keep;
    for (Stmt &o : s.body) {
      auto m = nest(o, kElbo);
      int32_t data = -1;
      std::optional<int32_t> weights;
      if (m) {
        const Stmt &c = *m->call;
        if (c.result == Stmt::Result::Elbo && datumAndParent(c, s.var, *m, data) &&
            c.args[3].kind == Arg::Kind::Null)
          weights = entryLoad(c.scale, s.var, m->K, m->k);
      }
      if (!weights) {
        keep.push_back(std::move(o));
        continue;
      }
      auto [means, totals] = columnMeans(data, *weights, *N, m->K, m->D, top, after);
      ExprId k = p_.loopVar(m->k), d = p_.loopVar(m->d);
      Stmt latent = call("ppc_bernoulli_avglogfactor",
                         {doubleArg(p_.loadDouble(means, p_.add(p_.mul(k, p_.intConst(m->D)), d))),
                          m->call->args[4]},
                         m->call->note + " (from weighted means)");
      latent.result = Stmt::Result::Elbo;
      latent.elboOnly = m->call->elboOnly;
      latent.scale = p_.loadDouble(totals, k);
      after.push_back(perCase(o, std::move(latent)));
    }
    s.body = std::move(keep);
  }

  // ---- (B) ----
  void hoistEvidence(Stmt &s, std::vector<Stmt> &before) {
    auto N = p_.constantOf(s.bound);
    if (!N)
      return;
    for (Stmt &o : s.body) {
      auto m = nest(o, kElbo);
      if (!m)
        continue;
      const Stmt &c = *m->call;
      int32_t data = -1;
      if (c.result != Stmt::Result::Slot || c.scale != kNoExpr || !datumAndParent(c, s.var, *m, data) ||
          c.args[3].kind != Arg::Kind::Null || !isEntry(c.index, s.var, m->K, m->k))
        continue;
      // The parents must not change inside the loop: no other statement names them.
      bool touched = false;
      for (const Stmt &other : s.body)
        if (&other != &o)
          touched = touched || p_.mentions(other, c.args[4].buffer);
      if (touched)
        continue;
      const std::string base = p_.buffers[size_t(data)].name;
      int32_t eta = buffer(base + ".linear.eta." + std::to_string(p_.buffers.size()), m->K * m->D);
      int32_t offsets = buffer(base + ".linear.offset." + std::to_string(p_.buffers.size()), m->K);
      int32_t evidence = buffer(base + ".linear." + std::to_string(p_.buffers.size()), *N * m->K);
      // Per (d, k): eta_kd, the message to the datum (E log p - E log(1-p)),
      // and c_k, the sum over d of the term at x = 0.
      Stmt zero;
      zero.kind = Stmt::Kind::Zero;
      zero.buffer = eta;
      zero.index = p_.intConst(0);
      zero.count = m->K * m->D;
      before.push_back(zero);
      zero.buffer = offsets;
      zero.count = m->K;
      before.push_back(zero);
      ExprId k = p_.loopVar(m->k), d = p_.loopVar(m->d);
      Stmt inner = o.body[0];
      inner.body.clear();
      inner.body.push_back(call("ppc_bernoulli_sample_avglog",
                                {c.args[4], doubleArg(p_.doubleConst(1.0)),
                                 ptr(eta, p_.add(p_.mul(k, p_.intConst(m->D)), d))},
                                "E log p(x | case) as a function of x"));
      Stmt offset = call("ppc_bernoulli_avglogfactor", {doubleArg(p_.doubleConst(0.0)), c.args[4]},
                         "its value at x = 0");
      offset.result = Stmt::Result::Slot;
      offset.buffer = offsets;
      offset.index = k;
      inner.body.push_back(std::move(offset));
      Stmt outer = o;
      outer.body.clear();
      outer.body.push_back(std::move(inner));
      before.push_back(std::move(outer));
      if (auto index = ones(data, *N, m->D))
        before.push_back(call("ppc_binary_linear_forms",
                              {intArg(*N), intArg(m->K), intArg(m->D), ptr(index->rows, p_.intConst(0)),
                               ptr(index->columns, p_.intConst(0)), bitsArg(*index), ptr(eta, p_.intConst(0)),
                               ptr(offsets, p_.intConst(0)), ptr(evidence, p_.intConst(0))},
                              c.note + " for every datum and case, over the ones"));
      else
        before.push_back(call("ppc_linear_forms",
                              {intArg(*N), intArg(m->K), intArg(m->D), ptr(data, p_.intConst(0)),
                               ptr(eta, p_.intConst(0)), ptr(offsets, p_.intConst(0)), ptr(evidence, p_.intConst(0))},
                              c.note + " for every datum and case"));
      ExprId row = p_.mul(p_.loopVar(s.var), p_.intConst(m->K));
      o = call("ppc_axpy", {intArg(m->K), doubleArg(p_.doubleConst(1.0)), ptr(evidence, row), ptr(c.buffer, row)},
               c.note);
    }
  }

  Plan &p_;
  /// (data, weights) -> (means, totals) current at this point of the block.
  std::map<std::pair<int32_t, int32_t>, std::pair<int32_t, int32_t>> means_;
  /// (data, weights) -> (means, totals, memo), across blocks.
  std::map<std::pair<int32_t, int32_t>, std::tuple<int32_t, int32_t, int32_t>> shared_;
  /// data -> its ones' buffers (none: not bound 0/1 data).
  std::map<int32_t, std::optional<Ones>> ones_;
};

} // namespace

int batchLinearStatistics(Plan &p) {
  LinearBatcher b(p);
  for (auto &block : p.blocks)
    b.run(block, true);
  return b.changed;
}

} // namespace ppc::codegen
