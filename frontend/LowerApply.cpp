//===- frontend/LowerApply.cpp - indexing, distributions and known inputs ---===//
#include "frontend/LoweringImpl.h"

#include "ir/Printer.h"

#include <algorithm>
#include <cmath>

namespace ppc::lowering {

// ---- indexing ----

SValue Lowering::bindIndex(SValue target, const SValue &index, SourceRange loc) {
  if (target.isError() || index.isError())
    return SValue::error();
  if (target.kind == SValue::Kind::Dist) {
    for (SValue &arg : target.args)
      if ((arg.kind == SValue::Kind::RV || arg.kind == SValue::Kind::Plate) && arg.freeDims()) {
        arg = bindIndex(arg, index, loc);
        if (arg.isError())
          return arg;
      }
    target.freePlates.erase(target.freePlates.begin());
    if (target.freePlates.empty())
      return materialize(target);
    return target;
  }
  if (target.freeDims() == 0)
    return fail(loc, "cannot index " + describe(target) + ": it is not a plate");
  Value *plate = target.base->dims[target.bound.size()];
  const Op &plateOp = *plate->def;
  std::string targetName = target.base->name;
  switch (index.kind) {
  case SValue::Kind::Det: {
    const Operand &o = index.det;
    if (o.isValue() && o.value->isLoopIndex()) {
      const Operand &loopPlate = o.value->loop->operands[0];
      if (loopPlate.value != plate)
        return fail(index.loc, "'" + indexName(index) + "' ranges over plate %" + loopPlate.value->name +
                                   " but '" + targetName + "' is indexed by plate %" + plate->name +
                                   " here; index with a variable of the same plate");
      for (size_t k = 0; k < loopPlate.indices.size(); ++k)
        if (k >= target.bound.size() || ir::toString(loopPlate.indices[k]) != ir::toString(target.bound[k]))
          return fail(index.loc, "'" + indexName(index) + "' iterates a different row of plate %" +
                                     plate->name + " than the one selected in '" + targetName + "'");
      break;
    }
    if (!index.isLong)
      return fail(index.loc, "an index must be a plate variable, a Long constant or a Categorical variable; got a Double");
    if (!index.constant)
      return fail(index.loc, "an index must be a plate variable, a Long constant or a Categorical variable; '" +
                                 sourceText(index.loc) + "' is computed (computed indices could leave the plate)");
    if (plateOp.plateKind == Op::PlateKind::Data)
      return fail(index.loc, "'" + targetName + "' is over a data-sized plate; index it with a plate variable (from map), not a number");
    if (index.constant) {
      auto size = ir::knownPlateSize(plateOp);
      if (*index.constant < 0 || (size && size->isConstant() && *index.constant >= double(size->constant)))
        return fail(index.loc, "index " + ir::formatDouble(*index.constant).substr(0, ir::formatDouble(*index.constant).find('.')) +
                                   " is outside plate %" + plate->name + " of '" + targetName + "'");
    }
    break;
  }
  case SValue::Kind::RV: {
    if (index.freeDims())
      return fail(index.loc, "an index must be a single variable; got " + describe(index));
    if (ir::isKnownInput(index.base)) {
      // An id read from the data (u(user(i))): each row picks an element;
      // the ids are checked against the plate's size when the data are bound.
      if (index.base->type.kind != TypeKind::Real)
        return fail(index.loc, "an index read from the data must be a number per row (Data); got " + describe(index));
      if (plateOp.plateKind == Op::PlateKind::Data)
        return fail(index.loc, "'" + targetName + "' is over a data-sized plate; an id read from the data can index "
                                                  "only a plate of known size, (0L until N)");
      break;
    }
    TypeKind tk = index.base->type.kind;
    if (tk != TypeKind::Cat && tk != TypeKind::Bool)
      return fail(index.loc, "an index must be a plate variable, a Long or a Categorical/Bernoulli variable; got " +
                                 describe(index));
    if (plateOp.plateKind == Op::PlateKind::Data)
      return fail(index.loc, "'" + targetName + "' is over a data-sized plate and cannot be indexed by a random variable");
    Dim n = tk == TypeKind::Bool ? Dim::of(2) : index.base->type.dim;
    auto size = ir::knownPlateSize(plateOp);
    if (!size || !(*size == n))
      return fail(index.loc, "'" + indexName(index) + "' takes " + dimText(n) + " values but '" + targetName +
                                 "' has " + (size ? dimText(*size) : plateText(plateOp)) + " elements (plate %" +
                                 plate->name + ")");
    // Its values 0..n-1 are positions: a plate from another start (1L to K)
    // would read mu(1) as the first element, the gates index it from 0.
    if (plateOp.plateKind != Op::PlateKind::Until || !plateOp.operands[0].isLiteral() ||
        plateOp.operands[0].literal() != 0)
      return fail(index.loc, "'" + indexName(index) + "' takes the values 0 to " + dimText(n) +
                                 " - 1, which select from a plate that starts at 0, and '" + targetName +
                                 "' is over plate " + plateText(plateOp) + " (%" + plate->name + "); define '" +
                                 targetName + "' over (0L until " + dimText(n) + ")");
    break;
  }
  default:
    return fail(index.loc, "an index must be a plate variable, a Long or a Categorical variable; got " + describe(index));
  }
  target.bound.push_back(index.kind == SValue::Kind::RV ? index.element() : index.det);
  target.loc = loc;
  return target;
}

std::string Lowering::indexName(const SValue &v) const {
  std::string text = sourceText(v.loc);
  if (!text.empty())
    return text;
  if (v.kind == SValue::Kind::RV)
    return v.base->name;
  return ir::toString(v.det).substr(1);
}

std::string Lowering::dimText(const Dim &d) const {
  if (!d.value)
    return std::to_string(d.constant);
  if (d.value->def) {
    std::string text = sourceText(d.value->def->loc);
    if (!text.empty())
      return text;
  }
  return d.value->name;
}

std::string Lowering::plateText(const Op &p) {
  if (p.plateKind == Op::PlateKind::Data)
    return "?";
  return ir::toString(p.operands[0]) + (p.plateKind == Op::PlateKind::Until ? " until " : " to ") +
         ir::toString(p.operands[1]);
}

// ---- application: distributions and indexing ----

SValue Lowering::apply(const ast::Apply &a) {
  if (auto *callee = ast::dyn<ast::Name>(a.callee.get()))
    if (!lookup(callee->name)) {
      if (callee->name == kDataSpelling)
        return knownInput(a.loc, &a.args);
      if (callee->name == kSigmoidSpelling)
        return logisticLink(a);
      if (callee->name == kSoftmaxSpelling)
        return softmaxLink(a);
      if (auto fam = familyFromSpelling(callee->name))
        return distribution(*fam, a);
    }
  if (auto *chain = ast::dyn<ast::Map>(a.callee.get()); chain && chain->method == "chain")
    return markovChain(*chain, a);
  SValue target = eval(*a.callee);
  if (target.isError())
    return target;
  if (a.args.size() != 1) {
    if (target.freeDims())
      return fail(a.lparen, "index with one argument at a time: x(i)(j); got " + std::to_string(a.args.size()));
    return fail(a.callee->loc, "cannot apply " + describe(target) + " to arguments");
  }
  if (!target.freeDims())
    return fail(a.callee->loc, "cannot apply " + describe(target) + " to an argument: it is not a plate of random variables");
  SValue index = eval(*a.args[0]);
  return bindIndex(target, index, a.loc);
}

SValue Lowering::knownInput(SourceRange loc, const std::vector<ast::ExprPtr> *args) {
  const std::string usage = "Data declares a known input per plate element, bound from the data like an observed "
                            "variable: write it inside a map, e.g. val x = ?.map(_ => Data) (a number per row) or "
                            "?.map(_ => Data(D)) (D columns per row)";
  if (loops_.empty())
    return fail(loc, usage);
  Type t = Type::of(TypeKind::Real);
  if (args) {
    if (args->size() != 1)
      return fail(loc, "Data takes no argument (a number per element) or one, its dimension: Data(D); got " +
                           std::to_string(args->size()) + " arguments");
    SValue d = eval(*(*args)[0]);
    if (d.isError())
      return d;
    if (d.kind != SValue::Kind::Det || !d.isLong || (d.det.isValue() && d.det.value->isLoopIndex()))
      return fail(d.loc, "the dimension of Data(D) must be a Long known before inference; got " + describe(d));
    if (d.constant && *d.constant < 1)
      return fail((*args)[0]->loc,
                  "the dimension of Data(D) must be at least 1; got " + std::to_string(int64_t(*d.constant)));
    t = Type::withDim(TypeKind::Vector,
                      d.det.isValue() ? Dim::of(d.det.value) : Dim::of(int64_t(d.constant.value_or(1))));
  }
  Op *op = b_.create(OpKind::Data, loc);
  op->observed = true; // known by definition
  SValue v;
  v.kind = SValue::Kind::RV;
  v.loc = loc;
  v.base = track(b_.addResult(op, anonymousName(), t));
  v.bound = currentIndices();
  return v;
}

std::vector<SValue> Lowering::rateTimesExposure(const ast::Expr &e) {
  const auto *bin = ast::dyn<ast::Binary>(&e);
  if (!bin || bin->op != '*')
    return {eval(e)};
  SValue l = eval(*bin->lhs); // left before right: the IR's order
  SValue r = eval(*bin->rhs);
  auto random = [](const SValue &v) { return v.kind == SValue::Kind::RV && !ir::isKnownInput(v.base); };
  auto known = [](const SValue &v) {
    return v.kind == SValue::Kind::Det || (v.kind == SValue::Kind::RV && ir::isKnownInput(v.base));
  };
  if (random(l) && known(r))
    return {l, r};
  if (known(l) && random(r))
    return {r, l};
  return {binary(*bin, l, r)};
}

SValue Lowering::distribution(Family fam, const ast::Apply &a) {
  const FamilySpec &spec = familySpec(fam);
  size_t n = a.args.size();
  if (n < spec.minArgs || n > spec.params.size()) {
    std::string count = spec.minArgs == spec.params.size()
                            ? std::to_string(spec.params.size())
                            : std::to_string(spec.minArgs) + " or " + std::to_string(spec.params.size());
    return fail(a.callee->loc, std::string(spec.spelling) + " takes " + count + " argument" +
                                   (spec.params.size() == 1 ? "" : "s") + ", " + signature(spec) + "; got " +
                                   std::to_string(n));
  }
  std::vector<SValue> args;
  if (fam == Family::Poisson && n == 1)
    args = rateTimesExposure(*a.args[0]);
  else
    for (const auto &e : a.args)
      args.push_back(eval(*e));
  if (fam == Family::Beta && args.size() == 1)
    args.push_back(args[0]); // Beta(c) is Beta(c, c)
  while (args.size() < spec.params.size() && defaultArgument(fam, args.size())) { // Poisson: exposure 1
    SValue d;
    d.kind = SValue::Kind::Det;
    d.loc = a.loc;
    d.constant = *defaultArgument(fam, args.size());
    d.det = Operand::ofFloat(*d.constant);
    args.push_back(d);
  }
  bool ok = true;
  std::vector<Operand> freePlates;
  const SValue *firstLifted = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    SValue &arg = args[i];
    if (arg.kind == SValue::Kind::Dist)
      arg = materialize(arg);
    if (arg.isError()) {
      ok = false;
      continue;
    }
    if (!checkArgument(spec, spec.params[i], arg)) {
      ok = false;
      continue;
    }
    if (arg.kind == SValue::Kind::RV && arg.freeDims()) {
      std::vector<Operand> plates = freePlatesOf(arg);
      if (!firstLifted) {
        firstLifted = &arg;
        freePlates = plates;
      } else if (!samePlates(plates, freePlates)) {
        diags_.error(arg.loc, "arguments of " + std::string(spec.spelling) + " range over different plates ('" +
                                  firstLifted->base->name + "' and '" + arg.base->name + "')");
        ok = false;
      }
    }
  }
  std::optional<size_t> dimensionFrom; // the argument that gave MvGaussian its dimension, if not written
  if (ok && fam == Family::MvGaussian && args.size() == 2 && !(dimensionFrom = inferDimension(args, a)))
    ok = false;
  if (ok && (fam == Family::MvGaussian || fam == Family::Wishart) && !checkDimensions(fam, args, dimensionFrom))
    ok = false;
  if (!ok)
    return SValue::error();
  SValue d;
  d.kind = SValue::Kind::Dist;
  d.loc = a.loc;
  d.family = fam;
  d.args = std::move(args);
  d.freePlates = std::move(freePlates);
  if (d.freePlates.empty())
    return materialize(d);
  return d;
}

std::optional<size_t> Lowering::inferDimension(std::vector<SValue> &args, const ast::Apply &a) {
  for (size_t i = 0; i < args.size(); ++i)
    if (const SValue &arg = args[i]; arg.kind == SValue::Kind::RV && arg.base->type.hasDim()) {
      const Dim &dim = arg.base->type.dim;
      SValue d;
      d.kind = SValue::Kind::Det;
      d.isLong = true;
      d.loc = a.loc;
      d.det = dim.value ? Operand::ofValue(dim.value) : Operand::ofInt(dim.constant);
      if (!dim.value)
        d.constant = double(dim.constant);
      args.push_back(std::move(d));
      return i;
    }
  diags_.error(a.loc, "MvGaussian with a constant mean and a constant precision needs its dimension: "
                      "MvGaussian(mean, precision, dimension)");
  return std::nullopt;
}

bool Lowering::checkDimensions(Family fam, const std::vector<SValue> &args, std::optional<size_t> dimensionFrom) {
  const SValue &dim = args[2];
  const ParamSpec *params = familySpec(fam).params.data();
  std::string dimension = dimensionFrom ? "the " + std::string(params[*dimensionFrom].name) + " '" +
                                              args[*dimensionFrom].base->name + "' has dimension " +
                                              dimText(args[*dimensionFrom].base->type.dim)
                                        : "this MvGaussian has dimension " + sourceText(dim.loc);
  bool ok = true;
  if (fam == Family::MvGaussian)
    for (size_t i = 0; i < 2; ++i) {
      const SValue &arg = args[i];
      if (arg.kind != SValue::Kind::RV || !arg.base->type.hasDim())
        continue;
      const Dim &d = arg.base->type.dim;
      bool same = d.value ? dim.det.isValue() && dim.det.value == d.value
                          : dim.constant && *dim.constant == double(d.constant);
      if (!same) {
        diags_.error(arg.loc, "MvGaussian " + std::string(params[i].name) + " '" + arg.base->name +
                                  "' has dimension " + dimText(d) + ", but " + dimension);
        ok = false;
      }
    }
  if (fam == Family::Wishart && args[0].constant && dim.constant && !(*args[0].constant > *dim.constant - 1)) {
    diags_.error(args[0].loc, "Wishart degrees of freedom must be greater than the dimension - 1 = " +
                                  sourceText(dim.loc) + " - 1; got " + sourceText(args[0].loc));
    ok = false;
  }
  return ok;
}

bool Lowering::samePlates(const std::vector<Operand> &a, const std::vector<Operand> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (ir::toString(a[i]) != ir::toString(b[i]))
      return false;
  return true;
}

std::vector<Operand> Lowering::freePlatesOf(const SValue &v) {
  std::vector<Operand> out;
  std::vector<Operand> prefix = v.bound;
  for (size_t j = v.bound.size(); j < v.base->dims.size(); ++j) {
    Value *p = v.base->dims[j];
    std::vector<Operand> rowIdx(prefix.begin(), prefix.begin() + std::min(prefix.size(), p->dims.size()));
    out.push_back(Operand::ofValue(p, rowIdx));
    prefix.push_back(Operand::ofInt(-1));
  }
  return out;
}

bool Lowering::checkArgument(const FamilySpec &spec, const ParamSpec &p, const SValue &arg) {
  std::string what = spec.deterministic || spec.spelling.empty()
                         ? "the " + std::string(p.name) + " of the " + displayName(spec.family)
                                        : std::string(spec.spelling) + " " + std::string(p.name);
  std::string accepted = describeAccepted(p);
  switch (arg.kind) {
  case SValue::Kind::Error: return false;
  case SValue::Kind::Det: {
    if (p.constant == ConstantDomain::None) {
      diags_.error(arg.loc, what + " must be " + accepted + "; got a constant");
      return false;
    }
    if (p.constant == ConstantDomain::Dimension && !arg.isLong) {
      diags_.error(arg.loc, what + " must be a Long; got a Double");
      return false;
    }
    if (arg.det.isValue() && arg.det.value->isLoopIndex() && p.constant == ConstantDomain::Dimension) {
      diags_.error(arg.loc, what + " must not depend on a plate variable");
      return false;
    }
    if (arg.constant) {
      double v = *arg.constant;
      bool good = constantInDomain(p.constant, v);
      if (!good) {
        diags_.error(arg.loc, what + " must be " + accepted + "; got " + ir::toString(arg.det));
        return false;
      }
    }
    return true;
  }
  case SValue::Kind::Plate:
    if (!arg.freeDims() && arg.base->def->plateKind == Op::PlateKind::Data)
      diags_.error(arg.loc, "'?' is a plate of unknown size, not a number; " + what + " must be " + accepted);
    else
      diags_.error(arg.loc, what + " must be " + accepted + "; got " + describe(arg));
    return false;
  case SValue::Kind::RV: {
    if (ir::isKnownInput(arg.base)) {
      if (ir::knownInputFits(p, arg.base->type))
        return true;
      diags_.error(arg.loc, what + " cannot be " + describe(arg) + " ('" + arg.base->name + "' of type " +
                                std::string(ir::typeKeyword(arg.base->type.kind)) + "); it must be " + accepted +
                                (arg.base->type.kind == TypeKind::Vector
                                     ? " (a Data(D) vector is accepted as the mean of an MvGaussian)"
                                     : std::string()));
      return false;
    }
    auto fam = ir::familyOf(arg.base);
    for (Family f : p.parents)
      if (fam && *fam == f)
        return true;
    std::string got = fam ? familyName(*fam) : describe(arg);
    diags_.error(arg.loc, what + " must be " + accepted + "; got " + (fam ? "a " + got + " random variable" : got));
    return false;
  }
  case SValue::Kind::Dist: return false;
  }
  return false;
}

SValue Lowering::materialize(const SValue &d) {
  if (d.kind != SValue::Kind::Dist)
    return d;
  SValue dist = d;
  std::vector<Loop> opened;
  for (size_t i = 0; i < dist.freePlates.size(); ++i) {
    // The next free plate, with the row indices the loops opened so far select.
    const SValue *lifted = nullptr;
    for (const SValue &arg : dist.args)
      if (arg.kind == SValue::Kind::RV && arg.freeDims() && !lifted)
        lifted = &arg;
    Operand plate = freePlatesOf(*lifted)[0];
    Op *loop = b_.createFor(plate, "i." + (currentVal_.empty() ? std::string("v") : currentVal_), dist.loc);
    track(loop->index);
    b_.setInsertionRegion(loop->regions[0].get());
    loops_.push_back({loop, loop->index});
    opened.push_back({loop, loop->index});
    SValue idx;
    idx.kind = SValue::Kind::Det;
    idx.isLong = true;
    idx.det = Operand::ofValue(loop->index);
    idx.loc = dist.loc;
    for (SValue &arg : dist.args)
      if (arg.kind == SValue::Kind::RV && arg.freeDims())
        arg.bound.push_back(idx.det);
  }
  Op *op = b_.create(OpKind::Random, dist.loc);
  op->family = dist.family;
  for (const SValue &arg : dist.args) {
    op->operands.push_back(arg.kind == SValue::Kind::Det ? arg.det : arg.element());
    op->operandLocs.push_back(arg.loc);
  }
  Type t = ir::randomResultType(dist.family, op->operands);
  Value *res = track(b_.addResult(op, anonymousName(), t));
  for (size_t i = 0; i < opened.size(); ++i) {
    loops_.pop_back();
    b_.setInsertionRegion(opened[opened.size() - 1 - i].op->parentRegion);
  }
  SValue v;
  v.kind = SValue::Kind::RV;
  v.loc = dist.loc;
  v.base = res;
  v.bound = currentIndices();
  return v;
}

} // namespace ppc::lowering
