#include "ir/Printer.h"

#include "ir/IR.h"

#include <charconv>
#include <cmath>
#include <llvm/Support/raw_ostream.h>

namespace ppc::ir {

std::string formatDouble(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".eE") == std::string::npos)
    s += ".0";
  return s;
}

namespace {

class Printer {
public:
  explicit Printer(llvm::raw_ostream &os) : os(os) {}

  void module(const Module &m) {
    os << "model @" << m.name << "(";
    for (size_t i = 0; i < m.params.size(); ++i) {
      const Param &p = m.params[i];
      if (i)
        os << ", ";
      os << '%' << p.value->name << ": " << typeKeyword(p.value->type.kind);
      if (p.defaultValue) {
        os << " = ";
        if (p.value->type.kind == TypeKind::Long)
          os << static_cast<int64_t>(*p.defaultValue);
        else
          os << formatDouble(*p.defaultValue);
      }
    }
    os << ") {\n";
    region(m.body, 1);
    os << "}\n";
    if (m.messages) {
      os << "messages {\n";
      region(*m.messages, 1);
      os << "}\n";
    }
    if (m.iterationSchedule) {
      os << "schedule {\n";
      const std::pair<const char *, const Region *> parts[] = {
          {"init", m.initSchedule.get()}, {"iteration", m.iterationSchedule.get()}, {"final", m.finalSchedule.get()}};
      for (auto &[label, r] : parts) {
        os << "  " << label << " {\n";
        if (r)
          region(*r, 2);
        os << "  }\n";
      }
      os << "}\n";
    }
  }

  void operand(const Operand &o) {
    switch (o.kind) {
    case Operand::Kind::Int: os << o.intValue; return;
    case Operand::Kind::Float: os << formatDouble(o.floatValue); return;
    case Operand::Kind::Value:
      os << '%' << o.value->name;
      for (const Operand &i : o.indices) {
        os << '[';
        operand(i);
        os << ']';
      }
      return;
    }
  }

  void type(const Type &t) {
    os << typeKeyword(t.kind);
    if (t.hasDim()) {
      os << '<';
      if (t.dim.value)
        os << '%' << t.dim.value->name;
      else
        os << t.dim.constant;
      os << '>';
    }
  }

private:
  void indent(unsigned depth) {
    for (unsigned i = 0; i < depth; ++i)
      os << "  ";
  }

  void region(const Region &r, unsigned depth) {
    for (const auto &op : r.ops)
      this->op(*op, depth);
  }

  void depPrefix(const Op &op, size_t i) {
    if (i < op.deps.size() && op.deps[i] != DepKind::Plain)
      os << depKindName(op.deps[i]) << ' ';
  }
  void annotatedOperands(const Op &op) {
    for (size_t i = 0; i < op.operands.size(); ++i) {
      if (i)
        os << ", ";
      depPrefix(op, i);
      operand(op.operands[i]);
    }
  }

  void results(const Op &op) {
    if (op.results.empty())
      return;
    for (size_t i = 0; i < op.results.size(); ++i)
      os << (i ? ", %" : "%") << op.results[i]->name;
    os << " = ";
  }

  void op(const Op &op, unsigned depth) {
    indent(depth);
    results(op);
    switch (op.kind) {
    case OpKind::Plate:
      os << "plate";
      if (op.plateKind == Op::PlateKind::Data) {
        os << " ?";
      } else {
        os << ' ';
        operand(op.operands[0]);
        os << (op.plateKind == Op::PlateKind::Until ? " until " : " to ");
        operand(op.operands[1]);
      }
      os << '\n';
      return;
    case OpKind::For:
      os << "for %" << op.index->name << " in ";
      operand(op.operands[0]);
      os << " {\n";
      region(*op.regions[0], depth + 1);
      indent(depth);
      os << "}\n";
      return;
    case OpKind::If:
      os << "if ";
      operand(op.operands[0]);
      os << " {\n";
      region(*op.regions[0], depth + 1);
      indent(depth);
      os << "} else {\n";
      region(*op.regions[1], depth + 1);
      indent(depth);
      os << "}\n";
      return;
    case OpKind::Match:
      os << "match ";
      operand(op.operands[0]);
      os << " {\n";
      for (const auto &r : op.regions) {
        indent(depth + 1);
        os << "case ";
        if (r->caseValue)
          os << *r->caseValue;
        else
          os << '_';
        os << " {\n";
        region(*r, depth + 2);
        indent(depth + 1);
        os << "}\n";
      }
      indent(depth);
      os << "}\n";
      return;
    case OpKind::When:
      os << "when ";
      operand(op.operands[0]);
      os << " case ";
      operand(op.operands[1]);
      os << " {\n";
      region(*op.regions[0], depth + 1);
      indent(depth);
      os << "}\n";
      return;
    case OpKind::Msg:
      os << "msg " << (op.evidence ? "evidence " : "") << op.kernel << '(';
      annotatedOperands(op);
      os << ") to ";
      operand(*op.target);
      if (op.targetCase) {
        os << " case ";
        operand(*op.targetCase);
      }
      for (const auto &[cond, which] : op.gates) {
        os << " when ";
        operand(cond);
        os << " case ";
        operand(which);
      }
      os << " : ";
      type(op.results[0]->type);
      os << '\n';
      return;
    case OpKind::Marginal:
      os << (op.backward ? "marginal.back " : op.given ? "marginal.given " : "marginal ");
      operand(op.operands[0]);
      os << " (";
      for (size_t i = 1; i < op.operands.size(); ++i) {
        if (i > 1)
          os << ", ";
        depPrefix(op, i);
        operand(op.operands[i]);
      }
      os << ") : ";
      type(op.results[0]->type);
      os << '\n';
      return;
    case OpKind::Update:
      os << "update ";
      operand(op.operands[0]);
      if (op.streamed)
        os << (*op.streamed ? " streamed" : " materialized");
      os << '\n';
      return;
    case OpKind::Local:
      os << "local ";
      operand(op.operands[0]);
      os << " iters " << op.iterations;
      if (op.tolerance > 0)
        os << " tol " << formatDouble(op.tolerance);
      os << (op.restart ? " restart" : "") << (op.parallel ? " parallel" : "")
         << " {\n";
      region(*op.regions[0], depth + 1);
      indent(depth);
      os << "} then {\n";
      region(*op.regions[1], depth + 1);
      indent(depth);
      os << "}\n";
      return;
    case OpKind::Fuse:
      os << "fuse ";
      operand(op.operands[0]);
      os << (op.parallel ? " parallel" : "") << " {\n";
      region(*op.regions[0], depth + 1);
      indent(depth);
      os << "}\n";
      return;
    case OpKind::Yield:
      os << "yield";
      for (size_t i = 0; i < op.operands.size(); ++i) {
        os << (i ? ", " : " ");
        operand(op.operands[i]);
      }
      os << '\n';
      return;
    default:
      break;
    }
    // Call-style ops: deterministic arithmetic and random variables. A
    // trailing argument equal to its default is left out (Poisson's exposure).
    size_t shown = op.operands.size();
    while (op.isRandom() && shown > 0 && op.operands[shown - 1].isLiteral() &&
           defaultArgument(op.family, shown - 1) == op.operands[shown - 1].literal())
      --shown;
    os << op.name() << '(';
    for (size_t i = 0; i < shown; ++i) {
      if (i)
        os << ", ";
      operand(op.operands[i]);
    }
    os << ')';
    if (op.observed && op.kind != OpKind::Data) // data are known by definition
      os << " observed";
    if (op.given)
      os << " given";
    if (!op.results.empty()) {
      os << " : ";
      type(op.results[0]->type);
    }
    os << '\n';
  }

  llvm::raw_ostream &os;
};

} // namespace

void print(const Module &m, llvm::raw_ostream &os) { Printer(os).module(m); }

std::string toString(const Module &m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  print(m, os);
  return s;
}

std::string toString(const Operand &o) {
  std::string s;
  llvm::raw_string_ostream os(s);
  Printer(os).operand(o);
  return s;
}

std::string toString(const Type &t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  Printer(os).type(t);
  return s;
}

} // namespace ppc::ir
