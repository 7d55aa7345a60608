//===- ir/Families.h - the distribution families of the language ---------===//
//
// What a family is in the language and the IR: its spelling, its parameters,
// what each parameter accepts (a constant with a domain, or a random variable
// of a conjugate family) and the support of the variable it defines. The
// frontend's type checks, the IR verifier and algorithm matching read this
// table. What VMP does with a family (its message operators, kernels and
// posterior layout) is the runtime's catalogue (runtime/Catalogue.h), one
// file per family in runtime/factors/.
//
// This header is data only and cheap to include.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ppc {

/// Distribution families (of factors, and of the variational posteriors of
/// the variables they define).
enum class Family : uint8_t {
  Dirichlet,
  Beta,
  Categorical,
  Bernoulli,
  Gamma,
  Poisson,
  Gaussian,
  MvGaussian,
  Wishart,
  Binomial,
  Multinomial, ///< observed counts of K categories out of known trials
  MarkovChain, ///< z_t ~ Categorical(A(z_{t-1})) along a plate, z_0 ~ Categorical(pi): a hidden Markov chain
  GaussianChain, ///< x_t ~ Gaussian(a x_{t-1}, tau) along a plate, x_0 ~ Gaussian(m0, p0): a state-space model
  MvGaussianChain, ///< x_t ~ MvGaussian(A x_{t-1}, Q) along a plate, x_0 ~ MvGaussian(m0, P0): a linear dynamical system
  // Deterministic factors (arithmetic on random variables): the variable they
  // define is a function of their arguments, with no density of its own.
  Sum,        ///< a + b of Gaussians, constants and data
  Difference, ///< a - b
  Product,    ///< a * b (a Gaussian times a Gaussian, a constant or data)
  InnerProduct, ///< a.dot(b) of MvGaussians and known vectors
  Scale,        ///< tau * s: a Gamma times a known positive number (a scaled precision or rate)
  Sigmoid,      ///< sigmoid(e): the logistic link of a real value, a probability (Jaakkola-Jordan bound)
  Softmax,      ///< softmax(e): K probabilities from a plate of K real values (Bouchard's bound)
  Stack,        ///< stack(a, b, ...): element k of a plate of known size is operand k (softmax(a, b, c))
};
constexpr unsigned kNumFamilies = 22;

/// The set of values a random variable takes.
enum class Support : uint8_t {
  Simplex,  ///< probability vectors of a given dimension (Dirichlet)
  Unit,     ///< (0, 1) (Beta)
  Cat,      ///< {0, ..., n-1} (Categorical)
  Bool,     ///< {0, 1} (Bernoulli)
  Positive, ///< (0, inf) (Gamma)
  Count,    ///< {0, 1, 2, ...} (Poisson)
  Real,     ///< the real line (Gaussian)
  Vector,   ///< R^D (MvGaussian)
  PDMatrix, ///< D x D positive-definite matrices (Wishart)
};

/// What a constant argument must satisfy.
enum class ConstantDomain : uint8_t {
  None,        ///< no constant accepted: the argument must be a random variable
  Positive,    ///< a number > 0
  Probability, ///< a number in [0, 1]
  Real,        ///< any finite number
  Dimension,   ///< an integer (Long) >= 1, known before inference
  EveryComponent, ///< any finite number, the same in every component of a vector (MvGaussian's mean)
  TimesIdentity,  ///< a number > 0 times the identity matrix (a precision or scale matrix)
  Count,          ///< an integer >= 0 (a Binomial's trials)
};

struct ParamSpec {
  std::string_view name;               ///< e.g. "concentration"
  ConstantDomain constant;             ///< what a constant must satisfy
  std::span<const Family> parents;     ///< random-variable families accepted (conjugate)
  std::string_view alsoAccepted = {};  ///< a form the front end rewrites into these, for messages
};

struct FamilySpec {
  Family family;
  std::string_view spelling;   ///< in the language: "Dirichlet" ("" if not in the language)
  std::string_view irName;     ///< in the IR: "dirichlet" ("" if not in the IR)
  Support support;
  std::span<const ParamSpec> params;
  /// Optional trailing parameters may be omitted; Beta(c) means Beta(c, c).
  unsigned minArgs;
  /// A deterministic factor: the variable is its arguments' function (no
  /// density, no entropy; its posterior statistics are computed forward from
  /// its arguments' and its natural parameters collect its children's
  /// messages, which the factor passes back to its arguments).
  bool deterministic = false;
  /// Any number of operands (at least minArgs), each read as the last parameter.
  bool variadic = false;
};

const FamilySpec &familySpec(Family f);
/// The parameter operand i stands for (a variadic family repeats its last one).
inline const ParamSpec &paramOf(const FamilySpec &s, size_t i) {
  return s.params[i < s.params.size() ? i : s.params.size() - 1];
}
inline bool isDeterministicFamily(Family f);
/// How diagnostics name a family: its spelling, or the operator of a
/// deterministic factor ("the sum (+)").
std::string displayName(Family f);

/// The value of a trailing parameter that may be left out (a Poisson's
/// exposure: 1), if it has one. The IR prints such an argument only when it
/// differs, and the frontend and the IR parser fill it in.
std::optional<double> defaultArgument(Family f, size_t param);
std::optional<Family> familyFromSpelling(std::string_view spelling);
std::optional<Family> familyFromIRName(std::string_view irName);
std::span<const FamilySpec> allFamilies();

std::string_view supportName(Support s);

/// Whether a random variable with support `s` has the right kind of values
/// for parameter `p` (a type check: Poisson's rate is positive, so a Beta
/// variable fits; whether VMP has an operator for it is the catalogue's
/// parents list, checked by algorithm matching).
bool supportFits(const ParamSpec &p, Support s);

/// Whether constant `v` satisfies `d` (finite, and positive / in [0, 1] / >= 1).
bool constantInDomain(ConstantDomain d, double v);

/// "a Dirichlet or Beta random variable", for diagnostics.
std::string describeAccepted(const ParamSpec &p);

/// How a statement uses one of its inputs, for the scheduler (seed 000, "Where
/// do the annotations come from?"); the catalogue's message operators carry
/// these, and the IR prints them on message statements.
enum class DepKind : uint8_t {
  Plain,    ///< read; no constraint beyond being declared
  Required, ///< [Proper]/[SkipIfUniform]: computed at least once before first use
  Trigger,  ///< the output must be recomputed whenever this input changes
  Fresh,    ///< must be up to date before the output is computed (shared work)
};
std::string_view depKindName(DepKind k);

inline bool isDeterministicFamily(Family f) { return familySpec(f).deterministic; }
/// A chain along a plate (?.chain(...)(...)): one structured posterior per
/// chain, its elements' rows updated together.
inline bool isChainFamily(Family f) {
  return f == Family::MarkovChain || f == Family::GaussianChain || f == Family::MvGaussianChain;
}
/// The operand a factor reads as a whole plate of rows, its last plate left
/// unindexed (a Markov chain's transition probabilities, a vector chain's
/// transition matrix, a softmax's values); -1 if none.
inline int wholeRowsOperand(Family f) {
  switch (f) {
  case Family::MarkovChain: return 1;
  case Family::MvGaussianChain: return 2;
  case Family::Softmax: return 0;
  default: return -1;
  }
}

} // namespace ppc
