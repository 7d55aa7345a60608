//===- codegen/plan/LowerPredictive.cpp - missing observations' predictive -===//
//
// An observation missing from the data (an empty cell or NA) has weight 0:
// it adds nothing to the likelihood, which marginalises it out exactly.
// After the run, the `predict` block gives its posterior predictive from
// its parents' posteriors: walking the gated model as the ELBO does, each
// observed factor adds, times the probability of the case it is in, its
// family's predictive statistics (FactorEntry::predictiveKernel: E x for a
// Bernoulli, Categorical or Poisson, E x and E x^2 for a Gaussian) into a
// row per element of the variable; a mixture's predictive is the
// mixture of its components' (Inference::predictions writes them out).
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanBuilder.h"

#include "runtime/Binding.h"

namespace ppc::codegen::lowering {

void PlanBuilder::emitPredictiveBlock() {
  std::vector<Stmt> body;
  Env env;
  std::vector<ExprId> weights;
  emitPredictive(m_.body, body, env, weights);
  std::vector<Stmt> &out = p_.blocks[Plan::Predict];
  for (const Plan::Predicted &pr : p_.predicted) {
    Stmt z;
    z.kind = Stmt::Kind::Zero;
    z.buffer = pr.buffer;
    z.index = p_.intConst(0);
    z.count = pr.elements * pr.width;
    z.note = "predictive of " + pr.variable->name;
    out.push_back(std::move(z));
  }
  out.insert(out.end(), std::make_move_iterator(body.begin()), std::make_move_iterator(body.end()));
}

void PlanBuilder::emitPredictive(const Region &r, std::vector<Stmt> &out, Env &env, std::vector<ExprId> &weights) {
  for (const auto &op : r.ops) {
    if (!ok_)
      return;
    switch (op->kind) {
    case OpKind::For: {
      Env inner;
      Stmt loop = plateLoop(*op, env, inner);
      emitPredictive(*op->regions[0], loop.body, inner, weights);
      if (!loop.body.empty())
        out.push_back(std::move(loop));
      break;
    }
    case OpKind::When: {
      Source cond = resolveGated(op->operands[0].value->def->operands[0], env, op->loc);
      if (cond.kind != Source::Latent)
        break; // an observed condition: the observations in its other cases are not this one's
      // A condition the nested schedule keeps for one element at a time
      // (LDA's token topics) holds the last element's rows after the run.
      const bool scratch = p_.posteriors[size_t(cond.posterior)].scratch;
      const bool outer = scratchGate_;
      scratchGate_ = scratchGate_ || scratch;
      weights.push_back(gateWeight({{cond, caseExpr(op->operands[1], env, op->loc)}}));
      emitPredictive(*op->regions[0], out, env, weights);
      weights.pop_back();
      scratchGate_ = outer;
      break;
    }
    case OpKind::Random: emitFactorPredictive(*op, out, env, weights); break;
    default: break;
    }
  }
}

void PlanBuilder::emitFactorPredictive(const Op &f, std::vector<Stmt> &out, Env &env,
                                       const std::vector<ExprId> &weights) {
  const FactorEntry &entry = factorEntry(f.family);
  if (!f.observed)
    return;
  std::vector<Op *> loops = ir::enclosingLoops(f);
  std::vector<std::optional<Source>> args;
  args.push_back(resolveGated(Operand::ofValue(f.result(), indicesOf(loops)), env, f.loc));
  if (!ok_ || args[0]->kind != Source::Data)
    return;
  auto bound = data_.variables.find(args[0]->data);
  // Every process of a data-parallel run has the same predict block (each
  // gathers its rows in turn), whether its part misses values or not.
  if (bound == data_.variables.end() ||
      (partitioned_ ? !predicted_.count(args[0]->data->name) : bound->second.missing.empty()))
    return;
  if (entry.predictiveKernel.empty()) {
    fail(f.loc, "'" + args[0]->data->name + "' has missing values, and ppc has no posterior predictive for " +
                    displayName(f.family) +
                    " observations yet (Bernoulli, Categorical, Poisson and Gaussian have one)");
    return;
  }
  for (const Operand &o : f.operands)
    args.push_back(resolveGated(o, env, f.loc));
  if (!ok_)
    return;
  const Value *data = args[0]->data;
  if (scratchGate_) {
    if (unpredicted_.insert(data).second)
      diags_.warning(f.loc, "'" + data->name + "' has missing values, but their posterior predictive is not written: "
                            "it needs the cases' probabilities of each element, which the nested schedule keeps "
                            "for one element at a time (--schedule plain keeps them)");
    return;
  }
  int index = -1;
  for (size_t i = 0; i < p_.predicted.size(); ++i)
    if (p_.predicted[i].variable == data)
      index = int(i);
  if (index < 0) {
    Plan::Predicted pr;
    pr.variable = data;
    pr.family = f.family;
    pr.dimension = args[0]->dimension;
    pr.width = int64_t(entry.predictiveColumns(pr.dimension).size());
    pr.elements = int64_t(bound->second.values.size()); // a scalar per element (missing values are)
    pr.buffer = addBuffer(data->name + ".predicted", false, pr.elements * pr.width);
    pr.rowDims = rowDims(data->dims, f.loc, entry.predictiveColumns(pr.dimension));
    pr.missing = bound->second.missing;
    pr.partitioned = partitioned_ && !data->dims.empty() && data->dims.front() == partitioned_;
    index = int(p_.predicted.size());
    p_.predicted.push_back(std::move(pr));
  }
  const Plan::Predicted &pr = p_.predicted[size_t(index)];
  ExprId w = kNoExpr;
  for (ExprId x : weights)
    w = w == kNoExpr ? x : p_.mulDouble(w, x);
  auto call = marshal(entry.predictiveKernel, KernelRole{f.family, KernelRole::Elbo, 0}, args, w, kNoExpr,
                      std::make_pair(pr.buffer, p_.mul(args[0]->element, p_.intConst(pr.width))), f.loc);
  if (!call)
    return;
  call->note = "predictive of " + data->name;
  out.push_back(std::move(*call));
}

} // namespace ppc::codegen::lowering
