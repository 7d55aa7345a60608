//===- runtime/Catalogue.h - the operator catalogue ------------------------===//
//
// The single source of truth about the factors ppc knows: their spellings in
// the language, their parameters, what each parameter accepts (a constant
// with a domain, or a random variable of a conjugate family) and the support
// of the variable they define. The frontend's type checks, the IR verifier and
// algorithm matching all read this table; nothing else knows factor-specific
// rules.
//
// This header is data only and cheap to include.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

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
};
constexpr unsigned kNumFamilies = 7;

/// The set of values a random variable takes.
enum class Support : uint8_t {
  Simplex,  ///< probability vectors of a given dimension (Dirichlet)
  Unit,     ///< (0, 1) (Beta)
  Cat,      ///< {0, ..., n-1} (Categorical)
  Bool,     ///< {0, 1} (Bernoulli)
  Positive, ///< (0, inf) (Gamma)
  Count,    ///< {0, 1, 2, ...} (Poisson)
  Real,     ///< the real line (Gaussian)
};

/// What a constant argument must satisfy.
enum class ConstantDomain : uint8_t {
  None,        ///< no constant accepted: the argument must be a random variable
  Positive,    ///< a number > 0
  Probability, ///< a number in [0, 1]
  Real,        ///< any finite number
  Dimension,   ///< an integer (Long) >= 1, known before inference
};

struct ParamSpec {
  std::string_view name;               ///< e.g. "concentration"
  ConstantDomain constant;             ///< what a constant must satisfy
  std::span<const Family> parents;     ///< random-variable families accepted (conjugate)
};

struct FamilySpec {
  Family family;
  std::string_view spelling;   ///< in the language: "Dirichlet"
  std::string_view irName;     ///< in the IR: "dirichlet"
  Support support;
  std::span<const ParamSpec> params;
  /// Optional trailing parameters may be omitted; Beta(c) means Beta(c, c).
  unsigned minArgs;
};

const FamilySpec &familySpec(Family f);
std::optional<Family> familyFromSpelling(std::string_view spelling);
std::optional<Family> familyFromIRName(std::string_view irName);
std::span<const FamilySpec> allFamilies();

std::string_view supportName(Support s);
/// "a Dirichlet or Beta random variable", for diagnostics.
std::string describeAccepted(const ParamSpec &p);

} // namespace ppc
