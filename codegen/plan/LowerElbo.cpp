//===- codegen/plan/LowerElbo.cpp - the ELBO block --------------------------===//
//
// The ELBO walks the gated model: every factor's expected log density and
// every latent variable's entropy, weighted by the probabilities of the
// cases it is in and by the replication of its rows. A nested schedule
// computes its elements' terms in its own loop (LowerLocal.cpp); the rest is
// the elbo block.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanBuilder.h"

#include "runtime/Symbols.h"

#include <algorithm>

namespace ppc::codegen::lowering {

/// `for k in cases { when z case k { y ~ Categorical(parent[k]) observed } }`
/// with the datum independent of k: sum_k q(z = k) E log parent[k][y] is
/// one dot product of z's row with the datum's row of a datum-major copy
/// of the parent's statistics (LDA's per-token likelihood term).
bool PlanBuilder::emitCaseSumElbo(const Op &loop, std::vector<Stmt> &out, Env &env, const std::vector<ExprId> &weights) {
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
  ExprId repl = times(replication(loops, real, nullptr, factor->loc),
                      missingMask({Operand::ofValue(factor->result(), indicesOf(loops))}, real, factor->loc));
  ExprId w = kNoExpr;
  for (ExprId x : weights)
    w = w == kNoExpr ? x : p_.mulDouble(w, x);
  ExprId x = p_.loadInt(dataBuffer(datum.data, Data::Int), datum.element);
  Stmt c = kernelCall("ppc_dot",
                      {intArg(pp.elements), ptrArg(z.stats, p_.mul(cond.element, p_.intConst(z.width))),
                       ptrArg(pp.statsT, p_.mul(x, p_.intConst(pp.elements)))},
                      "E log p(" + factor->result()->name + "), all cases");
  c.result = Stmt::Result::Elbo;
  c.elboOnly = true;
  c.scale = times(w, repl);
  out.push_back(std::move(c));
  return true;
}

bool PlanBuilder::usesExpr(ExprId e, ExprId needle) const {
  if (e == kNoExpr)
    return false;
  const Expr &x = p_.exprs[size_t(e)];
  if (e == needle || (x.kind == Expr::Kind::LoopVar && x.var == p_.exprs[size_t(needle)].var))
    return true;
  return usesExpr(x.a, needle) || usesExpr(x.b, needle);
}

/// Datum-major copies of statistics the ELBO terms just emitted read.
void PlanBuilder::emitPendingTransposes(std::vector<Stmt> &out, std::vector<Stmt>::iterator at) {
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

void PlanBuilder::emitElbo(const Region &r, std::vector<Stmt> &out, Env &env, std::vector<ExprId> &weights, bool top) {
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
      Env inner;
      Stmt loop = plateLoop(*op, env, inner);
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
      ExprId w = gateWeight({{cond, caseExpr(op->operands[1], env, op->loc)}});
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

void PlanBuilder::emitFactorElbo(const Op &f, std::vector<Stmt> &out, Env &env, const std::vector<ExprId> &weights) {
  if (isDeterministicFamily(f.family))
    return; // no density and no entropy: its children's terms read its statistics
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
  // A given variable (--given) is a constant of this run: its prior's term
  // counts only where it depends on a posterior being inferred (a latent
  // parent), and it has no entropy.
  auto inferred = [&](const std::optional<Source> &a) {
    return a && a->kind == Source::Latent && !p_.posteriors[size_t(a->posterior)].given;
  };
  if (f.given && std::none_of(args.begin() + 1, args.end(), inferred))
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
  ExprId repl = times(replication(loops, env, nullptr, f.loc),
                      f.observed ? missingMask({Operand::ofValue(f.result(), indicesOf(loops))}, env, f.loc) : kNoExpr);
  bool replUsed = false;
  auto call = marshal(kernel, KernelRole{f.family, KernelRole::Elbo, 0}, args, w, repl, std::nullopt, f.loc,
                      &replUsed);
  if (!call)
    return;
  call->result = Stmt::Result::Elbo;
  call->elboOnly = true;
  call->scale = replUsed ? w : times(w, repl);
  call->note = "E log p(" + f.result()->name + ")";
  out.push_back(std::move(*call));
  if (!f.observed && !f.given) {
    std::string ent(entropyKernel(f.family));
    auto h = marshal(ent, KernelRole{f.family, KernelRole::Entropy, 0}, {args[0]}, w, repl, std::nullopt, f.loc);
    if (!h)
      return;
    h->result = Stmt::Result::Elbo;
    h->elboOnly = true;
    h->scale = times(w, repl);
    h->note = "H q(" + f.result()->name + ")";
    out.push_back(std::move(*h));
  }
}

} // namespace ppc::codegen::lowering
