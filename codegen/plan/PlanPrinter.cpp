//===- codegen/plan/PlanPrinter.cpp - the plan's textual form -------------===//
//
// What --emit=plan and --print-after print: the buffers, then each block's
// loop nests, one statement a line, with the note that says what each
// statement computes.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/Plan.h"

#include "ir/IR.h"
#include "ir/Printer.h"
#include "runtime/Symbols.h"

#include <sstream>

namespace ppc::codegen {

namespace {
void printExpr(const Plan &p, ExprId id, std::ostream &os) {
  if (id == kNoExpr) {
    os << "1";
    return;
  }
  const Expr &e = p.exprs[id];
  switch (e.kind) {
  case Expr::Kind::IntConst: os << e.value; break;
  case Expr::Kind::DoubleConst: os << ir::formatDouble(e.number); break;
  case Expr::Kind::LoopVar: os << "i" << e.var; break;
  case Expr::Kind::LoadInt:
  case Expr::Kind::LoadDouble:
    os << p.buffers[e.buffer].name << "[";
    printExpr(p, e.a, os);
    os << "]";
    break;
  case Expr::Kind::IntToDouble:
    os << "double(";
    printExpr(p, e.a, os);
    os << ")";
    break;
  default: {
    const char *op = e.kind == Expr::Kind::AddInt || e.kind == Expr::Kind::AddDouble   ? " + "
                     : e.kind == Expr::Kind::MulInt || e.kind == Expr::Kind::MulDouble ? " * "
                                                                                        : " - ";
    os << "(";
    printExpr(p, e.a, os);
    os << op;
    printExpr(p, e.b, os);
    os << ")";
  }
  }
}

void printStmts(const Plan &p, const std::vector<Stmt> &body, int indent, std::ostream &os) {
  for (const Stmt &s : body) {
    os << std::string(size_t(indent) * 2, ' ');
    switch (s.kind) {
    case Stmt::Kind::Loop:
      os << (s.distributed ? "distributed " : "") << (s.parallel ? "parallel for i" : "for i") << s.var << " < ";
      printExpr(p, s.bound, os);
      if (s.batch)
        os << " by " << s.batch << " (i" << s.batchVar << " of them)";
      if (s.costs >= 0)
        os << " split by " << p.buffers[size_t(s.costs)].name;
      if (s.parallel) {
        for (auto [label, list] : {std::pair{" private", &s.privates}, std::pair{" sum", &s.reductions}})
          if (!list->empty()) {
            os << label;
            for (int32_t b : *list)
              os << " " << p.buffers[size_t(b)].name;
          }
      }
      if (!s.note.empty())
        os << "  // " << s.note;
      os << " {\n";
      printStmts(p, s.body, indent + 1, os);
      os << std::string(size_t(indent) * 2, ' ') << "}\n";
      break;
    case Stmt::Kind::Zero:
      os << "zero " << p.buffers[s.buffer].name << "[";
      printExpr(p, s.index, os);
      os << " +: " << s.count << "]\n";
      break;
    case Stmt::Kind::ExitBelow:
      os << "exit loop if " << p.buffers[s.buffer].name << "[";
      printExpr(p, s.index, os);
      os << "] < " << ir::formatDouble(s.threshold) << "\n";
      break;
    case Stmt::Kind::Call:
      if (s.result == Stmt::Result::Elbo)
        os << "elbo += ";
      else if (s.result == Stmt::Result::Slot || s.result == Stmt::Result::SlotProduct) {
        os << p.buffers[s.buffer].name << "[";
        printExpr(p, s.index, os);
        os << (s.result == Stmt::Result::Slot ? "] += " : "] *= ");
      }
      if (s.scale != kNoExpr) {
        printExpr(p, s.scale, os);
        os << " * ";
      }
      os << s.kernel->name << "(";
      for (size_t i = 0; i < s.args.size(); ++i) {
        const Arg &a = s.args[i];
        if (i)
          os << ", ";
        switch (a.kind) {
        case Arg::Kind::Int:
        case Arg::Kind::Double: printExpr(p, a.expr, os); break;
        case Arg::Kind::Null: os << "null"; break;
        case Arg::Kind::Pointer:
          os << "&" << p.buffers[a.buffer].name << "[";
          printExpr(p, a.expr, os);
          os << "]";
          break;
        case Arg::Kind::TempPointer:
          os << "&{";
          printExpr(p, a.expr, os);
          os << "}";
          break;
        }
      }
      os << ")";
      if (!s.note.empty())
        os << "  // " << s.note;
      os << "\n";
      break;
    }
  }
}
} // namespace

std::string printPlan(const Plan &p) {
  std::ostringstream os;
  for (const Buffer &b : p.buffers)
    os << "buffer " << b.name << " : " << (b.isInt ? "i64" : "f64") << "[" << b.size << "]"
       << (b.doubles.empty() && b.ints.empty() ? "" : " (filled)") << (b.memo ? " (memo)" : "") << "\n";
  for (const Posterior &post : p.posteriors)
    if (post.scratch)
      os << "scratch " << post.variable->name << " (rows of one element)\n";
    else if (post.given)
      os << "given " << post.variable->name << " (filled before init, never written)\n";
    else if (post.userInit)
      os << "initialized " << post.variable->name << " (filled before init)\n";
  if (p.onePass)
    os << "one pass (every iteration repeats the first)\n";
  for (int b = 0; b < Plan::NumBlocks; ++b) {
    os << Plan::kBlockNames[b] << " {\n";
    printStmts(p, p.blocks[b], 1, os);
    os << "}\n";
  }
  return os.str();
}

} // namespace ppc::codegen
