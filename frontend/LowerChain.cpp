//===- frontend/LowerChain.cpp - Markov chains along a plate --------------===//
//
//   val z = ?.chain(Categorical(pi))(prev => Categorical(A(prev)))
//
// defines one Categorical per element of the plate, the first drawn from
// Categorical(pi) and each later one from row A(prev) of the transition
// probabilities, prev being the element before it: a hidden Markov chain
// (BayesPy's CategoricalMarkovChain). It becomes one factor of the IR per
// element, `%z = chain(%pi, %A) : cat<K>` in a loop over the plate, with the
// whole plate of rows %A as its second argument; the factor's position in
// the plate says which probabilities apply. Its posterior is a structured
// chain (runtime/factors/MarkovChain.cpp), not one Categorical per element.
// Nested in a map, each element of the outer plate is one sequence:
// ?.map(_ => ?.chain(...)(...)). Emissions map over the chain as over any
// plate of Categoricals: z.map(zt => Categorical(B(zt))). A chain of
// Gaussians, ?.chain(Gaussian(m0, p0))(prev => Gaussian(a * prev, tau)),
// is `%x = gaussian_chain(%m0, %p0, %a, %tau) : real` in the same way
// (runtime/factors/GaussianChain.cpp: a Kalman smoother), and a chain of
// MvGaussians, ?.chain(MvGaussian(m0, P0))(prev => MvGaussian(A * prev, Q)),
// `%x = mvgaussian_chain(%m0, %P0, %A, %Q, D) : vector<D>` with A's plate of
// D rows read whole (runtime/factors/MvGaussianChain.cpp).
//
//===----------------------------------------------------------------------===//
#include "frontend/LoweringImpl.h"

#include "ir/IR.h"

namespace ppc::lowering {

namespace {
constexpr const char *kChainUsage =
    "a Markov chain is written ?.chain(Categorical(pi))(prev => Categorical(A(prev))): the first element's "
    "distribution, then the next element's given the one before it, with pi a Dirichlet and A a plate of K "
    "Dirichlets";
} // namespace

SValue Lowering::markovChain(const ast::Map &m, const ast::Apply &a) {
  if (a.args.size() != 1)
    return fail(a.lparen, std::string("chain takes its transition as one function, prev => Categorical(A(prev)); ") +
                              kChainUsage);
  SValue recv = eval(*m.receiver);
  if (recv.isError())
    return recv;
  if (recv.kind != SValue::Kind::Plate || recv.freeDims() != 0)
    return fail(m.receiver->loc, "chain needs a plate (? or 0L until T); got " + describe(recv));
  const auto *fn = ast::dyn<ast::Lambda>(a.args[0].get());
  if (!fn || fn->param.empty() || fn->param.rfind("_$", 0) == 0)
    return fail(a.args[0]->loc, std::string("the transition of a chain is a function of the element before it, "
                                            "prev => Categorical(A(prev)); ") + kChainUsage);

  // The first element: Categorical(pi), pi a Dirichlet, or Gaussian(m0, p0)
  // (read from the syntax: evaluating the distribution would define a variable).
  const auto *first = ast::dyn<ast::Apply>(m.fn.get());
  const auto *firstName = first ? ast::dyn<ast::Name>(first->callee.get()) : nullptr;
  if (firstName && firstName->name == "Gaussian" && !lookup("Gaussian"))
    return gaussianChain(recv, *first, *fn, m.loc, a.loc);
  if (firstName && firstName->name == "MvGaussian" && !lookup("MvGaussian"))
    return mvGaussianChain(recv, *first, *fn, m.loc, a.loc);
  if (!firstName || firstName->name != "Categorical" || lookup("Categorical") || first->args.size() != 1)
    return fail(m.fn->loc, "the first element of a chain must be Categorical(pi) with pi a Dirichlet random "
                           "variable, Gaussian(m0, p0) for a chain of Gaussians or MvGaussian(m0, P0) for a chain "
                           "of vectors; " + std::string(kChainUsage));
  SValue pi = eval(*first->args[0]);
  if (pi.isError())
    return pi;
  auto isDirichlet = [](const SValue &v) {
    auto f = v.kind == SValue::Kind::RV ? ir::familyOf(v.base) : std::nullopt;
    return f && *f == Family::Dirichlet;
  };
  if (!isDirichlet(pi) || pi.freeDims() != 0)
    return fail(pi.loc, "the initial probabilities of a chain must be one Dirichlet random variable; got " +
                            describe(pi));

  // The transition: Categorical(A(prev)), A a plate of K Dirichlets of dimension K.
  const auto *body = ast::dyn<ast::Apply>(fn->body.get());
  const auto *callee = body ? ast::dyn<ast::Name>(body->callee.get()) : nullptr;
  const auto *row = body && body->args.size() == 1 ? ast::dyn<ast::Apply>(body->args[0].get()) : nullptr;
  const auto *prev = row && row->args.size() == 1 ? ast::dyn<ast::Name>(row->args[0].get()) : nullptr;
  if (!callee || callee->name != "Categorical" || lookup("Categorical") || !prev || prev->name != fn->param)
    return fail(fn->body->loc, "the transition of a chain must be Categorical(A(" + fn->param +
                                   ")), the row of a plate of Dirichlets that the element before selects; " +
                                   kChainUsage);
  SValue A = eval(*row->callee);
  if (A.isError())
    return A;
  const Dim K = pi.base->type.dim;
  if (!isDirichlet(A) || A.freeDims() != 1)
    return fail(row->callee->loc, "the transition probabilities of a chain must be a plate of Dirichlet random "
                                  "variables, one row per state; got " + describe(A));
  const Value *rows = freePlatesOf(A)[0].value;
  auto size = ir::knownPlateSize(*rows->def);
  if (!size || !(*size == K) || !(A.base->type.dim == K))
    return fail(row->callee->loc, "the transition probabilities of a chain over " + dimText(K) +
                                      " states must be " + dimText(K) + " Dirichlets of dimension " + dimText(K) +
                                      "; '" + A.base->name + "' has " +
                                      (size ? dimText(*size) : std::string("a data-sized number of")) +
                                      " rows of dimension " + dimText(A.base->type.dim));

  // A unindexed: the whole plate of rows.
  return chainFactor(recv, Family::MarkovChain, {pi, A}, m.loc, a.loc);
}

/// The loop over the chain's plate and its factor, one per element.
SValue Lowering::chainFactor(const SValue &plate, Family family, const std::vector<SValue> &args, SourceRange loopLoc,
                             SourceRange loc) {
  ir::Region *outer = b_.insertionRegion();
  Op *loop = b_.createFor(Operand::ofValue(plate.base, plate.bound),
                          "t." + (currentVal_.empty() ? std::string("v") : currentVal_), loopLoc);
  track(loop->index);
  b_.setInsertionRegion(loop->regions[0].get());
  loops_.push_back({loop, loop->index});
  Op *op = b_.create(OpKind::Random, loc);
  op->family = family;
  for (const SValue &arg : args) {
    op->operands.push_back(arg.kind == SValue::Kind::Det ? arg.det : arg.element());
    op->operandLocs.push_back(arg.loc);
  }
  Value *res = track(b_.addResult(op, anonymousName(), ir::randomResultType(family, op->operands)));
  loops_.pop_back();
  b_.setInsertionRegion(outer);
  SValue v;
  v.kind = SValue::Kind::RV;
  v.loc = loc;
  v.base = res;
  v.bound = currentIndices();
  return v;
}

/// The arguments (m0, p0, a, tau) of a chain of Gaussians or of vectors: its
/// first element's mean and precision, and its transition's coefficient and
/// precision. The transition's mean is prev (a = 1), a * prev, or prev * a
/// where the product `commutes` (scalars); anything else is an error naming
/// `form`. nullopt after an error.
std::optional<std::vector<SValue>> Lowering::stateChainArguments(const ast::Apply &first, const ast::Lambda &fn,
                                                                 const ast::Apply &transition, bool commutes,
                                                                 const std::string &form, const std::string &usage) {
  auto isPrev = [&](const ast::Expr &e) {
    const auto *n = ast::dyn<ast::Name>(&e);
    return n && n->name == fn.param;
  };
  const ast::Expr &mean = *transition.args[0];
  const ast::Expr *coefficient = nullptr;
  if (!isPrev(mean)) {
    const auto *bin = ast::dyn<ast::Binary>(&mean);
    if (bin && bin->op == '*' && isPrev(*bin->rhs) && !isPrev(*bin->lhs))
      coefficient = bin->lhs.get();
    else if (commutes && bin && bin->op == '*' && isPrev(*bin->lhs) && !isPrev(*bin->rhs))
      coefficient = bin->rhs.get();
    else {
      fail(mean.loc, "the mean of a chain's transition must be " + fn.param + " or " + form + "; " + usage);
      return std::nullopt;
    }
  }
  std::vector<SValue> args = {eval(*first.args[0]), eval(*first.args[1])};
  if (coefficient) {
    args.push_back(eval(*coefficient));
  } else {
    SValue one;
    one.kind = SValue::Kind::Det;
    one.loc = mean.loc;
    one.constant = 1.0;
    one.det = Operand::ofFloat(1.0);
    args.push_back(one);
  }
  args.push_back(eval(*transition.args[1]));
  return args;
}

// ?.chain(Gaussian(m0, p0))(prev => Gaussian(a * prev, tau)): m0, a
// constants or Gaussians, p0, tau positive constants or Gammas (global: one
// variable each); the transition's mean is prev, a * prev or prev * a.
SValue Lowering::gaussianChain(const SValue &plate, const ast::Apply &first, const ast::Lambda &fn,
                               SourceRange loopLoc, SourceRange loc) {
  const std::string usage = "a chain of Gaussians is written ?.chain(Gaussian(m0, p0))(prev => Gaussian(a * prev, "
                            "tau)) (or Gaussian(prev, tau)), with m0 and a constants or Gaussians and p0 and tau "
                            "positive constants or Gammas";
  if (first.args.size() != 2)
    return fail(first.loc, "the first element of a chain of Gaussians takes a mean and a precision; " + usage);
  const auto *body = ast::dyn<ast::Apply>(fn.body.get());
  const auto *callee = body ? ast::dyn<ast::Name>(body->callee.get()) : nullptr;
  if (!callee || callee->name != "Gaussian" || body->args.size() != 2)
    return fail(fn.body->loc, "the transition of a chain of Gaussians must be Gaussian(a * " + fn.param +
                                  ", tau); " + usage);
  auto args = stateChainArguments(first, fn, *body, /*commutes=*/true,
                                  "a * " + fn.param + " (a linear-Gaussian state-space model)", usage);
  if (!args)
    return SValue::error();
  const FamilySpec &spec = familySpec(Family::GaussianChain);
  bool ok = true;
  for (size_t i = 0; i < args->size(); ++i) {
    SValue &arg = (*args)[i];
    if (arg.kind == SValue::Kind::Dist)
      arg = materialize(arg);
    if (arg.isError() || !checkArgument(spec, spec.params[i], arg)) {
      ok = false;
      continue;
    }
    if (arg.kind == SValue::Kind::RV && (arg.freeDims() || ir::isKnownInput(arg.base))) {
      diags_.error(arg.loc, "the " + std::string(spec.params[i].name) + " of a chain of Gaussians must be one " +
                                "variable or a constant (the same for every element); got " + describe(arg));
      ok = false;
    }
  }
  if (!ok)
    return SValue::error();
  return chainFactor(plate, Family::GaussianChain, *args, loopLoc, loc);
}

// ?.chain(MvGaussian(m0, P0))(prev => MvGaussian(A * prev, Q)): m0 a
// constant or an MvGaussian, P0 and Q positive constants (c I) or Wisharts,
// A a constant (c I), a plate of D rows (MvGaussians of dimension D, or
// Data(D)), or one MvGaussian of dimension D * D, vec(A) row by row (global:
// one variable each); the transition's mean is prev, c * prev or A * prev.
SValue Lowering::mvGaussianChain(const SValue &plate, const ast::Apply &first, const ast::Lambda &fn,
                                 SourceRange loopLoc, SourceRange loc) {
  const std::string usage =
      "a chain of vectors is written ?.chain(MvGaussian(m0, P0))(prev => MvGaussian(A * prev, Q)) (or "
      "MvGaussian(prev, Q)), with m0 a constant or an MvGaussian, P0 and Q positive constants or Wisharts, and A a "
      "constant, the plate of its D rows (MvGaussians of dimension D, learnt; Data(D) vectors, known) or one MvGaussian "
      "of dimension D * D (vec(A) row by row, learnt jointly)";
  if (first.args.size() != 2 && first.args.size() != 3)
    return fail(first.loc, "the first element of a chain of vectors takes a mean, a precision and optionally the "
                           "dimension; " + usage);
  const auto *body = ast::dyn<ast::Apply>(fn.body.get());
  const auto *callee = body ? ast::dyn<ast::Name>(body->callee.get()) : nullptr;
  if (!callee || callee->name != "MvGaussian" || body->args.size() != 2)
    return fail(fn.body->loc, "the transition of a chain of vectors must be MvGaussian(A * " + fn.param + ", Q); " +
                                  usage);
  auto parsed = stateChainArguments(first, fn, *body, /*commutes=*/false,
                                    "A * " + fn.param + " (the transition matrix on the left; a linear dynamical system)",
                                    usage);
  if (!parsed)
    return SValue::error();
  std::vector<SValue> &args = *parsed;
  const FamilySpec &spec = familySpec(Family::MvGaussianChain);
  bool ok = true;
  for (size_t i = 0; i < args.size(); ++i) {
    SValue &arg = args[i];
    if (arg.kind == SValue::Kind::Dist)
      arg = materialize(arg);
    const bool rows = i == 2; // A: the whole plate of its rows, random or known (Data(D))
    const bool knownRows = rows && arg.kind == SValue::Kind::RV && ir::isKnownInput(arg.base) &&
                           arg.base->type.kind == TypeKind::Vector;
    if (arg.isError() || (!knownRows && !checkArgument(spec, spec.params[i], arg))) {
      ok = false;
      continue;
    }
    const bool joint = rows && arg.kind == SValue::Kind::RV && !ir::isKnownInput(arg.base) && arg.freeDims() == 0;
    if (arg.kind == SValue::Kind::RV &&
        ((ir::isKnownInput(arg.base) && !knownRows) || (!joint && arg.freeDims() != (rows ? 1u : 0u)))) {
      diags_.error(arg.loc, rows ? "the transition matrix of a chain of vectors must be a constant, a plate of D "
                                   "rows of dimension D (MvGaussians or Data(D)) or one MvGaussian of dimension D * D "
                                   "(vec(A), row by row), the same for every element; got " +
                                       describe(arg)
                                 : "the " + std::string(spec.params[i].name) + " of a chain of vectors must be one " +
                                       "variable or a constant (the same for every element); got " + describe(arg));
      ok = false;
    }
  }
  if (!ok)
    return SValue::error();
  // The dimension: written, or from a random argument.
  std::optional<Dim> dim;
  if (first.args.size() == 3) {
    SValue d = eval(*first.args[2]);
    if (d.isError() || !checkArgument(spec, spec.params[4], d))
      return SValue::error();
    dim = d.det.isValue() ? Dim::of(d.det.value) : Dim::of(d.det.intValue);
  }
  // A single MvGaussian as A is vec(A), of dimension D * D.
  const bool jointA = args[2].kind == SValue::Kind::RV && !ir::isKnownInput(args[2].base) && args[2].freeDims() == 0;
  for (size_t i = 0; i < args.size(); ++i)
    if (!dim && args[i].kind == SValue::Kind::RV && args[i].base->type.hasDim() && !(i == 2 && jointA))
      dim = args[i].base->type.dim;
  if (!dim)
    return fail(first.loc, "a chain of vectors with constant parameters needs its dimension: MvGaussian(m0, P0, D) "
                           "as the first element");
  for (size_t i = 0; i < args.size(); ++i) {
    const SValue &arg = args[i];
    if (arg.kind != SValue::Kind::RV)
      continue;
    if (i == 2 && jointA) { // D * D: checked here when both are numbers, else when the plan knows them
      const Dim &a = arg.base->type.dim;
      int64_t squared = 0; // a D too large to square is no vec(A) either
      const bool overflows = __builtin_mul_overflow(dim->constant, dim->constant, &squared);
      if (!a.value && !dim->value && (overflows || a.constant != squared)) {
        diags_.error(arg.loc, "the transition matrix '" + arg.base->name + "' of a chain of vectors of dimension " +
                                  dimText(*dim) + " as one MvGaussian (vec(A)) must have dimension " +
                                  (overflows ? dimText(*dim) + " * " + dimText(*dim) : std::to_string(squared)) +
                                  "; it has " + dimText(a));
        ok = false;
      }
      continue;
    }
    if (!(arg.base->type.dim == *dim)) {
      diags_.error(arg.loc, "the " + std::string(spec.params[i].name) + " '" + arg.base->name +
                                "' of a chain of vectors of dimension " + dimText(*dim) + " has dimension " +
                                dimText(arg.base->type.dim));
      ok = false;
    }
    if (i == 2) {
      auto size = ir::knownPlateSize(*freePlatesOf(arg)[0].value->def);
      if (!size || !(*size == *dim)) {
        diags_.error(arg.loc, "the transition matrix of a chain of vectors of dimension " + dimText(*dim) +
                                  " must be a plate of " + dimText(*dim) + " rows; '" + arg.base->name + "' has " +
                                  (size ? dimText(*size) : std::string("a data-sized number of")));
        ok = false;
      }
    }
  }
  if (!ok)
    return SValue::error();
  SValue d;
  d.kind = SValue::Kind::Det;
  d.isLong = true;
  d.loc = first.loc;
  d.det = dim->value ? Operand::ofValue(dim->value) : Operand::ofInt(dim->constant);
  args.push_back(d);
  return chainFactor(plate, Family::MvGaussianChain, args, loopLoc, loc);
}

} // namespace ppc::lowering
