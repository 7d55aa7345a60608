//===- frontend/LoweringImpl.h - the lowering's state, shared by its files ==//
//
// The AST-to-IR lowering is one class (one pass over the model, with scopes,
// the open loops and the builder); its methods live in three files by the
// construct they lower:
//   Lowering.cpp          parameters, vals, names, arithmetic, plates, blocks,
//                         and which variables are observed
//   LowerApply.cpp        application: indexing, distributions, known inputs
//                         (Data), lifting over plates
//   LowerMapAndBranches.cpp  map, if and match
//   LowerArithmetic.cpp   arithmetic on random variables (deterministic factors)
// Only these files include this header; the interface is Lowering.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/AST.h"
#include "frontend/Lowering.h"
#include "ir/Builder.h"
#include "ir/IR.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ppc::lowering {
/// The spelling of a known input in the language.
constexpr std::string_view kDataSpelling = "Data";
/// The logistic link, p = sigmoid(e) (a deterministic factor, not a family).
constexpr std::string_view kSigmoidSpelling = "sigmoid";
/// The softmax link, p = softmax(e) of a plate of K real values.
constexpr std::string_view kSoftmaxSpelling = "softmax";

using ir::Dim;
using ir::Op;
using ir::OpKind;
using ir::Operand;
using ir::Type;
using ir::TypeKind;
using ir::Value;

/// What an expression evaluates to.
struct SValue {
  enum class Kind : uint8_t { Error, Det, Plate, RV, Dist };
  Kind kind = Kind::Error;
  SourceRange loc;

  // Det: a literal or an SSA value (with its indices when defined in loops).
  Operand det;
  bool isLong = false;
  std::optional<double> constant; ///< known at compile time (literal arithmetic)

  // Plate and RV: the IR value and the indices bound so far; the remaining
  // dims of `base` are free (a plate of plates, a plate of variables).
  Value *base = nullptr;
  std::vector<Operand> bound;

  // Dist: a distribution applied to arguments of which some are still
  // plates of variables; `freePlates` are the plates it ranges over.
  Family family = Family::Dirichlet;
  std::vector<SValue> args;
  std::vector<Operand> freePlates; ///< plate operands (with their row indices)

  static SValue error() { return SValue(); }
  bool isError() const { return kind == Kind::Error; }
  size_t freeDims() const {
    if (kind == Kind::Dist)
      return freePlates.size();
    if (kind == Kind::RV || kind == Kind::Plate)
      return base->dims.size() - bound.size();
    return 0;
  }
  Operand element() const { return Operand::ofValue(base, bound); }
};

/// One active `.map` loop.
struct Loop {
  Op *op;
  Value *index;
};

struct Symbol {
  SValue value;
  SourceRange defLoc;
};

inline std::string familyName(Family f) { return displayName(f); }

class Lowering {
public:
  Lowering(const ast::Model &model, DiagnosticEngine &diags)
      : ast_(model), diags_(diags), module_(std::make_unique<ir::Module>()), b_(*module_) {}
  std::unique_ptr<ir::Module> run();

private:
  // ---- diagnostics ----
  SValue fail(SourceRange loc, const std::string &msg);
  static std::string describe(const SValue &v);
  static std::string rvFamilyName(const Value *v);

  // ---- scopes ----
  void define(const std::string &name, SourceRange loc, SValue value);
  const Symbol *lookup(const std::string &name) const;
  std::vector<std::string> visibleNames() const;

  // ---- insertion helpers ----
  std::vector<Operand> currentIndices() const;
  /// Inserts a pure top-level op (known plate, deterministic arithmetic on
  /// parameters) before the top-level op that is being built, so that it
  /// dominates every use and stays outside loops and branches.
  Op *createHoisted(OpKind kind, SourceRange loc);
  static bool isTopLevelOperand(const Operand &o);
  std::string anonymousName();

  // ---- parameters and vals ----
  void param(const ast::Param &p);
  void valDef(const ast::ValDef &def);
  size_t valuesCreated() const { return createdOrder_.size(); }
  bool createdSince(const Value *v, size_t mark) const;
  Value *track(Value *v);

  // ---- expressions ----
  SValue eval(const ast::Expr &e);
  SValue evalInner(const ast::Expr &e);
  /// `l op r` of evaluated operands: deterministic arithmetic.
  SValue binary(const ast::Binary &bin, const SValue &l, const SValue &r);
  /// Poisson(rate * exposure): the arguments (rate, exposure) when `e` is a
  /// product of a random rate and a known number (a constant or Data);
  /// otherwise the product evaluated as arithmetic (one argument).
  std::vector<SValue> rateTimesExposure(const ast::Expr &e);
  SValue name(const ast::Name &n);
  static std::string signature(const FamilySpec &spec);
  bool requireNumber(const SValue &v, const std::string &what);
  SValue arithmetic(OpKind k, SourceRange loc, const SValue &l, const SValue *r);

  // ---- plates ----
  SValue dataPlate(SourceRange loc);
  SValue range(const ast::Range &r);

  // ---- blocks ----
  SValue block(const ast::Block &blk);

  // ---- indexing ----
  /// Binds the next free dim of `target` (an RV, a plate of plates or a
  /// lifted distribution) to `index`.
  SValue bindIndex(SValue target, const SValue &index, SourceRange loc);
  std::string indexName(const SValue &v) const;
  /// The source text of a one-line range (for messages that quote the user).
  std::string sourceText(SourceRange r) const { return diags_.text(r); }
  std::string dimText(const Dim &d) const;
  static std::string plateText(const Op &p);

  // ---- application: distributions and indexing ----
  SValue apply(const ast::Apply &a);
  /// `Data` (a number per element) or `Data(D)` (a vector of D): a known
  /// input per element of the plates being mapped, bound from the data.
  SValue knownInput(SourceRange loc, const std::vector<ast::ExprPtr> *args);
  SValue distribution(Family fam, const ast::Apply &a);
  /// MvGaussian(mean, precision) without a dimension takes it from a
  /// random-variable argument (the verifier checks that both agree).
  std::optional<size_t> inferDimension(std::vector<SValue> &args, const ast::Apply &a);
  /// The random-variable arguments of MvGaussian have its dimension, and a
  /// Wishart has more degrees of freedom than its dimension less one.
  bool checkDimensions(Family fam, const std::vector<SValue> &args, std::optional<size_t> dimensionFrom);
  static bool samePlates(const std::vector<Operand> &a, const std::vector<Operand> &b);
  /// The free plates of a plate-of-variables value, as loop operands. Only
  /// the first is complete (it opens the next loop); the row indices of the
  /// later ones depend on loops not yet open and hold -1, which is enough to
  /// compare the plates of two arguments.
  static std::vector<Operand> freePlatesOf(const SValue &v);
  bool checkArgument(const FamilySpec &spec, const ParamSpec &p, const SValue &arg);
  /// Turns a (possibly lifted) distribution into a random variable, wrapping
  /// it in loops over its free plates.
  SValue materialize(const SValue &d);

  // ---- LowerArithmetic.cpp: arithmetic on random variables ----
  static bool isRandomOperand(const SValue &v);
  /// `l op r` (op one of + - * /) with a random or Data operand: a
  /// deterministic factor.
  SValue randomArithmetic(char op, SourceRange loc, SValue l, SValue r);
  SValue negate(SourceRange loc, SValue x);
  /// A Gamma (or a scaled one), not Data.
  static bool isGammaLike(const SValue &v);
  /// tau * s with s a known positive number: the factor `scale`.
  SValue scaledGamma(SourceRange loc, SValue gamma, SValue factor);
  /// `a.dot(b)`.
  SValue dotProduct(const ast::Map &m);
  /// ?.chain(Categorical(pi))(prev => Categorical(A(prev))) (LowerChain.cpp).
  SValue markovChain(const ast::Map &m, const ast::Apply &a);
  SValue gaussianChain(const SValue &plate, const ast::Apply &first, const ast::Lambda &fn, SourceRange loopLoc,
                       SourceRange loc);
  std::optional<std::vector<SValue>> stateChainArguments(const ast::Apply &first, const ast::Lambda &fn,
                                                         const ast::Apply &transition, bool commutes,
                                                         const std::string &form, const std::string &usage);
  SValue mvGaussianChain(const SValue &plate, const ast::Apply &first, const ast::Lambda &fn, SourceRange loopLoc,
                         SourceRange loc);
  SValue chainFactor(const SValue &plate, Family family, const std::vector<SValue> &args, SourceRange loopLoc,
                     SourceRange loc);
  /// softmax(e): K probabilities from a plate of K real values.
  SValue softmaxLink(const ast::Apply &a);
  SValue softmaxOfValues(const ast::Apply &a);
  /// sigmoid(e): the logistic link (a probability) of a real value.
  SValue logisticLink(const ast::Apply &a);
  SValue arithmeticFactor(Family fam, SourceRange loc, std::vector<SValue> args);

  // ---- map ----
  SValue map(const ast::Map &m);

  // ---- conditionals ----
  bool requireCondition(const SValue &c, bool forIf);
  /// Evaluates one branch into `region` and returns the random variable it
  /// yields (checked to be defined inside the branch).
  /// Where the value of `e` comes from: the last item of a block.
  static SourceRange resultLoc(const ast::Expr &e);
  SValue branch(const ast::Expr &e, ir::Region *region, const char *what);
  SValue conditionalResult(Op *op, const std::vector<SValue> &branches, const char *what);
  SValue ifExpr(const ast::If &e);
  SValue matchExpr(const ast::Match &e);

  // ---- observed variables ----
  void markObserved();

  const ast::Model &ast_;
  DiagnosticEngine &diags_;
  std::unique_ptr<ir::Module> module_;
  ir::Builder b_;
  std::vector<std::unordered_map<std::string, Symbol>> scopes_;
  std::vector<Loop> loops_;
  std::map<std::string, Value *> detMemo_, plateMemo_;
  std::map<std::string, SourceRange> laterVals_;
  std::unordered_map<const Value *, size_t> createdOrder_; ///< creation order of values
  std::string currentVal_;
  std::vector<std::string> defining_; ///< vals whose right-hand side is being evaluated
  unsigned anonCounter_ = 0;
};

} // namespace ppc::lowering
