//===- runtime/factors/ObservedOnlyEntry.h - families with no posterior ---===//
//
// What the entries of observed-only families share (Binomial.cpp,
// Multinomial.cpp): width 0, which makes the code generator refuse a
// posterior (algorithm matching refuses a latent one first: no message to
// the sample), no output, and only an observed ELBO term.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

namespace ppc::rt::factors {

inline int64_t observedOnlyWidth(int64_t) { return 0; }
inline std::vector<double> observedOnlyPointMass(double c, int64_t) { return {c}; }
inline std::vector<std::string> observedOnlyColumns(int64_t) { return {}; }
inline void observedOnlyParameters(int64_t, const double *, const double *, std::vector<double> &) {}

/// The entry of an observed-only family with these messages and ELBO term.
inline FactorEntry observedOnlyEntry(Family f, std::span<const MessageOperator> messages,
                                     std::string_view observedElboKernel, std::span<const OperatorInput> elboReads,
                                     std::span<const KernelPattern> patterns, std::span<const RuntimeSymbol> symbols) {
  return FactorEntry{{f, messages, "", observedElboKernel, elboReads},
                     "",
                     "",
                     false,
                     observedOnlyWidth,
                     observedOnlyPointMass,
                     observedOnlyColumns,
                     observedOnlyParameters,
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
