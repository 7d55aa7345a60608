//===- codegen/plan/PlanEdits.cpp - building blocks of plan edits --===//
#include "codegen/plan/PlanEdits.h"

#include "runtime/Symbols.h"

namespace ppc::codegen::edit {

Stmt kernelCall(std::string_view kernel, std::vector<Arg> args, std::string note) {
  Stmt c;
  c.kind = Stmt::Kind::Call;
  c.kernel = rt::findRuntimeKernel(kernel);
  c.args = std::move(args);
  c.note = std::move(note);
  return c;
}

Stmt zeroFill(int32_t buffer, ExprId index, int64_t count) {
  Stmt z;
  z.kind = Stmt::Kind::Zero;
  z.buffer = buffer;
  z.index = index;
  z.count = count;
  return z;
}

Stmt loopOver(int32_t var, ExprId bound, std::vector<Stmt> body) {
  Stmt l;
  l.kind = Stmt::Kind::Loop;
  l.var = var;
  l.bound = bound;
  l.body = std::move(body);
  return l;
}

Stmt freshLoop(Plan &p, int64_t bound) {
  const int32_t var = p.loopVars++;
  return loopOver(var, p.intConst(bound));
}

Stmt whileSwitchedOn(Plan &p, int32_t flag, std::string note) {
  Stmt guard = freshLoop(p, 1);
  guard.note = std::move(note);
  Stmt off;
  off.kind = Stmt::Kind::ExitBelow;
  off.buffer = flag;
  off.index = p.intConst(0);
  off.threshold = 0.5;
  guard.body.push_back(std::move(off));
  return guard;
}

Arg intArg(ExprId e) {
  Arg a;
  a.kind = Arg::Kind::Int;
  a.expr = e;
  return a;
}

Arg doubleArg(ExprId e) {
  Arg a;
  a.kind = Arg::Kind::Double;
  a.expr = e;
  return a;
}

Arg pointerArg(int32_t buffer, ExprId index) {
  Arg a;
  a.kind = Arg::Kind::Pointer;
  a.buffer = buffer;
  a.expr = index;
  return a;
}

int32_t addBuffer(Plan &p, std::string name, int64_t size, bool memo, std::vector<double> values) {
  Buffer b;
  b.name = std::move(name);
  b.size = size;
  b.memo = memo;
  b.doubles = std::move(values);
  p.buffers.push_back(std::move(b));
  return int32_t(p.buffers.size() - 1);
}

int32_t dataGram(Plan &p, int32_t X, int64_t D) {
  const std::string name = "gram.all." + p.buffers[size_t(X)].name;
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].name == name && p.buffers[b].size == 1 + D * D)
      return int32_t(b);
  return addBuffer(p, name, 1 + D * D, true);
}

bool isLoopVar(const Plan &p, ExprId e, int32_t var) {
  return e != kNoExpr && p.exprs[size_t(e)].kind == Expr::Kind::LoopVar && p.exprs[size_t(e)].var == var;
}

std::optional<int64_t> elementRowWidth(const Plan &p, ExprId index, int32_t var) {
  auto isVar = [&](ExprId e) { return isLoopVar(p, e, var); };
  if (isVar(index))
    return 1;
  if (index == kNoExpr || p.exprs[size_t(index)].kind != Expr::Kind::MulInt)
    return std::nullopt;
  const Expr &x = p.exprs[size_t(index)];
  if (isVar(x.a))
    return p.constantOf(x.b);
  if (isVar(x.b))
    return p.constantOf(x.a);
  return std::nullopt;
}

bool isElementRow(const Plan &p, ExprId index, int32_t var, int64_t width) {
  return elementRowWidth(p, index, var) == width;
}

std::optional<ElementRow> elementRow(const Plan &p, ExprId index, int32_t var) {
  if (auto width = elementRowWidth(p, index, var))
    return ElementRow{kNoExpr, *width};
  if (index == kNoExpr || p.exprs[size_t(index)].kind != Expr::Kind::MulInt)
    return std::nullopt;
  const Expr &m = p.exprs[size_t(index)];
  for (auto [row, factor] : {std::pair{m.a, m.b}, std::pair{m.b, m.a}}) {
    const auto width = p.constantOf(factor);
    if (!width || row == kNoExpr || p.exprs[size_t(row)].kind != Expr::Kind::AddInt)
      continue;
    const Expr &sum = p.exprs[size_t(row)];
    if (isLoopVar(p, sum.a, var) && !p.usesVar(sum.b, var))
      return ElementRow{sum.b, *width};
    if (isLoopVar(p, sum.b, var) && !p.usesVar(sum.a, var))
      return ElementRow{sum.a, *width};
  }
  return std::nullopt;
}

std::optional<ExprId> offsetOf(Plan &p, ExprId e, int32_t var) {
  if (e == kNoExpr)
    return std::nullopt;
  const Expr x = p.exprs[size_t(e)]; // a copy: the builders below add expressions
  if (x.kind == Expr::Kind::LoopVar && x.var == var)
    return p.intConst(0);
  if (x.kind != Expr::Kind::AddInt)
    return std::nullopt;
  if (!p.usesVar(x.a, var))
    if (auto rest = offsetOf(p, x.b, var))
      return p.add(x.a, *rest);
  if (!p.usesVar(x.b, var))
    if (auto rest = offsetOf(p, x.a, var))
      return p.add(*rest, x.b);
  return std::nullopt;
}

std::optional<std::pair<int32_t, ExprId>> gatheredRow(Plan &p, ExprId e, int32_t var, int64_t width) {
  const Expr x = p.exprs[size_t(e)];
  if (x.kind != Expr::Kind::MulInt)
    return std::nullopt;
  const ExprId row = p.constantOf(x.b) == width ? x.a : p.constantOf(x.a) == width ? x.b : kNoExpr;
  if (row == kNoExpr || p.exprs[size_t(row)].kind != Expr::Kind::LoadInt || !p.isBoundData(p.exprs[size_t(row)].buffer))
    return std::nullopt;
  const int32_t idx = p.exprs[size_t(row)].buffer;
  if (auto base = offsetOf(p, p.exprs[size_t(row)].a, var))
    return std::make_pair(idx, *base);
  return std::nullopt;
}

} // namespace ppc::codegen::edit
