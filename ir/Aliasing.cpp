//===- ir/Aliasing.cpp - may two reads name one random variable? ----------===//
#include "ir/Aliasing.h"

#include "ir/Printer.h"

#include <cctype>
#include <map>
#include <set>

namespace ppc::ir {
namespace {

bool isDataRead(const Operand &o) { return o.isValue() && isKnownInput(o.value); }

bool sameIndices(const Operand &a, const Operand &b) {
  if (a.indices.size() != b.indices.size())
    return false;
  for (size_t j = 0; j < a.indices.size(); ++j)
    if (toString(a.indices[j]) != toString(b.indices[j]))
      return false;
  return true;
}

/// A Data read the binder can line up row by row with another: indexed by
/// the loops over its own plates, in order (`a(i)` inside `for i in n`).
bool readsOwnElement(const Operand &o) {
  if (o.indices.size() != o.value->dims.size())
    return false;
  for (size_t j = 0; j < o.indices.size(); ++j) {
    const Operand &i = o.indices[j];
    if (!i.isValue() || !i.value->isLoopIndex() || i.value->loop->operands.empty() ||
        i.value->loop->operands[0].value != o.value->dims[j])
      return false;
  }
  return true;
}

} // namespace

void latentLeaves(const Operand &o, std::vector<Operand> &out) {
  if (!o.isValue() || !o.value->def || !o.value->type.isRandom() || isKnownInput(o.value))
    return;
  const Op *def = o.value->def;
  if (def->kind == OpKind::Random && isDeterministicFamily(def->family)) {
    for (const Operand &arg : def->operands)
      latentLeaves(arg, out); // (the factor's own loops index the same way: a leaf's indices are its own)
    return;
  }
  out.push_back(o);
}

Overlap overlap(const Operand &a, const Operand &b) {
  if (!a.isValue() || !b.isValue() || a.value != b.value)
    return Overlap::Never;
  if (a.indices.size() != b.indices.size())
    return Overlap::Sometimes;
  bool always = true, sometimes = false;
  std::vector<const Operand *> dataReads;
  for (size_t j = 0; j < a.indices.size(); ++j) {
    const Operand &x = a.indices[j], &y = b.indices[j];
    if (x.isLiteral() && y.isLiteral()) {
      if (x.literal() != y.literal())
        return Overlap::Never;
      continue;
    }
    if (toString(x) == toString(y))
      continue;
    always = false;
    const bool checkable = (isDataRead(x) || x.isLiteral()) && (isDataRead(y) || y.isLiteral());
    if (!checkable) {
      sometimes = true;
      continue;
    }
    for (const Operand *d : {&x, &y})
      if (d->isValue())
        dataReads.push_back(d);
  }
  if (always)
    return Overlap::Always;
  if (sometimes)
    return Overlap::Sometimes;
  // Rows line up only where every Data id is read at the same element.
  for (const Operand *d : dataReads)
    if (!readsOwnElement(*d) || d->value->dims != dataReads[0]->value->dims || !sameIndices(*d, *dataReads[0]))
      return Overlap::Sometimes;
  return Overlap::WhereDataEqual;
}

std::vector<DataAlias> dataDependentAliases(const Module &m) {
  std::vector<DataAlias> out;
  walk(m.body, [&](const Op &op) {
    if (op.kind != OpKind::Random || !isDeterministicFamily(op.family))
      return;
    std::vector<std::vector<Operand>> leaves(op.operands.size());
    for (size_t i = 0; i < op.operands.size(); ++i)
      latentLeaves(op.operands[i], leaves[i]);
    for (size_t i = 0; i < leaves.size(); ++i)
      for (size_t j = i + 1; j < leaves.size(); ++j)
        for (const Operand &l : leaves[i])
          for (const Operand &r : leaves[j])
            if (overlap(l, r) == Overlap::WhereDataEqual)
              out.push_back({&op, l, r});
  });
  return out;
}

std::vector<std::string> coupledElements(const Module &m) {
  std::vector<std::string> out;
  std::set<const Value *> reported;
  walk(m.body, [&](const Op &op) {
    if (op.kind != OpKind::Random || !isDeterministicFamily(op.family) || op.family == Family::Stack)
      return;
    std::vector<Operand> leaves;
    for (const Operand &o : op.operands)
      latentLeaves(o, leaves);
    std::map<const Value *, std::set<std::string>> reads;
    for (const Operand &l : leaves)
      if (!l.value->dims.empty())
        reads[l.value].insert(sourceSpelling(l));
    for (const auto &[variable, names] : reads) {
      if (names.size() < 3 || !reported.insert(variable).second)
        continue;
      std::string list;
      size_t k = 0;
      for (const std::string &n : names)
        list += (k++ == 0 ? "'" : k == names.size() ? "' and '" : "', '") + n;
      out.push_back(list + "' in the " + displayName(op.family) + " at line " + std::to_string(op.loc.begin.line) +
                    ":" + std::to_string(op.loc.begin.col));
    }
  });
  return out;
}

std::string sourceSpelling(const Operand &o) {
  // %m[%k.1] is m(k): the IR makes names unique with a suffix .N.
  const std::string ir = toString(o);
  std::string s;
  for (size_t i = 0; i < ir.size(); ++i) {
    const char c = ir[i];
    if (c == '.' && i + 1 < ir.size() && std::isdigit(static_cast<unsigned char>(ir[i + 1]))) {
      size_t end = i + 1;
      while (end < ir.size() && std::isdigit(static_cast<unsigned char>(ir[end])))
        ++end;
      if (end == ir.size() || ir[end] == '[' || ir[end] == ']') {
        i = end - 1;
        continue;
      }
    }
    s += c == '[' ? '(' : c == ']' ? ')' : c;
    if (c == '%')
      s.pop_back();
  }
  return s;
}

} // namespace ppc::ir
