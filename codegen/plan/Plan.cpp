//===- codegen/plan/Plan.cpp - the plan's expressions and queries ---------===//
//
// Expression builders fold constants as they build (a flat index of a
// constant plate element is a constant), so the plan and the code generated
// from it carry no arithmetic on known values. The queries are what the
// plan transformations ask of expressions and statements.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/Plan.h"

#include "runtime/MemoryLimits.h"
#include "runtime/Symbols.h"

namespace ppc::codegen {

namespace {
ExprId push(Plan &p, Expr e) {
  p.exprs.push_back(e);
  return static_cast<ExprId>(p.exprs.size() - 1);
}
/// A node with operands a, b (and a buffer for loads).
ExprId node(Plan &p, Expr::Kind kind, ExprId a, ExprId b = kNoExpr, int32_t buffer = -1) {
  Expr e;
  e.kind = kind;
  e.a = a;
  e.b = b;
  e.buffer = buffer;
  return push(p, e);
}
} // namespace

ExprId Plan::intConst(int64_t v) {
  Expr e;
  e.kind = Expr::Kind::IntConst;
  e.value = v;
  return push(*this, e);
}
ExprId Plan::doubleConst(double v) {
  Expr e;
  e.kind = Expr::Kind::DoubleConst;
  e.number = v;
  return push(*this, e);
}
ExprId Plan::loopVar(int32_t var) {
  Expr e;
  e.kind = Expr::Kind::LoopVar;
  e.var = var;
  return push(*this, e);
}
bool Plan::usesVar(ExprId e, int32_t var) const {
  if (e == kNoExpr)
    return false;
  const Expr &x = exprs[size_t(e)];
  return (x.kind == Expr::Kind::LoopVar && x.var == var) || usesVar(x.a, var) || usesVar(x.b, var);
}

bool Plan::loads(ExprId e, int32_t buffer) const {
  if (e == kNoExpr)
    return false;
  const Expr &x = exprs[size_t(e)];
  return ((x.kind == Expr::Kind::LoadDouble || x.kind == Expr::Kind::LoadInt) && x.buffer == buffer) ||
         loads(x.a, buffer) || loads(x.b, buffer);
}

bool Plan::mentions(const Stmt &s, int32_t buffer, const Stmt *skip) const {
  if (&s == skip)
    return false;
  if (s.buffer == buffer || loads(s.index, buffer) || loads(s.bound, buffer) || loads(s.scale, buffer))
    return true;
  for (const Arg &a : s.args)
    if (a.buffer == buffer || loads(a.expr, buffer))
      return true;
  for (const Stmt &c : s.body)
    if (mentions(c, buffer, skip))
      return true;
  return false;
}

bool Plan::isBoundData(int32_t buffer) const {
  const Buffer &b = buffers[size_t(buffer)];
  return !b.ints.empty() || !b.doubles.empty();
}

bool Plan::onlyBoundData(ExprId e) const {
  if (e == kNoExpr)
    return true;
  const Expr &x = exprs[size_t(e)];
  if ((x.kind == Expr::Kind::LoadInt || x.kind == Expr::Kind::LoadDouble) && !isBoundData(x.buffer))
    return false;
  return onlyBoundData(x.a) && onlyBoundData(x.b);
}

std::optional<int64_t> Plan::evaluate(ExprId e, int32_t var, int64_t value) const {
  if (e == kNoExpr)
    return std::nullopt;
  const Expr &x = exprs[size_t(e)];
  switch (x.kind) {
  case Expr::Kind::IntConst: return x.value;
  case Expr::Kind::LoopVar:
    if (x.var != var)
      return std::nullopt;
    return value;
  case Expr::Kind::AddInt:
  case Expr::Kind::MulInt: {
    auto a = evaluate(x.a, var, value), b = evaluate(x.b, var, value);
    if (!a || !b)
      return std::nullopt;
    return x.kind == Expr::Kind::AddInt ? *a + *b : *a * *b;
  }
  case Expr::Kind::LoadInt: {
    auto i = evaluate(x.a, var, value);
    const std::vector<int64_t> &ints = buffers[size_t(x.buffer)].ints;
    if (!i || *i < 0 || size_t(*i) >= ints.size())
      return std::nullopt;
    return ints[size_t(*i)];
  }
  default: return std::nullopt;
  }
}

std::optional<int64_t> Plan::constantOf(ExprId e) const {
  if (e != kNoExpr && exprs[e].kind == Expr::Kind::IntConst)
    return exprs[e].value;
  return std::nullopt;
}
std::optional<double> Plan::doubleConstantOf(ExprId e) const {
  if (e == kNoExpr)
    return 1.0;
  if (exprs[e].kind == Expr::Kind::DoubleConst)
    return exprs[e].number;
  return std::nullopt;
}
ExprId Plan::add(ExprId a, ExprId b) {
  auto ca = constantOf(a), cb = constantOf(b);
  if (ca && cb)
    return intConst(*ca + *cb);
  if (ca && *ca == 0)
    return b;
  if (cb && *cb == 0)
    return a;
  return node(*this, Expr::Kind::AddInt, a, b);
}
ExprId Plan::mul(ExprId a, ExprId b) {
  auto ca = constantOf(a), cb = constantOf(b);
  if (ca && cb)
    return intConst(*ca * *cb);
  if ((ca && *ca == 0) || (cb && *cb == 0))
    return intConst(0);
  if (ca && *ca == 1)
    return b;
  if (cb && *cb == 1)
    return a;
  return node(*this, Expr::Kind::MulInt, a, b);
}
ExprId Plan::addDouble(ExprId a, ExprId b) {
  auto ca = doubleConstantOf(a), cb = doubleConstantOf(b);
  if (ca && cb)
    return doubleConst(*ca + *cb);
  if (ca && *ca == 0)
    return b;
  if (cb && *cb == 0)
    return a;
  return node(*this, Expr::Kind::AddDouble, a, b);
}
ExprId Plan::mulDouble(ExprId a, ExprId b) {
  auto ca = doubleConstantOf(a), cb = doubleConstantOf(b);
  if (ca && cb)
    return doubleConst(*ca * *cb);
  if (ca && *ca == 1)
    return b;
  if (cb && *cb == 1)
    return a;
  return node(*this, Expr::Kind::MulDouble, a, b);
}
ExprId Plan::subDouble(ExprId a, ExprId b) {
  auto ca = doubleConstantOf(a), cb = doubleConstantOf(b);
  if (ca && cb)
    return doubleConst(*ca - *cb);
  return node(*this, Expr::Kind::SubDouble, a, b);
}
ExprId Plan::loadInt(int32_t buffer, ExprId index) {
  if (auto c = constantOf(index); c && !buffers[buffer].ints.empty() && *c >= 0 &&
                                  *c < int64_t(buffers[buffer].ints.size()))
    return intConst(buffers[buffer].ints[*c]);
  return node(*this, Expr::Kind::LoadInt, index, kNoExpr, buffer);
}
ExprId Plan::loadDouble(int32_t buffer, ExprId index) {
  return node(*this, Expr::Kind::LoadDouble, index, kNoExpr, buffer);
}
ExprId Plan::intToDouble(ExprId a) {
  if (auto c = constantOf(a))
    return doubleConst(double(*c));
  return node(*this, Expr::Kind::IntToDouble, a);
}

bool Plan::sameExpr(ExprId a, ExprId b) const {
  if (a == b)
    return true;
  if (a == kNoExpr || b == kNoExpr)
    return false;
  const Expr &x = exprs[size_t(a)], &y = exprs[size_t(b)];
  return x.kind == y.kind && x.value == y.value && x.number == y.number && x.var == y.var && x.buffer == y.buffer &&
         sameExpr(x.a, y.a) && sameExpr(x.b, y.b);
}

bool Plan::sameArg(const Arg &a, const Arg &b) const {
  return a.kind == b.kind && a.buffer == b.buffer && sameExpr(a.expr, b.expr);
}

std::string planMemoryProblem(const Plan &p) {
  uint64_t total = 0;
  bool overflow = false;
  const Buffer *largest = nullptr;
  for (const Buffer &b : p.buffers) {
    if (!b.doubles.empty() || !b.ints.empty() || b.size <= 0) // filled at bind time: already in memory
      continue;
    std::optional<uint64_t> bytes = rt::multiplyBytes(uint64_t(b.size), 8);
    if (!bytes || __builtin_add_overflow(total, *bytes, &total))
      overflow = true;
    if (!largest || b.size > largest->size)
      largest = &b;
  }
  const std::string problem = rt::memoryProblem(overflow ? std::nullopt : std::optional<uint64_t>(total));
  if (problem.empty())
    return {};
  // A Markov chain over many sequences keeps K + K^2 + 1 numbers per
  // element unless the nested schedule keeps one sequence's.
  bool chain = false;
  for (const Posterior &post : p.posteriors)
    chain = chain || (post.family == Family::MarkovChain && !post.scratch && post.rowDims.size() > 1);
  return "the model's state " + problem + " (the largest buffer, " + largest->name + ", holds " +
         std::to_string(largest->size) + " numbers); choose smaller sizes or less data" +
         (chain ? ", or --schedule nested (a Markov chain's rows kept for one sequence at a time)" : "");
}

bool isDiscardedCall(const Stmt &s, std::string_view kernel) {
  return s.kind == Stmt::Kind::Call && s.kernel && s.kernel->name == kernel && s.result == Stmt::Result::Discard;
}

} // namespace ppc::codegen
