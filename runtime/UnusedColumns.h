//===- runtime/UnusedColumns.h - columns that bind nothing, and why --------===//
//
// What the binder (runtime/Binding.cpp) says about columns the model does
// not bind: a warning per column, with advice where the name suggests what
// was meant (a weight column, a latent variable), and the advice for a file
// none of whose columns binds anything.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <set>
#include <string>
#include <vector>

namespace ppc {
namespace ir {
class Module;
}

namespace rt {
struct CsvTable;

/// Why a column named like one of the model's latent variables binds
/// nothing, and how to bind it; empty when `column` names none.
std::string latentColumnAdvice(const ir::Module &m, const std::string &column);

/// A warning for each of `t`'s columns not in `used` (five named, then one
/// for the rest): ignored, with a word, since a forgotten --weight or a
/// misspelt --map reads the data differently without one.
void warnUnusedColumns(const ir::Module &m, const CsvTable &t, const std::set<std::string> &used, bool weightGiven,
                       std::vector<std::string> &warnings);

} // namespace rt
} // namespace ppc
