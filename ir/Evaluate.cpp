#include "ir/Evaluate.h"

#include "ir/IR.h"
#include "ir/Printer.h"

#include <charconv>
#include <cstdio>
#include <cmath>
#include <functional>
#include <llvm/Support/raw_ostream.h>

namespace ppc::ir {

std::optional<double> Evaluation::valueOf(const Value *v) const {
  auto it = values.find(v);
  if (it == values.end())
    return std::nullopt;
  return it->second;
}

namespace {

std::optional<double> operandValue(const Operand &o, const Evaluation &ev) {
  if (o.isLiteral())
    return o.literal();
  if (!o.indices.empty())
    return std::nullopt;
  return ev.valueOf(o.value);
}

// `beta = 0.0`, `a * 2.0 = -3.0`: the operand as the user wrote it, and its value.
std::string showOperand(const Operand &o, const Evaluation &ev, const DiagnosticEngine &diags) {
  std::string s = toString(o);
  if (o.isValue())
    if (auto v = operandValue(o, ev)) {
      std::string num = formatDouble(*v);
      if (o.value->type.kind == TypeKind::Long)
        num = std::to_string(static_cast<int64_t>(*v));
      std::string name = o.value->name;
      if (o.value->def)
        if (std::string text = diags.text(o.value->def->loc); !text.empty())
          name = text;
      s = name + " = " + num;
    }
  return s;
}

/// Longs are evaluated as doubles: exact up to 2^53 (a size or an index
/// past it would be silently rounded, or wrap when converted).
constexpr int64_t kLargestExactLong = int64_t(1) << 53;

enum class ParsedParam { Ok, NotANumber, TooLarge };

ParsedParam parseParamValue(const std::string &text, TypeKind kind, double &out) {
  const char *b = text.data(), *e = text.data() + text.size();
  if (b != e && *b == '+' && b + 1 != e && *(b + 1) != '-')
    ++b;
  if (kind == TypeKind::Long) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec == std::errc::result_out_of_range && p == e)
      return ParsedParam::TooLarge;
    if (ec != std::errc() || p != e)
      return ParsedParam::NotANumber;
    if (v > kLargestExactLong || v < -kLargestExactLong)
      return ParsedParam::TooLarge;
    out = double(v);
    return ParsedParam::Ok;
  }
  auto [p, ec] = std::from_chars(b, e, out);
  return ec == std::errc() && p == e && std::isfinite(out) ? ParsedParam::Ok : ParsedParam::NotANumber;
}

/// A count for a message: its digits up to 2^64, else in scientific form.
std::string countText(double n) {
  if (n < 1.8e19)
    return std::to_string(uint64_t(n));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", n);
  return buf;
}

} // namespace

std::optional<Evaluation> evaluate(const Module &m, const std::map<std::string, std::string> &assignments,
                                   bool requireAll, DiagnosticEngine &diags) {
  Evaluation ev;
  unsigned errorsBefore = diags.errorCount();
  for (const auto &[name, text] : assignments) {
    const Param *p = m.findParam(name);
    if (!p) {
      std::string names;
      for (const Param &q : m.params)
        names += (names.empty() ? "" : ", ") + q.value->name;
      diags.error("-p " + name + "=" + text + ": model " + m.name + " has no parameter '" + name + "'" +
                  (names.empty() ? " (it has none)" : " (parameters: " + names + ")"));
      continue;
    }
    double v = 0;
    const ParsedParam parsed = parseParamValue(text, p->value->type.kind, v);
    if (parsed == ParsedParam::NotANumber) {
      diags.error("-p " + name + "=" + text + ": parameter '" + name + "' is a " +
                  (p->value->type.kind == TypeKind::Long ? "Long; expected an integer" : "Double; expected a finite number"));
      continue;
    }
    if (parsed == ParsedParam::TooLarge) {
      diags.error("-p " + name + "=" + text + ": parameter '" + name +
                  "' is a Long, which ppc computes exactly from -2^53 to 2^53 (9007199254740992)");
      continue;
    }
    ev.values[p->value] = v;
  }
  for (const Param &p : m.params) {
    if (ev.values.count(p.value))
      continue;
    if (p.defaultValue)
      ev.values[p.value] = *p.defaultValue;
    else
      ev.unbound.push_back(p.value->name);
  }
  if (requireAll && !ev.unbound.empty()) {
    std::string names;
    for (const std::string &n : ev.unbound)
      names += (names.empty() ? "" : ", ") + n;
    diags.error("model " + m.name + " needs values for: " + names + " (give them with -p NAME=VALUE)");
  }

  for (const auto &opPtr : m.body.ops) {
    const Op &op = *opPtr;
    if (op.isDeterministic()) {
      std::optional<double> a = operandValue(op.operands[0], ev);
      std::optional<double> b = op.operands.size() > 1 ? operandValue(op.operands[1], ev) : 0.0;
      if (!a || !b)
        continue;
      bool isLong = op.result()->type.kind == TypeKind::Long;
      double r = 0;
      switch (op.kind) {
      case OpKind::Add: r = *a + *b; break;
      case OpKind::Sub: r = *a - *b; break;
      case OpKind::Mul: r = *a * *b; break;
      case OpKind::Neg: r = -*a; break;
      case OpKind::Div:
        if (*b == 0) {
          diags.error(op.loc, "division by zero (" + showOperand(op.operands[1], ev, diags) + ")");
          continue;
        }
        r = isLong ? std::trunc(*a / *b) : *a / *b;
        break;
      default: break;
      }
      if (isLong && std::abs(r) > double(kLargestExactLong)) {
        diags.error(op.loc, std::string("this Long is ") + (r < 0 ? "-" : "") + countText(std::abs(r)) +
                                ", beyond 2^53 (9007199254740992), where ppc's sizes and indices stop being exact");
        continue;
      }
      ev.values[op.result()] = r;
    } else if (op.kind == OpKind::Plate && op.plateKind != Op::PlateKind::Data) {
      std::optional<double> lo = operandValue(op.operands[0], ev), hi = operandValue(op.operands[1], ev);
      if (!lo || !hi)
        continue;
      double size = *hi - *lo + (op.plateKind == Op::PlateKind::To ? 1 : 0);
      if (size < 0) {
        diags.error(op.loc, "plate " + showOperand(op.operands[0], ev, diags) +
                                (op.plateKind == Op::PlateKind::To ? " to " : " until ") +
                                showOperand(op.operands[1], ev, diags) + " has a negative number of elements");
        continue;
      }
      ev.plateSizes[op.result()] = static_cast<int64_t>(size);
    }
  }
  // A variable's elements in all: the product of its plates' sizes, exact
  // (2^53) or an error at the variable, before anything is sized from it.
  walk(m.body, [&](const Op &op) {
    if (op.kind != OpKind::Random || !op.result())
      return;
    double total = 1;
    for (const Value *plate : op.result()->dims)
      if (auto it = ev.plateSizes.find(plate); it != ev.plateSizes.end())
        total *= double(it->second);
    if (total > double(kLargestExactLong))
      diags.error(op.loc, "%" + op.result()->name + " has " + countText(total) +
                              " elements over its plates, beyond 2^53 (9007199254740992); choose smaller sizes");
  });

  // Constant indices into plates whose size is now known.
  std::function<void(const Op &, const Operand &)> checkIndices = [&](const Op &op, const Operand &o) {
    if (!o.isValue())
      return;
    for (size_t j = 0; j < o.indices.size() && j < o.value->dims.size(); ++j) {
      const Operand &idx = o.indices[j];
      checkIndices(op, idx);
      if (idx.kind != Operand::Kind::Int)
        continue;
      auto size = ev.plateSizes.find(o.value->dims[j]);
      if (size != ev.plateSizes.end() && (idx.intValue < 0 || idx.intValue >= size->second))
        diags.error(op.loc, "index " + std::to_string(idx.intValue) + " is outside plate %" +
                                o.value->dims[j]->name + ", which has " + std::to_string(size->second) +
                                " elements (in " + toString(o) + ")");
    }
  };
  walk(m.body, [&](const Op &op) {
    for (const Operand &o : op.operands)
      checkIndices(op, o);
  });

  // A Data(D) input's dimension, now that parameters have values
  // (Data(-K), Data(K - 1L) with K = 1).
  walk(m.body, [&](const Op &op) {
    if (op.kind != OpKind::Data || op.results.empty() || op.result()->type.kind != TypeKind::Vector)
      return;
    const Dim &d = op.result()->type.dim;
    if (d.isConstant() || !d.value)
      return;
    if (std::optional<double> n = ev.valueOf(d.value); n && *n < 1)
      diags.error(op.loc, "the dimension of Data(D) must be at least 1; got " +
                              showOperand(Operand::ofValue(d.value), ev, diags));
  });

  // Constant arguments of factors, now that parameters have values.
  walk(m.body, [&](const Op &op) {
    if (!op.isRandom())
      return;
    const FamilySpec &spec = familySpec(op.family);
    for (size_t i = 0; i < op.operands.size() && (i < spec.params.size() || spec.variadic); ++i) {
      const Operand &o = op.operands[i];
      if (!o.isValue() || !o.value->type.isDeterministic())
        continue;
      std::optional<double> v = operandValue(o, ev);
      if (!v)
        continue;
      const ParamSpec &p = paramOf(spec, i);
      bool good = constantInDomain(p.constant, *v);
      if (!good)
        diags.error(op.operandLoc(i), (spec.spelling.empty() ? "the " + displayName(op.family) + "'s"
                                                             : std::string(spec.spelling)) +
                                          " " + std::string(p.name) + " must be " +
                                describeAccepted(p) + "; got " + showOperand(o, ev, diags));
    }
    // A Wishart needs more degrees of freedom than its dimension less one.
    if (op.family == Family::Wishart && op.operands.size() == 3) {
      std::optional<double> dof = operandValue(op.operands[0], ev), dim = operandValue(op.operands[2], ev);
      if (dof && dim && !(*dof > *dim - 1))
        diags.error(op.operandLoc(0), "Wishart degrees of freedom must be greater than the dimension - 1 = " +
                                          showOperand(op.operands[2], ev, diags) + " - 1; got " +
                                          showOperand(op.operands[0], ev, diags));
    }
  });
  if (diags.errorCount() != errorsBefore)
    return std::nullopt;
  return ev;
}

void printPlateTree(const Module &m, const Evaluation *ev, llvm::raw_ostream &os) {
  // Each random variable lives at the path of plates it is an array over.
  struct Node {
    const Value *plate = nullptr;
    std::vector<std::unique_ptr<Node>> children;
    std::vector<const Op *> vars;
  };
  Node root;
  walk(m.body, [&](const Op &op) {
    if (!op.isRandom())
      return;
    Node *n = &root;
    for (const Value *p : op.result()->dims) {
      Node *next = nullptr;
      for (auto &c : n->children)
        if (c->plate == p)
          next = c.get();
      if (!next) {
        n->children.push_back(std::make_unique<Node>());
        next = n->children.back().get();
        next->plate = p;
      }
      n = next;
    }
    n->vars.push_back(&op);
  });

  // A flattened size is a number, or unknown because a plate on the path is
  // sized by the data or by a parameter without a value.
  std::function<void(const Node &, unsigned, std::optional<int64_t>, bool)> print =
      [&](const Node &n, unsigned depth, std::optional<int64_t> flat, bool fromData) {
        std::string pad(2 * depth, ' ');
        for (const Op *op : n.vars) {
          // A computed value (scale, sum, dot, sigmoid, ...) by its IR name:
          // it has no spelling of its own in the language.
          const FamilySpec &spec = familySpec(op->family);
          os << pad << "  %" << op->result()->name << " : " << (spec.spelling.empty() ? spec.irName : spec.spelling)
             << " " << toString(op->result()->type) << (op->observed ? " observed" : "") << "\n";
        }
        for (const auto &c : n.children) {
          const Op &p = *c->plate->def;
          std::optional<int64_t> size, childFlat;
          std::string sizeText;
          if (p.plateKind == Op::PlateKind::Data) {
            sizeText = c->plate->dims.empty() ? "size from data" : "ragged, sizes from data";
          } else {
            if (ev)
              if (auto it = ev->plateSizes.find(c->plate); it != ev->plateSizes.end())
                size = it->second;
            sizeText = toString(p.operands[0]) + (p.plateKind == Op::PlateKind::Until ? " until " : " to ") +
                       toString(p.operands[1]);
            if (size)
              sizeText += ", size " + std::to_string(*size);
          }
          bool childFromData = fromData || p.plateKind == Op::PlateKind::Data;
          if (size && flat)
            childFlat = *size * *flat;
          os << pad << "  plate %" << c->plate->name << " (" << sizeText << "; flattened "
             << (childFlat ? std::to_string(*childFlat)
                           : std::string(childFromData ? "from data" : "needs parameter values"))
             << ")\n";
          print(*c, depth + 1, childFlat, childFromData);
        }
      };
  os << "TOPLEVEL (size 1)\n";
  print(root, 0, 1, false);
}

} // namespace ppc::ir
