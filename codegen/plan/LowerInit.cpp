//===- codegen/plan/LowerInit.cpp - random initial posteriors ---------------===//
//
// Gate conditions (mixture indicators) start from random posteriors, drawn
// by a counter-based generator keyed by (seed, posterior, element), so any
// element can be drawn alone, on any thread or process, with the same
// result: the symmetry breaking of mixtures.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanBuilder.h"
#include "codegen/plan/PlanEdits.h"

#include "runtime/Symbols.h"

namespace ppc::codegen::lowering {

/// Stored posteriors of gate conditions start random (before the init
/// block's statements); scratch ones are drawn where a fused loop of the
/// init block reaches their element (emitScratchRandomInit).
void PlanBuilder::emitRandomInit(std::vector<Stmt> &out) {
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
    out.push_back(guardRandomLocal(post, std::move(loop)));
  }
}

/// A local's random start, under the switch Plan::randomLocals.
Stmt PlanBuilder::guardRandomLocal(const Posterior &post, Stmt draw) {
  if (!post.partitioned)
    return draw;
  if (p_.randomLocals < 0)
    p_.randomLocals = addBuffer("random.locals", false, 1);
  Stmt guard = edit::whileSwitchedOn(p_, p_.randomLocals, "random starts of the locals while random.locals is on");
  guard.body.push_back(std::move(draw));
  return guard;
}

void PlanBuilder::emitUserPosteriorTables(std::vector<Stmt> &out) {
  for (const Posterior &post : p_.posteriors) {
    if (!(post.userInit || post.given) || post.scratch || post.expRows < 0)
      continue;
    Stmt loop;
    loop.kind = Stmt::Kind::Loop;
    loop.var = newVar();
    loop.bound = p_.intConst(post.elements);
    loop.note = "exp of " + post.variable->name + "'s statistics (the user's)";
    ExprId e = p_.loopVar(loop.var), row = p_.mul(e, p_.intConst(post.width));
    loop.body.push_back(kernelCall("ppc_exp_shifted_n",
                                   {intArg(post.width), ptrArg(post.stats, row), ptrArg(post.expRows, row),
                                    ptrArg(post.expRowShifts, e)},
                                   loop.note));
    out.push_back(std::move(loop));
  }
}

Stmt PlanBuilder::randomCall(int pi, ExprId element, ExprId row) {
  const Posterior &post = p_.posteriors[size_t(pi)];
  ExprId at = p_.mul(row, p_.intConst(post.width));
  Arg seed = exprArg(Arg::Kind::Int, p_.loadInt(p_.seedBuffer, p_.intConst(0)));
  if (p_.elementOffsets >= 0 && post.partitioned) // the element's index in the whole plate
    element = p_.add(element, p_.loadInt(p_.elementOffsets, p_.intConst(pi)));
  Arg elementArg = exprArg(Arg::Kind::Int, element);
  std::string note = "random init " + post.variable->name;
  if (post.family == Family::Gaussian || post.family == Family::MvGaussian)
    return kernelCall("ppc_random_gaussian",
                      {intArg(post.dimension), intArg(post.family == Family::MvGaussian ? 1 : 0), seed, intArg(pi),
                       elementArg, ptrArg(post.eta, at), ptrArg(post.stats, at)},
                      note);
  if (post.family == Family::MarkovChain)
    return kernelCall("ppc_random_chain", {intArg(post.dimension), seed, intArg(pi), elementArg, ptrArg(post.eta, at),
                                           ptrArg(post.stats, at)},
                      note);
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
void PlanBuilder::emitScratchRandomInit(int32_t var, std::vector<Stmt> &out, SourceRange where) {
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
    out.push_back(guardRandomLocal(post, std::move(loop)));
    computed_.insert(int(pi));
  }
}

} // namespace ppc::codegen::lowering
