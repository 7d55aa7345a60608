//===- frontend/Lowering.cpp - semantic analysis and lowering to Model IR ---===//
#include "frontend/LoweringImpl.h"

#include "ir/Printer.h"
#include "ir/StackGuard.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

namespace ppc::lowering {

// ---- driver ----

std::unique_ptr<ir::Module> Lowering::run() {
  module_->name = ast_.name;
  module_->loc = ast_.nameLoc;
  for (const ast::BlockItem &item : ast_.body)
    if (item.def)
      laterVals_.emplace(item.def->name, item.def->nameLoc);
  scopes_.emplace_back();
  for (const ast::Param &p : ast_.params)
    param(p);
  for (const ast::BlockItem &item : ast_.body)
    if (item.def)
      valDef(*item.def);
  if (diags_.hasErrors())
    return nullptr;
  markObserved();
  if (diags_.hasErrors())
    return nullptr;
  return std::move(module_);
}

// ---- diagnostics ----

SValue Lowering::fail(SourceRange loc, const std::string &msg) {
  diags_.error(loc, msg);
  return SValue::error();
}

std::string Lowering::describe(const SValue &v) {
  switch (v.kind) {
  case SValue::Kind::Error: return "an invalid expression";
  case SValue::Kind::Det: return v.isLong ? "a Long" : "a Double";
  case SValue::Kind::Plate:
    if (v.freeDims())
      return "a plate of plates";
    return v.base->def->plateKind == Op::PlateKind::Data ? "the data-sized plate '?'" : "a plate";
  case SValue::Kind::RV: {
    if (ir::isKnownInput(v.base))
      return v.freeDims() ? "a plate of Data" : "a Data value";
    std::string fam = rvFamilyName(v.base);
    return v.freeDims() ? "a plate of " + fam + " random variables" : "a " + fam + " random variable";
  }
  case SValue::Kind::Dist: return "a plate of " + familyName(v.family) + " distributions";
  }
  return "?";
}

std::string Lowering::rvFamilyName(const Value *v) {
  auto f = ir::familyOf(v);
  return f ? familyName(*f) : std::string(ir::typeKeyword(v->type.kind));
}

// ---- scopes ----

void Lowering::define(const std::string &name, SourceRange loc, SValue value) {
  auto &scope = scopes_.back();
  auto it = scope.find(name);
  if (it != scope.end()) {
    diags_.error(loc, "redefinition of '" + name + "'");
    diags_.note(it->second.defLoc, "previous definition of '" + name + "' is here");
    return;
  }
  scope.emplace(name, Symbol{std::move(value), loc});
}

const Symbol *Lowering::lookup(const std::string &name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end())
      return &f->second;
  }
  return nullptr;
}

std::vector<std::string> Lowering::visibleNames() const {
  std::vector<std::string> names;
  for (const auto &scope : scopes_)
    for (const auto &[n, s] : scope)
      if (n.rfind("_$", 0) != 0)
        names.push_back(n);
  for (const FamilySpec &f : allFamilies())
    if (!f.spelling.empty())
      names.emplace_back(f.spelling);
  return names;
}

// ---- insertion helpers ----

std::vector<Operand> Lowering::currentIndices() const {
  std::vector<Operand> idx;
  for (const Loop &l : loops_)
    idx.push_back(Operand::ofValue(l.index));
  return idx;
}

Op *Lowering::createHoisted(OpKind kind, SourceRange loc) {
  ir::Region *saved = b_.insertionRegion();
  b_.setInsertionRegion(&module_->body);
  Op *op = b_.create(kind, loc);
  b_.setInsertionRegion(saved);
  if (saved != &module_->body) {
    // Move it before the outermost op under construction.
    auto &ops = module_->body.ops;
    Op *top = saved->parent;
    while (top && top->parentRegion != &module_->body)
      top = top->parentOp();
    auto pos = ops.begin();
    while (pos != ops.end() && pos->get() != top)
      ++pos;
    if (pos != ops.end()) {
      std::unique_ptr<Op> moved = std::move(ops.back());
      ops.pop_back();
      ops.insert(pos, std::move(moved));
    }
  }
  return op;
}

bool Lowering::isTopLevelOperand(const Operand &o) {
  if (!o.isValue())
    return true;
  return !o.value->isLoopIndex() && o.value->dims.empty() &&
         (!o.value->def || o.value->def->parentRegion->parent == nullptr);
}

std::string Lowering::anonymousName() {
  return (currentVal_.empty() ? std::string("v") : currentVal_) + "." + std::to_string(++anonCounter_);
}

// ---- parameters and vals ----

void Lowering::param(const ast::Param &p) {
  TypeKind kind;
  if (p.typeName == "Long")
    kind = TypeKind::Long;
  else if (p.typeName == "Double")
    kind = TypeKind::Double;
  else {
    diags_.error(p.typeLoc, "parameter type must be Long or Double; got '" + p.typeName + "'");
    kind = p.typeName == "Int" ? TypeKind::Long : TypeKind::Double;
  }
  if (lookup(p.name) || module_->lookup(p.name)) {
    diags_.error(p.nameLoc, "duplicate parameter '" + p.name + "'");
    return;
  }
  ir::Param param;
  param.value = module_->newValue(p.name, Type::of(kind));
  param.loc = p.nameLoc;
  if (p.defaultValue) {
    SValue d = eval(*p.defaultValue);
    if (!d.isError()) {
      if (d.kind != SValue::Kind::Det || !d.constant)
        diags_.error(p.defaultValue->loc, "default value of '" + p.name + "' must be a constant number");
      else if (kind == TypeKind::Long && !d.isLong)
        diags_.error(p.defaultValue->loc, "default value of Long parameter '" + p.name + "' must be an integer; got " +
                                              ir::formatDouble(*d.constant));
      else
        param.defaultValue = *d.constant;
    }
  }
  module_->params.push_back(param);
  SValue v;
  v.kind = SValue::Kind::Det;
  v.loc = p.nameLoc;
  v.det = Operand::ofValue(param.value);
  v.isLong = kind == TypeKind::Long;
  define(p.name, p.nameLoc, v);
}

void Lowering::valDef(const ast::ValDef &def) {
  std::string savedVal = currentVal_;
  unsigned savedAnon = anonCounter_;
  currentVal_ = def.name;
  anonCounter_ = 0;
  size_t firstNew = valuesCreated();
  defining_.push_back(def.name);
  SValue v = eval(*def.init);
  defining_.pop_back();
  if (v.kind == SValue::Kind::Dist)
    v = materialize(v);
  if (!def.typeAnnotation.empty() && !v.isError()) {
    bool ok = (def.typeAnnotation == "Long" && v.kind == SValue::Kind::Det && v.isLong) ||
              (def.typeAnnotation == "Double" && v.kind == SValue::Kind::Det);
    if (def.typeAnnotation != "Long" && def.typeAnnotation != "Double")
      diags_.error(def.typeLoc, "type annotations may only be Long or Double; got '" + def.typeAnnotation + "'");
    else if (!ok)
      diags_.error(def.typeLoc, "'" + def.name + "' is declared " + def.typeAnnotation + " but is " + describe(v));
    if (v.kind == SValue::Kind::Det && def.typeAnnotation == "Double")
      v.isLong = false;
  }
  // Name what this val created after it: `val phi = ...` defines %phi.
  if (v.base && createdSince(v.base, firstNew))
    module_->rename(v.base, def.name);
  else if (v.kind == SValue::Kind::Det && v.det.isValue() && v.det.value->def &&
           createdSince(v.det.value, firstNew))
    module_->rename(v.det.value, def.name);
  define(def.name, def.nameLoc, v);
  currentVal_ = savedVal;
  anonCounter_ = savedAnon;
}

bool Lowering::createdSince(const Value *v, size_t mark) const {
  auto it = createdOrder_.find(v);
  return it != createdOrder_.end() && it->second >= mark;
}

Value *Lowering::track(Value *v) {
  createdOrder_.emplace(v, createdOrder_.size());
  return v;
}

// ---- expressions ----

SValue Lowering::eval(const ast::Expr &e) {
  if (stackExhausted())
    throw NestingTooDeep();
  SValue v = evalInner(e);
  if (!v.isError() && !v.loc.begin.valid())
    v.loc = e.loc;
  return v;
}

SValue Lowering::evalInner(const ast::Expr &e) {
  switch (e.kind) {
  case ast::ExprKind::IntLit: {
    auto &lit = static_cast<const ast::IntLit &>(e);
    SValue v;
    v.kind = SValue::Kind::Det;
    v.loc = e.loc;
    v.det = Operand::ofInt(lit.value);
    v.isLong = true;
    v.constant = double(lit.value);
    return v;
  }
  case ast::ExprKind::FloatLit: {
    auto &lit = static_cast<const ast::FloatLit &>(e);
    SValue v;
    v.kind = SValue::Kind::Det;
    v.loc = e.loc;
    v.det = Operand::ofFloat(lit.value);
    v.constant = lit.value;
    return v;
  }
  case ast::ExprKind::Name: return name(static_cast<const ast::Name &>(e));
  case ast::ExprKind::Unknown: return dataPlate(e.loc);
  case ast::ExprKind::Placeholder:
    return fail(e.loc, "'_' can only stand for the element in an argument of map (as in xs.map(_.map(...)))");
  case ast::ExprKind::Unary: {
    auto &u = static_cast<const ast::Unary &>(e);
    SValue x = eval(*u.operand);
    if (x.isError())
      return x;
    if (isRandomOperand(x))
      return u.op == '+' ? x : negate(e.loc, std::move(x));
    if (!requireNumber(x, "operand of unary '" + std::string(1, u.op) + "'"))
      return SValue::error();
    if (u.op == '+')
      return x;
    return arithmetic(OpKind::Neg, e.loc, x, nullptr);
  }
  case ast::ExprKind::Binary: {
    auto &bin = static_cast<const ast::Binary &>(e);
    SValue l = eval(*bin.lhs); // left before right: the IR's order
    SValue r = eval(*bin.rhs);
    return binary(bin, l, r);
  }
  case ast::ExprKind::Range: return range(static_cast<const ast::Range &>(e));
  case ast::ExprKind::Apply: return apply(static_cast<const ast::Apply &>(e));
  case ast::ExprKind::Map: return map(static_cast<const ast::Map &>(e));
  case ast::ExprKind::Lambda:
    return fail(e.loc, "a lambda (x => ...) is only allowed as the argument of map");
  case ast::ExprKind::Block: return block(static_cast<const ast::Block &>(e));
  case ast::ExprKind::If: return ifExpr(static_cast<const ast::If &>(e));
  case ast::ExprKind::Match: return matchExpr(static_cast<const ast::Match &>(e));
  }
  return SValue::error();
}

SValue Lowering::binary(const ast::Binary &bin, const SValue &l, const SValue &r) {
  if (l.isError() || r.isError())
    return SValue::error();
  std::string what = std::string("operand of '") + bin.op + "'";
  SourceRange whole = bin.loc;
  if (l.loc.begin.line == r.loc.begin.line && l.loc.begin.col <= r.loc.begin.col)
    whole = SourceRange(l.loc.begin, r.loc.begin.col + r.loc.width - l.loc.begin.col);
  if ((isRandomOperand(l) || isRandomOperand(r)) && (l.kind != SValue::Kind::Plate && r.kind != SValue::Kind::Plate))
    return randomArithmetic(bin.op, whole, l, r);
  if (!requireNumber(l, what) || !requireNumber(r, what))
    return SValue::error();
  OpKind k = bin.op == '+' ? OpKind::Add : bin.op == '-' ? OpKind::Sub : bin.op == '*' ? OpKind::Mul : OpKind::Div;
  // The value stands for the whole expression `l op r` in later messages.
  return arithmetic(k, whole, l, &r);
}

SValue Lowering::name(const ast::Name &n) {
  if (const Symbol *s = lookup(n.name)) {
    SValue v = s->value;
    v.loc = n.loc;
    return v;
  }
  if (n.name == kDataSpelling)
    return knownInput(n.loc, nullptr);
  if (auto fam = familyFromSpelling(n.name)) {
    const FamilySpec &spec = familySpec(*fam);
    return fail(n.loc, "'" + n.name + "' is a distribution; call it with its arguments: " + signature(spec));
  }
  if (std::find(defining_.begin(), defining_.end(), n.name) != defining_.end())
    return fail(n.loc, "'" + n.name + "' is used in its own definition");
  auto later = laterVals_.find(n.name);
  if (later != laterVals_.end() && later->second.begin.line != 0 &&
      (later->second.begin.line > n.loc.begin.line ||
       (later->second.begin.line == n.loc.begin.line && later->second.begin.col > n.loc.begin.col))) {
    diags_.error(n.loc, "'" + n.name + "' is used before its definition");
    diags_.note(later->second, "'" + n.name + "' is defined here");
    return SValue::error();
  }
  // Functions other languages have: no VMP message passes through them.
  static const std::set<std::string> kNoOperator = {"exp",      "log", "sqrt",  "pow",   "tanh",  "abs",
                                                    "max",      "min", "log1p", "expm1", "logit", "probit",
                                                    "softplus", "sin", "cos",   "erf"};
  if (kNoOperator.count(n.name))
    return fail(n.loc, "'" + n.name +
                           "' is not a function of the model language: variational message passing has "
                           "no operator through it (no log link); the links are sigmoid(e) for a probability and "
                           "softmax(...) for a Categorical's probabilities, and a positive rate is a Gamma variable, "
                           "for a Poisson times a known exposure (Poisson(rate * t(i)))");
  std::string msg = "unknown name '" + n.name + "'";
  std::string guess = closestName(n.name, visibleNames());
  if (!guess.empty())
    msg += "; did you mean '" + guess + "'?";
  return fail(n.loc, msg);
}

std::string Lowering::signature(const FamilySpec &spec) {
  std::string s = std::string(spec.spelling) + "(";
  for (size_t i = 0; i < spec.params.size(); ++i) {
    if (i)
      s += ", ";
    s += std::string(spec.params[i].name);
  }
  return s + ")";
}

bool Lowering::requireNumber(const SValue &v, const std::string &what) {
  switch (v.kind) {
  case SValue::Kind::Det: return true;
  case SValue::Kind::Plate:
    if (!v.freeDims() && v.base->def->plateKind == Op::PlateKind::Data)
      diags_.error(v.loc, "'?' is a plate of unknown size, not a number (" + what + ")");
    else
      diags_.error(v.loc, what + " must be a number; got " + describe(v));
    return false;
  case SValue::Kind::RV:
  case SValue::Kind::Dist: {
    // What arithmetic on random variables and data ppc does accept so far.
    std::string why;
    if (what.rfind("operand", 0) == 0)
      why = v.kind == SValue::Kind::RV && ir::isKnownInput(v.base)
                ? " (arithmetic on Data is supported as a Poisson's exposure, Poisson(rate * t(i)), and not yet "
                  "elsewhere)"
                : " (arithmetic on random variables is supported as a Poisson's rate times a known exposure, "
                  "Poisson(rate * t(i)), and not yet elsewhere)";
    diags_.error(v.loc, what + " must be a deterministic number; got " + describe(v) + why);
    return false;
  }
  case SValue::Kind::Error: return false;
  }
  return false;
}

SValue Lowering::arithmetic(OpKind k, SourceRange loc, const SValue &l, const SValue *r) {
  bool isLong = l.isLong && (!r || r->isLong);
  SValue v;
  v.kind = SValue::Kind::Det;
  v.loc = loc;
  v.isLong = isLong;
  if (l.constant && (!r || r->constant)) {
    double a = *l.constant, c = r ? *r->constant : 0, out = 0;
    switch (k) {
    case OpKind::Neg: out = -a; break;
    case OpKind::Add: out = a + c; break;
    case OpKind::Sub: out = a - c; break;
    case OpKind::Mul: out = a * c; break;
    case OpKind::Div:
      if (c == 0)
        return fail(loc, "division by zero");
      out = isLong ? std::trunc(a / c) : a / c;
      break;
    default: break;
    }
    if (isLong && std::fabs(out) > 9.0e15)
      return fail(loc, "integer constant out of range");
    v.constant = out;
    v.det = isLong ? Operand::ofInt(static_cast<int64_t>(out)) : Operand::ofFloat(out);
    return v;
  }
  std::vector<Operand> operands{l.det};
  if (r)
    operands.push_back(r->det);
  bool topLevel = true;
  for (const Operand &o : operands)
    topLevel = topLevel && isTopLevelOperand(o);
  // Identical arithmetic on parameters is one value, so that sizes written
  // twice (K + 1) compare equal.
  std::string key;
  if (topLevel) {
    key = std::string(ir::opKindName(k));
    for (const Operand &o : operands)
      key += " " + ir::toString(o);
    if (auto it = detMemo_.find(key); it != detMemo_.end()) {
      v.det = Operand::ofValue(it->second);
      return v;
    }
  }
  Op *op = topLevel ? createHoisted(k, loc) : b_.create(k, loc);
  op->operands = operands;
  Value *res = track(b_.addResult(op, anonymousName(), Type::of(isLong ? TypeKind::Long : TypeKind::Double)));
  if (topLevel)
    detMemo_.emplace(key, res);
  v.det = topLevel ? Operand::ofValue(res) : Operand::ofValue(res, currentIndices());
  return v;
}

// ---- plates ----

SValue Lowering::dataPlate(SourceRange loc) {
  Op *op = b_.create(OpKind::Plate, loc);
  op->plateKind = Op::PlateKind::Data;
  Value *p = track(b_.addResult(op, "P." + (currentVal_.empty() ? std::string("data") : currentVal_),
                                Type::of(TypeKind::Plate)));
  SValue v;
  v.kind = SValue::Kind::Plate;
  v.loc = loc;
  v.base = p;
  v.bound = currentIndices();
  return v;
}

SValue Lowering::range(const ast::Range &r) {
  SValue lo = eval(*r.lo), hi = eval(*r.hi);
  if (lo.isError() || hi.isError())
    return SValue::error();
  const char *word = r.inclusive ? "to" : "until";
  for (const SValue *bound : {&lo, &hi}) {
    if (!requireNumber(*bound, std::string("plate bound of '") + word + "'"))
      return SValue::error();
    if (!bound->isLong) {
      std::string advice;
      if (bound->constant && *bound->constant == std::floor(*bound->constant))
        advice = " (write " + std::to_string(static_cast<int64_t>(*bound->constant)) + "L)";
      else if (bound->det.isValue() && bound->det.value->isParam())
        advice = " (declare '" + bound->det.value->name + ": Long')";
      return fail(bound->loc, "plate bounds must be Long; got Double" + advice);
    }
    if (!isTopLevelOperand(bound->det))
      return fail(bound->loc, "plate bounds must not depend on plate variables or random variables");
  }
  if (lo.constant && hi.constant) {
    double size = *hi.constant - *lo.constant + (r.inclusive ? 1 : 0);
    if (size < 0)
      return fail(r.loc, "plate '" + ir::toString(lo.det) + " " + word + " " + ir::toString(hi.det) +
                             "' has a negative number of elements");
  }
  Op::PlateKind kind = r.inclusive ? Op::PlateKind::To : Op::PlateKind::Until;
  std::string key = std::string(word) + " " + ir::toString(lo.det) + " " + ir::toString(hi.det);
  Value *plate;
  if (auto it = plateMemo_.find(key); it != plateMemo_.end()) {
    plate = it->second;
  } else {
    Op *op = createHoisted(OpKind::Plate, r.loc);
    op->plateKind = kind;
    op->operands = {lo.det, hi.det};
    // Name a plate after its size when that is simple (%P.K for 0 until K).
    std::string hint = "P." + (currentVal_.empty() ? std::string("range") : currentVal_);
    if (!r.inclusive && lo.constant && *lo.constant == 0)
      hint = "P." + ir::toString(hi.det);
    if (!hint.empty() && hint[2] == '%')
      hint.erase(2, 1);
    plate = track(b_.addResult(op, hint, Type::of(TypeKind::Plate)));
    plateMemo_.emplace(key, plate);
  }
  SValue v;
  v.kind = SValue::Kind::Plate;
  v.loc = r.loc;
  v.base = plate;
  return v;
}

// ---- blocks ----

SValue Lowering::block(const ast::Block &blk) {
  scopes_.emplace_back();
  SValue result = SValue::error();
  bool haveResult = false;
  for (size_t i = 0; i < blk.items.size(); ++i) {
    const ast::BlockItem &item = blk.items[i];
    if (item.def) {
      valDef(*item.def);
      continue;
    }
    if (i + 1 != blk.items.size()) {
      diags_.error(item.expr->loc, "this expression has no effect: only the last item of a block is its value (bind it with 'val')");
      continue;
    }
    result = eval(*item.expr);
    haveResult = true;
  }
  scopes_.pop_back();
  if (!haveResult)
    return fail(blk.loc, "a block must end with an expression, its value");
  return result;
}

// ---- observed variables ----

void Lowering::markObserved() {
  std::set<const Value *> used;
  std::function<void(const Operand &)> note = [&](const Operand &o) {
    if (o.isValue())
      used.insert(o.value);
    for (const Operand &i : o.indices)
      note(i);
  };
  ir::walk(module_->body, [&](Op &op) {
    if (op.kind == OpKind::Yield)
      return; // yielding is not depending on
    for (const Operand &o : op.operands)
      note(o);
  });
  std::function<void(Value *)> observe = [&](Value *v) {
    Op *def = v->def;
    if (!def)
      return;
    if (def->kind == OpKind::Random) {
      if (isChainFamily(def->family)) {
        // A chain's factor is the structured posterior of a hidden
        // sequence (forward-backward, a Kalman smoother); as data it would
        // be a different factor, the transitions' counts.
        diags_.error(def->loc, "a chain that nothing reads is observed data, and ppc's chains are hidden sequences "
                               "seen through emissions: map the chain to its observations, e.g. val y = " +
                                   v->name + ".map(s => " +
                                   (def->family == Family::MarkovChain       ? "Categorical(B(s))"
                                    : def->family == Family::GaussianChain ? "Gaussian(s, r)"
                                                                           : "MvGaussian(s, R)") +
                                   "), and bind the data to y (observed chains are not supported)");
        return;
      }
      if (!isDeterministicFamily(def->family)) // computed, never observed: its posterior is a prediction
        def->observed = true;
      return;
    }
    if (def->kind == OpKind::If || def->kind == OpKind::Match) {
      size_t i = 0;
      while (def->results[i] != v)
        ++i;
      for (auto &r : def->regions)
        if (Op *y = r->terminator())
          observe(y->operands[i].value);
    }
  };
  auto inDataPlate = [](const Value *v) {
    for (const Value *p : v->dims)
      if (p->def->plateKind == Op::PlateKind::Data)
        return true;
    return false;
  };
  std::vector<Value *> leaves;
  ir::walk(module_->body, [&](Op &op) {
    bool inBranch = false;
    for (Op *p = op.parentOp(); p; p = p->parentOp())
      inBranch = inBranch || p->kind == OpKind::If || p->kind == OpKind::Match;
    if (inBranch)
      return; // branch variables are observed through their exit variable
    if ((op.kind == OpKind::Random || op.kind == OpKind::If || op.kind == OpKind::Match) && !op.results.empty())
      for (Value *v : op.results)
        if (!used.count(v) && inDataPlate(v))
          leaves.push_back(v);
  });
  for (Value *v : leaves)
    observe(v);
}

} // namespace ppc::lowering

namespace ppc {

std::unique_ptr<ir::Module> lowerModel(const ast::Model &model, DiagnosticEngine &diags) {
  try {
    return lowering::Lowering(model, diags).run();
  } catch (NestingTooDeep &) {
    diags.error(model.nameLoc, "the model is nested too deeply to compile");
    return nullptr;
  }
}

} // namespace ppc
