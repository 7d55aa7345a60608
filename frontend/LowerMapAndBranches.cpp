//===- frontend/LowerMapAndBranches.cpp - map, if and match -------------===//
#include "frontend/LoweringImpl.h"

#include "ir/Printer.h"

#include <algorithm>

namespace ppc::lowering {

// ---- map ----

SValue Lowering::map(const ast::Map &m) {
  if (m.method == "dot")
    return dotProduct(m);
  if (m.method == "chain")
    return fail(m.loc, "chain takes two argument lists: ?.chain(Categorical(pi))(prev => Categorical(A(prev))), "
                       "the first element's distribution and the transition");
  if (m.method != "map")
    return fail(m.methodLoc, "unknown method '" + m.method +
                                 "'; plates and plates of random variables have 'map' and 'chain', vectors 'dot'");
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

bool Lowering::requireCondition(const SValue &c, bool forIf) {
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

SourceRange Lowering::resultLoc(const ast::Expr &e) {
  const ast::Expr *cur = &e;
  while (const auto *b = ast::dyn<ast::Block>(cur)) {
    if (b->items.empty() || !b->items.back().expr)
      break;
    cur = b->items.back().expr.get();
  }
  return cur->loc;
}

SValue Lowering::branch(const ast::Expr &e, ir::Region *region, const char *what) {
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

SValue Lowering::conditionalResult(Op *op, const std::vector<SValue> &branches, const char *what) {
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

SValue Lowering::ifExpr(const ast::If &e) {
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

SValue Lowering::matchExpr(const ast::Match &e) {
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

} // namespace ppc::lowering
