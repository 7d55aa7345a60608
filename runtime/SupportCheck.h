//===- runtime/SupportCheck.h - is a datum in its variable's support? ------===//
//
// The binder (runtime/Binding.cpp) checks every value it reads: an observed
// variable's against its family's support (a category id, a count, a
// positive number), a known input's (`Data`) against the parameters it is
// given as (a Gaussian's precision: positive; an index into a plate: an id
// of that plate), and every number against what double precision can carry
// through the ELBO. Each problem is one sentence naming the value and the
// variable; the binder adds the file, line and column.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ppc {
struct FamilySpec;
struct ParamSpec;
namespace ir { class Module; class Value; struct Evaluation; }

namespace rt {

/// A value in a message as a CSV cell would hold it: the shortest text that
/// reads back as the same double ("3.6", not "3.6000000000000001"), whole
/// numbers below 1e21 as integers.
std::string valueText(double x);

class SupportCheck {
public:
  SupportCheck(const ir::Module &m, const ir::Evaluation &ev) : m_(m), ev_(ev) {}
  /// "" when x is a value `v` can take; else why not.
  std::string operator()(const ir::Value *v, double x);

  /// Weights and counts: sums past 2^53 are not exact in double precision.
  static constexpr double kMaxWeight = 9007199254740992.0;
  /// Real and positive data: the ELBO squares them and sums over the rows
  /// (and multiplies by precisions), so beyond 1e100 it overflows or loses
  /// every digit; so do their reciprocals below 1e-100 for a Gamma.
  static constexpr double kMaxMagnitude = 1e100;

private:
  std::string knownInput(const ir::Value *v, double x);
  using IndexUse = std::pair<std::string, int64_t>;
  const std::vector<IndexUse> &indexUsesOf(const ir::Value *v);
  using KnownInputUse = std::pair<const FamilySpec *, const ParamSpec *>;
  const std::vector<KnownInputUse> &usesOf(const ir::Value *v);

  const ir::Module &m_;
  const ir::Evaluation &ev_;
  std::map<const ir::Value *, std::vector<KnownInputUse>> knownInputUses_;
  std::map<const ir::Value *, std::vector<IndexUse>> indexUses_;
};

} // namespace rt
} // namespace ppc
