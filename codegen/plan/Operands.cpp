//===- codegen/plan/Operands.cpp - where factor arguments come from ---------===//
//
// An argument of a message or of an ELBO term is a posterior's row, a
// datum or a constant (Source). Gated clones resolve to the variable they
// copy; observed variables to their data. Also the weights a statement is
// multiplied by: a row's replication count (bag of words) and the gate
// probabilities of the cases it is in.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanBuilder.h"

#include "ir/Evaluate.h"
#include "ir/Printer.h"
#include "runtime/Binding.h"

namespace ppc::codegen::lowering {

Source PlanBuilder::constantSource(double v) {
  Source s;
  s.kind = Source::Constant;
  s.value = v;
  return s;
}

/// An operand of a message statement: a posterior, data or a constant.
Source PlanBuilder::resolveMessageOperand(const Operand &o, const Env &env, SourceRange where) {
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
Source PlanBuilder::resolveValue(const Operand &o, const Env &env, SourceRange where) {
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
  fail(where, "a factor's constant argument must be one number for every element; %" + v->name +
                  " is computed from a plate index (arithmetic on a map's index, such as k * 2.0), which the code generator "
                  "does not take yet: give the values as data (Data(...) over a data plate) or as separate "
                  "variables");
  return constantSource(0);
}

/// An argument of a factor of the gated model: clones resolve to their
/// source's posterior, per-case copies of data to the data.
Source PlanBuilder::resolveGated(const Operand &o, const Env &env, SourceRange where) {
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

/// One of the target's own indices is `index` (z(i), not alpha(g(i))).
static bool indexedBy(const Operand &target, const Value *index) {
  for (const Operand &i : target.indices)
    if (i.isValue() && i.value == index)
      return true;
  return false;
}

/// A row with weight c stands for c copies of its plate element (bag of
/// words): every term of the element is counted c times, except messages
/// to variables of the element itself (the copies share their posterior):
/// a target indexed by the element's index. A target reached through an id
/// read from the row (alpha(g(i))) is shared with other rows, and each copy
/// sends it its message.
/// Returns the weight expression for a statement over `loops`, or kNoExpr.
ExprId PlanBuilder::replication(const std::vector<Op *> &loops, const Env &env, const Operand *target, SourceRange where) {
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
    if (!over || (target && indexedBy(*target, loops[dims.size() - 1]->index)))
      continue;
    std::vector<Operand> idx;
    for (size_t j = 0; j < dims.size(); ++j)
      idx.push_back(Operand::ofValue(loops[j]->index));
    ExprId c = p_.loadDouble(dataBuffer(v, Data::Weight), flatIndex(dims, idx, env, where));
    w = w == kNoExpr ? c : p_.mulDouble(w, c);
  }
  return w;
}

ExprId PlanBuilder::missingMask(const std::vector<Operand> &operands, const Env &env, SourceRange where) {
  for (const Operand &o : operands) {
    if (!o.isValue() || !o.value->def || !o.value->def->observed)
      continue;
    // A message's datum, or a factor's own observed value (a per-case
    // clone of it in a mixture: resolved to the variable the data binds).
    Source s = resolveGated(o, env, where);
    if (s.kind != Source::Data || ir::isKnownInput(s.data))
      continue;
    auto bound = data_.variables.find(s.data);
    if (bound != data_.variables.end() && !bound->second.missing.empty())
      return p_.loadDouble(dataBuffer(s.data, Data::Observed), s.element);
  }
  return kNoExpr;
}

ExprId PlanBuilder::times(ExprId a, ExprId b) {
  if (a == kNoExpr)
    return b;
  if (b == kNoExpr)
    return a;
  return p_.mulDouble(a, b);
}

// Reads of posteriors never computed are schedule bugs.
void PlanBuilder::noteRead(int posterior, SourceRange where) {
  if (checkReads_)
    initRead_.insert(posterior);
  if (!checkReads_ || computed_.count(posterior))
    return;
  fail(where, "internal: the schedule reads %" + p_.posteriors[posterior].variable->name +
                  ".q before computing it");
}

/// The product of the case probabilities of `gates` (`when %c.q[..] case k`).
ExprId PlanBuilder::gateWeight(const std::vector<std::pair<Source, ExprId>> &gates) {
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

} // namespace ppc::codegen::lowering
