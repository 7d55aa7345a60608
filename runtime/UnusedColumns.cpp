//===- runtime/UnusedColumns.cpp - columns that bind nothing, and why ------===//
#include "runtime/UnusedColumns.h"

#include "ir/IR.h"
#include "runtime/Csv.h"

namespace ppc::rt {

using ir::Op;
using ir::OpKind;
using ir::Value;

std::string latentColumnAdvice(const ir::Module &m, const std::string &column) {
  const Value *v = m.lookup(column);
  if (!v || !v->def || v->def->kind != OpKind::Random || v->def->observed || !v->type.isRandom())
    return "";
  // Data bind the variables over a data plate (`?`) that nothing else reads.
  bool knownPlates = !v->dims.empty();
  for (const Value *plate : v->dims)
    knownPlates =
        knownPlates && plate->def && plate->def->kind == OpKind::Plate && plate->def->plateKind != Op::PlateKind::Data;
  if (knownPlates)
    return "'" + column + "' ranges over plates of known size, whose variables ppc infers: data bind a variable " +
           "over a data plate, sized by the rows (val n = ?, then val " + column + " = n.map(...))";
  return "'" + column + "' is a latent variable (other variables depend on it), which ppc infers: data bind only " +
         "variables nothing reads, so to use the column declare it Data (val " + column + " = ....map(_ => Data))";
}

void warnUnusedColumns(const ir::Module &m, const CsvTable &t, const std::set<std::string> &used, bool weightGiven,
                       std::vector<std::string> &warnings) {
  constexpr size_t kNamed = 5; // one warning each; past them, one for the rest
  static const std::set<std::string> kWeightNames = {"count",     "counts", "n",       "freq",
                                                     "frequency", "weight", "weights", "tf"};
  size_t unused = 0;
  std::string rest;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    const std::string &name = t.columns[c];
    if (used.count(name) || name.empty())
      continue;
    if (++unused > kNamed) {
      if (unused <= 2 * kNamed)
        rest += (rest.empty() ? "'" : ", '") + name + "'";
      continue;
    }
    const std::string latent = latentColumnAdvice(m, name);
    warnings.push_back(t.path + ": column '" + name + "' (" + std::to_string(c + 1) +
                       ") binds nothing in the model and is ignored" +
                       (!weightGiven && kWeightNames.count(name) ? "; to weigh each row by it, give --weight " + name
                                                                 : std::string()) +
                       (latent.empty() ? std::string() : "; " + latent));
  }
  if (unused > kNamed)
    warnings.push_back(t.path + ": " + std::to_string(unused - kNamed) + " more columns bind nothing and are " +
                       "ignored: " + rest + (unused > 2 * kNamed ? ", ..." : ""));
}

} // namespace ppc::rt
