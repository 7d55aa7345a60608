//===- ir/IR.h - the Model IR ----------------------------------------------===//
//
// An SSA-like factor IR (DESIGN.md §4, step 2). A Module holds one model:
//
//   model @LDA(%K: long, %V: long, %alpha: double, %beta: double) {
//     %P.phi = plate 0 until %K
//     for %i.phi in %P.phi {
//       %phi = dirichlet(%beta, %V) : simplex<%V>
//     }
//     ...
//   }
//
// * Plates are explicit: `plate lo until hi` (known size, always at the top
//   level) or `plate ?` (sized by the data; declared inside the loops it
//   depends on, so a `?` plate inside `for %d` is ragged: one size per d).
// * `for %i in %P { ... }` iterates a plate. A value defined inside loops is an
//   array over those loops' plates, visible after the loop; every use names
//   one element with a full index list: `%theta[%d]`, `%phi[%z[%d][%n]]`.
//   An index is a loop index over the same plate, a Categorical/Bernoulli
//   variable (a switch, compiled as a gate) or an integer constant.
// * Each random variable is one SSA value defined by its factor op
//   (`dirichlet`, `categorical`, ...), with the support type of its values.
// * Conditionals are regions: `if %c {..} else {..}` and `match %z {case ..}`;
//   values defined in a branch are local to it and leave only through `yield`.
// * Deterministic arithmetic on parameters is ordinary SSA (`add`, `mul`, ...).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Families.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ppc::ir {

class Value;
class Op;
class Region;

enum class TypeKind : uint8_t {
  None,
  Long,     ///< deterministic integer
  Double,   ///< deterministic real
  Plate,    ///< a plate declaration
  Index,    ///< a loop index (ranges over one plate)
  Simplex,  ///< random: probability vector, with a dimension
  Unit,     ///< random: (0, 1)
  Cat,      ///< random: {0..n-1}, with n
  Bool,     ///< random: {0, 1}
  Positive, ///< random: (0, inf)
  Count,    ///< random: {0, 1, ...}
  Real,     ///< random: real line
  Vector,   ///< random: R^n, with n
  PDMatrix, ///< random: n x n positive-definite matrices, with n
  Cases,    ///< gate.cases: one indicator per case of a condition, with the count
};

/// A size used in a type: an integer constant or an SSA value of type long.
struct Dim {
  Value *value = nullptr;
  int64_t constant = 0;
  static Dim of(int64_t c) { return Dim{nullptr, c}; }
  static Dim of(Value *v) { return Dim{v, 0}; }
  bool isConstant() const { return value == nullptr; }
  friend bool operator==(const Dim &a, const Dim &b) {
    return a.value == b.value && (a.value || a.constant == b.constant);
  }
};

struct Type {
  TypeKind kind = TypeKind::None;
  Dim dim;                  ///< Simplex, Cat, Cases, Vector and PDMatrix
  static Type of(TypeKind k) { return Type{k, {}}; }
  static Type withDim(TypeKind k, Dim d) { return Type{k, d}; }
  bool isDeterministic() const { return kind == TypeKind::Long || kind == TypeKind::Double; }
  bool isRandom() const { return kind >= TypeKind::Simplex && kind <= TypeKind::PDMatrix; }
  bool hasDim() const {
    return kind == TypeKind::Simplex || kind == TypeKind::Cat || kind == TypeKind::Cases || kind == TypeKind::Vector ||
           kind == TypeKind::PDMatrix;
  }
  friend bool operator==(const Type &a, const Type &b) {
    return a.kind == b.kind && (!a.hasDim() || a.dim == b.dim);
  }
};

/// The random-variable support type of a family's values.
TypeKind supportType(Support s);
std::string_view typeKeyword(TypeKind k);

/// An SSA value: a model parameter, an op result or a loop index.
class Value {
public:
  std::string name;        ///< printed as %name; unique in the module
  Type type;
  Op *def = nullptr;       ///< defining op (null for parameters and loop indices)
  Op *loop = nullptr;      ///< for loop indices: the `for` op
  /// The plates this value is an array over, outermost first (the plates of
  /// the loops around its definition, or of the yielded values for `if`).
  std::vector<Value *> dims;

  bool isParam() const { return def == nullptr && loop == nullptr; }
  bool isLoopIndex() const { return loop != nullptr; }
};

/// An operand: a literal, or a use of a value with one index per array dim.
struct Operand {
  enum class Kind : uint8_t { Value, Int, Float };
  Kind kind = Kind::Int;
  Value *value = nullptr;
  int64_t intValue = 0;
  double floatValue = 0;
  std::vector<Operand> indices;

  static Operand ofInt(int64_t v) { Operand o; o.kind = Kind::Int; o.intValue = v; return o; }
  static Operand ofFloat(double v) { Operand o; o.kind = Kind::Float; o.floatValue = v; return o; }
  static Operand ofValue(Value *v, std::vector<Operand> idx = {}) {
    Operand o; o.kind = Kind::Value; o.value = v; o.indices = std::move(idx); return o;
  }
  bool isValue() const { return kind == Kind::Value; }
  bool isLiteral() const { return kind != Kind::Value; }
  double literal() const { return kind == Kind::Int ? double(intValue) : floatValue; }
};

enum class OpKind : uint8_t {
  // Structure
  Plate,  ///< %P = plate lo until hi | plate lo to hi | plate ?
  For,    ///< for %i in %P[idx] { body }
  If,     ///< [%r =] if %c { then } else { else }
  Match,  ///< [%r =] match %z { case N { } ... case _ { } }
  Yield,  ///< yield %v...   (ends an if/match branch)
  // Deterministic arithmetic
  Add, Sub, Mul, Div, Neg,
  // Random variables, each defined by its factor
  Random,
  /// %x = data() : real | vector<D>: a known input per plate element (the
  /// language's `Data`, `Data(D)`), bound from the CSV like an observed
  /// variable, never inferred; a factor reads it as a constant per element.
  Data,
  // Gates (seed 001), produced by the gate transform
  GateCases,        ///< %c.cases = gate.cases(%c) : cases<N>
  GateEnter,        ///< clones of an outer variable, one per case (array over the cases)
  GateEnterPartial, ///< clones for the listed cases (array over them, by position)
  GateEnterOne,     ///< the one clone used in a known case
  GateExit,         ///< merges the clones defined in each case
  When,             ///< when %c.cases case k { ... }: the body belongs to case k
  // Message passing (the `messages` region, after message lowering)
  Msg,      ///< %m = msg KERNEL(args) to %v.q[...] [case k] : T   a factor-to-variable message
  Marginal, ///< %v.q = marginal %v (messages) : T                    q(v): the sum of its messages
  // Schedules (after scheduling)
  Update,   ///< update %stmt [streamed]: run the statement that defines %stmt
  Local,    ///< local %P iters N [tol T] [restart] { sweep } then { once }: nested schedule per element of %P
  Fuse,     ///< fuse %P [parallel] { updates }: one loop over %P running the updates per element
};

/// A block of ops. Loops have one region whose argument is the loop index;
/// `if` has two (then, else); `match` one per case.
class Region {
public:
  Op *parent = nullptr;
  std::vector<std::unique_ptr<Op>> ops;
  /// For match regions: the case value, or nullopt for `case _`.
  std::optional<int64_t> caseValue;

  Op *terminator() const;
};

class Op {
public:
  OpKind kind;
  SourceRange loc;
  Region *parentRegion = nullptr;
  std::vector<Value *> results;
  std::vector<Operand> operands;
  /// Where each operand was written, when known (diagnostics point at the
  /// argument rather than the whole factor).
  std::vector<SourceRange> operandLocs;
  std::vector<std::unique_ptr<Region>> regions;

  SourceRange operandLoc(size_t i) const {
    return i < operandLocs.size() && operandLocs[i].begin.valid() ? operandLocs[i] : loc;
  }

  // Random ops
  Family family = Family::Dirichlet;
  bool observed = false;
  // Plate ops: `until`, `to` or data-sized (`?`). Operands are lo, hi.
  enum class PlateKind : uint8_t { Until, To, Data } plateKind = PlateKind::Until;
  // For ops: the loop index (owned by the module).
  Value *index = nullptr;
  // Msg ops: the runtime kernel (from the catalogue); `evidence` messages
  // carry a factor's E[log f] to one case of a condition.
  std::string kernel;
  bool evidence = false;
  /// Msg and Marginal ops: how each operand is used (seed 000 annotations).
  std::vector<DepKind> deps;
  /// Msg ops: the marginal element the message goes to, and the case
  /// (evidence messages).
  std::optional<Operand> target, targetCase;
  /// Update ops of messages, once fusion decided: streamed (never stored for
  /// the whole plate: each element is consumed where it is computed) or
  /// materialized (stored).
  std::optional<bool> streamed;
  /// Local ops: at most how many sweeps of the locals per element, the
  /// tolerance that ends them early (mean absolute change of the element's
  /// posteriors; 0: always all sweeps), and whether the locals restart from
  /// their priors each outer iteration.
  int64_t iterations = 1;
  double tolerance = 0;
  bool restart = false;
  /// Marginal ops of a deterministic factor's value m (ir/Families.h), which
  /// has two: `marginal` is its statistics, computed forward from the
  /// factor's arguments; `marginal.back` (backward) sums the messages of m's
  /// children, which the factor passes back to its arguments.
  bool backward = false;
  /// Random ops: held at a posterior the user gives (--given): no message
  /// goes to it and it has no entropy term. Marginal ops: such a variable's
  /// posterior (`marginal.given`), which sums no messages and is never
  /// updated.
  bool given = false;
  /// Fuse ops: the elements can run in parallel.
  bool parallel = false;
  /// Msg ops: the gates the factor is in but its target is not: the message
  /// counts with weight q(condition = case) (`when %z.q case %k`).
  std::vector<std::pair<Operand, Operand>> gates;

  Op *parentOp() const { return parentRegion ? parentRegion->parent : nullptr; }
  Value *result() const { return results.empty() ? nullptr : results.front(); }
  bool isRandom() const { return kind == OpKind::Random; }
  bool isDeterministic() const { return kind >= OpKind::Add && kind <= OpKind::Neg; }
  bool isGate() const { return kind >= OpKind::GateCases && kind <= OpKind::GateExit; }
  /// Ops whose operands print as a call: name(operands) [observed] : type.
  bool isCallStyle() const { return isDeterministic() || isRandom() || isGate() || kind == OpKind::Data; }
  std::string_view name() const;
};

std::string_view opKindName(OpKind k);
/// The deterministic or gate op printed as `name`.
std::optional<OpKind> callOpFromName(std::string_view name);

/// A parameter of the model class: `K: Long = 20`.
struct Param {
  Value *value = nullptr;
  std::optional<double> defaultValue;
  SourceRange loc;
};

/// One model. Owns every value and op.
class Module {
public:
  Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  std::string name;
  SourceRange loc;
  std::vector<Param> params;
  Region body;
  /// After message lowering: the update statements of VMP, in no particular
  /// order (the scheduler orders them). May refer to values defined later.
  std::unique_ptr<Region> messages;
  /// After scheduling: statements run once before the iterations, in each
  /// iteration, and once after the last iteration (to refresh posteriors the
  /// last iteration left stale). Each holds `update` ops.
  std::unique_ptr<Region> initSchedule, iterationSchedule, finalSchedule;

  /// Creates a value owned by the module with a unique name derived from
  /// `hint` (hint, hint.1, hint.2, ...).
  Value *newValue(std::string_view hint, Type type);
  /// `hint` if no value has that name yet, else hint.1, hint.2, ...
  std::string uniqueName(std::string_view hint) const;
  /// The value named `name`, or null.
  Value *lookup(std::string_view name) const;
  /// Gives `v` the name `hint` (or hint.N if taken).
  void rename(Value *v, std::string_view hint);

  const Param *findParam(std::string_view name) const;

private:
  std::deque<Value> values_;
  std::unordered_map<std::string, Value *> byName_;
};

/// Calls `fn` on every op, outer before inner, in program order.
template <typename Fn> void walk(Region &r, Fn &&fn) {
  for (auto &op : r.ops) {
    fn(*op);
    for (auto &sub : op->regions)
      walk(*sub, fn);
  }
}
template <typename Fn> void walk(const Region &r, Fn &&fn) {
  for (const auto &op : r.ops) {
    fn(static_cast<const Op &>(*op));
    for (const auto &sub : op->regions)
      walk(static_cast<const Region &>(*sub), fn);
  }
}

/// Whether `v` is a known input (`Data`): its values come from the data.
bool isKnownInput(const Value *v);
/// Whether a known input of type `t` can stand for parameter `p`: a scalar
/// where a scalar constant is accepted (its values are checked against the
/// parameter's domain when the data are bound).
bool knownInputFits(const ParamSpec &p, const Type &t);

/// The latent variables of the model `body` that start from a random
/// posterior to break the symmetry of a product of two random variables
/// (a * b, a.dot(b) with both latent: from zero means every message through
/// the product is zero): the left operand of each such product. One walk,
/// for the passes that ask of every variable.
std::unordered_set<const Value *> productSymmetryBreakers(const Region &body);

/// The family of the factor that defines random variable `v` (through the
/// yields of `if`/`match`), if any.
std::optional<Family> familyOf(const Value *v);

/// The type of the variable a factor of `family` defines from these operands
/// (its dimension from the operand that gives it: Dirichlet's and the
/// multivariate families' dimension, a Categorical's probabilities).
Type randomResultType(Family family, const std::vector<Operand> &operands);

/// The number of elements of a known-size plate when it is a constant or a
/// single value: `0 until N` and `1 to N` have N elements.
std::optional<Dim> knownPlateSize(const Op &plate);

/// The `for` ops enclosing `op`, outermost first.
std::vector<Op *> enclosingLoops(const Op &op);
/// True if `pred` holds for one of a message's inputs: its operands and the
/// conditions of the gates it is weighted by.
template <typename Pred> bool anyMessageInput(const Op &msg, Pred pred) {
  for (const Operand &o : msg.operands)
    if (pred(o))
      return true;
  for (const auto &gate : msg.gates)
    if (pred(gate.first))
      return true;
  return false;
}
/// The `for` ops enclosing region `r` (its own parent included), outermost first.
std::vector<Op *> enclosingLoopsOfRegion(const Region &r);

} // namespace ppc::ir
