//===- frontend/LowerArithmetic.cpp - arithmetic on random variables -----===//
//
// `a + b`, `a - b`, `a * b`, `-a`, `a / c` and `a.dot(b)` where an operand is a
// random variable or a known input (Data) become deterministic factors of
// the IR (sum, difference, product, dot; ir/Families.h), whose VMP messages
// the catalogue has (runtime/factors/Arithmetic.h). What VMP accepts is
// checked here, with the operator's position:
//   * operands of + - * are Gaussians (or arithmetic on them), constants and
//     scalar Data; .dot takes MvGaussians and Data(D) vectors of one dimension;
//   * at least one operand is random (arithmetic on Data alone belongs in the
//     CSV), and no random variable reaches one factor twice (mean-field
//     treats the operands as independent: a * a is not a square);
//   * division only by a constant;
//   * a Gamma only times a known positive number (tau * s(i)): the factor
//     `scale`, whose value is Gamma-like (a precision or rate accepts it);
//   * softmax(e) of a plate of K real values: the factor `softmax`, whose
//     value is K probabilities (a Categorical accepts them; Bouchard's bound,
//     runtime/factors/Softmax.cpp), its operand the whole plate;
//   * sigmoid(e) of a real value e: the factor `sigmoid`, whose value is a
//     probability (a Bernoulli or Binomial accepts it; Jaakkola-Jordan bound,
//     runtime/factors/Sigmoid.cpp); of a constant, the constant's sigmoid.
// Plates of variables lift elementwise, as distributions' arguments do.
//
//===----------------------------------------------------------------------===//
#include "frontend/LoweringImpl.h"

#include "ir/Aliasing.h"
#include "ir/Printer.h"

#include <cmath>
#include <set>

namespace ppc::lowering {

namespace {

/// The latent variables a value is computed from, spelt as the IR prints
/// them (w[0] and w[1] are different variables).
std::set<std::string> latentLeafNames(const Operand &o) {
  std::vector<Operand> leaves;
  ir::latentLeaves(o, leaves);
  std::set<std::string> names;
  for (const Operand &l : leaves)
    names.insert(ir::toString(l));
  return names;
}

bool isLatent(const SValue &v) {
  return (v.kind == SValue::Kind::RV && !ir::isKnownInput(v.base)) || v.kind == SValue::Kind::Dist;
}

} // namespace

bool Lowering::isRandomOperand(const SValue &v) {
  return v.kind == SValue::Kind::RV || v.kind == SValue::Kind::Dist;
}

SValue Lowering::randomArithmetic(char op, SourceRange loc, SValue l, SValue r) {
  if (op == '/') {
    if (isRandomOperand(r))
      return fail(r.loc, "division by " + describe(r) +
                             " is not conjugate under variational message passing (VMP has no message through "
                             "1/x); divide by a constant, or multiply by a variable that stands for the inverse");
    if (r.kind != SValue::Kind::Det || (r.constant && *r.constant == 0))
      return fail(r.loc, "a random variable can be divided only by a nonzero number known before inference (a "
                         "constant or a parameter); got " + describe(r));
    // x / s is x * (1 / s): a constant folded now, a parameter's inverse a
    // value computed when the parameters are bound (which checks s != 0).
    SValue one;
    one.kind = SValue::Kind::Det;
    one.loc = r.loc;
    one.constant = 1.0;
    one.det = Operand::ofFloat(1.0);
    SValue inv = arithmetic(OpKind::Div, r.loc, one, &r);
    if (inv.isError())
      return inv;
    inv.isLong = false;
    if (isGammaLike(l))
      return scaledGamma(loc, std::move(l), std::move(inv));
    return arithmeticFactor(Family::Product, loc, {std::move(l), std::move(inv)});
  }
  if (op == '*' && (isGammaLike(l) || isGammaLike(r)))
    return isGammaLike(l) ? scaledGamma(loc, std::move(l), std::move(r)) : scaledGamma(loc, std::move(r), std::move(l));
  Family fam = op == '+' ? Family::Sum : op == '-' ? Family::Difference : Family::Product;
  return arithmeticFactor(fam, loc, {std::move(l), std::move(r)});
}

bool Lowering::isGammaLike(const SValue &v) {
  if (v.kind != SValue::Kind::RV || ir::isKnownInput(v.base))
    return false;
  auto f = ir::familyOf(v.base);
  return f && (*f == Family::Gamma || *f == Family::Scale);
}

SValue Lowering::scaledGamma(SourceRange loc, SValue gamma, SValue factor) {
  const bool known = factor.kind == SValue::Kind::Det ||
                     (factor.kind == SValue::Kind::RV && ir::isKnownInput(factor.base) &&
                      factor.base->type.kind == TypeKind::Real);
  if (!known)
    return fail(factor.loc, "a Gamma random variable can be multiplied only by a known positive number (a constant or "
                            "Data: tau * s(i), a scaled precision); got " + describe(factor));
  if (factor.constant && !(*factor.constant > 0))
    return fail(factor.loc, "a Gamma random variable can be multiplied only by a positive number; got " +
                                ir::toString(factor.det));
  return arithmeticFactor(Family::Scale, loc, {std::move(gamma), std::move(factor)});
}

SValue Lowering::negate(SourceRange loc, SValue x) {
  SValue minusOne;
  minusOne.kind = SValue::Kind::Det;
  minusOne.loc = loc;
  minusOne.constant = -1.0;
  minusOne.det = Operand::ofFloat(-1.0);
  return arithmeticFactor(Family::Product, loc, {std::move(x), std::move(minusOne)});
}

SValue Lowering::dotProduct(const ast::Map &m) {
  SValue a = eval(*m.receiver);
  SValue b = eval(*m.fn);
  if (a.isError() || b.isError())
    return SValue::error();
  SourceRange loc = m.loc;
  for (const SValue *v : {&a, &b}) {
    bool vector = v->kind == SValue::Kind::RV && v->base->type.kind == TypeKind::Vector;
    if (!vector)
      return fail(v->loc, "the operands of .dot must be MvGaussian random variables or Data(D) vectors; got " +
                              describe(*v) + (v->kind == SValue::Kind::Det ? " (a constant vector: not supported)" : ""));
  }
  const Dim &da = a.base->type.dim, &db = b.base->type.dim;
  if (!(da == db))
    return fail(loc, "the operands of .dot have different dimensions: '" + a.base->name + "' has " + dimText(da) +
                         " and '" + b.base->name + "' has " + dimText(db));
  return arithmeticFactor(Family::InnerProduct, loc, {std::move(a), std::move(b)});
}

SValue Lowering::logisticLink(const ast::Apply &a) {
  if (a.args.size() != 1)
    return fail(a.callee->loc, "sigmoid takes one argument, the log-odds (a real value such as w.dot(x(i)) + b); got " +
                                   std::to_string(a.args.size()));
  SValue e = eval(*a.args[0]);
  if (e.isError())
    return e;
  if (e.kind == SValue::Kind::Det && e.constant) { // a known probability
    SValue p = e;
    p.loc = a.loc;
    p.isLong = false;
    p.constant = 1.0 / (1.0 + std::exp(-*e.constant));
    p.det = Operand::ofFloat(*p.constant);
    return p;
  }
  if (isGammaLike(e))
    return fail(e.loc, "sigmoid takes a real value (a Gaussian, or +, -, * and .dot of Gaussians, constants and "
                       "Data); got " + describe(e) + ", a positive one");
  return arithmeticFactor(Family::Sigmoid, a.loc, {std::move(e)});
}

SValue Lowering::softmaxLink(const ast::Apply &a) {
  const std::string usage = "softmax takes a plate of K real values, e.g. softmax(W.map(w => w.dot(x(i)))) with W a "
                            "plate of K MvGaussians: the log-odds of the K categories";
  if (a.args.empty())
    return fail(a.callee->loc, usage + "; got no argument");
  if (a.args.size() > 1)
    return softmaxOfValues(a);
  SValue e = eval(*a.args[0]);
  if (e.isError())
    return e;
  if (e.kind == SValue::Kind::Dist)
    e = materialize(e);
  auto f = e.kind == SValue::Kind::RV ? ir::familyOf(e.base) : std::nullopt;
  const bool real = f && familySpec(*f).support == Support::Real && !ir::isKnownInput(e.base);
  if (!real || e.freeDims() != 1)
    return fail(e.loc, usage + "; got " + describe(e));
  const Value *plate = freePlatesOf(e)[0].value;
  if (!ir::knownPlateSize(*plate->def))
    return fail(e.loc, "softmax needs a plate of known size (0L until K); '" + e.base->name +
                           "' is over a data-sized plate");
  // The K values are read whole: the op's operand leaves their plate unindexed.
  Op *op = b_.create(OpKind::Random, a.loc);
  op->family = Family::Softmax;
  op->operands = {e.element()};
  op->operandLocs = {e.loc};
  Value *res = track(b_.addResult(op, anonymousName(), ir::randomResultType(Family::Softmax, op->operands)));
  SValue v;
  v.kind = SValue::Kind::RV;
  v.loc = a.loc;
  v.base = res;
  v.bound = currentIndices();
  return v;
}

// softmax(e_0, ..., e_{K-1}): the K values stacked into a plate of K
// elements (`stack`, runtime/factors/Stack.cpp), which the link reads whole.
// Each value is a constant (a reference category's 0.0) or a real random
// value; at least one is random.
SValue Lowering::softmaxOfValues(const ast::Apply &a) {
  std::vector<SValue> values;
  bool ok = true, latent = false;
  for (const auto &arg : a.args) {
    SValue v = eval(*arg);
    if (v.kind == SValue::Kind::Dist)
      v = materialize(v);
    if (v.isError()) {
      ok = false;
      continue;
    }
    auto f = v.kind == SValue::Kind::RV ? ir::familyOf(v.base) : std::nullopt;
    const bool real = f && familySpec(*f).support == Support::Real && !ir::isKnownInput(v.base);
    if (v.kind == SValue::Kind::Det && v.constant) {
      values.push_back(v);
      continue;
    }
    if (!real || v.freeDims() != 0) {
      diags_.error(v.loc, "each argument of softmax is the log-odds of one category: a constant or a real random "
                          "value (a Gaussian, or arithmetic on Gaussians and Data); got " + describe(v));
      ok = false;
      continue;
    }
    latent = true;
    values.push_back(v);
  }
  if (!ok)
    return SValue::error();
  if (!latent)
    return fail(a.loc, "softmax of constants alone is a constant; write the probabilities in the model");
  // Mean-field: the K values must be independent under q.
  std::set<std::string> seen;
  for (const SValue &v : values) {
    if (v.kind != SValue::Kind::RV)
      continue;
    for (const std::string &l : latentLeafNames(v.element()))
      if (!seen.insert(l).second)
        return fail(v.loc, "'" + (l.size() > 1 && l[0] == '%' ? l.substr(1) : l) +
                               "' appears in two arguments of softmax; variational message passing treats the "
                               "categories' log-odds as independent, so a variable may enter only one of them");
  }
  // The plate of K elements, shared with any (0L until K) of the same size.
  const int64_t K = int64_t(values.size());
  const std::string key = "until 0 " + std::to_string(K);
  Value *plate;
  if (auto it = plateMemo_.find(key); it != plateMemo_.end()) {
    plate = it->second;
  } else {
    Op *p = createHoisted(OpKind::Plate, a.loc);
    p->plateKind = Op::PlateKind::Until;
    p->operands = {Operand::ofInt(0), Operand::ofInt(K)};
    plate = track(b_.addResult(p, "P." + std::to_string(K), Type::of(TypeKind::Plate)));
    plateMemo_.emplace(key, plate);
  }
  ir::Region *outer = b_.insertionRegion();
  Op *loop = b_.createFor(Operand::ofValue(plate, {}), "k." + (currentVal_.empty() ? std::string("v") : currentVal_),
                          a.loc);
  track(loop->index);
  b_.setInsertionRegion(loop->regions[0].get());
  loops_.push_back({loop, loop->index});
  Op *stack = b_.create(OpKind::Random, a.loc);
  stack->family = Family::Stack;
  for (const SValue &v : values) {
    stack->operands.push_back(v.kind == SValue::Kind::Det ? v.det : v.element());
    stack->operandLocs.push_back(v.loc);
  }
  Value *e = track(b_.addResult(stack, anonymousName(), Type::of(TypeKind::Real)));
  loops_.pop_back();
  b_.setInsertionRegion(outer);
  Op *op = b_.create(OpKind::Random, a.loc);
  op->family = Family::Softmax;
  op->operands = {Operand::ofValue(e, currentIndices())}; // the K values, read whole
  op->operandLocs = {a.loc};
  Value *res = track(b_.addResult(op, anonymousName(), ir::randomResultType(Family::Softmax, op->operands)));
  SValue v;
  v.kind = SValue::Kind::RV;
  v.loc = a.loc;
  v.base = res;
  v.bound = currentIndices();
  return v;
}

SValue Lowering::arithmeticFactor(Family fam, SourceRange loc, std::vector<SValue> args) {
  const FamilySpec &spec = familySpec(fam);
  bool ok = true, latent = false;
  std::vector<Operand> freePlates;
  const SValue *firstLifted = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    SValue &arg = args[i];
    if (arg.kind == SValue::Kind::Dist)
      arg = materialize(arg);
    if (fam != Family::Scale && isGammaLike(arg)) {
      diags_.error(arg.loc, "a Gamma random variable in arithmetic is supported only times a known positive number "
                            "(tau * s(i): a scaled precision, or a Poisson's rate times its exposure); the " +
                                displayName(fam) + " takes Gaussians (and arithmetic on them), constants and Data");
      ok = false;
      continue;
    }
    if (arg.isError() || !checkArgument(spec, spec.params[i], arg)) {
      ok = false;
      continue;
    }
    latent = latent || isLatent(arg);
    if (arg.kind == SValue::Kind::RV && arg.freeDims()) {
      std::vector<Operand> plates = freePlatesOf(arg);
      if (!firstLifted) {
        firstLifted = &arg;
        freePlates = plates;
      } else if (!samePlates(plates, freePlates)) {
        diags_.error(arg.loc, "the operands of the " + displayName(fam) + " range over different plates ('" +
                                  firstLifted->base->name + "' and '" + arg.base->name + "')");
        ok = false;
      }
    }
  }
  if (!ok)
    return SValue::error();
  if (!latent)
    return fail(loc, "arithmetic on Data and constants alone is not a random variable; compute it in the data "
                     "(a column of the CSV) and read it with Data");
  // Mean-field: the operands must be independent under q. Reads that are
  // one element only where Data ids agree are checked row by row when the
  // data are bound (ir/Aliasing.h).
  std::vector<Operand> left, right;
  if (args[0].kind == SValue::Kind::RV)
    ir::latentLeaves(args[0].element(), left);
  if (args.size() > 1 && args[1].kind == SValue::Kind::RV)
    ir::latentLeaves(args[1].element(), right);
  const std::string independent = "; variational message passing treats the operands of arithmetic as independent, "
                                  "so a variable may enter it only once";
  const bool bilinear = fam == Family::Product || fam == Family::InnerProduct;
  for (const Operand &l : left)
    for (const Operand &r : right) {
      const ir::Overlap o = ir::overlap(l, r);
      // Two different elements of one plate variable multiplied: ppc updates
      // a plate's elements at once, from the others' previous posteriors,
      // which for a product of two of them is not coordinate ascent (the
      // ELBO can decrease). In a sum the step is still an ascent.
      if (bilinear && l.value == r.value && o != ir::Overlap::Always)
        return fail(loc, "'" + ir::sourceSpelling(l) + "' and '" + ir::sourceSpelling(r) +
                             "' are elements of one plate variable, multiplied by the " + displayName(fam) +
                             "; ppc updates the elements of a plate together, which is not coordinate ascent when "
                             "they multiply each other (the ELBO could decrease): use two variables, one for each "
                             "side of the product");
      switch (o) {
      case ir::Overlap::Always:
        return fail(loc, "'" + ir::sourceSpelling(l) + "' appears in both operands of the " + displayName(fam) +
                             independent + " (write 2 * a for a + a; a * a is not supported)");
      case ir::Overlap::Sometimes:
        return fail(loc, "'" + ir::sourceSpelling(l) + "' and '" + ir::sourceSpelling(r) +
                             "' are the same variable where their indices agree, and the " + displayName(fam) +
                             " takes them as two operands" + independent +
                             " (give the shared element a variable of its own, or leave it out of one operand)");
      case ir::Overlap::WhereDataEqual:
      case ir::Overlap::Never: break;
      }
    }
  SValue d;
  d.kind = SValue::Kind::Dist;
  d.loc = loc;
  d.family = fam;
  d.args = std::move(args);
  d.freePlates = std::move(freePlates);
  return materialize(d);
}

} // namespace ppc::lowering
