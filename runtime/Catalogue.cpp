#include "runtime/Catalogue.h"

#include <string>

namespace ppc {
namespace {

constexpr Family kProbParents[] = {Family::Dirichlet, Family::Beta};
constexpr Family kBetaParent[] = {Family::Beta};
constexpr Family kGammaParent[] = {Family::Gamma};
constexpr Family kGaussianParent[] = {Family::Gaussian};

constexpr ParamSpec kDirichletParams[] = {
    {"concentration", ConstantDomain::Positive, {}},
    {"dimension", ConstantDomain::Dimension, {}},
};
constexpr ParamSpec kBetaParams[] = {
    {"first shape (alpha)", ConstantDomain::Positive, {}},
    {"second shape (beta)", ConstantDomain::Positive, {}},
};
constexpr ParamSpec kCategoricalParams[] = {
    {"probabilities", ConstantDomain::None, kProbParents},
};
constexpr ParamSpec kBernoulliParams[] = {
    {"probability", ConstantDomain::Probability, kBetaParent},
};
constexpr ParamSpec kGammaParams[] = {
    {"shape", ConstantDomain::Positive, {}},
    {"rate", ConstantDomain::Positive, kGammaParent},
};
constexpr ParamSpec kPoissonParams[] = {
    {"rate", ConstantDomain::Positive, kGammaParent},
};
constexpr ParamSpec kGaussianParams[] = {
    {"mean", ConstantDomain::Real, kGaussianParent},
    {"precision", ConstantDomain::Positive, kGammaParent},
};

constexpr FamilySpec kFamilies[kNumFamilies] = {
    {Family::Dirichlet, "Dirichlet", "dirichlet", Support::Simplex, kDirichletParams, 2},
    {Family::Beta, "Beta", "beta", Support::Unit, kBetaParams, 1},
    {Family::Categorical, "Categorical", "categorical", Support::Cat, kCategoricalParams, 1},
    {Family::Bernoulli, "Bernoulli", "bernoulli", Support::Bool, kBernoulliParams, 1},
    {Family::Gamma, "Gamma", "gamma", Support::Positive, kGammaParams, 2},
    {Family::Poisson, "Poisson", "poisson", Support::Count, kPoissonParams, 1},
    {Family::Gaussian, "Gaussian", "gaussian", Support::Real, kGaussianParams, 2},
};

} // namespace

const FamilySpec &familySpec(Family f) { return kFamilies[static_cast<unsigned>(f)]; }

std::span<const FamilySpec> allFamilies() { return kFamilies; }

std::optional<Family> familyFromSpelling(std::string_view spelling) {
  for (const FamilySpec &s : kFamilies)
    if (s.spelling == spelling)
      return s.family;
  return std::nullopt;
}

std::optional<Family> familyFromIRName(std::string_view irName) {
  for (const FamilySpec &s : kFamilies)
    if (s.irName == irName)
      return s.family;
  return std::nullopt;
}

std::string_view supportName(Support s) {
  switch (s) {
  case Support::Simplex: return "simplex";
  case Support::Unit: return "unit";
  case Support::Cat: return "cat";
  case Support::Bool: return "bool";
  case Support::Positive: return "positive";
  case Support::Count: return "count";
  case Support::Real: return "real";
  }
  return "?";
}

std::string describeAccepted(const ParamSpec &p) {
  std::string out;
  switch (p.constant) {
  case ConstantDomain::None: break;
  case ConstantDomain::Positive: out = "a positive constant"; break;
  case ConstantDomain::Probability: out = "a constant in [0, 1]"; break;
  case ConstantDomain::Real: out = "a constant"; break;
  case ConstantDomain::Dimension: out = "a Long constant >= 1"; break;
  }
  if (!p.parents.empty()) {
    if (!out.empty())
      out += " or ";
    out += "a ";
    for (size_t i = 0; i < p.parents.size(); ++i) {
      if (i)
        out += i + 1 == p.parents.size() ? " or " : ", ";
      out += familySpec(p.parents[i]).spelling;
    }
    out += " random variable";
  }
  return out;
}

} // namespace ppc
