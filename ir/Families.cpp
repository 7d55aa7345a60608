//===- ir/Families.cpp - the distribution families of the language -------===//
//
// The table of families (see Families.h). A new distribution starts here (its
// spelling, parameters and support); its VMP operators and kernels go in a
// file of runtime/factors/ (docs/architecture.md).
//
//===----------------------------------------------------------------------===//
#include "ir/Families.h"

#include <cmath>
#include <string>

namespace ppc {
namespace {

constexpr Family kProbParents[] = {Family::Dirichlet, Family::Beta, Family::Softmax};
// A probability a Bernoulli or Binomial accepts: a Beta, or the logistic
// link of a real value, sigmoid(e) (the deterministic factor `sigmoid`).
constexpr Family kProbabilityParents[] = {Family::Beta, Family::Sigmoid};
constexpr Family kGammaParent[] = {Family::Gamma};
// A positive number a precision or a rate accepts: a Gamma, or a Gamma
// times a known positive number (the deterministic factor `scale`).
constexpr Family kPositiveParents[] = {Family::Gamma, Family::Scale};
constexpr Family kGaussianParent[] = {Family::Gaussian};
// A real number a Gaussian's mean accepts: a Gaussian, or arithmetic on
// Gaussians, constants and data (the deterministic factors below).
constexpr Family kRealParents[] = {Family::Gaussian, Family::Sum,          Family::Difference,
                                   Family::Product,  Family::InnerProduct, Family::GaussianChain,
                                   Family::Stack};
constexpr Family kMvGaussianParent[] = {Family::MvGaussian};
// A vector an MvGaussian's mean or an inner product accepts: an MvGaussian,
// or an element of a chain of them.
constexpr Family kVectorParents[] = {Family::MvGaussian, Family::MvGaussianChain};
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
    {"probability", ConstantDomain::Probability, kProbabilityParents},
};
constexpr ParamSpec kGammaParams[] = {
    {"shape", ConstantDomain::Positive, {}},
    {"rate", ConstantDomain::Positive, kGammaParent},
};
// Poisson(rate * exposure): the exposure (a time, an area, a population) is
// a known positive number per element, 1 when left out; written
// Poisson(rate * t(i)) or Poisson(rate, t(i)).
constexpr ParamSpec kPoissonParams[] = {
    {"rate", ConstantDomain::Positive, kGammaParent, " (times a known exposure: Poisson(rate * t(i)))"},
    {"exposure", ConstantDomain::Positive, {}},
};
constexpr ParamSpec kGaussianParams[] = {
    {"mean", ConstantDomain::Real, kRealParents},
    {"precision", ConstantDomain::Positive, kPositiveParents},
};

// The language has no vector or matrix literals: a constant mean is the same
// number in every component and a constant precision or scale is a multiple
// of the identity. The dimension may be left out where a random-variable
// argument gives it.
constexpr ParamSpec kMvGaussianParams[] = {
    {"mean", ConstantDomain::EveryComponent, kVectorParents},
    {"precision", ConstantDomain::TimesIdentity, kWishartParent},
    {"dimension", ConstantDomain::Dimension, {}},
};
constexpr ParamSpec kWishartParams[] = {
    {"degrees of freedom", ConstantDomain::Positive, {}},
    {"scale", ConstantDomain::TimesIdentity, {}},
    {"dimension", ConstantDomain::Dimension, {}},
};

// Observed only (no posterior over 0..trials): the trials are a constant or a
// known input per element (`Data`).
constexpr ParamSpec kBinomialParams[] = {
    {"trials", ConstantDomain::Count, {}},
    {"probability", ConstantDomain::Probability, kProbabilityParents},
};

// Observed only, like Binomial: a row of K counts (wide columns) summing to
// the trials, with Dirichlet probabilities.
constexpr Family kDirichletParent[] = {Family::Dirichlet};
constexpr ParamSpec kMultinomialParams[] = {
    {"trials", ConstantDomain::Count, {}},
    {"probabilities", ConstantDomain::None, kDirichletParent},
};

// A chain of Categoricals along the innermost plate of its definition:
// the initial probabilities of its first element, and the transition
// probabilities: a plate of K Dirichlets, row j the distribution after state
// j (the whole plate is the argument). Written ?.chain(Categorical(pi))(prev
// => Categorical(A(prev))).
constexpr ParamSpec kMarkovChainParams[] = {
    {"initial probabilities", ConstantDomain::None, kDirichletParent},
    {"transition probabilities", ConstantDomain::None, kDirichletParent},
};

// A chain of Gaussians along the innermost plate of its definition:
// x_0 ~ Gaussian(m0, p0), x_t ~ Gaussian(a x_{t-1}, tau). Written
// ?.chain(Gaussian(m0, p0))(prev => Gaussian(a * prev, tau)).
// A chain of MvGaussians (a linear dynamical system): x_0 ~ MvGaussian(m0,
// P0), x_t ~ MvGaussian(A x_{t-1}, Q). A is a constant c (the matrix c I),
// the whole plate of its D rows (MvGaussians of dimension D, or Data(D)), or
// one MvGaussian of dimension D * D (vec(A)). Written
// ?.chain(MvGaussian(m0, P0))(prev => MvGaussian(A * prev, Q)).
constexpr ParamSpec kMvGaussianChainParams[] = {
    {"initial mean", ConstantDomain::EveryComponent, kMvGaussianParent},
    {"initial precision", ConstantDomain::TimesIdentity, kWishartParent},
    {"transition matrix", ConstantDomain::Real, kMvGaussianParent},
    {"transition precision", ConstantDomain::TimesIdentity, kWishartParent},
    {"dimension", ConstantDomain::Dimension, {}},
};
constexpr ParamSpec kGaussianChainParams[] = {
    {"initial mean", ConstantDomain::Real, kGaussianParent},
    {"initial precision", ConstantDomain::Positive, kGammaParent},
    {"coefficient", ConstantDomain::Real, kGaussianParent},
    {"transition precision", ConstantDomain::Positive, kGammaParent},
};

// Deterministic factors. Each argument is a Gaussian (or another
// arithmetic result), a constant or a known input; an inner product's are
// MvGaussians or known vectors (Data(D)). Mean-field: the arguments are
// independent under q, so a variable may not reach one factor twice.
constexpr ParamSpec kArithmeticParams[] = {
    {"left operand", ConstantDomain::Real, kRealParents},
    {"right operand", ConstantDomain::Real, kRealParents},
};
constexpr ParamSpec kInnerProductParams[] = {
    {"left vector", ConstantDomain::EveryComponent, kVectorParents},
    {"right vector", ConstantDomain::EveryComponent, kVectorParents},
};

// tau * s: a Gamma (or a scaled one) times a known positive number.
constexpr ParamSpec kScaleParams[] = {
    {"scaled variable", ConstantDomain::None, kPositiveParents},
    {"known factor", ConstantDomain::Positive, {}},
};

// sigmoid(e) = 1 / (1 + exp(-e)) of a real value (a Gaussian, or arithmetic
// on Gaussians and data: logistic regression's w.dot(x(i)) + b).
constexpr ParamSpec kSigmoidParams[] = {
    {"log-odds", ConstantDomain::Real, kRealParents},
};

// softmax(e) of a plate of K real values (read whole: e's last plate is
// left unindexed): multinomial logistic regression's W.map(w => w.dot(x(i))).
constexpr ParamSpec kSoftmaxParams[] = {
    {"log-odds", ConstantDomain::None, kRealParents},
};

// stack(a, b, ...) inside a loop over a plate of as many elements: element k
// is operand k (a constant, a Gaussian or arithmetic on them). The softmax
// link's K arguments, softmax(e_0, ..., e_{K-1}), become such a plate.
constexpr ParamSpec kStackParams[] = {
    {"value", ConstantDomain::Real, kRealParents},
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
    {Family::Binomial, "Binomial", "binomial", Support::Count, kBinomialParams, 2},
    {Family::Multinomial, "Multinomial", "multinomial", Support::Vector, kMultinomialParams, 2},
    {Family::MarkovChain, "", "chain", Support::Cat, kMarkovChainParams, 2},
    {Family::GaussianChain, "", "gaussian_chain", Support::Real, kGaussianChainParams, 4},
    {Family::MvGaussianChain, "", "mvgaussian_chain", Support::Vector, kMvGaussianChainParams, 5},
    {Family::Sum, "", "sum", Support::Real, kArithmeticParams, 2, true},
    {Family::Difference, "", "difference", Support::Real, kArithmeticParams, 2, true},
    {Family::Product, "", "product", Support::Real, kArithmeticParams, 2, true},
    {Family::InnerProduct, "", "dot", Support::Real, kInnerProductParams, 2, true},
    {Family::Scale, "", "scale", Support::Positive, kScaleParams, 2, true},
    {Family::Sigmoid, "", "sigmoid", Support::Unit, kSigmoidParams, 1, true},
    {Family::Softmax, "", "softmax", Support::Simplex, kSoftmaxParams, 1, true},
    {Family::Stack, "", "stack", Support::Real, kStackParams, 1, true, true},
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

const FamilySpec &familySpec(Family f) { return kFamilies[static_cast<unsigned>(f)]; }

std::string displayName(Family f) {
  switch (f) {
  case Family::Sum: return "sum (+)";
  case Family::Difference: return "difference (-)";
  case Family::Product: return "product (*)";
  case Family::InnerProduct: return "inner product (.dot)";
  case Family::Scale: return "scaled Gamma (*)";
  case Family::Sigmoid: return "logistic link (sigmoid)";
  case Family::Softmax: return "softmax link (softmax)";
  case Family::Stack: return "stacked values (softmax's arguments)";
  case Family::MarkovChain: return "Markov chain (chain)";
  case Family::GaussianChain: return "Gaussian chain (chain)";
  case Family::MvGaussianChain: return "MvGaussian chain (chain)";
  default: return std::string(familySpec(f).spelling);
  }
}

std::optional<double> defaultArgument(Family f, size_t param) {
  if (f == Family::Poisson && param == 1)
    return 1.0; // no exposure
  return std::nullopt;
}

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
  case ConstantDomain::Count: return v >= 0 && v == std::floor(v);
  case ConstantDomain::None: return false;
  }
  return false;
}

// What the deterministic parents `p` accepts are, in words.
static std::string_view computedParents(const ParamSpec &p) {
  for (Family f : p.parents) {
    if (f == Family::Sigmoid)
      return " (or sigmoid(e) of a real value e: a logistic link)";
    if (f == Family::Softmax)
      return " (or softmax(e) of a plate of real values e: a softmax link)";
    if (f == Family::Sum)
      return " (or +, -, * and .dot of Gaussians, constants and Data)";
  }
  return " (or one times a known positive number, tau * s(i))";
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
  case ConstantDomain::Count: out = "an integer constant >= 0 or Data"; break;
  }
  if (!p.parents.empty()) {
    if (!out.empty())
      out += " or ";
    std::vector<std::string_view> names;
    bool arithmetic = false;
    for (Family f : p.parents) {
      if (isDeterministicFamily(f))
        arithmetic = true;
      else if (!familySpec(f).spelling.empty()) // (a chain's element reads as its family's)
        names.push_back(familySpec(f).spelling);
    }
    out += "a ";
    for (size_t i = 0; i < names.size(); ++i) {
      if (i)
        out += i + 1 == names.size() ? " or " : ", ";
      out += names[i];
    }
    out += " random variable";
    if (arithmetic)
      out += computedParents(p);
  }
  return out + std::string(p.alsoAccepted);
}

} // namespace ppc
