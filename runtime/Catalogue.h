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
};
constexpr unsigned kNumFamilies = 9;

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
};

struct ParamSpec {
  std::string_view name;               ///< e.g. "concentration"
  ConstantDomain constant;             ///< what a constant must satisfy
  std::span<const Family> parents;     ///< random-variable families accepted (conjugate)
};

struct FamilySpec {
  Family family;
  std::string_view spelling;   ///< in the language: "Dirichlet" ("" if not in the language)
  std::string_view irName;     ///< in the IR: "dirichlet" ("" if not in the IR)
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

//===----------------------------------------------------------------------===//
// VMP operators (the runtime kernels of runtime/Operators.h) and the
// dependency annotations the scheduler needs (seed 000, "Where do the
// annotations come from?").
//===----------------------------------------------------------------------===//

/// How a message operator uses one of its inputs.
enum class DepKind : uint8_t {
  Plain,    ///< read; no constraint beyond being declared
  Required, ///< [Proper]/[SkipIfUniform]: computed at least once before first use
  Trigger,  ///< the output must be recomputed whenever this input changes
  Fresh,    ///< must be up to date before the output is computed (shared work)
};
std::string_view depKindName(DepKind k);

/// An argument of a factor: 0 is the variable the factor defines (Infer.NET's
/// "sample"), i > 0 is the factor's i-th parameter.
struct OperatorInput {
  uint8_t arg;
  DepKind kind;
};

/// The message from a factor to one of its arguments, in natural parameters
/// (Infer.NET's <Arg>AverageLogarithm): it reads the expected statistics of
/// the other arguments listed in `reads`.
struct MessageOperator {
  std::string_view kernel;         ///< all arguments latent ("" if no message: a constant)
  std::string_view observedKernel; ///< plate batch with the sample observed ("" if none)
  std::span<const OperatorInput> reads;
  bool exists() const { return !kernel.empty() || !observedKernel.empty(); }
};

/// Everything VMP needs to know about one factor.
struct FactorOperators {
  Family family;
  /// Indexed by argument: [0] = message to the sample, [i] = to parameter i.
  std::span<const MessageOperator> toArgument;
  /// The factor's ELBO term E_q[log f] (Infer.NET's AverageLogFactor).
  std::string_view elboKernel, observedElboKernel;
  std::span<const OperatorInput> elboReads;
};
const FactorOperators &factorOperators(Family f);

/// The VMP gate operators of seed 001 (conditionals and mixtures).
enum class GateOp : uint8_t { Cases, Enter, EnterPartial, EnterOne, Exit };
struct GateOperator {
  GateOp op;
  std::string_view name;        ///< in the IR: gate.cases, gate.enter, ...
  std::string_view kernel;      ///< runtime kernel ("" when the message is a copy)
  std::string_view elboKernel;  ///< contribution to the ELBO ("" if none)
  std::string_view description;
};
std::span<const GateOperator> gateOperators();

/// The kernel giving the entropy of n posteriors of family `f` (natural
/// parameters), e.g. ppc_dirichlet_entropy_n.
std::string_view entropyKernel(Family f);

/// Every runtime kernel the catalogue names, for consistency checks and for
/// the JIT's symbol table.
std::vector<std::string_view> catalogueKernels();
/// Whether a random variable with support `s` has the right kind of values
/// for parameter `p` (a type check: Poisson's rate is positive, so a Beta
/// variable fits; whether VMP has an operator for it is the catalogue's
/// parents list, checked by algorithm matching).
bool supportFits(const ParamSpec &p, Support s);

/// Whether constant `v` satisfies `d` (finite, and positive / in [0, 1] / >= 1).
bool constantInDomain(ConstantDomain d, double v);

/// "a Dirichlet or Beta random variable", for diagnostics.
std::string describeAccepted(const ParamSpec &p);

} // namespace ppc
