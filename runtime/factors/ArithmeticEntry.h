//===- runtime/factors/ArithmeticEntry.h - shared parts of their entries -===//
//
// What the deterministic factors' catalogue entries share (Sum.cpp,
// Product.cpp, InnerProduct.cpp): the dependency annotations of the forward
// kernel and of the messages to the two arguments, and the posterior of m,
// which is real-valued whatever the arguments are: statistics (E m, E m^2)
// computed forward, natural parameters collecting m's children's messages,
// no entropy, written out as its mean and variance.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

namespace ppc::rt::factors {

namespace catalogue_arithmetic {
inline constexpr OperatorInput kForward[] = {{1, DepKind::Required}, {2, DepKind::Required}};
inline constexpr OperatorInput kToLeft[] = {{0, DepKind::Required}, {2, DepKind::Required}};
inline constexpr OperatorInput kToRight[] = {{0, DepKind::Required}, {1, DepKind::Required}};
} // namespace catalogue_arithmetic

inline constexpr std::span<const OperatorInput> kArithmeticForward = catalogue_arithmetic::kForward;
inline constexpr std::span<const OperatorInput> kArithmeticToLeft = catalogue_arithmetic::kToLeft;
inline constexpr std::span<const OperatorInput> kArithmeticToRight = catalogue_arithmetic::kToRight;

inline int64_t arithmeticWidth(int64_t) { return 2; }
inline std::vector<double> arithmeticPointMass(double c, int64_t) { return {c, c * c}; }
inline std::vector<std::string> arithmeticColumns(int64_t) { return {"mean", "variance"}; }
inline void arithmeticParameters(int64_t, const double *, const double *stats, std::vector<double> &out) {
  out.push_back(stats[0]);
  out.push_back(stats[1] - stats[0] * stats[0]);
}

/// The entry of a deterministic factor with these messages (forward first).
inline FactorEntry arithmeticEntry(Family f, std::span<const MessageOperator> messages,
                                   std::span<const KernelPattern> patterns, std::span<const RuntimeSymbol> symbols) {
  return FactorEntry{{f, messages, "", "", {}},
                     "",
                     "",
                     false,
                     arithmeticWidth,
                     arithmeticPointMass,
                     arithmeticColumns,
                     arithmeticParameters,
                     patterns,
                     symbols,
                     nullptr,
                     catalogue::noSummaryColumns,
                     catalogue::noSummaries,
                     "",
                     nullptr,
                     nullptr};
}

} // namespace ppc::rt::factors
