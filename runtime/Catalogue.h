//===- runtime/Catalogue.h - the VMP operator catalogue -------------------===//
//
// The single source of truth about what variational message passing does
// with each family (the language-level definitions are ir/Families.h): its
// message operators to each argument with the dependency annotations the
// scheduler needs (seed 000, "Where do the annotations come from?"), its ELBO
// terms, the layout and statistics of its posteriors, how its kernels are
// called, how its posteriors are written out, and the kernels themselves.
//
// Each family's entry sits beside its kernels in one file of
// runtime/factors/ (Infer.NET keeps one operator file per factor); the
// kernels no family owns are grouped in runtime/kernels/. The one list of
// them all is runtime/Catalogue.cpp. Message lowering, dependency analysis,
// the plan's lowering, the JIT's symbol table and the outputs read this
// catalogue; nothing else knows factor-specific math.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Families.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ppc {

namespace rt { struct RuntimeSymbol; }

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

/// How the plan passes a kernel its arguments: one token per kernel
/// parameter (codegen/plan/KernelCalls.cpp marshals them and checks them
/// against the kernel's C signature).
///   D<i>  int64: the dimension of argument i (K of a Dirichlet/Categorical)
///   1     int64 1 (one element of an _n kernel)
///   S<i>  pointer: expected statistics of argument i (a constant's point mass)
///   N<i>  pointer: natural parameters of argument i
///   V<i>  double: argument i's value (constant, data) or first statistic (E x)
///   X<i>  pointer: argument i's data (double); I<i>: the same as int64
///   M<i>  pointer: argument i's row: a posterior's statistics, a known
///         vector's D values (no D x D point mass per row)
///   m<i>  int64: 1 if M<i> is a posterior's statistics, 0 if known values
///   A<i>  pointer: D0 copies of constant argument i (a Dirichlet's alpha)
///   C<i>  double: constant argument i's value
///   0     null pointer (no parent index array: the parent row is the one given)
///   P     int64: the position of the message's element in its innermost plate
///         (0 for a chain's first element)
///   Q<i>  pointer: natural parameters of argument i if it is a posterior, else
///         null (the kernel then reads S<i>, a constant's point mass)
///   W     pointer: the observation's weight (times the gate weight for messages), null if 1
///   w     double: the gate weight
///   d     pointer: the destination (the message's accumulator row)
struct KernelPattern {
  std::string_view kernel, tokens;
};

/// One family's entry: its VMP operators and the layout, statistics and
/// output of its posteriors (a posterior of this family, dimension k).
struct FactorEntry {
  FactorOperators operators;
  /// The entropy of n posteriors from their natural parameters (and statistics).
  std::string_view entropyKernel;
  /// statistics = stats(eta) for n rows; `statsTakesDimension`: the kernel's
  /// second parameter is the dimension.
  std::string_view statsKernel;
  bool statsTakesDimension;
  /// Doubles per element of eta and of the statistics.
  int64_t (*width)(int64_t k);
  /// The statistics of a constant c as a variable of this family: the point
  /// mass a constant parent sends (a vector constant is c in each of k
  /// components, a matrix one c I).
  std::vector<double> (*pointMass)(double c, int64_t k);
  /// The names of the standard parameters a posterior is written out in
  /// (--out), and their values from one element's eta and statistics.
  std::vector<std::string> (*outputColumns)(int64_t k);
  void (*standardParameters)(int64_t k, const double *eta, const double *stats, std::vector<double> &out);
  /// The calling patterns of the kernels the operators name.
  std::span<const KernelPattern> patterns;
  /// The family's kernels, for the JIT and the interpreter.
  std::span<const rt::RuntimeSymbol> symbols;
  /// The inverse of standardParameters (--init, --given): one element's
  /// natural parameters from its standard ones (outputColumns' order).
  /// Returns -1 when they are valid, else the index of the first one that is
  /// not, with `why` saying what it must be ("> 0"). Null: a posterior of
  /// this family cannot be given (a value computed from its operands).
  int64_t (*naturalParameters)(int64_t k, const double *standard, double *eta, std::string &why);
  /// Columns written after the standard parameters so that a table reads
  /// without the family's formulas (a Gamma's mean and variance), and their
  /// values from one element's standard parameters; none when the standard
  /// parameters are the mean already (a Gaussian's mean and variance).
  std::vector<std::string> (*summaryColumns)(int64_t k);
  void (*summaries)(int64_t k, const double *standard, std::vector<double> &out);
  /// The posterior predictive of a missing observation of this family
  /// (--out's <var>.predicted.csv): a kernel that adds, times the weight of
  /// the case it is in, the expected statistics of the observation given
  /// its parents' posteriors ("" if none); the columns written for one
  /// observation (as many as the sums) and their values from its sums.
  std::string_view predictiveKernel;
  std::vector<std::string> (*predictiveColumns)(int64_t k);
  void (*predictive)(int64_t k, const double *sums, std::vector<double> &out);
};

/// Kernels no family owns (vector helpers, product forms, ...), grouped by
/// the file that defines them.
struct KernelGroup {
  std::string_view name;
  std::span<const rt::RuntimeSymbol> symbols;
};

/// The VMP gate operators of seed 001 (conditionals and mixtures).
enum class GateOp : uint8_t { Cases, Enter, EnterPartial, EnterOne, Exit };
struct GateOperator {
  GateOp op;
  std::string_view name;        ///< in the IR: gate.cases, gate.enter, ...
  std::string_view kernel;      ///< runtime kernel ("" when the message is a copy)
  std::string_view elboKernel;  ///< contribution to the ELBO ("" if none)
  std::string_view description;
};

/// The family's entry (runtime/factors/<Family>.cpp).
const FactorEntry &factorEntry(Family f);
const FactorOperators &factorOperators(Family f);
std::span<const GateOperator> gateOperators();
/// Every group of kernels no family owns (gates and special functions included).
std::span<const KernelGroup *const> kernelGroups();

/// The kernel giving the entropy of n posteriors of family `f` (natural
/// parameters), e.g. ppc_dirichlet_entropy_n.
std::string_view entropyKernel(Family f);

/// The statistics of the known vector `x` (k components) as a point mass of
/// `f`: an MvGaussian's [x, x x^T]; empty for the scalar families (their
/// FactorEntry::pointMass takes one number).
std::vector<double> vectorPointMass(Family f, const double *x, int64_t k);

/// The calling pattern of a kernel the catalogue names ("" if none).
std::string_view callingPattern(std::string_view kernel);

/// Every runtime kernel the catalogue names, for consistency checks.
std::vector<std::string_view> catalogueKernels();

/// Dependency annotations the families' entries share.
namespace catalogue {
inline constexpr std::span<const OperatorInput> kNone{};
inline constexpr OperatorInput kReadSample[] = {{0, DepKind::Required}};
inline constexpr OperatorInput kReadParam1[] = {{1, DepKind::Required}};
inline constexpr OperatorInput kReadParam2[] = {{2, DepKind::Required}};
inline constexpr OperatorInput kReadSampleAnd1[] = {{0, DepKind::Plain}, {1, DepKind::Plain}};
inline constexpr OperatorInput kReadSampleAnd2[] = {{0, DepKind::Plain}, {2, DepKind::Plain}};
inline constexpr OperatorInput kReadSampleOnly[] = {{0, DepKind::Plain}};
// A Gaussian's (or MvGaussian's) messages read the two other arguments.
inline constexpr OperatorInput kGaussianToSample[] = {{1, DepKind::Required}, {2, DepKind::Required}};
inline constexpr OperatorInput kGaussianToMean[] = {{0, DepKind::Required}, {2, DepKind::Required}};
inline constexpr OperatorInput kGaussianToPrecision[] = {{0, DepKind::Required}, {1, DepKind::Required}};
inline constexpr OperatorInput kGaussianElbo[] = {{0, DepKind::Plain}, {1, DepKind::Plain}, {2, DepKind::Plain}};
// A chain of Gaussians or of MvGaussians, (chain, m0, p0, a, tau): every
// message names all the other arguments (those its kernel does not read are
// Plain). GaussianChain.cpp, MvGaussianChain.cpp.
inline constexpr OperatorInput kStateChainToChain[] = {
    {1, DepKind::Required}, {2, DepKind::Required}, {3, DepKind::Required}, {4, DepKind::Required}};
inline constexpr OperatorInput kStateChainToInitialMean[] = {
    {0, DepKind::Required}, {2, DepKind::Required}, {3, DepKind::Plain}, {4, DepKind::Plain}};
inline constexpr OperatorInput kStateChainToInitialPrecision[] = {
    {0, DepKind::Required}, {1, DepKind::Required}, {3, DepKind::Plain}, {4, DepKind::Plain}};
inline constexpr OperatorInput kStateChainToTransition[] = {
    {0, DepKind::Required}, {1, DepKind::Plain}, {2, DepKind::Plain}, {4, DepKind::Required}};
inline constexpr OperatorInput kStateChainToPrecision[] = {
    {0, DepKind::Required}, {1, DepKind::Plain}, {2, DepKind::Plain}, {3, DepKind::Required}};
inline constexpr OperatorInput kStateChainElbo[] = {
    {0, DepKind::Plain}, {1, DepKind::Plain}, {2, DepKind::Plain}, {3, DepKind::Plain}, {4, DepKind::Plain}};
inline constexpr MessageOperator kNoMessage{"", "", kNone};
/// k parameters named prefix0, prefix1, ... (Dirichlet's alpha_0, ...).
std::vector<std::string> indexedColumns(const char *prefix, int64_t k);
/// Beta and Dirichlet: eta = alpha - 1, each alpha finite and > 0.
int64_t concentrationNaturalParameters(int64_t k, const double *standard, double *eta, std::string &why);
/// For families whose standard parameters are their summaries already.
std::vector<std::string> noSummaryColumns(int64_t k);
void noSummaries(int64_t k, const double *standard, std::vector<double> &out);
} // namespace catalogue

} // namespace ppc
