//===- runtime/Catalogue.cpp - the one list of factors and kernels -------===//
//
// Every family's entry and every group of kernels, in one list. A new
// family's file in runtime/factors/ is registered here (and its language
// definition in ir/Families.cpp); a new group of kernels too. The queries of
// Catalogue.h and the runtime's symbol table (Symbols.cpp) read these lists.
//
//===----------------------------------------------------------------------===//
#include "runtime/Catalogue.h"

#include "runtime/Symbols.h"

#include <array>
#include <cassert>
#include <cmath>
#include <map>
#include <string>

namespace ppc {
namespace rt::factors {
extern const FactorEntry kDirichlet, kBeta, kCategorical, kBernoulli, kGamma, kPoisson, kGaussian, kMvGaussian,
    kWishart, kBinomial, kMultinomial, kMarkovChain, kGaussianChain, kMvGaussianChain, kSum, kDifference, kProduct, kInnerProduct, kScale,
    kSigmoid, kSoftmax, kStack;
extern const KernelGroup kGatesKernels, kVectorKernels, kScheduleKernels, kProductFormKernels, kDenseAlgebraKernels,
    kPlateStatisticsKernels, kBinaryStatisticsKernels, kLdaReferenceKernels, kSpecialFunctionKernels;
extern const std::span<const GateOperator> kGateOperators;
} // namespace rt::factors

namespace {
using namespace rt::factors;

/// The families' entries, in the order of the Family enum (ir/Families.h).
const std::array<const FactorEntry *, kNumFamilies> kEntries = {
    &kDirichlet, &kBeta, &kCategorical, &kBernoulli, &kGamma, &kPoisson, &kGaussian, &kMvGaussian, &kWishart,
    &kBinomial,  &kMultinomial, &kMarkovChain, &kGaussianChain, &kMvGaussianChain, &kSum,  &kDifference, &kProduct, &kInnerProduct, &kScale,
    &kSigmoid,    &kSoftmax,   &kStack,
};

/// The kernels no family owns.
const KernelGroup *const kGroups[] = {
    &kGatesKernels,        &kVectorKernels,          &kScheduleKernels,    &kProductFormKernels,
    &kDenseAlgebraKernels, &kPlateStatisticsKernels, &kBinaryStatisticsKernels, &kLdaReferenceKernels,
    &kSpecialFunctionKernels,
};

} // namespace

const FactorEntry &factorEntry(Family f) {
  const FactorEntry &e = *kEntries[static_cast<unsigned>(f)];
  assert(e.operators.family == f && "runtime/Catalogue.cpp lists the entries in the order of Family");
  return e;
}

const FactorOperators &factorOperators(Family f) { return factorEntry(f).operators; }

std::span<const GateOperator> gateOperators() { return kGateOperators; }

std::span<const KernelGroup *const> kernelGroups() { return kGroups; }

std::string_view entropyKernel(Family f) { return factorEntry(f).entropyKernel; }

std::vector<double> vectorPointMass(Family f, const double *x, int64_t k) {
  if (f != Family::MvGaussian)
    return {};
  std::vector<double> s(x, x + k); // E x, then E x x^T row-major (runtime/factors/MvGaussian.cpp)
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j)
      s.push_back(x[i] * x[j]);
  return s;
}

std::string_view callingPattern(std::string_view kernel) {
  static const std::map<std::string_view, std::string_view> patterns = [] {
    std::map<std::string_view, std::string_view> m;
    for (const FactorEntry *e : kEntries)
      for (const KernelPattern &p : e->patterns)
        m.emplace(p.kernel, p.tokens);
    return m;
  }();
  auto it = patterns.find(kernel);
  return it == patterns.end() ? std::string_view() : it->second;
}

std::vector<std::string_view> catalogueKernels() {
  std::vector<std::string_view> out;
  auto add = [&](std::string_view k) {
    if (!k.empty())
      out.push_back(k);
  };
  for (const FactorEntry *e : kEntries) {
    for (const MessageOperator &m : e->operators.toArgument) {
      add(m.kernel);
      add(m.observedKernel);
    }
    add(e->operators.elboKernel);
    add(e->operators.observedElboKernel);
    add(e->entropyKernel);
    add(e->statsKernel);
  }
  for (const GateOperator &g : kGateOperators) {
    add(g.kernel);
    add(g.elboKernel);
  }
  return out;
}

int64_t catalogue::concentrationNaturalParameters(int64_t k, const double *standard, double *eta, std::string &why) {
  for (int64_t i = 0; i < k; ++i) {
    if (!(standard[i] > 0) || !std::isfinite(standard[i])) {
      why = "a finite number > 0";
      return i;
    }
    eta[i] = standard[i] - 1;
  }
  return -1;
}

std::vector<std::string> catalogue::noSummaryColumns(int64_t) { return {}; }
void catalogue::noSummaries(int64_t, const double *, std::vector<double> &) {}

std::vector<std::string> catalogue::indexedColumns(const char *prefix, int64_t k) {
  std::vector<std::string> cols;
  for (int64_t i = 0; i < k; ++i)
    cols.push_back(prefix + std::to_string(i));
  return cols;
}

} // namespace ppc
