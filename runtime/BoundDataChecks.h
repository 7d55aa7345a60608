//===- runtime/BoundDataChecks.h - checks of the data once bound ------------===//
//
// What the binder checks across rows and variables once every file is read
// (runtime/Binding.cpp calls them): rows whose Data ids make one variable
// two operands of an arithmetic factor, weights that change along a chain's
// sequence (errors), and Gaussian data far from zero for its spread (a
// warning).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Binding.h"

#include <string>
#include <vector>

namespace ppc {
namespace ir { class Module; struct Evaluation; }

namespace rt {

/// Ids in a message: the first five, and how many more.
template <typename Id> inline std::string firstFew(const std::vector<Id> &ids) {
  std::string list;
  for (size_t i = 0; i < ids.size() && i < 5; ++i)
    list += (i ? ", " : "") + std::to_string(ids[i]);
  if (ids.size() > 5)
    list += " and " + std::to_string(ids.size() - 5) + " more";
  return list;
}

/// Rows whose Data ids name one latent variable twice in one arithmetic
/// factor (ir/Aliasing.h): an error naming the elements.
void checkDataAliases(const ir::Module &m, const BoundData &data, std::vector<std::string> &errors);

/// A --weight (the column `weight`) that changes along a chain's sequence:
/// an error.
void checkChainWeights(const ir::Module &m, const BoundData &data, const std::string &weight,
                       std::vector<std::string> &errors);

/// Gaussian observations far from zero for their spread: a warning each,
/// and their names in data.farFromZero.
void warnFarFromZero(const ir::Module &m, const ir::Evaluation &ev, BoundData &data);

} // namespace rt
} // namespace ppc
