#include "runtime/Catalogue.h"

#include <cmath>
#include <string>

namespace ppc {
namespace {

constexpr Family kProbParents[] = {Family::Dirichlet, Family::Beta};
constexpr Family kBetaParent[] = {Family::Beta};
constexpr Family kGammaParent[] = {Family::Gamma};
constexpr Family kGaussianParent[] = {Family::Gaussian};
constexpr Family kMvGaussianParent[] = {Family::MvGaussian};
constexpr Family kWishartParent[] = {Family::Wishart};

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

// The language has no vector or matrix literals: a constant mean is the same
// number in every component and a constant precision or scale is a multiple
// of the identity. The dimension may be left out where a random-variable
// argument gives it.
constexpr ParamSpec kMvGaussianParams[] = {
    {"mean", ConstantDomain::EveryComponent, kMvGaussianParent},
    {"precision", ConstantDomain::TimesIdentity, kWishartParent},
    {"dimension", ConstantDomain::Dimension, {}},
};
constexpr ParamSpec kWishartParams[] = {
    {"degrees of freedom", ConstantDomain::Positive, {}},
    {"scale", ConstantDomain::TimesIdentity, {}},
    {"dimension", ConstantDomain::Dimension, {}},
};

constexpr FamilySpec kFamilies[kNumFamilies] = {
    {Family::Dirichlet, "Dirichlet", "dirichlet", Support::Simplex, kDirichletParams, 2},
    {Family::Beta, "Beta", "beta", Support::Unit, kBetaParams, 1},
    {Family::Categorical, "Categorical", "categorical", Support::Cat, kCategoricalParams, 1},
    {Family::Bernoulli, "Bernoulli", "bernoulli", Support::Bool, kBernoulliParams, 1},
    {Family::Gamma, "Gamma", "gamma", Support::Positive, kGammaParams, 2},
    {Family::Poisson, "Poisson", "poisson", Support::Count, kPoissonParams, 1},
    {Family::Gaussian, "Gaussian", "gaussian", Support::Real, kGaussianParams, 2},
    {Family::MvGaussian, "MvGaussian", "mvgaussian", Support::Vector, kMvGaussianParams, 2},
    {Family::Wishart, "Wishart", "wishart", Support::PDMatrix, kWishartParams, 3},
};

// ---- VMP operators. Argument 0 is the sample; reads name the arguments whose
// expected statistics a kernel uses. A parent's message reads the sample with
// SkipIfUniform (Required): starting from an uninitialised child would push
// inference into a poor local optimum (seed 000); a message to the sample
// reads Proper parents (Required): it is undefined for uniform ones.
constexpr std::span<const OperatorInput> kNone{};
constexpr OperatorInput kReadSample[] = {{0, DepKind::Required}};
constexpr OperatorInput kReadParam1[] = {{1, DepKind::Required}};
constexpr OperatorInput kReadParam2[] = {{2, DepKind::Required}};
constexpr OperatorInput kReadSampleAnd1[] = {{0, DepKind::Plain}, {1, DepKind::Plain}};
constexpr OperatorInput kReadSampleAnd2[] = {{0, DepKind::Plain}, {2, DepKind::Plain}};
constexpr OperatorInput kReadSampleOnly[] = {{0, DepKind::Plain}};
constexpr OperatorInput kGaussianToSample[] = {{1, DepKind::Required}, {2, DepKind::Required}};
constexpr OperatorInput kGaussianToMean[] = {{0, DepKind::Required}, {2, DepKind::Required}};
constexpr OperatorInput kGaussianToPrecision[] = {{0, DepKind::Required}, {1, DepKind::Required}};
constexpr OperatorInput kGaussianElbo[] = {{0, DepKind::Plain}, {1, DepKind::Plain}, {2, DepKind::Plain}};

constexpr MessageOperator kNoMessage{"", "", kNone};

constexpr MessageOperator kDirichletMsgs[] = {
    {"ppc_dirichlet_probs_avglog", "", kNone}, kNoMessage, kNoMessage};
constexpr MessageOperator kBetaMsgs[] = {{"ppc_beta_p_avglog", "", kNone}, kNoMessage, kNoMessage};
constexpr MessageOperator kCategoricalMsgs[] = {
    {"ppc_categorical_sample_avglog", "", kReadParam1},
    {"ppc_categorical_probs_avglog", "ppc_categorical_probs_avglog_obs_n", kReadSample}};
constexpr MessageOperator kBernoulliMsgs[] = {
    {"ppc_bernoulli_sample_avglog", "", kReadParam1},
    {"ppc_bernoulli_p_avglog", "ppc_bernoulli_p_avglog_obs_n", kReadSample}};
constexpr MessageOperator kGammaMsgs[] = {
    {"ppc_gamma_sample_avglog", "", kReadParam2},
    kNoMessage,
    {"ppc_gamma_rate_avglog", "ppc_gamma_rate_avglog_obs_n", kReadSample}};
constexpr MessageOperator kPoissonMsgs[] = {
    {"ppc_poisson_sample_avglog", "", kReadParam1},
    {"ppc_poisson_rate_avglog", "ppc_poisson_rate_avglog_obs_n", kReadSample}};
constexpr MessageOperator kGaussianMsgs[] = {
    {"ppc_gaussian_sample_avglog", "", kGaussianToSample},
    {"ppc_gaussian_mean_avglog", "ppc_gaussian_mean_avglog_obs_n", kGaussianToMean},
    {"ppc_gaussian_precision_avglog", "ppc_gaussian_precision_avglog_obs_n", kGaussianToPrecision}};

constexpr MessageOperator kMvGaussianMsgs[] = {
    {"ppc_mvgaussian_sample_avglog", "", kGaussianToSample},
    {"ppc_mvgaussian_mean_avglog", "ppc_mvgaussian_mean_avglog_obs_n", kGaussianToMean},
    {"ppc_mvgaussian_precision_avglog", "ppc_mvgaussian_precision_avglog_obs_n", kGaussianToPrecision},
    kNoMessage};
constexpr MessageOperator kWishartMsgs[] = {
    {"ppc_wishart_iso_sample_avglog", "", kNone}, kNoMessage, kNoMessage, kNoMessage};

constexpr FactorOperators kOperators[kNumFamilies] = {
    {Family::Dirichlet, kDirichletMsgs, "ppc_dirichlet_sym_avglogfactor", "", kReadSampleOnly},
    {Family::Beta, kBetaMsgs, "ppc_beta_avglogfactor", "", kReadSampleOnly},
    {Family::Categorical, kCategoricalMsgs, "ppc_categorical_avglogfactor", "ppc_categorical_avglogfactor_obs_n",
     kReadSampleAnd1},
    {Family::Bernoulli, kBernoulliMsgs, "ppc_bernoulli_avglogfactor", "ppc_bernoulli_avglogfactor_obs_n",
     kReadSampleAnd1},
    {Family::Gamma, kGammaMsgs, "ppc_gamma_avglogfactor", "ppc_gamma_avglogfactor_obs_n", kReadSampleAnd2},
    {Family::Poisson, kPoissonMsgs, "ppc_poisson_avglogfactor", "ppc_poisson_avglogfactor_obs_n", kReadSampleAnd1},
    {Family::Gaussian, kGaussianMsgs, "ppc_gaussian_avglogfactor", "ppc_gaussian_avglogfactor_obs_n", kGaussianElbo},
    {Family::MvGaussian, kMvGaussianMsgs, "ppc_mvgaussian_avglogfactor", "ppc_mvgaussian_avglogfactor_obs_n",
     kGaussianElbo},
    {Family::Wishart, kWishartMsgs, "ppc_wishart_iso_avglogfactor", "", kReadSampleOnly},
};

constexpr GateOperator kGates[] = {
    {GateOp::Cases, "gate.cases", "ppc_cases_posterior", "ppc_cases_avglogfactor",
     "splits a condition into one boolean per case; its posterior is softmax(log prior + branch evidence)"},
    {GateOp::Enter, "gate.enter", "ppc_gate_accumulate", "",
     "a clone of an outer variable for every case; messages out of case k are weighted by q(c = k)"},
    {GateOp::EnterPartial, "gate.enter_partial", "ppc_gate_accumulate", "",
     "clones of an outer variable for a subset of the cases"},
    {GateOp::EnterOne, "gate.enter_one", "ppc_gate_accumulate", "",
     "the one clone of an outer variable used in exactly one case"},
    {GateOp::Exit, "gate.exit", "ppc_gate_accumulate", "",
     "merges the clones defined in each case into the variable used after the conditional"},
};

} // namespace

std::string_view depKindName(DepKind k) {
  switch (k) {
  case DepKind::Plain: return "plain";
  case DepKind::Required: return "required";
  case DepKind::Trigger: return "trigger";
  case DepKind::Fresh: return "fresh";
  }
  return "?";
}

const FactorOperators &factorOperators(Family f) { return kOperators[static_cast<unsigned>(f)]; }

std::span<const GateOperator> gateOperators() { return kGates; }

std::string_view entropyKernel(Family f) {
  switch (f) {
  case Family::Dirichlet:
  case Family::Beta: return "ppc_dirichlet_entropy_n";
  case Family::Categorical: return "ppc_categorical_entropy_n";
  case Family::Bernoulli: return "ppc_bernoulli_entropy_n";
  case Family::Gamma: return "ppc_gamma_entropy_n";
  case Family::Poisson: return "ppc_poisson_entropy_n";
  case Family::Gaussian: return "ppc_gaussian_entropy_n";
  case Family::MvGaussian: return "ppc_mvgaussian_entropy_n";
  case Family::Wishart: return "ppc_wishart_entropy_n";
  }
  return "";
}

std::vector<std::string_view> catalogueKernels() {
  std::vector<std::string_view> out;
  auto add = [&](std::string_view k) {
    if (!k.empty())
      out.push_back(k);
  };
  for (const FactorOperators &f : kOperators) {
    for (const MessageOperator &m : f.toArgument) {
      add(m.kernel);
      add(m.observedKernel);
    }
    add(f.elboKernel);
    add(f.observedElboKernel);
  }
  for (const GateOperator &g : kGates) {
    add(g.kernel);
    add(g.elboKernel);
  }
  for (const FamilySpec &f : kFamilies)
    add(entropyKernel(f.family));
  return out;
}

const FamilySpec &familySpec(Family f) { return kFamilies[static_cast<unsigned>(f)]; }

std::span<const FamilySpec> allFamilies() { return kFamilies; }

std::optional<Family> familyFromSpelling(std::string_view spelling) {
  for (const FamilySpec &s : kFamilies)
    if (!s.spelling.empty() && s.spelling == spelling)
      return s.family;
  return std::nullopt;
}

std::optional<Family> familyFromIRName(std::string_view irName) {
  for (const FamilySpec &s : kFamilies)
    if (!s.irName.empty() && s.irName == irName)
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
  case Support::Vector: return "vector";
  case Support::PDMatrix: return "pdmatrix";
  }
  return "?";
}

bool supportFits(const ParamSpec &p, Support s) {
  for (Family f : p.parents)
    if (familySpec(f).support == s)
      return true;
  switch (p.constant) {
  case ConstantDomain::Positive: return s == Support::Positive || s == Support::Unit || s == Support::Count;
  case ConstantDomain::Probability: return s == Support::Unit;
  case ConstantDomain::EveryComponent: return s == Support::Vector;
  case ConstantDomain::TimesIdentity: return s == Support::PDMatrix;
  case ConstantDomain::Real:
    return s == Support::Real || s == Support::Positive || s == Support::Unit || s == Support::Count;
  default: return false;
  }
}

bool constantInDomain(ConstantDomain d, double v) {
  if (!std::isfinite(v))
    return false;
  switch (d) {
  case ConstantDomain::Positive: return v > 0;
  case ConstantDomain::Probability: return v >= 0 && v <= 1;
  case ConstantDomain::Dimension: return v >= 1 && v == std::floor(v);
  case ConstantDomain::Real:
  case ConstantDomain::EveryComponent: return true;
  case ConstantDomain::TimesIdentity: return v > 0;
  case ConstantDomain::None: return false;
  }
  return false;
}

std::string describeAccepted(const ParamSpec &p) {
  std::string out;
  switch (p.constant) {
  case ConstantDomain::None: break;
  case ConstantDomain::Positive: out = "a positive constant"; break;
  case ConstantDomain::Probability: out = "a constant in [0, 1]"; break;
  case ConstantDomain::Real: out = "a constant"; break;
  case ConstantDomain::Dimension: out = "a Long constant >= 1"; break;
  case ConstantDomain::EveryComponent: out = "a constant (the same in every component)"; break;
  case ConstantDomain::TimesIdentity: out = "a positive constant (times the identity matrix)"; break;
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
