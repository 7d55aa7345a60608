//===- codegen/Plan.cpp - schedule + data -> executable plan ---------------===//
//
// See Plan.h. The builder walks the schedule (update / fuse / local), finds
// each statement in the `messages` region and emits its loop nest with the
// loops that an enclosing fuse or local binds removed; the ELBO block walks
// the gated model (every factor's expected log density and every latent
// variable's entropy, weighted by the probabilities of the cases it is in).
//
// Kernel calls are marshalled from a per-kernel argument pattern (the call
// signature column of the catalogue): the pattern names, for each kernel
// parameter, which factor argument supplies it and in what form.
//
//===----------------------------------------------------------------------===//
#include "codegen/Plan.h"

#include "ir/Diagnostics.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "runtime/Binding.h"
#include "runtime/Symbols.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>
#include <unistd.h>

namespace ppc::codegen {

// ---- expressions ----------------------------------------------------------

namespace {
ExprId push(Plan &p, Expr e) {
  p.exprs.push_back(e);
  return static_cast<ExprId>(p.exprs.size() - 1);
}
/// A node with operands a, b (and a buffer for loads).
ExprId node(Plan &p, Expr::Kind kind, ExprId a, ExprId b = kNoExpr, int32_t buffer = -1) {
  Expr e;
  e.kind = kind;
  e.a = a;
  e.b = b;
  e.buffer = buffer;
  return push(p, e);
}
} // namespace

ExprId Plan::intConst(int64_t v) {
  Expr e;
  e.kind = Expr::Kind::IntConst;
  e.value = v;
  return push(*this, e);
}
ExprId Plan::doubleConst(double v) {
  Expr e;
  e.kind = Expr::Kind::DoubleConst;
  e.number = v;
  return push(*this, e);
}
ExprId Plan::loopVar(int32_t var) {
  Expr e;
  e.kind = Expr::Kind::LoopVar;
  e.var = var;
  return push(*this, e);
}
bool Plan::usesVar(ExprId e, int32_t var) const {
  if (e == kNoExpr)
    return false;
  const Expr &x = exprs[size_t(e)];
  return (x.kind == Expr::Kind::LoopVar && x.var == var) || usesVar(x.a, var) || usesVar(x.b, var);
}

bool Plan::loads(ExprId e, int32_t buffer) const {
  if (e == kNoExpr)
    return false;
  const Expr &x = exprs[size_t(e)];
  return ((x.kind == Expr::Kind::LoadDouble || x.kind == Expr::Kind::LoadInt) && x.buffer == buffer) ||
         loads(x.a, buffer) || loads(x.b, buffer);
}

bool Plan::mentions(const Stmt &s, int32_t buffer, const Stmt *skip) const {
  if (&s == skip)
    return false;
  if (s.buffer == buffer || loads(s.index, buffer) || loads(s.bound, buffer) || loads(s.scale, buffer))
    return true;
  for (const Arg &a : s.args)
    if (a.buffer == buffer || loads(a.expr, buffer))
      return true;
  for (const Stmt &c : s.body)
    if (mentions(c, buffer, skip))
      return true;
  return false;
}

bool Plan::isBoundData(int32_t buffer) const {
  const Buffer &b = buffers[size_t(buffer)];
  return !b.ints.empty() || !b.doubles.empty();
}

bool Plan::onlyBoundData(ExprId e) const {
  if (e == kNoExpr)
    return true;
  const Expr &x = exprs[size_t(e)];
  if ((x.kind == Expr::Kind::LoadInt || x.kind == Expr::Kind::LoadDouble) && !isBoundData(x.buffer))
    return false;
  return onlyBoundData(x.a) && onlyBoundData(x.b);
}

std::optional<int64_t> Plan::evaluate(ExprId e, int32_t var, int64_t value) const {
  if (e == kNoExpr)
    return std::nullopt;
  const Expr &x = exprs[size_t(e)];
  switch (x.kind) {
  case Expr::Kind::IntConst: return x.value;
  case Expr::Kind::LoopVar:
    if (x.var != var)
      return std::nullopt;
    return value;
  case Expr::Kind::AddInt:
  case Expr::Kind::MulInt: {
    auto a = evaluate(x.a, var, value), b = evaluate(x.b, var, value);
    if (!a || !b)
      return std::nullopt;
    return x.kind == Expr::Kind::AddInt ? *a + *b : *a * *b;
  }
  case Expr::Kind::LoadInt: {
    auto i = evaluate(x.a, var, value);
    const std::vector<int64_t> &ints = buffers[size_t(x.buffer)].ints;
    if (!i || *i < 0 || size_t(*i) >= ints.size())
      return std::nullopt;
    return ints[size_t(*i)];
  }
  default: return std::nullopt;
  }
}

std::optional<int64_t> Plan::constantOf(ExprId e) const {
  if (e != kNoExpr && exprs[e].kind == Expr::Kind::IntConst)
    return exprs[e].value;
  return std::nullopt;
}
std::optional<double> Plan::doubleConstantOf(ExprId e) const {
  if (e == kNoExpr)
    return 1.0;
  if (exprs[e].kind == Expr::Kind::DoubleConst)
    return exprs[e].number;
  return std::nullopt;
}
ExprId Plan::add(ExprId a, ExprId b) {
  auto ca = constantOf(a), cb = constantOf(b);
  if (ca && cb)
    return intConst(*ca + *cb);
  if (ca && *ca == 0)
    return b;
  if (cb && *cb == 0)
    return a;
  return node(*this, Expr::Kind::AddInt, a, b);
}
ExprId Plan::mul(ExprId a, ExprId b) {
  auto ca = constantOf(a), cb = constantOf(b);
  if (ca && cb)
    return intConst(*ca * *cb);
  if ((ca && *ca == 0) || (cb && *cb == 0))
    return intConst(0);
  if (ca && *ca == 1)
    return b;
  if (cb && *cb == 1)
    return a;
  return node(*this, Expr::Kind::MulInt, a, b);
}
ExprId Plan::addDouble(ExprId a, ExprId b) {
  auto ca = doubleConstantOf(a), cb = doubleConstantOf(b);
  if (ca && cb)
    return doubleConst(*ca + *cb);
  if (ca && *ca == 0)
    return b;
  if (cb && *cb == 0)
    return a;
  return node(*this, Expr::Kind::AddDouble, a, b);
}
ExprId Plan::mulDouble(ExprId a, ExprId b) {
  auto ca = doubleConstantOf(a), cb = doubleConstantOf(b);
  if (ca && cb)
    return doubleConst(*ca * *cb);
  if (ca && *ca == 1)
    return b;
  if (cb && *cb == 1)
    return a;
  return node(*this, Expr::Kind::MulDouble, a, b);
}
ExprId Plan::subDouble(ExprId a, ExprId b) {
  auto ca = doubleConstantOf(a), cb = doubleConstantOf(b);
  if (ca && cb)
    return doubleConst(*ca - *cb);
  return node(*this, Expr::Kind::SubDouble, a, b);
}
ExprId Plan::loadInt(int32_t buffer, ExprId index) {
  if (auto c = constantOf(index); c && !buffers[buffer].ints.empty() && *c >= 0 &&
                                  *c < int64_t(buffers[buffer].ints.size()))
    return intConst(buffers[buffer].ints[*c]);
  return node(*this, Expr::Kind::LoadInt, index, kNoExpr, buffer);
}
ExprId Plan::loadDouble(int32_t buffer, ExprId index) {
  return node(*this, Expr::Kind::LoadDouble, index, kNoExpr, buffer);
}
ExprId Plan::intToDouble(ExprId a) {
  if (auto c = constantOf(a))
    return doubleConst(double(*c));
  return node(*this, Expr::Kind::IntToDouble, a);
}

// ---- the builder ----------------------------------------------------------

namespace {

using ir::Op;
using ir::OpKind;
using ir::Operand;
using ir::Region;
using ir::Value;

/// Argument patterns: one token per kernel parameter.
///   D<i>  int64: the dimension of argument i (K of a Dirichlet/Categorical)
///   1     int64 1 (one element of an _n kernel)
///   S<i>  pointer: expected statistics of argument i (a constant's point mass)
///   N<i>  pointer: natural parameters of argument i
///   V<i>  double: argument i's value (constant, data) or first statistic (E x)
///   X<i>  pointer: argument i's data (double); I<i>: the same as int64
///   A<i>  pointer: D0 copies of constant argument i (a Dirichlet's alpha)
///   0     null pointer (no parent index array: the parent row is the one given)
///   W     pointer: the observation's weight (times the gate weight for messages), null if 1
///   w     double: the gate weight
///   d     pointer: the destination (the message's accumulator row)
struct Pattern {
  std::string_view kernel, tokens;
};
constexpr Pattern kPatterns[] = {
    // messages
    {"ppc_dirichlet_probs_avglog", "D0 A1 w d"},
    {"ppc_beta_p_avglog", "V1 V2 w d"},
    {"ppc_categorical_sample_avglog", "D0 S1 w d"},
    {"ppc_categorical_probs_avglog", "D1 S0 w d"},
    {"ppc_categorical_probs_avglog_obs_n", "1 D1 I0 0 W d"},
    {"ppc_bernoulli_sample_avglog", "S1 w d"},
    {"ppc_bernoulli_p_avglog", "V0 w d"},
    {"ppc_bernoulli_p_avglog_obs_n", "1 X0 0 W d"},
    {"ppc_gamma_sample_avglog", "V1 S2 w d"},
    {"ppc_gamma_rate_avglog", "V1 S0 w d"},
    {"ppc_gamma_rate_avglog_obs_n", "1 V1 X0 0 W d"},
    {"ppc_poisson_sample_avglog", "S1 w d"},
    {"ppc_poisson_rate_avglog", "V0 w d"},
    {"ppc_poisson_rate_avglog_obs_n", "1 X0 0 W d"},
    {"ppc_gaussian_sample_avglog", "S1 S2 w d"},
    {"ppc_gaussian_mean_avglog", "S0 S2 w d"},
    {"ppc_gaussian_mean_avglog_obs_n", "1 X0 0 W S2 d"},
    {"ppc_gaussian_precision_avglog", "S0 S1 w d"},
    {"ppc_gaussian_precision_avglog_obs_n", "1 X0 0 W S1 d"},
    {"ppc_mvgaussian_sample_avglog", "D0 S1 S2 w d"},
    {"ppc_mvgaussian_mean_avglog", "D0 S0 S2 w d"},
    {"ppc_mvgaussian_mean_avglog_obs_n", "1 D0 X0 0 W S2 d"},
    {"ppc_mvgaussian_precision_avglog", "D0 S0 S1 w d"},
    {"ppc_mvgaussian_precision_avglog_obs_n", "1 D0 X0 0 W S1 d"},
    {"ppc_wishart_iso_sample_avglog", "D0 V1 V2 w d"},
    // expected log densities (ELBO terms)
    {"ppc_dirichlet_sym_avglogfactor", "D0 C1 S0"},
    {"ppc_beta_avglogfactor", "V1 V2 S0"},
    {"ppc_categorical_avglogfactor", "D0 S0 S1"},
    {"ppc_categorical_avglogfactor_obs_n", "1 D1 I0 0 W S1"},
    {"ppc_bernoulli_avglogfactor", "V0 S1"},
    {"ppc_bernoulli_avglogfactor_obs_n", "1 X0 0 W S1"},
    {"ppc_gamma_avglogfactor", "V1 S0 S2"},
    {"ppc_gamma_avglogfactor_obs_n", "1 V1 X0 0 W S2"},
    {"ppc_poisson_avglogfactor_obs_n", "1 X0 0 W S1"},
    {"ppc_gaussian_avglogfactor", "S0 S1 S2"},
    {"ppc_gaussian_avglogfactor_obs_n", "1 X0 0 W S1 S2"},
    {"ppc_mvgaussian_avglogfactor", "D0 S0 S1 S2"},
    {"ppc_mvgaussian_avglogfactor_obs_n", "1 D0 X0 0 W S1 S2"},
    {"ppc_wishart_iso_avglogfactor", "D0 V1 V2 S0"},
    // entropies
    {"ppc_dirichlet_entropy_n", "1 D0 N0 S0"},
    {"ppc_categorical_entropy_n", "1 D0 S0"},
    {"ppc_bernoulli_entropy_n", "1 S0"},
    {"ppc_gamma_entropy_n", "1 N0"},
    {"ppc_gaussian_entropy_n", "1 N0"},
    {"ppc_poisson_entropy_n", "1 N0"},
    {"ppc_mvgaussian_entropy_n", "1 D0 N0"},
    {"ppc_wishart_entropy_n", "1 D0 N0"},
};

const Pattern *findPattern(std::string_view kernel) {
  for (const Pattern &p : kPatterns)
    if (p.kernel == kernel)
      return &p;
  return nullptr;
}

/// What a kernel computes, from the catalogue: a message to argument
/// `target` of a family's factor, its expected log density, or an entropy.
struct KernelRole {
  Family family = Family::Gaussian;
  enum Kind { Message, Elbo, Entropy } kind = Message;
  int target = 0;
};
std::optional<KernelRole> roleOf(std::string_view kernel) {
  for (const FamilySpec &fs : allFamilies()) {
    const FactorOperators &ops = factorOperators(fs.family);
    for (size_t a = 0; a < ops.toArgument.size(); ++a)
      if (ops.toArgument[a].kernel == kernel || ops.toArgument[a].observedKernel == kernel)
        return KernelRole{fs.family, KernelRole::Message, int(a)};
    if (ops.elboKernel == kernel || ops.observedElboKernel == kernel)
      return KernelRole{fs.family, KernelRole::Elbo, 0};
  }
  for (const FamilySpec &fs : allFamilies())
    if (entropyKernel(fs.family) == kernel)
      return KernelRole{fs.family, KernelRole::Entropy, 0};
  return std::nullopt;
}

/// Doubles per element of a posterior of family `f` with dimension `k`.
int64_t widthOf(Family f, int64_t k) {
  switch (f) {
  case Family::Dirichlet:
  case Family::Categorical: return k;
  case Family::Beta:
  case Family::Gamma:
  case Family::Gaussian: return 2;
  case Family::Bernoulli:
  case Family::Poisson: return 1;
  case Family::MvGaussian: return k + k * k; // (Lambda mu, -Lambda/2) and (E x, E x x^T)
  case Family::Wishart: return k * k + 1;    // (-S^-1/2, (nu-D-1)/2) and (E L, E log|L|)
  }
  return 0;
}

/// An argument of a factor as the generated code reads it.
struct Source {
  enum Kind { Constant, Latent, Data } kind = Constant;
  double value = 0;             ///< Constant
  int posterior = -1;           ///< Latent
  const Value *data = nullptr;  ///< Data: the bound variable
  ExprId element = kNoExpr;     ///< Latent, Data: flat element index
  int64_t dimension = 1;        ///< Categorical, vector or matrix dimension (Latent, Data)
};

/// Loop index -> its index expression.
using Env = std::map<const Value *, ExprId>;

class PlanBuilder {
public:
  PlanBuilder(const ir::Module &m, const ir::Evaluation &ev, const rt::BoundData &data, bool randomInit,
              DiagnosticEngine &diags, Plan &plan)
      : m_(m), ev_(ev), data_(data), randomInit_(randomInit), diags_(diags), p_(plan) {}

  bool productForm = true;
  const Value *partitioned_ = nullptr;

  bool run() {
    if (!m_.messages || !m_.iterationSchedule) {
      diags_.error("the module has no schedule: run the scheduling passes first");
      return false;
    }
    collectGated(m_.body);
    findNestedPlate();
    collectPosteriors();
    if (!ok_)
      return false;
    p_.seedBuffer = addBuffer("seed", true, 1);
    if (partitioned_) {
      p_.partitionedPlate = partitioned_;
      p_.elementOffsets = addBuffer("element.offset", true, int64_t(p_.posteriors.size()));
    }
    if (productForm) {
      planProductForms();
      planLogEntries();
      planCollapsedElbo();
    }
    emitRandomInit(p_.blocks[Plan::Init]);
    const Region *schedules[] = {m_.initSchedule.get(), m_.iterationSchedule.get(), m_.finalSchedule.get()};
    for (int b = 0; b < 3 && ok_; ++b)
      if (schedules[b]) {
        Context ctx;
        block_ = Plan::BlockId(b);
        emitSchedule(*schedules[b], p_.blocks[b], ctx);
      }
    for (int pi : recomputedUnread_)
      if (initRead_.count(pi)) {
        const Value *v = p_.posteriors[size_t(pi)].variable;
        diags_.warning(v->def ? v->def->loc : SourceRange{},
                       "the random initialization of %" + v->name +
                           " is recomputed before anything reads it, so it cannot break the symmetry of the "
                           "mixture components; this schedule may leave them identical");
      }
    if (ok_) {
      Env env;
      std::vector<ExprId> weights;
      emitElbo(m_.body, p_.blocks[Plan::Elbo], env, weights, /*top=*/true);
      emitPendingTransposes(p_.blocks[Plan::Elbo], p_.blocks[Plan::Elbo].begin());
    }
    if (ok_ && partitioned_)
      markDistributedLoops();
    if (ok_)
      for (auto &block : p_.blocks)
        foldProductIdentities(block);
    return ok_;
  }

  bool sameExpr(ExprId a, ExprId b) const {
    if (a == b)
      return true;
    if (a == kNoExpr || b == kNoExpr)
      return false;
    const Expr &x = p_.exprs[size_t(a)], &y = p_.exprs[size_t(b)];
    return x.kind == y.kind && x.value == y.value && x.number == y.number && x.var == y.var &&
           x.buffer == y.buffer && sameExpr(x.a, y.a) && sameExpr(x.b, y.b);
  }
  bool sameArg(const Arg &a, const Arg &b) const {
    return a.kind == b.kind && a.buffer == b.buffer && sameExpr(a.expr, b.expr);
  }
  static bool isCall(const Stmt &s, std::string_view kernel) {
    return s.kind == Stmt::Kind::Call && s.kernel && s.kernel->name == kernel && s.result == Stmt::Result::Discard;
  }

  /// A product-form row starts as the identity and multiplies each factor
  /// in. `fill 1; mul a` is `copy a`, and `copy a; mul b` is `mul2 a b`: one
  /// pass over the row instead of three, without scalar stores that the
  /// vectorized multiply then reloads.
  void foldProductIdentities(std::vector<Stmt> &body) {
    std::vector<Stmt> out;
    for (Stmt &s : body) {
      if (s.kind == Stmt::Kind::Loop)
        foldProductIdentities(s.body);
      if (!out.empty() && isCall(s, "ppc_mul_n")) {
        Stmt &prev = out.back();
        const Arg &n = s.args[0], &src = s.args[1], &dst = s.args[2];
        if (isCall(prev, "ppc_fill") && sameArg(prev.args[0], n) && sameArg(prev.args[2], dst) &&
            p_.doubleConstantOf(prev.args[1].expr) == 1.0) {
          prev.kernel = rt::findRuntimeKernel("ppc_copy_n");
          prev.args = {n, src, dst};
          prev.note = s.note;
          continue;
        }
        if (isCall(prev, "ppc_copy_n") && sameArg(prev.args[0], n) && sameArg(prev.args[2], dst)) {
          prev.kernel = rt::findRuntimeKernel("ppc_mul2_n");
          prev.args = {n, prev.args[1], src, dst};
          prev.note += ", " + s.note;
          continue;
        }
      }
      out.push_back(std::move(s));
    }
    body = std::move(out);
  }

  /// A data-parallel run: every top-level loop over the partitioned plate
  /// runs this process's elements, and its sums over them (the `reductions`
  /// recorded where the loop was emitted) and its ELBO terms are summed
  /// over the processes.
  void markDistributedLoops() {
    for (auto &block : p_.blocks)
      for (Stmt &s : block)
        if (s.kind == Stmt::Kind::Loop && s.plate == partitioned_) {
          s.distributed = true;
          s.parallel = true;
        }
  }

private:
  /// A nested schedule whose `local` loop ends the iteration lets the
  /// element's deeper locals live in scratch rows (and their ELBO terms be
  /// computed in that loop): the plate of that loop, if any.
  void findNestedPlate() {
    const auto &ops = m_.iterationSchedule->ops;
    if (ops.empty() || ops.back()->kind != OpKind::Local)
      return;
    nestedLocal_ = ops.back().get();
    const Value *plate = nestedLocal_->operands[0].value;
    if (plate->dims.empty())
      nestedPlate_ = plate;
  }

  bool scratchDims(const std::vector<Value *> &dims) const {
    return nestedPlate_ && dims.size() == 2 && dims[0] == nestedPlate_;
  }

  /// Stored posteriors of gate conditions start random (before the init
  /// block's statements); scratch ones are drawn where a fused loop of the
  /// init block reaches their element (emitScratchRandomInit).
  void emitRandomInit(std::vector<Stmt> &out) {
    for (size_t pi = 0; pi < p_.posteriors.size(); ++pi) {
      const Posterior &post = p_.posteriors[pi];
      if (!post.randomInit)
        continue;
      computed_.insert(int(pi));
      if (post.scratch)
        continue;
      Stmt loop;
      loop.kind = Stmt::Kind::Loop;
      loop.var = newVar();
      loop.bound = p_.intConst(post.elements);
      loop.note = "random init " + post.variable->name;
      ExprId e = p_.loopVar(loop.var);
      loop.body.push_back(randomCall(int(pi), e, e));
      out.push_back(std::move(loop));
    }
  }

  Stmt randomCall(int pi, ExprId element, ExprId row) {
    const Posterior &post = p_.posteriors[size_t(pi)];
    ExprId at = p_.mul(row, p_.intConst(post.width));
    Arg seed = exprArg(Arg::Kind::Int, p_.loadInt(p_.seedBuffer, p_.intConst(0)));
    if (p_.elementOffsets >= 0 && post.partitioned) // the element's index in the whole plate
      element = p_.add(element, p_.loadInt(p_.elementOffsets, p_.intConst(pi)));
    Arg elementArg = exprArg(Arg::Kind::Int, element);
    std::string note = "random init " + post.variable->name;
    if (post.family == Family::Bernoulli)
      return kernelCall("ppc_random_bernoulli",
                        {seed, intArg(pi), elementArg, ptrArg(post.eta, at), ptrArg(post.stats, at)}, note);
    return kernelCall("ppc_random_simplex", {intArg(post.dimension), seed, intArg(pi), elementArg,
                                             ptrArg(post.eta, at), ptrArg(post.stats, at)},
                      note);
  }

  /// At the top of an init-block loop over the nested plate's element
  /// (loop variable `var`): the element's rows of randomly initialized
  /// scratch posteriors.
  void emitScratchRandomInit(int32_t var, std::vector<Stmt> &out, SourceRange where) {
    for (size_t pi = 0; pi < p_.posteriors.size(); ++pi) {
      const Posterior &post = p_.posteriors[pi];
      if (!post.scratch || !post.randomInit)
        continue;
      const Value *inner = post.variable->dims[1];
      const PlateInfo *pl = plate(inner, where);
      if (!pl)
        return;
      Stmt loop;
      loop.kind = Stmt::Kind::Loop;
      loop.var = newVar();
      ExprId d = p_.loopVar(var), i = p_.loopVar(loop.var);
      loop.bound = pl->ragged ? p_.loadInt(pl->sizes, d) : p_.intConst(pl->size);
      ExprId element = pl->ragged ? p_.add(p_.loadInt(pl->offsets, d), i) : p_.add(p_.mul(d, p_.intConst(pl->size)), i);
      loop.body.push_back(randomCall(int(pi), element, i));
      loop.note = "random init " + post.variable->name;
      out.push_back(std::move(loop));
      computed_.insert(int(pi));
    }
  }

  // ---- errors ----
  void fail(SourceRange where, const std::string &msg) {
    if (ok_ || !diags_.hasErrors())
      diags_.error(where, msg);
    ok_ = false;
  }

  // ---- buffers ----
  int32_t addBuffer(std::string name, bool isInt, int64_t size) {
    Buffer b;
    b.name = std::move(name);
    b.isInt = isInt;
    b.size = size;
    p_.buffers.push_back(std::move(b));
    return static_cast<int32_t>(p_.buffers.size() - 1);
  }
  /// A constant buffer holding `values` (deduplicated).
  int32_t constantBuffer(const std::vector<double> &values) {
    auto it = constants_.find(values);
    if (it != constants_.end())
      return it->second;
    int32_t b = addBuffer("const." + std::to_string(constants_.size()), false, int64_t(values.size()));
    p_.buffers[b].doubles = values;
    constants_[values] = b;
    return b;
  }

  // ---- plates and flat indices ----
  struct PlateInfo {
    bool ragged = false;
    int64_t size = 0;               ///< not ragged
    int32_t sizes = -1, offsets = -1; ///< ragged: int buffers
    int64_t total = 0;              ///< ragged: elements over all parents
  };
  const PlateInfo *plate(const Value *pl, SourceRange where) {
    auto it = plates_.find(pl);
    if (it != plates_.end())
      return &it->second;
    PlateInfo info;
    auto known = ev_.plateSizes.find(pl);
    auto bound = data_.plates.find(pl);
    if (known != ev_.plateSizes.end()) {
      info.size = known->second;
    } else if (bound != data_.plates.end() && pl->dims.empty()) {
      info.size = bound->second.sizes.empty() ? 0 : bound->second.sizes[0];
    } else if (bound != data_.plates.end()) {
      info.ragged = true;
      info.sizes = addBuffer("sizes." + pl->name, true, int64_t(bound->second.sizes.size()));
      p_.buffers[info.sizes].ints = bound->second.sizes;
      info.offsets = addBuffer("offsets." + pl->name, true, int64_t(bound->second.offsets.size()));
      p_.buffers[info.offsets].ints = bound->second.offsets;
      info.total = bound->second.flattened();
    } else {
      fail(where, "plate %" + pl->name + " has no size: no data file gives its elements");
      return nullptr;
    }
    return &plates_.emplace(pl, info).first->second;
  }

  /// Elements of an array over `dims` (flattened); of a scratch posterior,
  /// the rows of the largest element.
  int64_t elementCount(const std::vector<Value *> &dims, SourceRange where, bool scratch = false) {
    if (scratch) {
      const PlateInfo *pi = plate(dims[1], where);
      if (!pi)
        return 0;
      if (!pi->ragged)
        return pi->size;
      const std::vector<int64_t> &sizes = p_.buffers[pi->sizes].ints;
      return sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
    }
    int64_t n = 1;
    for (const Value *d : dims) {
      const PlateInfo *pi = plate(d, where);
      if (!pi)
        return 0;
      n = pi->ragged ? pi->total : n * pi->size;
    }
    return n;
  }

  ExprId indexExpr(const Operand &o, const Env &env, SourceRange where) {
    if (o.kind == Operand::Kind::Int)
      return p_.intConst(o.intValue);
    if (o.isValue()) {
      auto it = env.find(o.value);
      if (it != env.end())
        return it->second;
    }
    fail(where, "cannot generate code for the index " + ir::toString(o));
    return p_.intConst(0);
  }

  /// The flat element of `v[idx...]`; of a scratch posterior, the row
  /// within the current element.
  ExprId flatIndex(const std::vector<Value *> &dims, const std::vector<Operand> &idx, const Env &env,
                   SourceRange where, bool scratch = false) {
    if (scratch) {
      if (idx.size() != 2) {
        fail(where, "internal: a scratch posterior indexed with " + std::to_string(idx.size()) + " indices");
        return p_.intConst(0);
      }
      return indexExpr(idx[1], env, where);
    }
    ExprId f = p_.intConst(0);
    for (size_t j = 0; j < dims.size() && j < idx.size(); ++j) {
      const PlateInfo *pi = plate(dims[j], where);
      if (!pi)
        return f;
      ExprId i = indexExpr(idx[j], env, where);
      if (pi->ragged) {
        if (dims[j]->dims.size() != j) {
          fail(where, "internal: plate %" + dims[j]->name + " is not nested in the plates before it");
          return f;
        }
        f = p_.add(p_.loadInt(pi->offsets, f), i);
      } else {
        f = p_.add(p_.mul(f, p_.intConst(pi->size)), i);
      }
    }
    if (idx.size() != dims.size())
      fail(where, "internal: an array over " + std::to_string(dims.size()) + " plates used with " +
                      std::to_string(idx.size()) + " indices");
    return f;
  }

  /// The number of iterations of `for %i in %P[idx]`.
  ExprId loopBound(const Op &loop, const Env &env) {
    const Operand &pl = loop.operands[0];
    const PlateInfo *pi = plate(pl.value, loop.loc);
    if (!pi)
      return p_.intConst(0);
    if (!pi->ragged)
      return p_.intConst(pi->size);
    return p_.loadInt(pi->sizes, flatIndex(pl.value->dims, pl.indices, env, loop.loc));
  }

  // ---- posteriors ----
  void collectGated(const Region &r) {
    ir::walk(r, [&](const Op &op) {
      if (op.kind == OpKind::GateExit)
        for (size_t i = 1; i < op.operands.size(); ++i)
          exitOf_[op.operands[i].value] = &op;
    });
  }

  void collectPosteriors() {
    ir::walk(*m_.messages, [&](const Op &op) {
      if (op.kind != OpKind::Marginal)
        return;
      const Value *var = op.operands[0].value;
      const Value *q = op.result();
      Posterior post;
      post.variable = var;
      auto fam = ir::familyOf(var);
      if (!fam) {
        fail(op.loc, "internal: %" + var->name + " has no family");
        return;
      }
      post.family = *fam;
      if (var->type.hasDim())
        post.dimension = dimValue(var->type.dim, op.loc);
      if (post.family == Family::Beta)
        post.dimension = 2;
      post.width = widthOf(post.family, post.dimension);
      if (post.width == 0) {
        fail(op.loc, "the code generator does not support " + std::string(familySpec(post.family).spelling.empty()
                                                                                ? "this family"
                                                                                : familySpec(post.family).spelling) +
                         " posteriors yet");
        return;
      }
      post.scratch = scratchDims(q->dims);
      post.elements = elementCount(q->dims, op.loc, post.scratch);
      post.flatElements = post.scratch ? elementCount(q->dims, op.loc) : post.elements;
      post.partitioned = partitioned_ && !q->dims.empty() && q->dims.front() == partitioned_;
      post.eta = addBuffer(q->name + ".eta", false, post.elements * post.width);
      post.stats = addBuffer(q->name + ".stats", false, post.elements * post.width);
      posteriorOfQ_[q] = int(p_.posteriors.size());
      posteriorOfVar_[var] = int(p_.posteriors.size());
      p_.posteriors.push_back(post);
    });
    // Accumulators: one per message statement, shaped like its target.
    ir::walk(*m_.messages, [&](const Op &op) {
      if (op.kind != OpKind::Msg || !op.target)
        return;
      auto it = posteriorOfQ_.find(op.target->value);
      if (it == posteriorOfQ_.end()) {
        fail(op.loc, "internal: message to a value without a posterior");
        return;
      }
      const Posterior &post = p_.posteriors[it->second];
      accOf_[op.result()] = addBuffer(op.result()->name, false, post.elements * post.width);
      if (op.evidence && randomInit_)
        p_.posteriors[it->second].randomInit = true;
    });
  }

  int64_t dimValue(const ir::Dim &d, SourceRange where) {
    if (d.isConstant())
      return d.constant;
    if (auto v = ev_.valueOf(d.value))
      return int64_t(*v);
    fail(where, "the dimension %" + d.value->name + " has no value");
    return 1;
  }

  // ---- sources ----
  Source constantSource(double v) {
    Source s;
    s.kind = Source::Constant;
    s.value = v;
    return s;
  }

  /// An operand of a message statement: a posterior, data or a constant.
  Source resolveMessageOperand(const Operand &o, const Env &env, SourceRange where) {
    if (o.isLiteral())
      return constantSource(o.literal());
    const Value *v = o.value;
    if (v->def && v->def->kind == OpKind::Marginal) {
      Source s;
      s.kind = Source::Latent;
      s.posterior = posteriorOfQ_.at(v);
      s.element = flatIndex(v->dims, o.indices, env, where, p_.posteriors[s.posterior].scratch);
      s.dimension = p_.posteriors[s.posterior].dimension;
      return s;
    }
    return resolveValue(o, env, where);
  }

  /// Data and constants (shared by messages and the gated model).
  Source resolveValue(const Operand &o, const Env &env, SourceRange where) {
    const Value *v = o.value;
    if (v->type.isRandom()) {
      auto it = data_.variables.find(v);
      if (it == data_.variables.end()) {
        fail(where, "no data for the observed variable %" + v->name + " (give a column for it with --infer)");
        return constantSource(0);
      }
      Source s;
      s.kind = Source::Data;
      s.data = v;
      s.element = flatIndex(v->dims, o.indices, env, where);
      if (v->type.hasDim())
        s.dimension = dimValue(v->type.dim, where);
      if (v->type.kind == ir::TypeKind::Bool)
        s.dimension = 2;
      return s;
    }
    if (auto val = ev_.valueOf(v); val && o.indices.empty())
      return constantSource(*val);
    fail(where, "the code generator supports only constants known before inference as factor arguments; %" + v->name +
                    " depends on a loop index");
    return constantSource(0);
  }

  /// An argument of a factor of the gated model: clones resolve to their
  /// source's posterior, per-case copies of data to the data.
  Source resolveGated(const Operand &o, const Env &env, SourceRange where) {
    if (o.isLiteral())
      return constantSource(o.literal());
    const Value *v = o.value;
    const Op *def = v->def;
    if (def && (def->kind == OpKind::GateEnter || def->kind == OpKind::GateEnterPartial ||
                def->kind == OpKind::GateEnterOne)) {
      Env inner = env;
      std::vector<Op *> loops = ir::enclosingLoops(*def);
      for (size_t j = 0; j < loops.size() && j < o.indices.size(); ++j)
        inner[loops[j]->index] = indexExpr(o.indices[j], env, where);
      // gate.enter clones: the last index is the case, not a loop index.
      return resolveGated(def->operands[1], inner, where);
    }
    if (def && def->observed) {
      // Up the chain of gate.exit merges to the variable the data binds.
      auto exit = exitOf_.find(v);
      if (exit != exitOf_.end()) {
        std::vector<Op *> loops = ir::enclosingLoops(*exit->second);
        std::vector<Operand> idx(o.indices.begin(), o.indices.begin() + std::min(o.indices.size(), loops.size()));
        return resolveGated(Operand::ofValue(exit->second->result(), idx), env, where);
      }
      return resolveValue(o, env, where);
    }
    if (def && def->isRandom()) {
      auto it = posteriorOfVar_.find(v);
      if (it == posteriorOfVar_.end()) {
        fail(where, "internal: %" + v->name + " has no posterior");
        return constantSource(0);
      }
      Source s;
      s.kind = Source::Latent;
      s.posterior = it->second;
      s.element = flatIndex(v->dims, o.indices, env, where, p_.posteriors[s.posterior].scratch);
      s.dimension = p_.posteriors[s.posterior].dimension;
      return s;
    }
    return resolveValue(o, env, where);
  }

  // ---- kernel calls ----
  /// The statistics of a constant as the parent of parameter `param` of a
  /// `family` factor (point mass: the constant operators). A vector
  /// constant is c in each of `dimension` components, a matrix one c I.
  std::vector<double> pointMass(Family family, int param, double c, int64_t dimension) {
    const FamilySpec &fs = familySpec(family);
    Family parent = fs.params[param - 1].parents.empty() ? Family::Gaussian : fs.params[param - 1].parents[0];
    const size_t D = size_t(dimension);
    switch (parent) {
    case Family::Gamma: return {c, std::log(c)};
    case Family::Gaussian: return {c, c * c};
    case Family::Beta: return {std::log(c), std::log1p(-c)};
    case Family::MvGaussian: { // (E x, E x x^T)
      std::vector<double> s(D, c);
      s.resize(D + D * D, c * c);
      return s;
    }
    case Family::Wishart: { // (E L, E log|L|)
      std::vector<double> s(D * D + 1, 0.0);
      for (size_t i = 0; i < D; ++i)
        s[i * D + i] = c;
      s[D * D] = double(dimension) * std::log(c);
      return s;
    }
    default: return {c};
    }
  }

  /// A row with weight c stands for c copies of its plate element (bag of
  /// words): every term of the element is counted c times, except messages
  /// to variables of the element itself (the copies share their posterior).
  /// Returns the weight expression for a statement over `loops`, or kNoExpr.
  ExprId replication(const std::vector<Op *> &loops, const Env &env, const Operand *target, SourceRange where) {
    ExprId w = kNoExpr;
    std::set<const Value *> seen;
    for (const auto &[v, bv] : data_.variables) {
      if (bv.weights.empty() || v->dims.empty() || !seen.insert(v->dims.back()).second)
        continue;
      const std::vector<Value *> &dims = v->dims;
      if (loops.size() < dims.size())
        continue;
      bool over = true;
      for (size_t j = 0; j < dims.size() && over; ++j)
        over = loops[j]->operands[0].value == dims[j];
      if (!over || (target && usesIndex(*target, loops[dims.size() - 1]->index)))
        continue;
      std::vector<Operand> idx;
      for (size_t j = 0; j < dims.size(); ++j)
        idx.push_back(Operand::ofValue(loops[j]->index));
      ExprId c = p_.loadDouble(dataBuffer(v, Data::Weight), flatIndex(dims, idx, env, where));
      w = w == kNoExpr ? c : p_.mulDouble(w, c);
    }
    return w;
  }

  ExprId times(ExprId a, ExprId b) {
    if (a == kNoExpr)
      return b;
    if (b == kNoExpr)
      return a;
    return p_.mulDouble(a, b);
  }

  enum class Data { Double, Int, Weight };
  int32_t dataBuffer(const Value *v, Data kind) {
    auto key = std::make_pair(v, int(kind));
    auto it = dataBuffers_.find(key);
    if (it != dataBuffers_.end())
      return it->second;
    const rt::BoundVariable &bv = data_.variables.at(v);
    int32_t b = -1;
    switch (kind) {
    case Data::Double:
      b = addBuffer("data." + v->name, false, int64_t(bv.values.size()));
      p_.buffers[b].doubles = bv.values;
      break;
    case Data::Int:
      b = addBuffer("data." + v->name + ".int", true, int64_t(bv.values.size()));
      p_.buffers[b].ints.reserve(bv.values.size());
      for (double x : bv.values)
        p_.buffers[b].ints.push_back(static_cast<int64_t>(x));
      break;
    case Data::Weight:
      b = addBuffer("data." + v->name + ".weight", false, int64_t(bv.weights.size()));
      p_.buffers[b].doubles = bv.weights;
      break;
    }
    dataBuffers_[key] = b;
    return b;
  }

  /// Builds the call of `kernel` with the factor's arguments `args` (indexed
  /// by argument, nullopt for the target), the gate weight, and the
  /// destination row (messages).
  std::optional<Stmt> marshal(std::string_view kernel, const KernelRole &role,
                              const std::vector<std::optional<Source>> &args, ExprId gateWeight, ExprId repl,
                              std::optional<std::pair<int32_t, ExprId>> dst, SourceRange where,
                              bool *replUsed = nullptr) {
    if (replUsed)
      *replUsed = false;
    const rt::RuntimeSymbol *sym = rt::findRuntimeKernel(kernel);
    const Pattern *pat = findPattern(kernel);
    if (!sym || !pat) {
      fail(where, "the code generator has no calling pattern for kernel " + std::string(kernel));
      return std::nullopt;
    }
    Stmt call;
    call.kind = Stmt::Kind::Call;
    call.kernel = sym;
    auto argOf = [&](char digit) -> const Source * {
      size_t i = size_t(digit - '0');
      if (i >= args.size() || !args[i]) {
        fail(where, "internal: kernel " + std::string(kernel) + " reads argument " + std::to_string(i) +
                        ", which the statement does not have");
        return nullptr;
      }
      return &*args[i];
    };
    auto dimensionOf = [&](char digit) -> int64_t {
      size_t i = size_t(digit - '0');
      if (i < args.size() && args[i])
        return args[i]->dimension;
      if (role.kind == KernelRole::Message && int(i) == role.target && dst)
        return targetDimension_;
      fail(where, "internal: no dimension for argument " + std::to_string(i) + " of " + std::string(kernel));
      return 1;
    };
    std::istringstream in{std::string(pat->tokens)};
    std::string tok;
    while (in >> tok && ok_) {
      Arg a;
      char c = tok[0];
      switch (c) {
      case '1':
        a.kind = Arg::Kind::Int;
        a.expr = p_.intConst(1);
        break;
      case '0':
        a.kind = Arg::Kind::Null;
        break;
      case 'D':
        a.kind = Arg::Kind::Int;
        a.expr = p_.intConst(dimensionOf(tok[1]));
        break;
      case 'w':
        a.kind = Arg::Kind::Double;
        a.expr = times(gateWeight, repl) == kNoExpr ? p_.doubleConst(1) : times(gateWeight, repl);
        break;
      case 'd':
        a.kind = Arg::Kind::Pointer;
        a.buffer = dst->first;
        a.expr = dst->second;
        break;
      case 'W': {
        ExprId w = role.kind == KernelRole::Message ? times(gateWeight, repl) : repl;
        if (replUsed)
          *replUsed = true;
        if (w == kNoExpr) {
          a.kind = Arg::Kind::Null;
        } else {
          a.kind = Arg::Kind::TempPointer;
          a.expr = w;
        }
        break;
      }
      default: {
        const Source *s = argOf(tok[1]);
        if (!s)
          return std::nullopt;
        int argIndex = tok[1] - '0';
        if (c == 'S' || c == 'N') {
          if (s->kind == Source::Latent) {
            const Posterior &post = p_.posteriors[s->posterior];
            a.kind = Arg::Kind::Pointer;
            a.buffer = c == 'S' ? post.stats : post.eta;
            a.expr = p_.mul(s->element, p_.intConst(post.width));
            noteRead(s->posterior, where);
          } else if (s->kind == Source::Constant && c == 'S' && argIndex > 0) {
            a.kind = Arg::Kind::Pointer;
            a.buffer = constantBuffer(pointMass(role.family, argIndex, s->value, dimensionOf('0')));
            a.expr = p_.intConst(0);
          } else {
            fail(where, "the code generator cannot pass " + std::string(s->kind == Source::Data ? "data" : "a constant") +
                            " as argument " + std::to_string(argIndex) + " of " + std::string(kernel));
            return std::nullopt;
          }
        } else if (c == 'V') {
          a.kind = Arg::Kind::Double;
          if (s->kind == Source::Constant) {
            a.expr = p_.doubleConst(s->value);
          } else if (s->kind == Source::Latent) {
            const Posterior &post = p_.posteriors[s->posterior];
            a.expr = p_.loadDouble(post.stats, p_.mul(s->element, p_.intConst(post.width)));
            noteRead(s->posterior, where);
          } else {
            a.expr = p_.loadDouble(dataBuffer(s->data, Data::Double), s->element);
          }
        } else if (c == 'X' || c == 'I') {
          if (s->kind != Source::Data) {
            fail(where, "internal: kernel " + std::string(kernel) + " expects data for argument " +
                            std::to_string(argIndex));
            return std::nullopt;
          }
          a.kind = Arg::Kind::Pointer;
          a.buffer = dataBuffer(s->data, c == 'X' ? Data::Double : Data::Int);
          a.expr = s->element;
          if (s->data->type.kind == ir::TypeKind::Vector) // a row of `dimension` components
            a.expr = p_.mul(s->element, p_.intConst(s->dimension));
        } else if (c == 'C') { // a constant's value
          if (s->kind != Source::Constant) {
            fail(where, "internal: kernel " + std::string(kernel) + " expects a constant for argument " +
                            std::to_string(argIndex));
            return std::nullopt;
          }
          a.kind = Arg::Kind::Double;
          a.expr = p_.doubleConst(s->value);
        } else if (c == 'A') {
          if (s->kind != Source::Constant) {
            fail(where, "internal: kernel " + std::string(kernel) + " expects a constant for argument " +
                            std::to_string(argIndex));
            return std::nullopt;
          }
          a.kind = Arg::Kind::Pointer;
          a.buffer = constantBuffer(std::vector<double>(size_t(dimensionOf('0')), s->value));
          a.expr = p_.intConst(0);
        } else {
          fail(where, "internal: bad calling pattern token " + tok);
          return std::nullopt;
        }
      }
      }
      call.args.push_back(a);
    }
    // The pattern must match the kernel's C signature.
    std::string_view sig = sym->signature.substr(1);
    bool match = sig.size() == call.args.size();
    for (size_t i = 0; match && i < sig.size(); ++i) {
      Arg::Kind k = call.args[i].kind;
      char want = k == Arg::Kind::Int ? 'l' : k == Arg::Kind::Double ? 'd' : 'p';
      match = sig[i] == want;
    }
    if (!match) {
      fail(where, "internal: calling pattern of " + std::string(kernel) + " does not match its signature " +
                      std::string(sym->signature));
      return std::nullopt;
    }
    return call;
  }

  // Reads of posteriors never computed are schedule bugs.
  void noteRead(int posterior, SourceRange where) {
    if (checkReads_)
      initRead_.insert(posterior);
    if (!checkReads_ || computed_.count(posterior))
      return;
    fail(where, "internal: the schedule reads %" + p_.posteriors[posterior].variable->name +
                    ".q before computing it");
  }

  /// The product of the case probabilities of `gates` (`when %c.q[..] case k`).
  ExprId gateWeight(const std::vector<std::pair<Source, ExprId>> &gates) {
    ExprId w = kNoExpr;
    for (const auto &[cond, k] : gates) {
      const Posterior &post = p_.posteriors[cond.posterior];
      noteRead(cond.posterior, {});
      ExprId row = p_.mul(cond.element, p_.intConst(post.width));
      ExprId q;
      if (post.family == Family::Bernoulli) {
        // q(c = k) = k p + (1 - k)(1 - p)
        ExprId pr = p_.loadDouble(post.stats, row);
        ExprId one = p_.doubleConst(1);
        if (auto kc = p_.constantOf(k)) {
          q = *kc == 1 ? pr : p_.subDouble(one, pr);
        } else {
          ExprId kd = p_.intToDouble(k);
          q = p_.addDouble(p_.mulDouble(kd, pr), p_.mulDouble(p_.subDouble(one, kd), p_.subDouble(one, pr)));
        }
      } else {
        q = p_.loadDouble(post.stats, p_.add(row, k));
      }
      w = w == kNoExpr ? q : p_.mulDouble(w, q);
    }
    return w;
  }

  // ---- schedules ----
  struct Level {
    const Value *plate;
    int32_t var;
  };
  struct Context {
    std::vector<Level> levels;
    /// Reductions across an enclosing fuse/local: statement -> the update op
    /// that computes it (the last in the loop body); others are skipped.
    std::map<const Op *, const Op *> reductionAt;
  };

  static const Op *statementOf(const Op &update) { return update.operands[0].value->def; }

  /// Binds the statement's outer loops to the context's loop variables.
  bool bindContext(const Op &stmt, const std::vector<Op *> &loops, const Context &ctx, Env &env) {
    if (loops.size() < ctx.levels.size()) {
      fail(stmt.loc, "internal: a statement inside a fused loop over %" + ctx.levels.back().plate->name +
                         " does not iterate it");
      return false;
    }
    for (size_t j = 0; j < ctx.levels.size(); ++j) {
      if (loops[j]->operands[0].value != ctx.levels[j].plate) {
        fail(stmt.loc, "internal: statement loop over %" + loops[j]->operands[0].value->name +
                           " where the fused loop iterates %" + ctx.levels[j].plate->name);
        return false;
      }
      env[loops[j]->index] = p_.loopVar(ctx.levels[j].var);
    }
    return true;
  }

  int32_t newVar() { return p_.loopVars++; }

  /// Emits `loops[from..]` around `inner`, appending to `out`.
  void emitNest(const std::vector<Op *> &loops, size_t from, Env &env, std::vector<Stmt> &out,
                const std::function<void(Env &, std::vector<Stmt> &)> &inner) {
    if (from == loops.size()) {
      inner(env, out);
      return;
    }
    Stmt loop;
    loop.kind = Stmt::Kind::Loop;
    loop.var = newVar();
    loop.bound = loopBound(*loops[from], env);
    loop.plate = loops[from]->operands[0].value;
    env[loops[from]->index] = p_.loopVar(loop.var);
    emitNest(loops, from + 1, env, loop.body, inner);
    out.push_back(std::move(loop));
  }

  static bool usesIndex(const Operand &o, const Value *index) {
    if (o.isValue() && o.value == index)
      return true;
    for (const Operand &i : o.indices)
      if (usesIndex(i, index))
        return true;
    return false;
  }

  /// Zeroes the accumulator rows a message statement writes, iterating the
  /// statement's loops from `from` on that its target depends on.
  void emitZeroTargets(const Op &msg, const std::vector<Op *> &loops, size_t from, Env env, std::vector<Stmt> &out) {
    std::vector<Op *> used;
    for (size_t j = from; j < loops.size(); ++j) {
      bool uses = usesIndex(*msg.target, loops[j]->index);
      if (uses) {
        used.push_back(loops[j]);
      }
    }
    // A loop the target depends on must not have a range that depends on a skipped loop.
    std::set<const Value *> skipped;
    for (size_t j = from; j < loops.size(); ++j)
      if (std::find(used.begin(), used.end(), loops[j]) == used.end())
        skipped.insert(loops[j]->index);
    for (Op *l : used)
      for (const Operand &i : l->operands[0].indices)
        for (const Value *s : skipped)
          if (usesIndex(i, s)) {
            fail(msg.loc, "internal: cannot reset the accumulator of %" + msg.result()->name);
            return;
          }
    if (sharedAcc_.count(&msg))
      return; // multiplies into the first message's accumulator, reset there
    int32_t acc = accOf_.at(msg.result());
    const Posterior &post = p_.posteriors[posteriorOfQ_.at(msg.target->value)];
    if (transposed_.count(&msg)) {
      if (used.size() != 1 || used[0] != loops.back()) {
        fail(msg.loc, "internal: a partial reset of the transposed accumulator of %" + msg.result()->name);
        return;
      }
      Stmt z;
      z.kind = Stmt::Kind::Zero;
      z.buffer = acc;
      z.index = p_.intConst(0);
      z.count = post.elements * post.width;
      z.note = "reset " + msg.result()->name + " (datum-major)";
      out.push_back(std::move(z));
      return;
    }
    bool product = productForm_.count(&msg) > 0;
    emitNest(used, 0, env, out, [&](Env &e, std::vector<Stmt> &body) {
      ExprId at = p_.mul(flatIndex(msg.target->value->dims, msg.target->indices, e, msg.loc, post.scratch),
                         p_.intConst(post.width));
      if (product) { // the product's identity
        body.push_back(kernelCall("ppc_fill", {intArg(post.width), doubleArg(1.0), ptrArg(acc, at)},
                                  "reset " + msg.result()->name + " (product form)"));
        return;
      }
      Stmt z;
      z.kind = Stmt::Kind::Zero;
      z.buffer = acc;
      z.index = at;
      z.count = post.width;
      z.note = "reset " + msg.result()->name;
      body.push_back(std::move(z));
    });
  }

  void emitSchedule(const Region &r, std::vector<Stmt> &out, Context &ctx) {
    for (const auto &op : r.ops) {
      if (!ok_)
        return;
      if (ctx.levels.empty()) {
        for (int pi : columnReaders_[op.get()])
          emitColumnRefresh(pi, out);
        for (int pi : statsTReaders_[op.get()]) {
          const Posterior &post = p_.posteriors[size_t(pi)];
          out.push_back(kernelCall("ppc_transpose",
                                   {intArg(post.elements), intArg(post.width), ptrArg(post.stats, p_.intConst(0)),
                                    ptrArg(post.statsT, p_.intConst(0))},
                                   post.variable->name + "'s statistics, datum-major"));
        }
      }
      switch (op->kind) {
      case OpKind::Update: emitUpdate(*op, out, ctx); break;
      case OpKind::Fuse:
      case OpKind::Local: emitFused(*op, out, ctx); break;
      default: fail(op->loc, "internal: unexpected op in a schedule");
      }
    }
  }

  // ---- categorical posteriors in the exponential domain ----
  //
  // q(z) = normalize(prod_j exp(m_j)). Where every message to a categorical
  // marginal is a row of a Dirichlet parent's E log statistics (the parent
  // of z) or one entry of such a row picked by data (an observed child that
  // z selects the row of), the exponentials come from tables refreshed with
  // the parents and the marginal costs K products instead of K exponentials.
  // Decided per top-level schedule statement, before any code is emitted:
  // the marginal and all its messages must be updated in that statement, and
  // a parent read through a column table must not be (its table is refreshed
  // when the statement starts).
  enum class Linear { None, Row, Entry };
  Linear linearForm(const Op &msg) {
    if (!msg.gates.empty())
      return Linear::None;
    auto dirichletParent = [&](const Operand &o) {
      auto it = o.isValue() ? posteriorOfQ_.find(o.value) : posteriorOfQ_.end();
      return it != posteriorOfQ_.end() && p_.posteriors[size_t(it->second)].family == Family::Dirichlet;
    };
    // One factor per row of the target: a sum over a loop the target does
    // not depend on (a document's words into its cluster) would be a product
    // of many factors, which can underflow; those stay in the log domain.
    auto oneFactorPerRow = [&](size_t skipInner) {
      std::vector<Op *> loops = ir::enclosingLoops(msg);
      for (size_t j = 0; j + skipInner < loops.size(); ++j)
        if (!usesIndex(*msg.target, loops[j]->index))
          return false;
      return true;
    };
    if (!msg.evidence && msg.kernel == "ppc_categorical_sample_avglog" && msg.operands.size() == 1 &&
        dirichletParent(msg.operands[0]) && oneFactorPerRow(0))
      return Linear::Row;
    if (entryEvidence(msg))
      return oneFactorPerRow(1) ? Linear::Entry : Linear::None;
    return Linear::None;
  }

  /// An observed categorical's evidence to the case of its gate, the case
  /// loop innermost and picking the Dirichlet parent's row and nothing else
  /// (LDA's and the mixture of unigrams' tokens): for all cases at once,
  /// one datum's row of the parent's datum-major table.
  bool entryEvidence(const Op &msg) const {
    if (!msg.gates.empty() || !msg.evidence || msg.kernel != "ppc_categorical_avglogfactor_obs_n" ||
        msg.operands.size() != 2 || !msg.operands[1].isValue() || msg.operands[1].value->dims.size() != 1)
      return false;
    auto parentQ = posteriorOfQ_.find(msg.operands[1].value);
    if (parentQ == posteriorOfQ_.end() || p_.posteriors[size_t(parentQ->second)].family != Family::Dirichlet)
      return false;
    std::vector<Op *> loops = ir::enclosingLoops(msg);
    const Operand &parent = msg.operands[1];
    return !loops.empty() && msg.targetCase && msg.targetCase->isValue() &&
           msg.targetCase->value == loops.back()->index && parent.indices.size() == 1 &&
           parent.indices[0].isValue() && parent.indices[0].value == loops.back()->index &&
           !usesIndex(msg.operands[0], loops.back()->index) && !usesIndex(*msg.target, loops.back()->index);
  }

  /// A message to a Dirichlet row picked by the case of a gate, from an
  /// observed categorical (LDA: a token's count to topic k's word x), for
  /// every case: the accumulator is kept transposed (datum-major), so that
  /// one token adds its weighted case probabilities to one contiguous row.
  bool scatterForm(const Op &msg) {
    if (msg.evidence || msg.kernel != "ppc_categorical_probs_avglog_obs_n" || msg.operands.size() != 1 ||
        msg.gates.size() != 1 || !msg.target)
      return false;
    std::vector<Op *> loops = ir::enclosingLoops(msg);
    if (loops.empty())
      return false;
    const Value *k = loops.back()->index;
    const Operand &target = *msg.target;
    const auto &[cond, kase] = msg.gates[0];
    auto it = posteriorOfQ_.find(target.value);
    auto ct = cond.isValue() ? posteriorOfQ_.find(cond.value) : posteriorOfQ_.end();
    return it != posteriorOfQ_.end() && ct != posteriorOfQ_.end() && target.value->dims.size() == 1 &&
           target.indices.size() == 1 && target.indices[0].isValue() && target.indices[0].value == k &&
           kase.isValue() && kase.value == k && !usesIndex(cond, k) && !usesIndex(msg.operands[0], k) &&
           p_.posteriors[size_t(ct->second)].family == Family::Categorical &&
           p_.posteriors[size_t(ct->second)].width == p_.posteriors[size_t(it->second)].elements;
  }

  /// Entry evidence that stays in the log domain (not one factor per row:
  /// a document's words into its cluster) still takes all cases at once:
  /// w * (the parent's datum-major statistics at the datum), one axpy per
  /// datum instead of a strided read per case, from a copy refreshed before
  /// each top-level statement that reads it (which must not also update
  /// the parent).
  void planLogEntries() {
    const Region *schedules[] = {m_.initSchedule.get(), m_.iterationSchedule.get(), m_.finalSchedule.get()};
    std::set<const Op *> refused;
    std::map<const Op *, std::vector<std::pair<const Op *, int>>> readersOf; // top -> (message, parent)
    for (const Region *r : schedules) {
      if (!r)
        continue;
      for (const auto &top : r->ops) {
        std::vector<const Op *> updates;
        std::set<const Op *> unused;
        if (top->kind == OpKind::Update)
          updates.push_back(top.get());
        else
          for (const auto &region : top->regions)
            collectUpdates(*region, updates, false, unused);
        std::set<int> written;
        std::vector<const Op *> messages;
        for (const Op *u : updates) {
          const Op *st = statementOf(*u);
          if (st->kind == OpKind::Marginal)
            written.insert(posteriorOfQ_.at(st->result()));
          else if (st->kind == OpKind::Msg && entryEvidence(*st) && !productForm_.count(st))
            messages.push_back(st);
        }
        for (const Op *msg : messages) {
          int parent = posteriorOfQ_.at(msg->operands[1].value);
          auto target = msg->target && msg->target->isValue() ? posteriorOfQ_.find(msg->target->value)
                                                               : posteriorOfQ_.end();
          if (written.count(parent) || target == posteriorOfQ_.end() ||
              p_.posteriors[size_t(target->second)].width != p_.posteriors[size_t(parent)].elements)
            refused.insert(msg);
          else
            readersOf[top.get()].emplace_back(msg, parent);
        }
      }
    }
    for (const auto &[top, readers] : readersOf)
      for (const auto &[msg, parent] : readers) {
        if (refused.count(msg))
          continue;
        logEntry_.insert(msg);
        Posterior &pp = p_.posteriors[size_t(parent)];
        if (pp.statsT < 0)
          pp.statsT = addBuffer(pp.variable->name + ".q.stats.bydatum", false, pp.elements * pp.width);
        auto &list = statsTReaders_[top];
        if (std::find(list.begin(), list.end(), parent) == list.end())
          list.push_back(parent);
      }
  }

  void planProductForms() {
    ir::walk(*m_.messages, [&](const Op &msg) {
      if (msg.kind == OpKind::Msg && scatterForm(msg))
        transposed_.insert(&msg);
    });
    const Region *schedules[] = {m_.initSchedule.get(), m_.iterationSchedule.get(), m_.finalSchedule.get()};
    for (const Region *r : schedules) {
      if (!r)
        continue;
      for (const auto &top : r->ops) {
        std::vector<const Op *> updates;
        std::set<const Op *> unused;
        if (top->kind == OpKind::Update)
          updates.push_back(top.get());
        else
          for (const auto &region : top->regions)
            collectUpdates(*region, updates, false, unused);
        std::set<const Op *> stmts;
        std::set<int> written;
        for (const Op *u : updates) {
          const Op *st = statementOf(*u);
          stmts.insert(st);
          if (st->kind == OpKind::Marginal)
            written.insert(posteriorOfQ_.at(st->result()));
        }
        for (const Op *st : stmts) {
          if (st->kind != OpKind::Marginal)
            continue;
          const Posterior &post = p_.posteriors[size_t(posteriorOfQ_.at(st->result()))];
          if (post.family != Family::Categorical || st->operands.size() < 2)
            continue;
          bool ok = true;
          for (size_t i = 1; i < st->operands.size() && ok; ++i) {
            const Op *msg = st->operands[i].value->def;
            Linear form = linearForm(*msg);
            ok = stmts.count(msg) && form != Linear::None;
            if (ok && form == Linear::Entry)
              ok = !written.count(posteriorOfQ_.at(msg->operands[1].value));
          }
          if (!ok)
            continue;
          productForm_.insert(st);
          shareProductAccumulator(*st, updates);
          for (size_t i = 1; i < st->operands.size(); ++i) {
            const Op *msg = st->operands[i].value->def;
            productForm_.insert(msg);
            if (linearForm(*msg) == Linear::Row) {
              int src = posteriorOfQ_.at(msg->operands[0].value);
              Posterior &pp = p_.posteriors[size_t(src)];
              if (pp.expRows < 0) {
                pp.expRows = addBuffer(msg->operands[0].value->name + ".exp", false, pp.elements * pp.width);
                pp.expRowShifts = addBuffer(msg->operands[0].value->name + ".exp.shift", false, pp.elements);
              }
            } else {
              int src = posteriorOfQ_.at(msg->operands[1].value);
              Posterior &pp = p_.posteriors[size_t(src)];
              if (pp.expColumns < 0) {
                pp.expColumns =
                    addBuffer(msg->operands[1].value->name + ".expcols", false, pp.elements * pp.width);
                pp.expColumnShifts = addBuffer(msg->operands[1].value->name + ".expcols.shift", false, pp.width);
              }
              auto &readers = columnReaders_[top.get()];
              if (std::find(readers.begin(), readers.end(), src) == readers.end())
                readers.push_back(src);
            }
          }
        }
      }
    }
  }

  /// A categorical z (rows of one element of the nested plate) updated in
  /// product form in the nested local loop's `then` region (the refresh
  /// after the local sweeps, passes/GlobalLocal.cpp) is at its optimum given
  /// its neighbours when the element's ELBO terms are evaluated. Then z's
  /// entropy plus the expected log factors z is in equal z's log normalizer:
  /// each such factor is linear in z's indicator and its message to z is
  /// the table row just multiplied in. The ELBO takes that one number per z
  /// (and the tables' shifts) instead of K logarithms and three passes over
  /// K. z qualifies when the factors it is in are its own and observed ones
  /// under its cases (`when z case k`).
  void planCollapsedElbo() {
    if (!nestedLocal_ || nestedLocal_->regions.size() < 2)
      return;
    std::vector<const Op *> updates;
    std::set<const Op *> unused;
    collectUpdates(*nestedLocal_->regions[1], updates, false, unused);
    std::map<const Op *, int> count;
    for (const Op *u : updates)
      if (statementOf(*u)->kind == OpKind::Marginal)
        ++count[statementOf(*u)];
    for (const auto &[marg, n] : count) {
      int pi = posteriorOfQ_.at(marg->result());
      const Posterior &post = p_.posteriors[size_t(pi)];
      if (n == 1 && post.family == Family::Categorical && post.scratch && productForm_.count(marg) &&
          onlyLinearFactors(post.variable))
        collapsed_.insert(pi);
    }
  }

  /// Every factor that uses z is z's own or an observed one under z's cases.
  bool onlyLinearFactors(const Value *z) const {
    bool ok = true;
    ir::walk(m_.body, [&](const Op &op) {
      if (!op.isRandom() || op.result() == z)
        return;
      bool underCases = false;
      for (const Op *p = op.parentOp(); p && !underCases; p = p->parentOp())
        underCases = p->kind == OpKind::When && p->operands[0].isValue() && p->operands[0].value->def &&
                     p->operands[0].value->def->operands[0].value == z;
      if (underCases) {
        ok = ok && op.observed;
        return;
      }
      for (const Operand &o : op.operands)
        ok = ok && !usesIndex(o, z);
    });
    return ok;
  }

  /// When each message of a product-form marginal is updated once before
  /// each update of the marginal (in the same order each time), the
  /// messages multiply into one accumulator (the first updated's): one
  /// reset and no products of accumulators per token.
  void shareProductAccumulator(const Op &marginal, const std::vector<const Op *> &updates) {
    std::set<const Op *> messages;
    for (size_t i = 1; i < marginal.operands.size(); ++i)
      messages.insert(marginal.operands[i].value->def);
    std::vector<const Op *> order, since;
    bool ok = true, seen = false;
    for (const Op *u : updates) {
      const Op *st = statementOf(*u);
      if (st == &marginal) {
        std::set<const Op *> distinct(since.begin(), since.end());
        ok = ok && since.size() == messages.size() && distinct.size() == since.size() && (!seen || since == order);
        order = since;
        since.clear();
        seen = true;
      } else if (messages.count(st)) {
        since.push_back(st);
      }
    }
    if (!ok || !seen || !since.empty() || order.empty())
      return;
    int32_t lead = accOf_.at(order[0]->result());
    for (size_t i = 1; i < order.size(); ++i)
      sharedAcc_[order[i]] = lead;
    sharedAcc_[&marginal] = lead;
  }

  /// The datum-major exponential table, in blocks of columns that a
  /// parallel loop shares among the threads (LDA: 10473 words).
  void emitColumnRefresh(int pi, std::vector<Stmt> &out) {
    constexpr int64_t kColumns = 512;
    const Posterior &post = p_.posteriors[size_t(pi)];
    const int64_t blocks = (post.width + kColumns - 1) / kColumns;
    Stmt loop;
    loop.kind = Stmt::Kind::Loop;
    loop.var = newVar();
    loop.bound = p_.intConst(blocks);
    loop.parallel = blocks > 1;
    ExprId begin = p_.mul(p_.loopVar(loop.var), p_.intConst(kColumns));
    Stmt call = kernelCall("ppc_exp_shifted_transposed",
                           {intArg(post.elements), intArg(post.width), exprArg(Arg::Kind::Int, begin),
                            intArg(blocks > 1 ? kColumns : post.width), ptrArg(post.stats, p_.intConst(0)),
                            ptrArg(post.expColumns, p_.intConst(0)), ptrArg(post.expColumnShifts, p_.intConst(0))},
                           "exp of " + post.variable->name + "'s statistics, by datum");
    if (blocks <= 1) {
      call.args[2] = intArg(0);
      out.push_back(std::move(call));
      return;
    }
    loop.body.push_back(std::move(call));
    out.push_back(std::move(loop));
  }

  /// A product-form message: its accumulator row times the parent's row
  /// table (Row), or its case slot times the table entry at the datum
  /// (Entry: the usual kernel reads the table instead of the statistics).
  void emitProductMessage(const Op &msg, Env &env, std::vector<Stmt> &out) {
    int target = posteriorOfQ_.at(msg.target->value);
    const Posterior &post = p_.posteriors[size_t(target)];
    ExprId row = p_.mul(flatIndex(msg.target->value->dims, msg.target->indices, env, msg.loc, post.scratch),
                        p_.intConst(post.width));
    auto shared = sharedAcc_.find(&msg);
    int32_t acc = shared != sharedAcc_.end() ? shared->second : accOf_.at(msg.result());
    if (linearForm(msg) == Linear::Row) {
      Source parent = resolveMessageOperand(msg.operands[0], env, msg.loc);
      const Posterior &pp = p_.posteriors[size_t(parent.posterior)];
      noteRead(parent.posterior, msg.loc);
      out.push_back(kernelCall("ppc_mul_n",
                               {intArg(post.width), ptrArg(pp.expRows, p_.mul(parent.element, p_.intConst(pp.width))),
                                ptrArg(acc, row)},
                               msg.result()->name + " (product form)"));
      addProductShift(msg.target->value, p_.loadDouble(pp.expRowShifts, parent.element));
      return;
    }
    // Entry: the accumulator row times the datum's row of the transposed table.
    Source datum = resolveMessageOperand(msg.operands[0], env, msg.loc);
    const Posterior &pp = p_.posteriors[size_t(posteriorOfQ_.at(msg.operands[1].value))];
    noteRead(posteriorOfQ_.at(msg.operands[1].value), msg.loc);
    if (datum.kind != Source::Data || pp.elements != post.width) {
      fail(msg.loc, "internal: a product-form evidence message without a datum");
      return;
    }
    ExprId x = p_.loadInt(dataBuffer(datum.data, Data::Int), datum.element);
    out.push_back(kernelCall("ppc_mul_n",
                             {intArg(post.width), ptrArg(pp.expColumns, p_.mul(x, p_.intConst(pp.elements))),
                              ptrArg(acc, row)},
                             msg.result()->name + " (product form)"));
    addProductShift(msg.target->value, p_.loadDouble(pp.expColumnShifts, x));
  }

  /// The shifts of the tables the product of q's messages reads, summed
  /// until the marginal that normalizes the product takes them.
  void addProductShift(const Value *q, ExprId shift) {
    auto [it, fresh] = productShift_.emplace(q, shift);
    if (!fresh)
      it->second = p_.addDouble(it->second, shift);
  }

  /// acc[x][k] += w q(z = k) for all cases k at once (scatterForm).
  void emitTransposedScatter(const Op &msg, Env &env, std::vector<Stmt> &out) {
    const Posterior &post = p_.posteriors[size_t(posteriorOfQ_.at(msg.target->value))];
    Source datum = resolveMessageOperand(msg.operands[0], env, msg.loc);
    Source cond = resolveMessageOperand(msg.gates[0].first, env, msg.loc);
    if (!ok_ || datum.kind != Source::Data || cond.kind != Source::Latent) {
      fail(msg.loc, "internal: a datum-major message without a datum or a condition");
      return;
    }
    noteRead(cond.posterior, msg.loc);
    const Posterior &z = p_.posteriors[size_t(cond.posterior)];
    ExprId w = replication(ir::enclosingLoops(msg), env, &*msg.target, msg.loc);
    ExprId x = p_.loadInt(dataBuffer(datum.data, Data::Int), datum.element);
    Stmt c = kernelCall("ppc_axpy",
                        {intArg(post.elements), exprArg(Arg::Kind::Double, w == kNoExpr ? p_.doubleConst(1) : w),
                         ptrArg(z.stats, p_.mul(cond.element, p_.intConst(z.width))),
                         ptrArg(accOf_.at(msg.result()), p_.mul(x, p_.intConst(post.elements)))});
    c.note = msg.result()->name + " (datum-major)";
    out.push_back(std::move(c));
  }

  void emitUpdate(const Op &update, std::vector<Stmt> &out, Context &ctx) {
    const Op *stmt = statementOf(update);
    if (!stmt) {
      fail(update.loc, "internal: update of a value without a statement");
      return;
    }
    if (block_ == Plan::Final && touchesScratch(*stmt)) {
      skippedFinal_.insert(stmt); // per-element rows, not outputs: nothing to refresh
      return;
    }
    auto red = ctx.reductionAt.find(stmt);
    if (red != ctx.reductionAt.end() && red->second != &update)
      return; // computed once, at its last update in the fused loop
    std::vector<Op *> loops = ir::enclosingLoops(*stmt);
    Env env;
    if (!bindContext(*stmt, loops, ctx, env))
      return;
    if (stmt->kind == OpKind::Marginal)
      emitMarginal(*stmt, loops, env, out, ctx.levels.size());
    else if (stmt->kind == OpKind::Msg)
      emitMessage(*stmt, loops, env, out, ctx.levels.size(), red != ctx.reductionAt.end());
    else
      fail(stmt->loc, "internal: update of something that is not a statement");
  }

  /// The statement reads or writes a scratch posterior (or, for a marginal,
  /// sums a message the final block skipped).
  bool touchesScratch(const Op &stmt) {
    auto scratchQ = [&](const Operand &o) {
      if (!o.isValue())
        return false;
      auto it = posteriorOfQ_.find(o.value);
      return it != posteriorOfQ_.end() && p_.posteriors[size_t(it->second)].scratch;
    };
    if (stmt.kind == OpKind::Marginal) {
      for (size_t i = 1; i < stmt.operands.size(); ++i)
        if (skippedFinal_.count(stmt.operands[i].value->def))
          return true;
      return scratchQ(Operand::ofValue(stmt.result()));
    }
    return (stmt.target && scratchQ(*stmt.target)) || ir::anyMessageInput(stmt, scratchQ);
  }

  void emitMarginal(const Op &marg, const std::vector<Op *> &loops, Env &env, std::vector<Stmt> &out,
                    size_t from) {
    int pi = posteriorOfQ_.at(marg.result());
    const Posterior post = p_.posteriors[pi];
    // Reported at the end, if something reads the posterior after all (a
    // condition nothing reads, like a model-selection switch, needs no
    // symmetry breaking).
    if (post.randomInit && checkReads_ && !initRead_.count(pi))
      recomputedUnread_.insert(pi);
    std::vector<int32_t> accs;
    std::set<int32_t> transposedAccs;
    for (size_t i = 1; i < marg.operands.size(); ++i) {
      accs.push_back(accOf_.at(marg.operands[i].value));
      if (transposed_.count(marg.operands[i].value->def))
        transposedAccs.insert(accs.back());
    }
    const rt::RuntimeSymbol *axpy = rt::findRuntimeKernel("ppc_axpy");
    std::string statsName;
    switch (post.family) {
    case Family::Dirichlet:
    case Family::Beta: statsName = "ppc_dirichlet_stats_n"; break;
    case Family::Categorical: statsName = "ppc_categorical_stats_n"; break;
    case Family::Bernoulli: statsName = "ppc_bernoulli_stats_n"; break;
    case Family::Gamma: statsName = "ppc_gamma_stats_n"; break;
    case Family::Poisson: statsName = "ppc_poisson_stats_n"; break;
    case Family::Gaussian: statsName = "ppc_gaussian_stats_n"; break;
    case Family::MvGaussian: statsName = "ppc_mvgaussian_stats_n"; break;
    case Family::Wishart: statsName = "ppc_wishart_stats_n"; break;
    }
    const rt::RuntimeSymbol *stats = rt::findRuntimeKernel(statsName);
    bool product = productForm_.count(&marg) > 0;
    emitNest(loops, from, env, out, [&](Env &e, std::vector<Stmt> &body) {
      ExprId row = p_.mul(flatIndex(marg.result()->dims, indicesOf(loops), e, marg.loc, post.scratch),
                          p_.intConst(post.width));
      if (product) {
        if (sharedAcc_.count(&marg))
          accs.assign(1, sharedAcc_.at(&marg));
        for (size_t i = 1; i < accs.size(); ++i)
          body.push_back(kernelCall("ppc_mul_n", {intArg(post.width), ptrArg(accs[i], row), ptrArg(accs[0], row)}));
        Arg eta;
        eta.kind = Arg::Kind::Null; // scratch rows: nothing reads their natural parameters
        auto shift = productShift_.find(marg.result());
        ExprId shiftSum = shift != productShift_.end() ? shift->second : p_.doubleConst(0.0);
        if (shift != productShift_.end())
          productShift_.erase(shift);
        // The last update of a collapsed z this iteration: its ELBO terms are its log normalizer.
        bool lognorm = refreshing_ && collapsed_.count(pi);
        std::vector<Arg> args = {intArg(post.width), ptrArg(accs[0], row)};
        if (lognorm)
          args.push_back(exprArg(Arg::Kind::Double, shiftSum));
        args.insert(args.end(), {post.scratch ? eta : ptrArg(post.eta, row), ptrArg(post.stats, row)});
        Stmt c = kernelCall(lognorm ? "ppc_categorical_stats_from_product_lognorm" : "ppc_categorical_stats_from_product",
                            std::move(args),
                            "statistics of " + marg.result()->name + " (product form)" +
                                (lognorm ? "; its ELBO terms: log normalizer" : ""));
        if (lognorm) {
          c.result = Stmt::Result::Elbo;
          c.scale = replication(loops, e, nullptr, marg.loc);
        }
        body.push_back(std::move(c));
        return;
      }
      Stmt z;
      z.kind = Stmt::Kind::Zero;
      z.buffer = post.eta;
      z.index = row;
      z.count = post.width;
      z.note = marg.result()->name + " = sum of its messages";
      body.push_back(std::move(z));
      for (int32_t acc : accs) {
        Stmt c;
        c.kind = Stmt::Kind::Call;
        if (transposedAccs.count(acc)) { // column `element` of the datum-major sums
          c.kernel = rt::findRuntimeKernel("ppc_axpy_strided");
          ExprId element = flatIndex(marg.result()->dims, indicesOf(loops), e, marg.loc, post.scratch);
          c.args = {intArg(post.width), intArg(post.elements), doubleArg(1.0), ptrArg(acc, element),
                    ptrArg(post.eta, row)};
        } else {
          c.kernel = axpy;
          c.args = {intArg(post.width), doubleArg(1.0), ptrArg(acc, row), ptrArg(post.eta, row)};
        }
        body.push_back(std::move(c));
      }
      Stmt s;
      s.kind = Stmt::Kind::Call;
      s.kernel = stats;
      s.args.push_back(intArg(1));
      if (post.family == Family::Dirichlet || post.family == Family::Beta || post.family == Family::Categorical)
        s.args.push_back(intArg(post.dimension));
      else if (post.family == Family::MvGaussian || post.family == Family::Wishart)
        s.args.push_back(intArg(post.dimension));
      s.args.push_back(ptrArg(post.eta, row));
      s.args.push_back(ptrArg(post.stats, row));
      s.note = "statistics of " + marg.result()->name;
      body.push_back(std::move(s));
      if (post.expRows >= 0) {
        Stmt t;
        t.kind = Stmt::Kind::Call;
        t.kernel = rt::findRuntimeKernel("ppc_exp_shifted_n");
        t.args = {intArg(post.width), ptrArg(post.stats, row), ptrArg(post.expRows, row),
                  ptrArg(post.expRowShifts, flatIndex(marg.result()->dims, indicesOf(loops), e, marg.loc, post.scratch))};
        t.note = "exp of " + marg.result()->name + "'s statistics";
        body.push_back(std::move(t));
      }
    });
    // A whole array's update (the topics): its rows are independent.
    if (from == 0 && !loops.empty() && !out.empty() && out.back().kind == Stmt::Kind::Loop)
      out.back().parallel = true;
    computed_.insert(pi);
  }

  static std::vector<Operand> indicesOf(const std::vector<Op *> &loops) {
    std::vector<Operand> idx;
    for (Op *l : loops)
      idx.push_back(Operand::ofValue(l->index));
    return idx;
  }
  /// A call of the runtime kernel `kernel` (its result discarded).
  Stmt kernelCall(std::string_view kernel, std::vector<Arg> args, std::string note = {}) {
    Stmt c;
    c.kind = Stmt::Kind::Call;
    c.kernel = rt::findRuntimeKernel(kernel);
    c.args = std::move(args);
    c.note = std::move(note);
    return c;
  }
  Arg exprArg(Arg::Kind kind, ExprId e) {
    Arg a;
    a.kind = kind;
    a.expr = e;
    return a;
  }
  Arg intArg(int64_t v) {
    Arg a;
    a.kind = Arg::Kind::Int;
    a.expr = p_.intConst(v);
    return a;
  }
  Arg doubleArg(double v) {
    Arg a;
    a.kind = Arg::Kind::Double;
    a.expr = p_.doubleConst(v);
    return a;
  }
  Arg ptrArg(int32_t buffer, ExprId index) {
    Arg a;
    a.kind = Arg::Kind::Pointer;
    a.buffer = buffer;
    a.expr = index;
    return a;
  }

  void emitMessage(const Op &msg, const std::vector<Op *> &loops, Env &env, std::vector<Stmt> &out, size_t from,
                   bool reducedOutside) {
    if (!reducedOutside)
      emitZeroTargets(msg, loops, from, env, out);
    if (!ok_)
      return;
    if (transposed_.count(&msg)) {
      std::vector<Op *> outer(loops.begin(), loops.end() - 1);
      emitNest(outer, from, env, out, [&](Env &e, std::vector<Stmt> &body) { emitTransposedScatter(msg, e, body); });
      markSum(msg, loops, from, out);
      return;
    }
    bool product = productForm_.count(&msg) > 0;
    if (product && linearForm(msg) == Linear::Entry) {
      // One statement per datum for all the cases: no loop over the cases.
      std::vector<Op *> outer(loops.begin(), loops.end() - 1);
      emitNest(outer, from, env, out, [&](Env &e, std::vector<Stmt> &body) { emitProductMessage(msg, e, body); });
      return;
    }
    if (logEntry_.count(&msg)) {
      std::vector<Op *> outer(loops.begin(), loops.end() - 1);
      emitNest(outer, from, env, out, [&](Env &e, std::vector<Stmt> &body) { emitLogEntryMessage(msg, e, body); });
      markSum(msg, outer, from, out);
      return;
    }
    emitNest(loops, from, env, out, [&](Env &e, std::vector<Stmt> &body) {
      if (product)
        emitProductMessage(msg, e, body);
      else
        emitMessageCall(msg, e, body);
    });
    markSum(msg, loops, from, out);
  }

  /// acc[row][k] += w E log parent[k][x] for all cases k (planLogEntries).
  void emitLogEntryMessage(const Op &msg, Env &env, std::vector<Stmt> &out) {
    const Posterior &post = p_.posteriors[size_t(posteriorOfQ_.at(msg.target->value))];
    ExprId row = p_.mul(flatIndex(msg.target->value->dims, msg.target->indices, env, msg.loc, post.scratch),
                        p_.intConst(post.width));
    Source datum = resolveMessageOperand(msg.operands[0], env, msg.loc);
    int parent = posteriorOfQ_.at(msg.operands[1].value);
    const Posterior &pp = p_.posteriors[size_t(parent)];
    if (!ok_ || datum.kind != Source::Data) {
      fail(msg.loc, "internal: a datum-major evidence message without a datum");
      return;
    }
    noteRead(parent, msg.loc);
    ExprId w = replication(ir::enclosingLoops(msg), env, &*msg.target, msg.loc);
    ExprId x = p_.loadInt(dataBuffer(datum.data, Data::Int), datum.element);
    Stmt c = kernelCall("ppc_axpy",
                        {intArg(post.width), exprArg(Arg::Kind::Double, w == kNoExpr ? p_.doubleConst(1) : w),
                         ptrArg(pp.statsT, p_.mul(x, p_.intConst(pp.elements))), ptrArg(accOf_.at(msg.result()), row)});
    c.note = msg.result()->name + " (all cases, datum-major)";
    out.push_back(std::move(c));
  }

  /// A top-level message loop whose target does not depend on its element
  /// (a global's sum over the data) adds into the accumulator: the sum is
  /// the loop's reduction, and the loop may run in parallel.
  void markSum(const Op &msg, const std::vector<Op *> &loops, size_t from, std::vector<Stmt> &out) {
    if (from != 0 || loops.empty() || out.empty() || out.back().kind != Stmt::Kind::Loop ||
        usesIndex(*msg.target, loops[0]->index) || sharedAcc_.count(&msg) || productForm_.count(&msg))
      return;
    out.back().reductions.push_back(accOf_.at(msg.result()));
    out.back().parallel = block_ != Plan::Final;
  }

  void emitMessageCall(const Op &msg, Env &env, std::vector<Stmt> &out) {
    auto role = roleOf(msg.kernel);
    if (!role) {
      fail(msg.loc, "internal: unknown kernel " + msg.kernel);
      return;
    }
    const FamilySpec &fs = familySpec(role->family);
    size_t nargs = fs.params.size() + 1;
    std::vector<std::optional<Source>> args(nargs);
    size_t expected = role->kind == KernelRole::Message ? nargs - 1 : role->kind == KernelRole::Elbo ? nargs : 1;
    if (msg.operands.size() != expected) {
      fail(msg.loc, "internal: " + msg.kernel + " has " + std::to_string(msg.operands.size()) +
                        " operands; the code generator expects " + std::to_string(expected));
      return;
    }
    size_t next = 0;
    for (size_t i = 0; i < expected; ++i) {
      if (role->kind == KernelRole::Message && int(next) == role->target)
        ++next;
      args[next++] = resolveMessageOperand(msg.operands[i], env, msg.loc);
    }
    std::vector<std::pair<Source, ExprId>> gates;
    for (const auto &[cond, k] : msg.gates)
      gates.emplace_back(resolveMessageOperand(cond, env, msg.loc), indexExpr(k, env, msg.loc));
    if (!ok_)
      return;
    ExprId w = gateWeight(gates);
    int target = posteriorOfQ_.at(msg.target->value);
    const Posterior &post = p_.posteriors[target];
    ExprId row = p_.mul(flatIndex(msg.target->value->dims, msg.target->indices, env, msg.loc, post.scratch),
                        p_.intConst(post.width));
    int32_t acc = accOf_.at(msg.result());
    targetDimension_ = post.dimension;
    ExprId repl = replication(ir::enclosingLoops(msg), env, &*msg.target, msg.loc);
    if (!msg.evidence) {
      auto call = marshal(msg.kernel, *role, args, w, repl, std::make_pair(acc, row), msg.loc);
      if (!call)
        return;
      call->note = msg.result()->name;
      out.push_back(std::move(*call));
      return;
    }
    // Evidence: the term's value goes to case k of the condition's natural
    // parameters (a Bernoulli's logit takes +value for case 1, -value for 0).
    bool replUsed = false;
    auto call = marshal(msg.kernel, *role, args, w, repl, std::nullopt, msg.loc, &replUsed);
    if (!call)
      return;
    ExprId k = indexExpr(*msg.targetCase, env, msg.loc);
    call->result = Stmt::Result::Slot;
    call->buffer = acc;
    ExprId scale = replUsed ? w : times(w, repl);
    if (post.family == Family::Bernoulli) {
      call->index = row;
      ExprId sign = p_.intToDouble(p_.add(p_.mul(k, p_.intConst(2)), p_.intConst(-1)));
      scale = scale == kNoExpr ? sign : p_.mulDouble(scale, sign);
    } else {
      call->index = p_.add(row, k);
    }
    call->scale = scale;
    call->note = msg.result()->name;
    out.push_back(std::move(*call));
  }

  void collectUpdates(const Region &r, std::vector<const Op *> &updates, bool repeated,
                      std::set<const Op *> &inRepeated) {
    for (const auto &op : r.ops) {
      if (op->kind == OpKind::Update) {
        updates.push_back(op.get());
        if (repeated)
          inRepeated.insert(op.get());
      }
      for (size_t i = 0; i < op->regions.size(); ++i) {
        bool rep = repeated || (op->kind == OpKind::Local && i == 0 && op->iterations > 1);
        collectUpdates(*op->regions[i], updates, rep, inRepeated);
      }
    }
  }

  void emitFused(const Op &op, std::vector<Stmt> &out, Context &ctx) {
    const Value *plateValue = op.operands[0].value;
    const PlateInfo *pi = plate(plateValue, op.loc);
    if (!pi)
      return;
    Level level{plateValue, newVar()};
    size_t depth = ctx.levels.size();
    // The loop's range: a ragged plate's size for the element the outer levels bind.
    ExprId bound;
    if (!pi->ragged) {
      bound = p_.intConst(pi->size);
    } else {
      if (plateValue->dims.size() != depth) {
        fail(op.loc, "internal: fused loop over %" + plateValue->name + " at the wrong depth");
        return;
      }
      ExprId f = p_.intConst(0);
      for (size_t j = 0; j < depth; ++j) {
        const PlateInfo *outer = plate(ctx.levels[j].plate, op.loc);
        ExprId i = p_.loopVar(ctx.levels[j].var);
        f = outer->ragged ? p_.add(p_.loadInt(outer->offsets, f), i) : p_.add(p_.mul(f, p_.intConst(outer->size)), i);
      }
      bound = p_.loadInt(pi->sizes, f);
    }
    // Messages whose target does not depend on this loop are sums over its
    // elements: reset before the loop, computed at their last update inside.
    std::vector<const Op *> updates;
    std::set<const Op *> inRepeated;
    for (const auto &r : op.regions)
      collectUpdates(*r, updates, false, inRepeated);
    Context inner = ctx;
    inner.levels.push_back(level);
    std::vector<int32_t> reductions;
    if (depth == 0)
      elementTemporaries_.clear();
    for (const Op *u : updates) {
      const Op *stmt = statementOf(*u);
      if (!stmt || stmt->kind != OpKind::Msg || ctx.reductionAt.count(stmt))
        continue;
      std::vector<Op *> loops = ir::enclosingLoops(*stmt);
      if (loops.size() <= depth || usesIndex(*stmt->target, loops[depth]->index))
        continue;
      if (!inner.reductionAt.count(stmt)) {
        Env env;
        if (!bindContext(*stmt, loops, ctx, env))
          return;
        emitZeroTargets(*stmt, loops, depth + 1, env, out);
        reductions.push_back(accOf_.at(stmt->result()));
      }
      inner.reductionAt[stmt] = u; // the last one wins
    }
    for (const auto &[stmt, u] : inner.reductionAt)
      if (inRepeated.count(u)) {
        fail(op.loc, "internal: a sum over %" + plateValue->name + " is computed inside repeated local sweeps");
        return;
      }
    Stmt loop;
    loop.kind = Stmt::Kind::Loop;
    loop.var = level.var;
    loop.bound = bound;
    loop.note = std::string(op.kind == OpKind::Fuse ? "fuse " : "local ") + plateValue->name;
    loop.plate = plateValue;
    // Scratch rows hold one element: nothing in them is valid on entry.
    bool overElements = depth == 0 && plateValue == nestedPlate_;
    if (overElements) {
      dropScratch();
      if (block_ == Plan::Init)
        emitScratchRandomInit(level.var, loop.body, op.loc);
    }
    if (op.kind == OpKind::Fuse) {
      emitSchedule(*op.regions[0], loop.body, inner);
    } else {
      if (op.restart) {
        // Guarded by a flag the run clears near convergence (Inference::run):
        // restarts help early and only coordinate ascent is monotone.
        if (p_.localRestart < 0)
          p_.localRestart = addBuffer("local.restart", false, 1);
        Stmt guard;
        guard.kind = Stmt::Kind::Loop;
        guard.var = newVar();
        guard.bound = p_.intConst(1);
        guard.note = "restart the element's locals while local.restart is on";
        Stmt off;
        off.kind = Stmt::Kind::ExitBelow;
        off.buffer = p_.localRestart;
        off.index = p_.intConst(0);
        off.threshold = 0.5;
        guard.body.push_back(std::move(off));
        emitRestart(op, guard.body, inner);
        loop.body.push_back(std::move(guard));
      }
      emitSweeps(op, loop.body, inner);
      if (op.regions.size() > 1) {
        refreshing_ = &op == nestedLocal_ && block_ == Plan::Iteration;
        emitSchedule(*op.regions[1], loop.body, inner);
        refreshing_ = false;
      }
      if (&op == nestedLocal_ && block_ == Plan::Iteration && ok_) {
        // The element's ELBO terms, while its scratch rows are at hand.
        bool saved = checkReads_;
        std::vector<ExprId> weights;
        for (const auto &f : m_.body.ops)
          if (f->kind == OpKind::For && f->operands[0].value == plateValue) {
            Env env;
            env[f->index] = p_.loopVar(level.var);
            emitElbo(*f->regions[0], loop.body, env, weights, false);
            elboFused_.insert(f.get());
          }
        checkReads_ = saved;
        emitPendingTransposes(out, out.end()); // before the loop: the parents do not change in it
      }
    }
    if (overElements)
      dropScratch();
    if (depth == 0 && (op.parallel || plateValue == partitioned_)) {
      loop.parallel = block_ != Plan::Final; // (a distributed run marks it later in every block)
      loop.reductions = reductions;
      loop.privates = elementTemporaries_;
      if (overElements)
        for (const Posterior &post : p_.posteriors)
          if (post.scratch) {
            loop.privates.push_back(post.eta);
            loop.privates.push_back(post.stats);
          }
      ir::walk(*m_.messages, [&](const Op &msg) {
        if (msg.kind == OpKind::Msg && msg.target && overElements &&
            p_.posteriors[size_t(posteriorOfQ_.at(msg.target->value))].scratch)
          loop.privates.push_back(accOf_.at(msg.result()));
      });
    }
    out.push_back(std::move(loop));
  }

  void dropScratch() {
    for (size_t pi = 0; pi < p_.posteriors.size(); ++pi)
      if (p_.posteriors[pi].scratch)
        computed_.erase(int(pi));
  }

  /// The local sweeps of one element: at most `iterations`, ended early
  /// when the element's posteriors over the plate (LDA: theta) change less
  /// than the tolerance on average.
  void emitSweeps(const Op &local, std::vector<Stmt> &out, Context &ctx) {
    struct Tracked {
      int32_t eta, prev;
      ExprId row;
      int64_t width;
    };
    std::vector<Tracked> tracked;
    if (local.tolerance > 0 && local.iterations > 1) {
      std::vector<const Op *> updates;
      std::set<const Op *> unused;
      collectUpdates(*local.regions[0], updates, false, unused);
      std::set<int> seen;
      for (const Op *u : updates) {
        const Op *marg = statementOf(*u);
        if (!marg || marg->kind != OpKind::Marginal || marg->result()->dims.size() != ctx.levels.size())
          continue;
        int pi = posteriorOfQ_.at(marg->result());
        if (!seen.insert(pi).second)
          continue;
        const Posterior &post = p_.posteriors[size_t(pi)];
        std::vector<Op *> loops = ir::enclosingLoops(*marg);
        Env env;
        if (!bindContext(*marg, loops, ctx, env))
          return;
        Tracked t;
        t.eta = post.eta;
        t.width = post.width;
        t.prev = addBuffer(marg->result()->name + ".prev", false, post.width);
        elementTemporaries_.push_back(t.prev);
        t.row = p_.mul(flatIndex(marg->result()->dims, indicesOf(loops), env, marg->loc), p_.intConst(post.width));
        tracked.push_back(t);
      }
    }
    const rt::RuntimeSymbol *change = rt::findRuntimeKernel("ppc_mean_abs_change");
    auto changeCall = [&](const Tracked &t) {
      Stmt c;
      c.kind = Stmt::Kind::Call;
      c.kernel = change;
      c.args = {intArg(t.width), ptrArg(t.eta, t.row), ptrArg(t.prev, p_.intConst(0))};
      return c;
    };
    for (const Tracked &t : tracked) {
      Stmt c = changeCall(t);
      c.note = "remember " + p_.buffers[size_t(t.eta)].name;
      out.push_back(std::move(c));
    }
    Stmt sweeps;
    sweeps.kind = Stmt::Kind::Loop;
    sweeps.var = newVar();
    sweeps.bound = p_.intConst(local.iterations);
    sweeps.note = "local sweeps";
    emitSchedule(*local.regions[0], sweeps.body, ctx);
    if (!tracked.empty()) {
      int32_t slot = addBuffer("local.change", false, 1);
      elementTemporaries_.push_back(slot);
      Stmt z;
      z.kind = Stmt::Kind::Zero;
      z.buffer = slot;
      z.index = p_.intConst(0);
      z.count = 1;
      sweeps.body.push_back(z);
      for (const Tracked &t : tracked) {
        Stmt c = changeCall(t);
        c.result = Stmt::Result::Slot;
        c.buffer = slot;
        c.index = p_.intConst(0);
        c.scale = p_.doubleConst(1.0 / double(tracked.size()));
        c.note = "mean change of " + p_.buffers[size_t(t.eta)].name;
        sweeps.body.push_back(std::move(c));
      }
      Stmt exit;
      exit.kind = Stmt::Kind::ExitBelow;
      exit.buffer = slot;
      exit.index = p_.intConst(0);
      exit.threshold = local.tolerance;
      exit.note = "converged";
      sweeps.body.push_back(std::move(exit));
    }
    out.push_back(std::move(sweeps));
  }

  /// `local ... restart`: the locals a sweep reads before computing them
  /// (LDA's theta) go back to what their non-iterated messages say (the
  /// prior).
  void emitRestart(const Op &local, std::vector<Stmt> &out, Context &ctx) {
    std::set<const Op *> iterated;
    std::vector<const Op *> updates;
    std::set<const Op *> unused;
    collectUpdates(*m_.iterationSchedule, updates, false, unused);
    for (const Op *u : updates)
      iterated.insert(statementOf(*u));
    std::vector<const Op *> sweep;
    collectUpdates(*local.regions[0], sweep, false, unused);
    std::set<const Op *> inSweep, computed, restart;
    for (const Op *u : sweep)
      if (statementOf(*u)->kind == OpKind::Marginal)
        inSweep.insert(statementOf(*u));
    for (const Op *u : sweep) {
      const Op *stmt = statementOf(*u);
      if (stmt->kind == OpKind::Marginal) {
        computed.insert(stmt);
        continue;
      }
      ir::anyMessageInput(*stmt, [&](const Operand &o) {
        if (o.isValue() && o.value->def && inSweep.count(o.value->def) && !computed.count(o.value->def))
          restart.insert(o.value->def);
        return false; // visit them all
      });
    }
    for (const Op *marg : restart) {
      for (size_t i = 1; i < marg->operands.size(); ++i) {
        const Op *msg = marg->operands[i].value->def;
        if (!iterated.count(msg))
          continue;
        std::vector<Op *> loops = ir::enclosingLoops(*msg);
        Env env;
        if (!bindContext(*msg, loops, ctx, env))
          return;
        emitZeroTargets(*msg, loops, ctx.levels.size(), env, out);
      }
      std::vector<Op *> loops = ir::enclosingLoops(*marg);
      Env env;
      if (!bindContext(*marg, loops, ctx, env))
        return;
      emitMarginal(*marg, loops, env, out, ctx.levels.size());
    }
  }

  // ---- the ELBO ----
  /// `for k in cases { when z case k { y ~ Categorical(parent[k]) observed } }`
  /// with the datum independent of k: sum_k q(z = k) E log parent[k][y] is
  /// one dot product of z's row with the datum's row of a datum-major copy
  /// of the parent's statistics (LDA's per-token likelihood term).
  bool emitCaseSumElbo(const Op &loop, std::vector<Stmt> &out, Env &env, const std::vector<ExprId> &weights) {
    const Region &body = *loop.regions[0];
    const Op *when = nullptr;
    for (const auto &o : body.ops)
      if (o->kind == OpKind::When) {
        if (when)
          return false;
        when = o.get();
      } else if (o->kind != OpKind::GateCases) {
        return false;
      }
    if (!when || !when->operands[1].isValue() || when->operands[1].value != loop.index)
      return false;
    const Op *factor = nullptr;
    for (const auto &o : when->regions[0]->ops)
      if (o->kind == OpKind::Random) {
        if (factor)
          return false;
        factor = o.get();
      } else if (o->kind != OpKind::GateEnterOne) {
        return false;
      }
    if (!factor || !factor->observed || factor->family != Family::Categorical || factor->operands.size() != 1)
      return false;
    // Resolve with k bound to a marker: the parent must be indexed by k alone
    // and the condition and the datum not at all.
    Env probe = env;
    int32_t markerVar = newVar(); // a loop variable no loop binds
    ExprId marker = p_.loopVar(markerVar);
    probe[loop.index] = marker;
    bool saved = ok_;
    std::vector<Op *> loops = ir::enclosingLoops(*factor);
    Source parent = resolveGated(factor->operands[0], probe, factor->loc);
    Source datum = resolveGated(Operand::ofValue(factor->result(), indicesOf(loops)), probe, factor->loc);
    Source cond = resolveGated(when->operands[0].value->def->operands[0], env, when->loc);
    if (!ok_ || !saved)
      return false;
    if (cond.kind == Source::Latent && collapsed_.count(cond.posterior))
      return true; // in the condition's log normalizer
    if (parent.kind != Source::Latent || datum.kind != Source::Data || cond.kind != Source::Latent ||
        parent.element != marker || usesExpr(datum.element, marker))
      return false;
    Posterior &pp = p_.posteriors[size_t(parent.posterior)];
    const Posterior &z = p_.posteriors[size_t(cond.posterior)];
    if (pp.family != Family::Dirichlet || z.family != Family::Categorical || z.width != pp.elements ||
        pp.variable->dims.size() != 1)
      return false;
    if (pp.statsT < 0)
      pp.statsT = addBuffer(pp.variable->name + ".q.stats.bydatum", false, pp.elements * pp.width);
    pendingTransposes_.insert(parent.posterior);
    Env real = env;
    ExprId repl = replication(loops, real, nullptr, factor->loc);
    ExprId w = kNoExpr;
    for (ExprId x : weights)
      w = w == kNoExpr ? x : p_.mulDouble(w, x);
    ExprId x = p_.loadInt(dataBuffer(datum.data, Data::Int), datum.element);
    Stmt c = kernelCall("ppc_dot",
                        {intArg(pp.elements), ptrArg(z.stats, p_.mul(cond.element, p_.intConst(z.width))),
                         ptrArg(pp.statsT, p_.mul(x, p_.intConst(pp.elements)))},
                        "E log p(" + factor->result()->name + "), all cases");
    c.result = Stmt::Result::Elbo;
    c.scale = times(w, repl);
    out.push_back(std::move(c));
    return true;
  }

  bool usesExpr(ExprId e, ExprId needle) const {
    if (e == kNoExpr)
      return false;
    const Expr &x = p_.exprs[size_t(e)];
    if (e == needle || (x.kind == Expr::Kind::LoopVar && x.var == p_.exprs[size_t(needle)].var))
      return true;
    return usesExpr(x.a, needle) || usesExpr(x.b, needle);
  }

  /// Datum-major copies of statistics the ELBO terms just emitted read.
  void emitPendingTransposes(std::vector<Stmt> &out, std::vector<Stmt>::iterator at) {
    std::vector<Stmt> refresh;
    for (int pi : pendingTransposes_) {
      const Posterior &post = p_.posteriors[size_t(pi)];
      refresh.push_back(kernelCall("ppc_transpose",
                                   {intArg(post.elements), intArg(post.width), ptrArg(post.stats, p_.intConst(0)),
                                    ptrArg(post.statsT, p_.intConst(0))},
                                   post.variable->name + "'s statistics, datum-major"));
    }
    pendingTransposes_.clear();
    out.insert(at, refresh.begin(), refresh.end());
  }

  void emitElbo(const Region &r, std::vector<Stmt> &out, Env &env, std::vector<ExprId> &weights, bool top) {
    checkReads_ = false;
    for (const auto &op : r.ops) {
      if (!ok_)
        return;
      if (top && elboFused_.count(op.get()))
        continue; // computed in the nested schedule's loop
      switch (op->kind) {
      case OpKind::For: {
        if (productForm && emitCaseSumElbo(*op, out, env, weights))
          break;
        Stmt loop;
        loop.kind = Stmt::Kind::Loop;
        loop.var = newVar();
        loop.bound = loopBound(*op, env);
        loop.plate = op->operands[0].value;
        Env inner = env;
        inner[op->index] = p_.loopVar(loop.var);
        emitElbo(*op->regions[0], loop.body, inner, weights, false);
        loop.parallel = top; // terms summed per thread, then in thread order
        if (!loop.body.empty())
          out.push_back(std::move(loop));
        break;
      }
      case OpKind::When: {
        const Value *cases = op->operands[0].value;
        const Op *casesOp = cases->def;
        Source cond = resolveGated(casesOp->operands[0], env, op->loc);
        if (cond.kind != Source::Latent) {
          fail(op->loc, "the code generator does not support a condition that is observed");
          return;
        }
        if (collapsed_.count(cond.posterior))
          break; // in the condition's log normalizer
        ExprId w = gateWeight({{cond, indexExpr(op->operands[1], env, op->loc)}});
        weights.push_back(w);
        emitElbo(*op->regions[0], out, env, weights, false);
        weights.pop_back();
        break;
      }
      case OpKind::Random: emitFactorElbo(*op, out, env, weights); break;
      case OpKind::If:
      case OpKind::Match: fail(op->loc, "internal: a conditional the gate transform left"); return;
      default: break; // plates, gates, arithmetic: no ELBO terms
      }
    }
  }

  void emitFactorElbo(const Op &f, std::vector<Stmt> &out, Env &env, const std::vector<ExprId> &weights) {
    if (auto v = posteriorOfVar_.find(f.result()); v != posteriorOfVar_.end() && collapsed_.count(v->second))
      return; // its entropy and E log p are in its log normalizer
    const FactorOperators &ops = factorOperators(f.family);
    std::vector<Op *> loops = ir::enclosingLoops(f);
    std::vector<std::optional<Source>> args;
    args.push_back(resolveGated(Operand::ofValue(f.result(), indicesOf(loops)), env, f.loc));
    for (const Operand &o : f.operands)
      args.push_back(resolveGated(o, env, f.loc));
    if (!ok_)
      return;
    ExprId w = kNoExpr;
    for (ExprId x : weights)
      w = w == kNoExpr ? x : p_.mulDouble(w, x);
    std::string kernel(f.observed && !ops.observedElboKernel.empty() ? ops.observedElboKernel : ops.elboKernel);
    if (f.observed && ops.observedElboKernel.empty()) {
      fail(f.loc, "the code generator cannot evaluate the ELBO of an observed " +
                      std::string(familySpec(f.family).spelling) + " variable");
      return;
    }
    if (!f.observed && f.family == Family::Poisson) {
      fail(f.loc, "a latent Poisson variable is not supported by the code generator yet (its ELBO needs E[log x!])");
      return;
    }
    ExprId repl = replication(loops, env, nullptr, f.loc);
    bool replUsed = false;
    auto call = marshal(kernel, KernelRole{f.family, KernelRole::Elbo, 0}, args, w, repl, std::nullopt, f.loc,
                        &replUsed);
    if (!call)
      return;
    call->result = Stmt::Result::Elbo;
    call->scale = replUsed ? w : times(w, repl);
    call->note = "E log p(" + f.result()->name + ")";
    out.push_back(std::move(*call));
    if (!f.observed) {
      std::string ent(entropyKernel(f.family));
      auto h = marshal(ent, KernelRole{f.family, KernelRole::Entropy, 0}, {args[0]}, w, repl, std::nullopt, f.loc);
      if (!h)
        return;
      h->result = Stmt::Result::Elbo;
      h->scale = times(w, repl);
      h->note = "H q(" + f.result()->name + ")";
      out.push_back(std::move(*h));
    }
  }

  const ir::Module &m_;
  const ir::Evaluation &ev_;
  const rt::BoundData &data_;
  bool randomInit_;
  DiagnosticEngine &diags_;
  Plan &p_;
  bool ok_ = true;
  bool checkReads_ = true;
  int64_t targetDimension_ = 1;
  std::map<const Value *, PlateInfo> plates_;
  std::map<const Value *, int> posteriorOfQ_, posteriorOfVar_;
  std::map<const Value *, int32_t> accOf_;
  std::map<const Value *, const Op *> exitOf_;
  std::map<std::vector<double>, int32_t> constants_;
  std::map<std::pair<const Value *, int>, int32_t> dataBuffers_;
  std::set<int> computed_, initRead_, recomputedUnread_;
  Plan::BlockId block_ = Plan::Init;
  const Op *nestedLocal_ = nullptr;
  const Value *nestedPlate_ = nullptr;
  std::set<const Op *> elboFused_, skippedFinal_, productForm_, transposed_;
  /// Categoricals whose ELBO terms are their log normalizer (planCollapsedElbo).
  std::set<int> collapsed_;
  bool refreshing_ = false; ///< emitting the nested local loop's `then` region
  std::map<const Value *, ExprId> productShift_;
  std::set<int> pendingTransposes_;
  std::map<const Op *, int32_t> sharedAcc_; ///< product-form statements -> the accumulator they share
  std::map<const Op *, std::vector<int>> columnReaders_;
  std::map<const Op *, std::vector<int>> statsTReaders_; ///< top-level statements -> datum-major copies they read
  std::set<const Op *> logEntry_;                        ///< planLogEntries' messages
  std::vector<int32_t> elementTemporaries_; ///< per-element buffers of the current outermost loop
};

} // namespace

namespace {
/// The plan transformations' flags by name, in the order buildPlan runs them.
std::vector<std::pair<const char *, bool PlanOptions::*>> planOptFlags() {
  return {{"batch-statistics", &PlanOptions::batchStatistics},
          {"row-fission", &PlanOptions::rowFission},
          {"column-fission", &PlanOptions::columnFission},
          {"share-lgamma", &PlanOptions::shareLgamma},
          {"fuse-normalizers", &PlanOptions::fuseNormalizers},
          {"batch-logs", &PlanOptions::batchLogs},
          {"balance-chunks", &PlanOptions::balanceChunks},
          {"block-rows", &PlanOptions::blockRows},
          {"prefetch", &PlanOptions::prefetch},
          {"parallel-zero", &PlanOptions::parallelZero}};
}
} // namespace

bool PlanOptions::disable(const std::string &name) {
  for (auto [known, flag] : planOptFlags())
    if (name == known) {
      this->*flag = false;
      return true;
    }
  return false;
}

std::string PlanOptions::names() {
  std::string out;
  for (auto [known, flag] : planOptFlags())
    out += (out.empty() ? "" : ", ") + std::string(known);
  return out;
}

int64_t hostL2CacheBytes() {
  const long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return bytes > 0 ? int64_t(bytes) : 0;
}

std::unique_ptr<Plan> buildPlan(const ir::Module &m, const ir::Evaluation &eval, const rt::BoundData &data,
                                bool randomInitConditions, DiagnosticEngine &diags, const PlanOptions &options) {
  auto plan = std::make_unique<Plan>();
  PlanBuilder b(m, eval, data, randomInitConditions, diags, *plan);
  b.productForm = options.productForm;
  b.partitioned_ = options.partitionedPlate;
  if (!b.run())
    return nullptr;
  if (options.batchStatistics)
    batchObservedStatistics(*plan);
  if (options.rowFission)
    hoistRowKernels(*plan);
  if (options.columnFission)
    splitColumnSums(*plan);
  if (options.shareLgamma)
    shareLgamma(*plan);
  if (options.fuseNormalizers)
    fuseProductNormalizers(*plan);
  dropUnreadOutputs(*plan);
  if (options.batchLogs)
    batchLogNormalizers(*plan);
  if (options.balanceChunks)
    balanceChunks(*plan);
  plan->l2CacheBytes = options.l2CacheBytes > 0 ? options.l2CacheBytes : hostL2CacheBytes();
  if (options.blockRows)
    blockIndexedRows(*plan, plan->l2CacheBytes);
  if (options.prefetch)
    prefetchIndexedRows(*plan);
  if (options.parallelZero)
    parallelizeLargeZeros(*plan);
  return plan;
}

// ---- printing ---------------------------------------------------------------

namespace {
void printExpr(const Plan &p, ExprId id, std::ostream &os) {
  if (id == kNoExpr) {
    os << "1";
    return;
  }
  const Expr &e = p.exprs[id];
  switch (e.kind) {
  case Expr::Kind::IntConst: os << e.value; break;
  case Expr::Kind::DoubleConst: os << ir::formatDouble(e.number); break;
  case Expr::Kind::LoopVar: os << "i" << e.var; break;
  case Expr::Kind::LoadInt:
  case Expr::Kind::LoadDouble:
    os << p.buffers[e.buffer].name << "[";
    printExpr(p, e.a, os);
    os << "]";
    break;
  case Expr::Kind::IntToDouble:
    os << "double(";
    printExpr(p, e.a, os);
    os << ")";
    break;
  default: {
    const char *op = e.kind == Expr::Kind::AddInt || e.kind == Expr::Kind::AddDouble   ? " + "
                     : e.kind == Expr::Kind::MulInt || e.kind == Expr::Kind::MulDouble ? " * "
                                                                                        : " - ";
    os << "(";
    printExpr(p, e.a, os);
    os << op;
    printExpr(p, e.b, os);
    os << ")";
  }
  }
}

void printStmts(const Plan &p, const std::vector<Stmt> &body, int indent, std::ostream &os) {
  for (const Stmt &s : body) {
    os << std::string(size_t(indent) * 2, ' ');
    switch (s.kind) {
    case Stmt::Kind::Loop:
      os << (s.distributed ? "distributed " : "") << (s.parallel ? "parallel for i" : "for i") << s.var << " < ";
      printExpr(p, s.bound, os);
      if (s.batch)
        os << " by " << s.batch << " (i" << s.batchVar << " of them)";
      if (s.costs >= 0)
        os << " split by " << p.buffers[size_t(s.costs)].name;
      if (s.parallel) {
        for (auto [label, list] : {std::pair{" private", &s.privates}, std::pair{" sum", &s.reductions}})
          if (!list->empty()) {
            os << label;
            for (int32_t b : *list)
              os << " " << p.buffers[size_t(b)].name;
          }
      }
      if (!s.note.empty())
        os << "  // " << s.note;
      os << " {\n";
      printStmts(p, s.body, indent + 1, os);
      os << std::string(size_t(indent) * 2, ' ') << "}\n";
      break;
    case Stmt::Kind::Zero:
      os << "zero " << p.buffers[s.buffer].name << "[";
      printExpr(p, s.index, os);
      os << " +: " << s.count << "]\n";
      break;
    case Stmt::Kind::ExitBelow:
      os << "exit loop if " << p.buffers[s.buffer].name << "[";
      printExpr(p, s.index, os);
      os << "] < " << ir::formatDouble(s.threshold) << "\n";
      break;
    case Stmt::Kind::Call:
      if (s.result == Stmt::Result::Elbo)
        os << "elbo += ";
      else if (s.result == Stmt::Result::Slot || s.result == Stmt::Result::SlotProduct) {
        os << p.buffers[s.buffer].name << "[";
        printExpr(p, s.index, os);
        os << (s.result == Stmt::Result::Slot ? "] += " : "] *= ");
      }
      if (s.scale != kNoExpr) {
        printExpr(p, s.scale, os);
        os << " * ";
      }
      os << s.kernel->name << "(";
      for (size_t i = 0; i < s.args.size(); ++i) {
        const Arg &a = s.args[i];
        if (i)
          os << ", ";
        switch (a.kind) {
        case Arg::Kind::Int:
        case Arg::Kind::Double: printExpr(p, a.expr, os); break;
        case Arg::Kind::Null: os << "null"; break;
        case Arg::Kind::Pointer:
          os << "&" << p.buffers[a.buffer].name << "[";
          printExpr(p, a.expr, os);
          os << "]";
          break;
        case Arg::Kind::TempPointer:
          os << "&{";
          printExpr(p, a.expr, os);
          os << "}";
          break;
        }
      }
      os << ")";
      if (!s.note.empty())
        os << "  // " << s.note;
      os << "\n";
      break;
    }
  }
}
} // namespace

std::string printPlan(const Plan &p) {
  std::ostringstream os;
  for (const Buffer &b : p.buffers)
    os << "buffer " << b.name << " : " << (b.isInt ? "i64" : "f64") << "[" << b.size << "]"
       << (b.doubles.empty() && b.ints.empty() ? "" : " (filled)") << (b.memo ? " (memo)" : "") << "\n";
  for (const Posterior &post : p.posteriors)
    if (post.scratch)
      os << "scratch " << post.variable->name << " (rows of one element)\n";
  for (int b = 0; b < Plan::NumBlocks; ++b) {
    os << Plan::kBlockNames[b] << " {\n";
    printStmts(p, p.blocks[b], 1, os);
    os << "}\n";
  }
  return os.str();
}

} // namespace ppc::codegen
