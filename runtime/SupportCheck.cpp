//===- runtime/SupportCheck.cpp - is a datum in its variable's support? ----===//
#include "runtime/SupportCheck.h"

#include "ir/Evaluate.h"
#include "ir/Families.h"
#include "ir/IR.h"
#include "ir/Printer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>

namespace ppc::rt {
namespace {

using ir::Op;
using ir::TypeKind;
using ir::Value;

std::string tooLarge(double x, const Value *v) {
  return valueText(x) + " is outside what the ELBO of '" + v->name +
         "' can be computed for in double precision (|x| up to 1e100" +
         (v->type.kind == TypeKind::Positive ? std::string(", and at least 1e-100") : std::string()) +
         "); rescale the column";
}

std::string constantDomainText(ConstantDomain d) {
  switch (d) {
  case ConstantDomain::Positive: return "positive";
  case ConstantDomain::Probability: return "in [0, 1]";
  case ConstantDomain::Count: return "an integer >= 0";
  default: return "a finite number";
  }
}

} // namespace

/// A known input's values are the constants of the parameters it is
/// given as: each use's domain (a Gaussian's precision: positive).
std::string SupportCheck::knownInput(const Value *v, double x) {
  if (std::fabs(x) > SupportCheck::kMaxMagnitude)
    return tooLarge(x, v);
  for (const auto &[spec, param] : usesOf(v)) {
    if (!constantInDomain(param->constant, x))
      return valueText(x) + " cannot be " + displayName(spec->family) + "'s " + std::string(param->name) +
             ", which the Data input '" + v->name + "' is given as: it must be " + constantDomainText(param->constant);
    // A positive input's logarithm and inverse enter the ELBO: as for
    // positive data, [1e-100, 1e100].
    if (param->constant == ConstantDomain::Positive && x < 1 / SupportCheck::kMaxMagnitude)
      return valueText(x) + " is outside what the ELBO can be computed for in double precision as " +
             displayName(spec->family) + "'s " + std::string(param->name) + " (the Data input '" + v->name +
             "': from 1e-100 to 1e100); rescale the column";
  }
  for (const auto &[target, size] : indexUsesOf(v))
    if (!(x == std::floor(x) && x >= 0 && x < double(size)))
      return valueText(x) + " is not an element of '" + target + "', which the Data input '" + v->name +
             "' indexes: an id must be an integer from 0 to " + std::to_string(size - 1);
  return "";
}

/// Where a known input is an index (u(user(i))): the variable it indexes
/// and that plate's size, found once per input.
const std::vector<SupportCheck::IndexUse> &SupportCheck::indexUsesOf(const Value *v) {
  auto [it, fresh] = indexUses_.try_emplace(v);
  if (!fresh)
    return it->second;
  std::function<void(const ir::Operand &)> visit = [&](const ir::Operand &o) {
    for (size_t j = 0; j < o.indices.size(); ++j) {
      const ir::Operand &i = o.indices[j];
      if (i.isValue() && i.value == v && o.isValue() && j < o.value->dims.size()) {
        const Value *plate = o.value->dims[j];
        if (auto size = ir::knownPlateSize(*plate->def)) {
          std::optional<double> n = size->isConstant() ? std::optional<double>(double(size->constant))
                                                       : ev_.valueOf(size->value);
          if (n)
            it->second.emplace_back(o.value->name, int64_t(*n));
        }
      }
      visit(i);
    }
  };
  ir::walk(m_.body, [&](const Op &op) {
    for (const ir::Operand &o : op.operands)
      visit(o);
  });
  return it->second;
}

/// The parameters a known input is given as, found once per input (its
/// values are checked row by row).
const std::vector<SupportCheck::KnownInputUse> &SupportCheck::usesOf(const Value *v) {
  auto [it, fresh] = knownInputUses_.try_emplace(v);
  if (fresh)
    ir::walk(m_.body, [&](const Op &op) {
      if (!op.isRandom())
        return;
      const FamilySpec &spec = familySpec(op.family);
      for (size_t i = 0; i < op.operands.size() && i < spec.params.size(); ++i)
        if (op.operands[i].isValue() && op.operands[i].value == v)
          it->second.emplace_back(&spec, &spec.params[i]);
    });
  return it->second;
}

std::string SupportCheck::operator()(const Value *v, double x) {
  if (ir::isKnownInput(v))
    return knownInput(v, x);
  const ir::Type &t = v->type;
  auto integer = [&] { return x == std::floor(x); };
  switch (t.kind) {
  case TypeKind::Cat: {
    double n = t.dim.isConstant() ? double(t.dim.constant) : ev_.valueOf(t.dim.value).value_or(-1);
    if (!integer() || x < 0 || (n >= 0 && x >= n))
      return valueText(x) + " is not a value of '" + v->name + "', which takes 0.." +
             (n >= 0 ? valueText(n - 1) : "n-1") +
             (t.dim.isConstant() ? std::string() : " (" + t.dim.value->name + " = " + valueText(n) + ")");
    return "";
  }
  case TypeKind::Bool:
    return x == 0 || x == 1 ? "" : valueText(x) + " is not a value of '" + v->name + "' (Bernoulli: 0 or 1)";
  case TypeKind::Count:
    if (!(integer() && x >= 0))
      return valueText(x) + " is not a count (Poisson '" + v->name + "' takes 0, 1, 2, ...)";
    return x <= SupportCheck::kMaxWeight
               ? ""
               : valueText(x) + " is a count above 2^53, which double precision does not hold exactly";
  case TypeKind::Positive:
    if (!(x > 0))
      return valueText(x) + " is not positive (Gamma '" + v->name + "')";
    return x <= SupportCheck::kMaxMagnitude && x >= 1 / SupportCheck::kMaxMagnitude ? "" : tooLarge(x, v);
  case TypeKind::Unit:
    return x > 0 && x < 1 ? "" : valueText(x) + " is not in (0, 1) (Beta '" + v->name + "')";
  case TypeKind::Real:
  case TypeKind::Vector: return std::fabs(x) <= SupportCheck::kMaxMagnitude ? "" : tooLarge(x, v);
  default: return "'" + v->name + "' cannot be observed from a CSV column";
  }
}

std::string valueText(double x) {
  // Whole numbers as integers (a count of 20000000000000000, not 2e+16),
  // the rest as the IR prints them (the shortest text that reads back).
  if (!(x == std::floor(x) && std::fabs(x) < 1e21)) // (also nan and inf)
    return ir::formatDouble(x);
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed).ptr);
}

} // namespace ppc::rt
