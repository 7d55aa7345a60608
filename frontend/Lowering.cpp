//===- frontend/Lowering.cpp - semantic analysis and lowering to Model IR --===//
#include "frontend/Lowering.h"

#include "frontend/AST.h"
#include "ir/StackGuard.h"
#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/Printer.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

namespace ppc {
namespace {

/// The spelling of a known input in the language.
constexpr std::string_view kDataSpelling = "Data";


using ir::Dim;
using ir::Op;
using ir::OpKind;
using ir::Operand;
using ir::Type;
using ir::TypeKind;
using ir::Value;

/// What an expression evaluates to.
struct SValue {
  enum class Kind : uint8_t { Error, Det, Plate, RV, Dist };
  Kind kind = Kind::Error;
  SourceRange loc;

  // Det: a literal or an SSA value (with its indices when defined in loops).
  Operand det;
  bool isLong = false;
  std::optional<double> constant; ///< known at compile time (literal arithmetic)

  // Plate and RV: the IR value and the indices bound so far; the remaining
  // dims of `base` are free (a plate of plates, a plate of variables).
  Value *base = nullptr;
  std::vector<Operand> bound;

  // Dist: a distribution applied to arguments of which some are still
  // plates of variables; `freePlates` are the plates it ranges over.
  Family family = Family::Dirichlet;
  std::vector<SValue> args;
  std::vector<Operand> freePlates; ///< plate operands (with their row indices)

  static SValue error() { return SValue(); }
  bool isError() const { return kind == Kind::Error; }
  size_t freeDims() const {
    if (kind == Kind::Dist)
      return freePlates.size();
    if (kind == Kind::RV || kind == Kind::Plate)
      return base->dims.size() - bound.size();
    return 0;
  }
  Operand element() const { return Operand::ofValue(base, bound); }
};

/// One active `.map` loop.
struct Loop {
  Op *op;
  Value *index;
};

struct Symbol {
  SValue value;
  SourceRange defLoc;
};

std::string familyName(Family f) { return std::string(familySpec(f).spelling); }

class Lowering {
public:
  Lowering(const ast::Model &model, DiagnosticEngine &diags)
      : ast_(model), diags_(diags), module_(std::make_unique<ir::Module>()), b_(*module_) {}

  std::unique_ptr<ir::Module> run() {
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
    return std::move(module_);
  }

private:
  // ---- diagnostics ----
  SValue fail(SourceRange loc, const std::string &msg) {
    diags_.error(loc, msg);
    return SValue::error();
  }

  static std::string describe(const SValue &v) {
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

  static std::string rvFamilyName(const Value *v) {
    auto f = ir::familyOf(v);
    return f ? familyName(*f) : std::string(ir::typeKeyword(v->type.kind));
  }

  // ---- scopes ----
  void define(const std::string &name, SourceRange loc, SValue value) {
    auto &scope = scopes_.back();
    auto it = scope.find(name);
    if (it != scope.end()) {
      diags_.error(loc, "redefinition of '" + name + "'");
      diags_.note(it->second.defLoc, "previous definition of '" + name + "' is here");
      return;
    }
    scope.emplace(name, Symbol{std::move(value), loc});
  }

  const Symbol *lookup(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end())
        return &f->second;
    }
    return nullptr;
  }

  std::vector<std::string> visibleNames() const {
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
  std::vector<Operand> currentIndices() const {
    std::vector<Operand> idx;
    for (const Loop &l : loops_)
      idx.push_back(Operand::ofValue(l.index));
    return idx;
  }

  /// Inserts a pure top-level op (known plate, deterministic arithmetic on
  /// parameters) before the top-level op that is being built, so that it
  /// dominates every use and stays outside loops and branches.
  Op *createHoisted(OpKind kind, SourceRange loc) {
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

  static bool isTopLevelOperand(const Operand &o) {
    if (!o.isValue())
      return true;
    return !o.value->isLoopIndex() && o.value->dims.empty() &&
           (!o.value->def || o.value->def->parentRegion->parent == nullptr);
  }

  std::string anonymousName() {
    return (currentVal_.empty() ? std::string("v") : currentVal_) + "." + std::to_string(++anonCounter_);
  }

  // ---- parameters and vals ----
  void param(const ast::Param &p) {
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

  void valDef(const ast::ValDef &def) {
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

  size_t valuesCreated() const { return createdOrder_.size(); }
  bool createdSince(const Value *v, size_t mark) const {
    auto it = createdOrder_.find(v);
    return it != createdOrder_.end() && it->second >= mark;
  }
  Value *track(Value *v) {
    createdOrder_.emplace(v, createdOrder_.size());
    return v;
  }

  // ---- expressions ----
  SValue eval(const ast::Expr &e) {
    if (stackExhausted())
      throw NestingTooDeep();
    SValue v = evalInner(e);
    if (!v.isError() && !v.loc.begin.valid())
      v.loc = e.loc;
    return v;
  }

  SValue evalInner(const ast::Expr &e) {
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
      if (!requireNumber(x, "operand of unary '" + std::string(1, u.op) + "'"))
        return SValue::error();
      if (u.op == '+')
        return x;
      return arithmetic(OpKind::Neg, e.loc, x, nullptr);
    }
    case ast::ExprKind::Binary: {
      auto &bin = static_cast<const ast::Binary &>(e);
      SValue l = eval(*bin.lhs), r = eval(*bin.rhs);
      if (l.isError() || r.isError())
        return SValue::error();
      std::string what = std::string("operand of '") + bin.op + "'";
      if (!requireNumber(l, what) || !requireNumber(r, what))
        return SValue::error();
      OpKind k = bin.op == '+' ? OpKind::Add : bin.op == '-' ? OpKind::Sub : bin.op == '*' ? OpKind::Mul : OpKind::Div;
      // The value stands for the whole expression `l op r` in later messages.
      SourceRange whole = e.loc;
      if (l.loc.begin.line == r.loc.begin.line && l.loc.begin.col <= r.loc.begin.col)
        whole = SourceRange(l.loc.begin, r.loc.begin.col + r.loc.width - l.loc.begin.col);
      return arithmetic(k, whole, l, &r);
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

  SValue name(const ast::Name &n) {
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
    std::string msg = "unknown name '" + n.name + "'";
    std::string guess = closestName(n.name, visibleNames());
    if (!guess.empty())
      msg += "; did you mean '" + guess + "'?";
    return fail(n.loc, msg);
  }

  static std::string signature(const FamilySpec &spec) {
    std::string s = std::string(spec.spelling) + "(";
    for (size_t i = 0; i < spec.params.size(); ++i) {
      if (i)
        s += ", ";
      s += std::string(spec.params[i].name);
    }
    return s + ")";
  }

  bool requireNumber(const SValue &v, const std::string &what) {
    switch (v.kind) {
    case SValue::Kind::Det: return true;
    case SValue::Kind::Plate:
      if (!v.freeDims() && v.base->def->plateKind == Op::PlateKind::Data)
        diags_.error(v.loc, "'?' is a plate of unknown size, not a number (" + what + ")");
      else
        diags_.error(v.loc, what + " must be a number; got " + describe(v));
      return false;
    case SValue::Kind::RV:
    case SValue::Kind::Dist:
      diags_.error(v.loc, what + " must be a deterministic number; got " + describe(v) +
                              (what.rfind("operand", 0) == 0 ? " (arithmetic on random variables is not supported)" : ""));
      return false;
    case SValue::Kind::Error: return false;
    }
    return false;
  }

  SValue arithmetic(OpKind k, SourceRange loc, const SValue &l, const SValue *r) {
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
  SValue dataPlate(SourceRange loc) {
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

  SValue range(const ast::Range &r) {
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
  SValue block(const ast::Block &blk) {
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

  // ---- indexing ----
  /// Binds the next free dim of `target` (an RV, a plate of plates or a
  /// lifted distribution) to `index`.
  SValue bindIndex(SValue target, const SValue &index, SourceRange loc) {
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
      break;
    }
    default:
      return fail(index.loc, "an index must be a plate variable, a Long or a Categorical variable; got " + describe(index));
    }
    target.bound.push_back(index.kind == SValue::Kind::RV ? index.element() : index.det);
    target.loc = loc;
    return target;
  }

  std::string indexName(const SValue &v) const {
    std::string text = sourceText(v.loc);
    if (!text.empty())
      return text;
    if (v.kind == SValue::Kind::RV)
      return v.base->name;
    return ir::toString(v.det).substr(1);
  }

  /// The source text of a one-line range (for messages that quote the user).
  std::string sourceText(SourceRange r) const { return diags_.text(r); }
  std::string dimText(const Dim &d) const {
    if (!d.value)
      return std::to_string(d.constant);
    if (d.value->def) {
      std::string text = sourceText(d.value->def->loc);
      if (!text.empty())
        return text;
    }
    return d.value->name;
  }
  static std::string plateText(const Op &p) {
    if (p.plateKind == Op::PlateKind::Data)
      return "?";
    return ir::toString(p.operands[0]) + (p.plateKind == Op::PlateKind::Until ? " until " : " to ") +
           ir::toString(p.operands[1]);
  }

  // ---- application: distributions and indexing ----
  SValue apply(const ast::Apply &a) {
    if (auto *callee = ast::dyn<ast::Name>(a.callee.get()))
      if (!lookup(callee->name)) {
        if (callee->name == kDataSpelling)
          return knownInput(a.loc, &a.args);
        if (auto fam = familyFromSpelling(callee->name))
          return distribution(*fam, a);
      }
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

  /// `Data` (a number per element) or `Data(D)` (a vector of D): a known
  /// input per element of the plates being mapped, bound from the data.
  SValue knownInput(SourceRange loc, const std::vector<ast::ExprPtr> *args) {
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
        return fail(d.loc, "the dimension of Data(D) must be at least 1; got " + sourceText(d.loc));
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

  SValue distribution(Family fam, const ast::Apply &a) {
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
    for (const auto &e : a.args)
      args.push_back(eval(*e));
    if (fam == Family::Beta && args.size() == 1)
      args.push_back(args[0]); // Beta(c) is Beta(c, c)
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

  /// MvGaussian(mean, precision) without a dimension takes it from a
  /// random-variable argument (the verifier checks that both agree).
  std::optional<size_t> inferDimension(std::vector<SValue> &args, const ast::Apply &a) {
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

  /// The random-variable arguments of MvGaussian have its dimension, and a
  /// Wishart has more degrees of freedom than its dimension less one.
  bool checkDimensions(Family fam, const std::vector<SValue> &args, std::optional<size_t> dimensionFrom) {
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

  static bool samePlates(const std::vector<Operand> &a, const std::vector<Operand> &b) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (ir::toString(a[i]) != ir::toString(b[i]))
        return false;
    return true;
  }

  /// The free plates of a plate-of-variables value, as loop operands. Only
  /// the first is complete (it opens the next loop); the row indices of the
  /// later ones depend on loops not yet open and hold -1, which is enough to
  /// compare the plates of two arguments.
  static std::vector<Operand> freePlatesOf(const SValue &v) {
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

  bool checkArgument(const FamilySpec &spec, const ParamSpec &p, const SValue &arg) {
    std::string what = std::string(spec.spelling) + " " + std::string(p.name);
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

  /// Turns a (possibly lifted) distribution into a random variable, wrapping
  /// it in loops over its free plates.
  SValue materialize(const SValue &d) {
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

  // ---- map ----
  SValue map(const ast::Map &m) {
    if (m.method != "map")
      return fail(m.methodLoc, "unknown method '" + m.method + "'; plates and plates of random variables have only 'map'");
    SValue recv = eval(*m.receiver);
    if (recv.isError())
      return recv;
    if (recv.kind == SValue::Kind::Dist)
      recv = materialize(recv);
    const auto *fn = ast::dyn<ast::Lambda>(m.fn.get());
    if (!fn)
      return fail(m.fn->loc, "the argument of map must be a function: x => expression (or _ => expression)");

    // What the loop iterates and what the lambda parameter stands for.
    Operand plateOperand;
    enum class Elem { Index, Plate, RV } elem;
    if (recv.kind == SValue::Kind::Plate && recv.freeDims() == 0) {
      plateOperand = Operand::ofValue(recv.base, recv.bound);
      elem = Elem::Index;
    } else if ((recv.kind == SValue::Kind::Plate || recv.kind == SValue::Kind::RV) && recv.freeDims() > 0) {
      plateOperand = freePlatesOf(recv)[0];
      elem = recv.kind == SValue::Kind::Plate ? Elem::Plate : Elem::RV;
    } else {
      return fail(m.receiver->loc, "map needs a plate or a plate of random variables; got " + describe(recv));
    }
    std::string indexHint = elem == Elem::Index && !fn->param.empty() && fn->param.rfind("_$", 0) != 0
                                ? fn->param
                                : "i." + (currentVal_.empty() ? std::string("v") : currentVal_);
    ir::Region *outer = b_.insertionRegion();
    Op *loop = b_.createFor(plateOperand, indexHint, m.loc);
    track(loop->index);
    b_.setInsertionRegion(loop->regions[0].get());
    loops_.push_back({loop, loop->index});
    scopes_.emplace_back();
    SValue param;
    param.loc = fn->paramLoc;
    if (elem == Elem::Index) {
      param.kind = SValue::Kind::Det;
      param.isLong = true;
      param.det = Operand::ofValue(loop->index);
    } else {
      param = recv;
      param.loc = fn->paramLoc;
      param.bound.push_back(Operand::ofValue(loop->index));
    }
    if (!fn->param.empty())
      define(fn->param, fn->paramLoc, param);
    SValue body = eval(*fn->body);
    if (body.kind == SValue::Kind::Dist)
      body = materialize(body);
    scopes_.pop_back();
    loops_.pop_back();
    b_.setInsertionRegion(outer);
    if (body.isError())
      return body;

    // Abstract the loop index: the element of this iteration becomes the plate.
    bool fresh = (body.kind == SValue::Kind::RV || body.kind == SValue::Kind::Plate) && !body.bound.empty() &&
                 body.bound.size() == loops_.size() + 1 && body.bound.back().isValue() &&
                 body.bound.back().value == loop->index;
    if (!fresh) {
      if (body.kind == SValue::Kind::Det)
        return fail(resultLoc(*fn->body), "the body of map must define random variables or plates; got " + describe(body) +
                                       " (deterministic arrays are not supported)");
      if (body.kind == SValue::Kind::RV && !body.bound.empty() && body.bound.back().isValue() &&
          body.bound.back().value->type.isRandom())
        return fail(resultLoc(*fn->body), "the body of map selects one of the variables of '" + body.base->name +
                                       "' by a random index, which is not supported; each element must be a new "
                                       "random variable (to draw from a selected distribution write e.g. "
                                       "Categorical(phi)(z))");
      if (body.kind == SValue::Kind::RV || body.kind == SValue::Kind::Plate)
        return fail(resultLoc(*fn->body), "the body of map returns '" + body.base->name +
                                       "', which is defined outside the map; each element must be a new random variable");
      return fail(resultLoc(*fn->body), "the body of map must define random variables or plates; got " + describe(body));
    }
    body.bound.pop_back();
    body.loc = m.loc;
    return body;
  }

  // ---- conditionals ----
  bool requireCondition(const SValue &c, bool forIf) {
    if (c.isError())
      return false;
    if (c.kind == SValue::Kind::RV && !c.freeDims()) {
      TypeKind k = c.base->type.kind;
      if (k == TypeKind::Bool || (!forIf && k == TypeKind::Cat))
        return true;
      if (forIf && k == TypeKind::Cat) {
        diags_.error(c.loc, "'if' needs a Bernoulli condition; got a Categorical random variable (use 'match' on Categorical variables)");
        return false;
      }
    }
    if (forIf)
      diags_.error(c.loc, "'if' needs a Bernoulli random variable as its condition; got " + describe(c));
    else
      diags_.error(c.loc, "'match' needs a Categorical or Bernoulli random variable; got " + describe(c));
    return false;
  }

  /// Evaluates one branch into `region` and returns the random variable it
  /// yields (checked to be defined inside the branch).
  /// Where the value of `e` comes from: the last item of a block.
  static SourceRange resultLoc(const ast::Expr &e) {
    const ast::Expr *cur = &e;
    while (const auto *b = ast::dyn<ast::Block>(cur)) {
      if (b->items.empty() || !b->items.back().expr)
        break;
      cur = b->items.back().expr.get();
    }
    return cur->loc;
  }

  SValue branch(const ast::Expr &e, ir::Region *region, const char *what) {
    ir::Region *outer = b_.insertionRegion();
    b_.setInsertionRegion(region);
    scopes_.emplace_back();
    size_t mark = valuesCreated();
    SValue v = eval(e);
    if (v.kind == SValue::Kind::Dist)
      v = materialize(v);
    scopes_.pop_back();
    b_.setInsertionRegion(outer);
    if (v.isError())
      return v;
    if (v.kind != SValue::Kind::RV)
      return fail(resultLoc(e), std::string("each branch of ") + what + " must define random variables; got " + describe(v));
    if (!createdSince(v.base, mark) || v.bound.size() != loops_.size())
      return fail(resultLoc(e), std::string("each branch of ") + what + " must define the random variables it returns; '" +
                             v.base->name + "' is defined outside this branch (define the factor inside each branch instead)");
    Op *y = b_.createIn(region, OpKind::Yield, e.loc);
    y->operands.push_back(Operand::ofValue(v.base));
    return v;
  }

  SValue conditionalResult(Op *op, const std::vector<SValue> &branches, const char *what) {
    const SValue *first = nullptr;
    for (const SValue &v : branches) {
      if (v.isError())
        return SValue::error();
      if (!first) {
        first = &v;
        continue;
      }
      if (!(v.base->type == first->base->type)) {
        diags_.error(v.loc, std::string("the branches of ") + what + " define different kinds of variables: " +
                                rvFamilyName(first->base) + " (" + ir::toString(first->base->type) + ") and " +
                                rvFamilyName(v.base) + " (" + ir::toString(v.base->type) + ")");
        return SValue::error();
      }
      if (v.base->dims != first->base->dims) {
        diags_.error(v.loc, std::string("the branches of ") + what +
                                " define variables over different plates; declare shared data plates outside the branches (val n = ?) and map over them in each branch");
        return SValue::error();
      }
    }
    Value *res = module_->newValue(anonymousName(), first->base->type);
    track(res);
    res->def = op;
    res->dims = first->base->dims;
    op->results.push_back(res);
    SValue out = *first;
    out.base = res;
    out.loc = op->loc;
    return out;
  }

  SValue ifExpr(const ast::If &e) {
    SValue c = eval(*e.cond);
    if (!requireCondition(c, true))
      return SValue::error();
    Op *op = b_.create(OpKind::If, e.loc);
    op->operands.push_back(c.element());
    ir::Region *thenR = b_.addRegion(op);
    ir::Region *elseR = b_.addRegion(op);
    std::vector<SValue> results;
    results.push_back(branch(*e.thenExpr, thenR, "'if'"));
    results.push_back(branch(*e.elseExpr, elseR, "'if'"));
    return conditionalResult(op, results, "'if'");
  }

  SValue matchExpr(const ast::Match &e) {
    SValue s = eval(*e.scrutinee);
    if (!requireCondition(s, false))
      return SValue::error();
    Dim n = s.base->type.kind == TypeKind::Bool ? Dim::of(2) : s.base->type.dim;
    std::map<int64_t, SourceRange> seen;
    bool wildcard = false, ok = true;
    for (const ast::MatchCase &c : e.cases) {
      if (wildcard) {
        diags_.error(c.loc, "this case is unreachable: 'case _' before it matches everything");
        ok = false;
      }
      if (!c.value) {
        wildcard = true;
        continue;
      }
      if (*c.value < 0 || (n.isConstant() && *c.value >= n.constant)) {
        diags_.error(c.loc, "case " + std::to_string(*c.value) + " can never match: '" + s.base->name + "' takes values 0.." +
                                (n.isConstant() ? std::to_string(n.constant - 1) : n.value->name + "-1"));
        ok = false;
      }
      auto [it, inserted] = seen.emplace(*c.value, c.loc);
      if (!inserted) {
        diags_.error(c.loc, "duplicate case " + std::to_string(*c.value));
        diags_.note(it->second, "first case " + std::to_string(*c.value) + " is here");
        ok = false;
      }
    }
    if (!wildcard) {
      if (!n.isConstant()) {
        diags_.error(e.loc, "'match' on '" + s.base->name + "', which takes " + n.value->name +
                                " values, must end with 'case _ =>'");
        ok = false;
      } else {
        for (int64_t v = 0; v < n.constant; ++v)
          if (!seen.count(v)) {
            diags_.error(e.loc, "'match' on '" + s.base->name + "' does not cover case " + std::to_string(v) +
                                    " (add it or a final 'case _ =>')");
            ok = false;
            break;
          }
      }
    }
    if (!ok)
      return SValue::error();
    Op *op = b_.create(OpKind::Match, e.loc);
    op->operands.push_back(s.element());
    std::vector<SValue> results;
    for (const ast::MatchCase &c : e.cases) {
      ir::Region *r = b_.addRegion(op);
      r->caseValue = c.value;
      results.push_back(branch(*c.body, r, "'match'"));
    }
    return conditionalResult(op, results, "'match'");
  }

  // ---- observed variables ----
  void markObserved() {
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

  const ast::Model &ast_;
  DiagnosticEngine &diags_;
  std::unique_ptr<ir::Module> module_;
  ir::Builder b_;
  std::vector<std::unordered_map<std::string, Symbol>> scopes_;
  std::vector<Loop> loops_;
  std::map<std::string, Value *> detMemo_, plateMemo_;
  std::map<std::string, SourceRange> laterVals_;
  std::unordered_map<const Value *, size_t> createdOrder_; ///< creation order of values
  std::string currentVal_;
  std::vector<std::string> defining_; ///< vals whose right-hand side is being evaluated
  unsigned anonCounter_ = 0;
};

} // namespace

std::unique_ptr<ir::Module> lowerModel(const ast::Model &model, DiagnosticEngine &diags) {
  try {
    return Lowering(model, diags).run();
  } catch (NestingTooDeep &) {
    diags.error(model.nameLoc, "the model is nested too deeply to compile");
    return nullptr;
  }
}

} // namespace ppc
