//===- frontend/ASTPrinter.cpp - --emit=ast --------------------------------===//
#include "frontend/AST.h"
#include "ir/Printer.h"

#include <algorithm>
#include <llvm/Support/raw_ostream.h>

namespace ppc::ast {
namespace {

class ASTPrinter {
public:
  explicit ASTPrinter(llvm::raw_ostream &os) : os(os) {}

  void model(const Model &m) {
    os << "Model " << m.name << " @" << loc(m.nameLoc) << "\n";
    for (const Param &p : m.params) {
      line(1, "Param " + p.name + " : " + p.typeName, p.nameLoc);
      if (p.defaultValue)
        expr(*p.defaultValue, 2);
    }
    for (const BlockItem &item : m.body)
      blockItem(item, 1);
  }

private:
  static std::string loc(SourceRange r) {
    return std::to_string(r.begin.line) + ":" + std::to_string(r.begin.col);
  }
  void line(unsigned depth, const std::string &text, SourceRange r) {
    // Past a sane depth, say the depth instead of indenting (output stays linear).
    constexpr unsigned kMaxIndent = 64;
    for (unsigned i = 0; i < std::min(depth, kMaxIndent); ++i)
      os << "  ";
    if (depth > kMaxIndent)
      os << "[depth " << depth << "] ";
    os << text << " @" << loc(r) << "\n";
  }
  void blockItem(const BlockItem &item, unsigned depth) {
    if (item.def) {
      line(depth, "Val " + item.def->name + (item.def->typeAnnotation.empty() ? "" : " : " + item.def->typeAnnotation),
           item.def->nameLoc);
      expr(*item.def->init, depth + 1);
    } else {
      expr(*item.expr, depth);
    }
  }

  void expr(const Expr &e, unsigned d) {
    switch (e.kind) {
    case ExprKind::IntLit: {
      auto &i = static_cast<const IntLit &>(e);
      line(d, "Int " + std::to_string(i.value) + (i.longSuffix ? "L" : ""), e.loc);
      return;
    }
    case ExprKind::FloatLit:
      line(d, "Float " + ir::formatDouble(static_cast<const FloatLit &>(e).value), e.loc);
      return;
    case ExprKind::Name: line(d, "Name " + static_cast<const Name &>(e).name, e.loc); return;
    case ExprKind::Unknown: line(d, "Unknown ?", e.loc); return;
    case ExprKind::Placeholder: line(d, "Placeholder _", e.loc); return;
    case ExprKind::Unary: {
      auto &u = static_cast<const Unary &>(e);
      line(d, std::string("Unary ") + u.op, e.loc);
      expr(*u.operand, d + 1);
      return;
    }
    case ExprKind::Binary: {
      auto &b = static_cast<const Binary &>(e);
      line(d, std::string("Binary ") + b.op, e.loc);
      expr(*b.lhs, d + 1);
      expr(*b.rhs, d + 1);
      return;
    }
    case ExprKind::Range: {
      auto &r = static_cast<const Range &>(e);
      line(d, r.inclusive ? "Range to" : "Range until", e.loc);
      expr(*r.lo, d + 1);
      expr(*r.hi, d + 1);
      return;
    }
    case ExprKind::Apply: {
      auto &a = static_cast<const Apply &>(e);
      line(d, "Apply", e.loc);
      expr(*a.callee, d + 1);
      for (const auto &arg : a.args)
        expr(*arg, d + 1);
      return;
    }
    case ExprKind::Map: {
      auto &m = static_cast<const Map &>(e);
      const char *spelling = m.spelling == Map::Spelling::For ? " (for-yield)"
                             : m.spelling == Map::Spelling::Brace ? " (braces)" : "";
      line(d, "Map " + m.method + spelling, e.loc);
      expr(*m.receiver, d + 1);
      expr(*m.fn, d + 1);
      return;
    }
    case ExprKind::Lambda: {
      auto &l = static_cast<const Lambda &>(e);
      line(d, "Lambda " + (l.param.empty() ? std::string("_") : l.param) +
                  (l.fromPlaceholder ? " (placeholder)" : ""), e.loc);
      expr(*l.body, d + 1);
      return;
    }
    case ExprKind::Block: {
      line(d, "Block", e.loc);
      for (const BlockItem &item : static_cast<const Block &>(e).items)
        blockItem(item, d + 1);
      return;
    }
    case ExprKind::If: {
      auto &i = static_cast<const If &>(e);
      line(d, "If", e.loc);
      expr(*i.cond, d + 1);
      expr(*i.thenExpr, d + 1);
      expr(*i.elseExpr, d + 1);
      return;
    }
    case ExprKind::Match: {
      auto &m = static_cast<const Match &>(e);
      line(d, "Match", e.loc);
      expr(*m.scrutinee, d + 1);
      for (const MatchCase &c : m.cases) {
        line(d + 1, "Case " + (c.value ? std::to_string(*c.value) : std::string("_")), c.loc);
        expr(*c.body, d + 2);
      }
      return;
    }
    }
  }

  llvm::raw_ostream &os;
};

} // namespace

void print(const Model &m, llvm::raw_ostream &os) { ASTPrinter(os).model(m); }

} // namespace ppc::ast
