#include "ir/Verifier.h"

#include "ir/IR.h"
#include "ir/Printer.h"

#include <cmath>
#include <set>

namespace ppc::ir {

namespace {

class Verifier {
public:
  Verifier(const Module &m, DiagnosticEngine &diags) : m_(m), diags_(diags) {}

  bool run() {
    for (const Param &p : m_.params)
      visible_.insert(p.value);
    // The plates of rows a chain reads whole (its transition probabilities):
    // messages read and write their posteriors whole too.
    walk(m_.body, [&](const Op &op) {
      const Operand *rows = wholeRows(op);
      if (rows && rows->isValue())
        wholeRows_.insert(rows->value);
    });
    region(m_.body, /*topLevel=*/true);
    if (m_.messages) {
      // Update statements form cycles: every message value is visible everywhere.
      walk(*m_.messages, [&](const Op &op) {
        for (const Value *v : op.results)
          visible_.insert(v);
      });
      region(*m_.messages, /*topLevel=*/true);
    }
    for (const Region *r : {m_.initSchedule.get(), m_.iterationSchedule.get(), m_.finalSchedule.get()})
      if (r)
        walk(*r, [&](const Op &op) {
          if (op.kind != OpKind::Update && op.kind != OpKind::Local && op.kind != OpKind::Fuse)
            error(op, "a schedule holds only 'update', 'local' and 'fuse'");
        });
    return ok_;
  }

private:
  void error(const Op &op, const std::string &msg) {
    ok_ = false;
    diags_.error(op.loc, msg);
  }

  // Verifies the ops of `r`; returns the values it makes visible to the code
  // after its parent op (everything defined in a loop body; nothing from a branch).
  std::vector<const Value *> region(const Region &r, bool topLevel) {
    std::vector<const Value *> definedHere;
    for (size_t i = 0; i < r.ops.size(); ++i) {
      const Op &op = *r.ops[i];
      if (op.kind == OpKind::Yield && i + 1 != r.ops.size())
        error(op, "'yield' must be the last operation of its branch");
      opChecks(op, topLevel);
      std::vector<const Value *> exported;
      if (op.kind == OpKind::For) {
        // A loop over something that is not a plate (opChecks said so): its
        // body's indices have no plate to be checked against.
        if (!iteratesPlate(op))
          continue;
        visible_.insert(op.index);
        exported = region(*op.regions[0], false);
        visible_.erase(op.index);
      } else if (op.kind == OpKind::When) {
        // A case's definitions stay visible after it (their posterior is
        // conditional on the case; gate.exit merges them).
        exported = region(*op.regions[0], false);
      } else if (op.kind == OpKind::If || op.kind == OpKind::Match) {
        for (const auto &sub : op.regions) {
          std::vector<const Value *> local = region(*sub, false);
          for (const Value *v : local)
            visible_.erase(v);
        }
        branchChecks(op);
      }
      for (const Value *v : op.results) {
        visible_.insert(v);
        definedHere.push_back(v);
      }
      for (const Value *v : exported)
        definedHere.push_back(v);
    }
    return definedHere;
  }

  static bool iteratesPlate(const Op &loop) {
    const Operand &o = loop.operands[0];
    return o.isValue() && o.value->type.kind == TypeKind::Plate && o.value->def;
  }

  // ---- operands ----
  bool sameOperand(const Operand &a, const Operand &b) {
    if (a.kind != b.kind)
      return false;
    if (a.kind == Operand::Kind::Int)
      return a.intValue == b.intValue;
    if (a.kind == Operand::Kind::Float)
      return a.floatValue == b.floatValue;
    if (a.value != b.value || a.indices.size() != b.indices.size())
      return false;
    for (size_t i = 0; i < a.indices.size(); ++i)
      if (!sameOperand(a.indices[i], b.indices[i]))
        return false;
    return true;
  }

  static std::optional<int64_t> constantOf(const Operand &o) {
    if (o.kind == Operand::Kind::Int)
      return o.intValue;
    return std::nullopt;
  }

  // `trailingFree` dims may be left unindexed (gate.exit of a switch: the
  // clones form an array over the loop of cases).
  void use(const Op &op, const Operand &o, size_t trailingFree = 0) {
    if (!o.isValue())
      return;
    const Value *v = o.value;
    if (!visible_.count(v)) {
      error(op, "%" + v->name + " is not visible here (used before its definition, or outside the branch that defines it)");
      return;
    }
    size_t expected = v->isParam() || v->isLoopIndex() ? 0 : v->dims.size();
    if (trailingFree && o.indices.size() + trailingFree == expected)
      expected = o.indices.size();
    if (o.indices.size() != expected) {
      error(op, "%" + v->name + " is an array over " + std::to_string(expected) +
                    " plate(s) but is used with " + std::to_string(o.indices.size()) +
                    " index(es) in " + toString(o));
      return;
    }
    for (size_t j = 0; j < o.indices.size(); ++j) {
      const Operand &idx = o.indices[j];
      const Value *plate = v->dims[j];
      const Op &plateOp = *plate->def;
      use(op, idx);
      if (plate->type.kind == TypeKind::Cases) {
        caseIndex(op, o, v, idx);
        continue;
      }
      switch (idx.kind) {
      case Operand::Kind::Float:
        error(op, "index " + toString(idx) + " of " + toString(o) + " must be an integer");
        break;
      case Operand::Kind::Int: {
        if (plateOp.plateKind == Op::PlateKind::Data) {
          error(op, "constant index " + toString(idx) + " into data-sized plate %" + plate->name);
          break;
        }
        auto lo = constantOf(plateOp.operands[0]), hi = constantOf(plateOp.operands[1]);
        if (idx.intValue < 0 ||
            (lo && hi && idx.intValue >= *hi - *lo + (plateOp.plateKind == Op::PlateKind::To)))
          error(op, "constant index " + toString(idx) + " is outside plate %" + plate->name);
        break;
      }
      case Operand::Kind::Value: {
        const Value *iv = idx.value;
        if (iv->isLoopIndex()) {
          const Operand &loopPlate = iv->loop->operands[0];
          if (loopPlate.value != plate) {
            error(op, "index %" + iv->name + " ranges over plate %" + loopPlate.value->name +
                          " but dimension " + std::to_string(j) + " of %" + v->name +
                          " is plate %" + plate->name);
            break;
          }
          // A ragged plate's loop must be the row that the earlier indices select.
          for (size_t k = 0; k < loopPlate.indices.size(); ++k)
            if (k >= j || !sameOperand(loopPlate.indices[k], o.indices[k])) {
              error(op, "index %" + iv->name + " iterates " + toString(loopPlate) +
                            ", not the row of %" + plate->name + " selected in " + toString(o));
              break;
            }
        } else if (iv->type.kind == TypeKind::Cat || iv->type.kind == TypeKind::Bool) {
          Dim n = iv->type.kind == TypeKind::Bool ? Dim::of(2) : iv->type.dim;
          if (plateOp.plateKind == Op::PlateKind::Data) {
            error(op, "%" + iv->name + " cannot index data-sized plate %" + plate->name);
            break;
          }
          auto size = knownPlateSize(plateOp);
          if (!size || !(*size == n))
            error(op, "%" + iv->name + " takes " + dimText(n) + " values but dimension " +
                          std::to_string(j) + " of %" + v->name + " is plate %" + plate->name +
                          " (" + plateText(plateOp) + ")");
        } else if (isKnownInput(iv) && iv->type.kind == TypeKind::Real) {
          // An id read from the data: ids are checked against the plate when bound.
          if (plateOp.plateKind == Op::PlateKind::Data)
            error(op, "%" + iv->name + " (ids from the data) cannot index data-sized plate %" + plate->name);
        } else {
          error(op, "%" + iv->name + " of type " + toString(iv->type) + " cannot be used as an index");
        }
        break;
      }
      }
    }
  }

  // The last index of a clone array selects a case: by position for
  // gate.enter_partial, by case value (a constant or a switch loop index) for gate.enter.
  void caseIndex(const Op &op, const Operand &o, const Value *clones, const Operand &idx) {
    const Value *cases = clones->dims.back();
    bool partial = clones->def && clones->def->kind == OpKind::GateEnterPartial;
    Dim count = partial ? Dim::of(int64_t(clones->def->operands.size()) - 2) : cases->type.dim;
    if (idx.kind == Operand::Kind::Int) {
      if (idx.intValue < 0 || (count.isConstant() && idx.intValue >= count.constant))
        error(op, "case " + toString(idx) + " is outside the clones in " + toString(o));
      return;
    }
    if (!partial && idx.isValue() && idx.value->isLoopIndex()) {
      auto size = knownPlateSize(*idx.value->loop->operands[0].value->def);
      if (size && *size == count)
        return;
    }
    error(op, "the case index of " + toString(o) + " must be a constant" +
                  std::string(partial ? "" : " or a loop over the cases"));
  }

  static std::string dimText(Dim d) { return d.value ? "%" + d.value->name : std::to_string(d.constant); }
  static std::string plateText(const Op &p) {
    if (p.plateKind == Op::PlateKind::Data)
      return "?";
    return toString(p.operands[0]) + (p.plateKind == Op::PlateKind::Until ? " until " : " to ") +
           toString(p.operands[1]);
  }

  // ---- ops ----
  bool isNumber(const Operand &o) {
    if (o.isLiteral())
      return true;
    TypeKind k = o.value->type.kind;
    return k == TypeKind::Long || k == TypeKind::Double || k == TypeKind::Index;
  }
  bool isInteger(const Operand &o) {
    if (o.kind == Operand::Kind::Int)
      return true;
    if (o.kind == Operand::Kind::Float)
      return false;
    TypeKind k = o.value->type.kind;
    return k == TypeKind::Long || k == TypeKind::Index;
  }

  void opChecks(const Op &op, bool topLevel) {
    for (const Operand &o : op.operands) {
      // `yield` passes whole values out of a branch; visibility is all it needs.
      if (op.kind == OpKind::Yield) {
        if (o.isValue() && !visible_.count(o.value))
          error(op, "%" + o.value->name + " is not visible here");
        continue;
      }
      if (op.kind == OpKind::Marginal && &o != &op.operands[0]) {
        // A marginal sums message arrays over the dims it does not index.
        if (o.isValue() && !visible_.count(o.value))
          error(op, "%" + o.value->name + " is not defined");
        continue;
      }
      // A chain's transition rows are its whole plate of Dirichlets (the
      // element before selects one at run time).
      const bool chainRows = (op.kind == OpKind::Random && wholeRows(op) == &o) ||
                             (op.kind == OpKind::Msg && readsWholeRows(o));
      if (op.kind == OpKind::Marginal && op.results[0]->dims.size() > op.operands[0].indices.size()) {
        // A chain's marginal: all the elements of one chain.
        const Op *def = o.isValue() ? o.value->def : nullptr;
        if (!def || def->kind != OpKind::Random || !isChainFamily(def->family))
          error(op, "only a chain's marginal leaves its variable's last index out; " + toString(o) + " is not a chain");
        else
          use(op, o, 1);
        continue;
      }
      use(op, o, (op.kind == OpKind::GateExit && &o != &op.operands[0]) || chainRows ? 1 : 0);
    }
    switch (op.kind) {
    case OpKind::Plate:
      if (op.plateKind != Op::PlateKind::Data) {
        if (!topLevel)
          error(op, "plates of known size are declared at the top level");
        for (const Operand &o : op.operands)
          if (!isInteger(o) || (o.isValue() && o.value->type.kind == TypeKind::Index))
            error(op, "plate bound " + toString(o) + " must be a long constant or parameter");
      }
      return;
    case OpKind::For:
      if (!iteratesPlate(op))
        error(op, "'for' iterates a plate; got " + toString(op.operands[0]));
      return;
    case OpKind::If:
      if (!op.operands[0].isValue() || op.operands[0].value->type.kind != TypeKind::Bool)
        error(op, "'if' condition must be a Bernoulli (bool) random variable; got " +
                      toString(op.operands[0]));
      if (op.regions.size() != 2)
        error(op, "'if' has two branches");
      return;
    case OpKind::Match: {
      const Operand &s = op.operands[0];
      if (!s.isValue() || (s.value->type.kind != TypeKind::Cat && s.value->type.kind != TypeKind::Bool)) {
        error(op, "'match' needs a Categorical or Bernoulli random variable; got " + toString(s));
        return;
      }
      Dim n = s.value->type.kind == TypeKind::Bool ? Dim::of(2) : s.value->type.dim;
      std::set<int64_t> seen;
      bool wildcard = false;
      for (const auto &r : op.regions) {
        if (wildcard)
          error(op, "'case _' must be the last case");
        if (!r->caseValue) {
          wildcard = true;
          continue;
        }
        int64_t c = *r->caseValue;
        if (!seen.insert(c).second)
          error(op, "duplicate case " + std::to_string(c));
        if (c < 0 || (n.isConstant() && c >= n.constant))
          error(op, "case " + std::to_string(c) + " is outside the values of " + toString(s) +
                        " (0.." + (n.isConstant() ? std::to_string(n.constant - 1) : "%" + n.value->name + "-1") + ")");
      }
      if (!wildcard) {
        if (!n.isConstant())
          error(op, "'match' on " + toString(s) + " with symbolic size %" + n.value->name +
                        " needs a 'case _'");
        else
          for (int64_t c = 0; c < n.constant; ++c)
            if (!seen.count(c)) {
              error(op, "'match' does not cover case " + std::to_string(c));
              break;
            }
      }
      return;
    }
    case OpKind::Yield:
      if (!op.parentOp() || (op.parentOp()->kind != OpKind::If && op.parentOp()->kind != OpKind::Match))
        error(op, "'yield' outside an 'if' or 'match' branch");
      return;
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Neg: {
      size_t arity = op.kind == OpKind::Neg ? 1 : 2;
      if (op.operands.size() != arity) {
        error(op, "'" + std::string(op.name()) + "' takes " + std::to_string(arity) + " operand(s)");
        return;
      }
      bool allInt = true;
      for (const Operand &o : op.operands) {
        if (!isNumber(o))
          error(op, "operand " + toString(o) + " of '" + std::string(op.name()) + "' is not a number");
        allInt = allInt && isInteger(o);
      }
      TypeKind expect = allInt ? TypeKind::Long : TypeKind::Double;
      if (op.result()->type.kind != expect)
        error(op, "'" + std::string(op.name()) + "' of these operands has type " +
                      std::string(typeKeyword(expect)));
      return;
    }
    case OpKind::Random:
      randomChecks(op);
      return;
    case OpKind::Data: {
      const TypeKind k = op.result() ? op.result()->type.kind : TypeKind::None;
      if (!op.operands.empty())
        error(op, "'data' takes no operands");
      if (k != TypeKind::Real && k != TypeKind::Vector)
        error(op, "'data' has type real or vector<D>");
      if (enclosingLoops(op).empty())
        error(op, "'data' is a known input per plate element: define it inside a 'for'");
      for (const Op *p = op.parentOp(); p; p = p->parentOp())
        if (p->kind == OpKind::If || p->kind == OpKind::Match || p->kind == OpKind::When)
          error(op, "'data' cannot be defined inside a conditional");
      return;
    }
    case OpKind::GateCases:
    case OpKind::GateEnter:
    case OpKind::GateEnterPartial:
    case OpKind::GateEnterOne:
    case OpKind::GateExit:
      gateChecks(op);
      return;
    case OpKind::Msg:
      if (!op.target)
        error(op, "'msg' needs a target");
      else
        use(op, *op.target, readsWholeRows(*op.target) ? 1 : 0);
      if (op.kernel.empty())
        error(op, "'msg' needs a kernel");
      return;
    case OpKind::Marginal:
    case OpKind::Update:
    case OpKind::Local:
    case OpKind::Fuse:
      return;
    case OpKind::When: {
      const Operand &c = op.operands[0], &k = op.operands[1];
      if (!c.isValue() || c.value->type.kind != TypeKind::Cases) {
        error(op, "'when' needs a gate.cases value; got " + toString(c));
        return;
      }
      Dim n = c.value->type.dim;
      if (k.kind == Operand::Kind::Int) {
        if (k.intValue < 0 || (n.isConstant() && k.intValue >= n.constant))
          error(op, "case " + toString(k) + " is outside " + toString(c));
      } else if (!(k.isValue() && k.value->isLoopIndex())) {
        error(op, "'when' selects a case by a constant or a loop index; got " + toString(k));
      }
      return;
    }
    }
  }

  void gateChecks(const Op &op) {
    auto casesOperand = [&]() -> const Value * {
      if (op.operands.empty() || !op.operands[0].isValue() || op.operands[0].value->type.kind != TypeKind::Cases) {
        error(op, "'" + std::string(op.name()) + "' needs a gate.cases value as its first operand");
        return nullptr;
      }
      return op.operands[0].value;
    };
    const Value *res = op.result();
    switch (op.kind) {
    case OpKind::GateCases: {
      if (op.operands.size() != 1 || !op.operands[0].isValue()) {
        error(op, "'gate.cases' takes one condition");
        return;
      }
      const Type &t = op.operands[0].value->type;
      if (t.kind != TypeKind::Cat && t.kind != TypeKind::Bool) {
        error(op, "'gate.cases' needs a Bernoulli or Categorical variable; got " + toString(op.operands[0]));
        return;
      }
      Type expect = Type::withDim(TypeKind::Cases, t.kind == TypeKind::Bool ? Dim::of(2) : t.dim);
      if (!(res->type == expect))
        error(op, "%" + res->name + " must have type " + toString(expect));
      return;
    }
    case OpKind::GateEnter:
    case OpKind::GateEnterPartial:
    case OpKind::GateEnterOne: {
      const Value *cases = casesOperand();
      if (!cases)
        return;
      size_t minOps = op.kind == OpKind::GateEnter ? 2 : 3;
      if (op.operands.size() < minOps || (op.kind != OpKind::GateEnterPartial && op.operands.size() != minOps)) {
        error(op, "wrong number of operands for '" + std::string(op.name()) + "'");
        return;
      }
      const Operand &x = op.operands[1];
      if (!x.isValue() || !x.value->type.isRandom()) {
        error(op, "'" + std::string(op.name()) + "' clones a random variable; got " + toString(x));
        return;
      }
      if (!(res->type == x.value->type))
        error(op, "%" + res->name + " must have the type of " + toString(x) + ", " + toString(x.value->type));
      std::set<int64_t> seen;
      for (size_t i = 2; i < op.operands.size(); ++i) {
        const Operand &k = op.operands[i];
        Dim n = cases->type.dim;
        if (k.kind == Operand::Kind::Int) {
          if (k.intValue < 0 || (n.isConstant() && k.intValue >= n.constant) || !seen.insert(k.intValue).second)
            error(op, "invalid or repeated case " + toString(k));
        } else if (op.kind != OpKind::GateEnterOne || !k.isValue() || !k.value->isLoopIndex()) {
          error(op, "cases are constants (or, for gate.enter_one, a switch loop index); got " + toString(k));
        }
      }
      return;
    }
    case OpKind::GateExit: {
      const Value *cases = casesOperand();
      if (!cases)
        return;
      if (op.operands.size() < 2) {
        error(op, "'gate.exit' merges at least one clone");
        return;
      }
      for (size_t i = 1; i < op.operands.size(); ++i) {
        const Operand &x = op.operands[i];
        if (!x.isValue() || !(x.value->type == res->type))
          error(op, "the clones merged by 'gate.exit' must have type " + toString(res->type) + "; got " +
                        toString(x));
      }
      return;
    }
    default:
      return;
    }
  }

  void randomChecks(const Op &op) {
    auto argError = [&](size_t operand, const std::string &msg) {
      ok_ = false;
      diags_.error(op.operandLoc(operand), msg);
    };
    const FamilySpec &spec = familySpec(op.family);
    if (spec.variadic ? op.operands.size() < spec.minArgs : op.operands.size() != spec.params.size()) {
      error(op, "'" + std::string(spec.irName) + "' takes " + (spec.variadic ? "at least " : "") +
                    std::to_string(spec.variadic ? size_t(spec.minArgs) : spec.params.size()) + " operands; got " +
                    std::to_string(op.operands.size()));
      return;
    }
    if (op.family == Family::Stack) { // element k of its loop's plate is operand k
      std::vector<Op *> loops = enclosingLoops(op);
      auto n = loops.empty() ? std::nullopt : knownPlateSize(*loops.back()->operands[0].value->def);
      if (!n || !n->isConstant() || n->constant != int64_t(op.operands.size()))
        error(op, "'stack' of " + std::to_string(op.operands.size()) + " operands must be in a loop over a plate of " +
                      std::to_string(op.operands.size()) + " elements");
    }
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const Operand &o = op.operands[i];
      const ParamSpec &p = paramOf(spec, i);
      std::string what = std::string(spec.spelling) + " " + std::string(p.name);
      if (o.isValue() && isKnownInput(o.value)) {
        // A known input stands for a constant per element.
        const bool knownRows = int(i) == wholeRowsOperand(op.family) && o.value->type.kind == TypeKind::Vector;
        if (!knownInputFits(p, o.value->type) && !knownRows) // (a known matrix: rows of Data(D))
          argError(i, what + " cannot be the data " + toString(o) + " of type " + toString(o.value->type) +
                          "; it must be " + describeAccepted(p));
        continue;
      }
      if (o.isValue() && o.value->type.isRandom()) {
        // A type check; conjugacy is algorithm matching's (passes/AlgorithmMatching.cpp).
        auto fam = familyOf(o.value);
        if (!fam || !supportFits(p, familySpec(*fam).support))
          argError(i, what + " cannot be " + toString(o) + " of type " + toString(o.value->type) + "; it must be " +
                          describeAccepted(p));
        continue;
      }
      if (p.constant == ConstantDomain::None) {
        argError(i, what + " must be " + describeAccepted(p) + "; got " + toString(o));
        continue;
      }
      if (!isNumber(o)) {
        argError(i, what + " must be " + describeAccepted(p) + "; got " + toString(o));
        continue;
      }
      if (p.constant == ConstantDomain::Dimension && !isInteger(o))
        argError(i, what + " must be a long; got " + toString(o));
      if (o.isLiteral()) {
        double v = o.literal();
        bool good = constantInDomain(p.constant, v);
        if (!good)
          argError(i, what + " must be " + describeAccepted(p) + "; got " + toString(o));
      }
    }
    // The result type follows from the family and the operands.
    Type expect = randomResultType(op.family, op.operands);
    if (op.family == Family::MvGaussian)
      for (size_t i = 0; i < 2; ++i) {
        const Operand &o = op.operands[i];
        if (o.isValue() && o.value->type.hasDim() && !(o.value->type.dim == expect.dim))
          argError(i, "MvGaussian " + std::string(spec.params[i].name) + " " + toString(o) + " of type " +
                          toString(o.value->type) + " does not have the dimension " + toString(op.operands[2]));
      }
    if (op.family == Family::Wishart && op.operands[0].isLiteral() && op.operands[2].isLiteral() &&
        !(op.operands[0].literal() > op.operands[2].literal() - 1))
      argError(0, "Wishart degrees of freedom must be greater than the dimension - 1; got " +
                      toString(op.operands[0]) + " with dimension " + toString(op.operands[2]));
    if (!(op.result()->type == expect))
      error(op, "%" + op.result()->name + " has type " + toString(op.result()->type) + " but '" +
                    std::string(spec.irName) + "' of these operands defines " + toString(expect));
    if (op.family == Family::MarkovChain)
      chainChecks(op);
    if (op.family == Family::Softmax) { // K values read whole: their last plate unindexed and of known size
      const Operand &e = op.operands[0];
      if (!e.isValue() || e.value->dims.empty() || e.indices.size() + 1 != e.value->dims.size() ||
          !knownPlateSize(*e.value->dims.back()->def))
        error(op, "'softmax' takes a plate of real values of known size, its last plate left unindexed; got " +
                      toString(e));
    }
    if (isChainFamily(op.family) && enclosingLoops(op).empty())
      error(op, "'" + std::string(spec.irName) + "' defines the elements of a chain: define it inside a 'for'");
  }

  // K states: the initial probabilities are a simplex<K>, the transition
  // rows a plate of K simplex<K> values, used whole.
  void chainChecks(const Op &op) {
    const Dim K = op.result()->type.dim;
    auto dimText = [](const Dim &d) { return d.value ? "%" + d.value->name : std::to_string(d.constant); };
    const Operand &pi = op.operands[0], &rows = op.operands[1];
    if (pi.isValue() && !(pi.value->type.dim == K))
      error(op, "the initial probabilities " + toString(pi) + " of a chain over " + dimText(K) + " states have " +
                    "another dimension");
    if (!rows.isValue() || rows.indices.size() + 1 != rows.value->dims.size() || !(rows.value->type.dim == K)) {
      error(op, "the transition rows of a chain over " + dimText(K) + " states must be a plate of simplex<" +
                    dimText(K) + "> values, its last plate left unindexed; got " + toString(rows));
      return;
    }
    auto n = knownPlateSize(*rows.value->dims.back()->def);
    if (!n || !(*n == K))
      error(op, "the transition rows of a chain over " + dimText(K) + " states must be " + dimText(K) +
                    " rows; " + toString(rows) + " is over plate %" + rows.value->dims.back()->name);
  }

  void branchChecks(const Op &op) {
    for (const auto &r : op.regions) {
      const Op *y = r->terminator();
      size_t n = y ? y->operands.size() : 0;
      if (n != op.results.size()) {
        error(op, "each branch of '" + std::string(op.name()) + "' must yield " +
                      std::to_string(op.results.size()) + " value(s); one yields " + std::to_string(n));
        continue;
      }
      for (size_t i = 0; i < n; ++i) {
        const Operand &o = y->operands[i];
        const Value *res = op.results[i];
        if (!o.isValue() || !o.indices.empty()) {
          error(*y, "'yield' takes whole values (no indices); got " + toString(o));
          continue;
        }
        if (!o.value->type.isRandom())
          error(*y, "'yield' of %" + o.value->name + ": branches yield random variables");
        if (!(o.value->type == res->type))
          error(*y, "%" + o.value->name + " has type " + toString(o.value->type) + " but %" +
                        res->name + " has type " + toString(res->type));
        if (o.value->dims != res->dims)
          error(*y, "%" + o.value->name + " is not over the same plates as %" + res->name +
                        " (declare shared data plates outside the branches)");
        if (o.value->dims.size() < enclosingPlates(op).size())
          error(*y, "%" + o.value->name + " is defined outside the branch");
      }
    }
  }

  static std::vector<const Value *> enclosingPlates(const Op &op) {
    std::vector<const Value *> out;
    for (Op *l : enclosingLoops(op))
      out.push_back(l->operands[0].value);
    return out;
  }

  const Module &m_;
  DiagnosticEngine &diags_;
  std::set<const Value *> visible_;
  std::set<const Value *> wholeRows_;
  /// A chain's transition rows and a softmax's values: a plate read whole.
  static const Operand *wholeRows(const Op &op) {
    const int i = op.kind == OpKind::Random ? wholeRowsOperand(op.family) : -1;
    return i >= 0 && size_t(i) < op.operands.size() ? &op.operands[size_t(i)] : nullptr;
  }
  /// `o` is the posterior of a chain's transition rows, left unindexed.
  bool readsWholeRows(const Operand &o) const {
    if (o.isValue() && isKnownInput(o.value)) // a known matrix's rows
      return wholeRows_.count(o.value) && o.indices.size() + 1 == o.value->dims.size();
    if (!o.isValue() || !o.value->def || o.value->def->kind != OpKind::Marginal)
      return false;
    const Operand &var = o.value->def->operands[0];
    return var.isValue() && wholeRows_.count(var.value) && o.indices.size() + 1 == o.value->dims.size();
  }
  bool ok_ = true;
};

} // namespace

bool isKnownInput(const Value *v) { return v && v->def && v->def->kind == OpKind::Data; }

bool knownInputFits(const ParamSpec &p, const Type &t) {
  const bool scalarConstant = p.constant == ConstantDomain::Positive || p.constant == ConstantDomain::Probability ||
                              p.constant == ConstantDomain::Real || p.constant == ConstantDomain::Count;
  return (t.kind == TypeKind::Real && scalarConstant) ||
         (t.kind == TypeKind::Vector && p.constant == ConstantDomain::EveryComponent); // an MvGaussian's mean
}

namespace {
/// v is a latent random variable whose factor has parameters (not a
/// deterministic one): a product's left operand that may be drawn.
bool drawableFactor(const Value *v) {
  return v && v->def && v->def->kind == OpKind::Random && !v->def->observed && !isDeterministicFamily(v->def->family);
}
} // namespace

std::unordered_set<const Value *> productSymmetryBreakers(const Region &body) {
  auto latent = [](const Operand &o) {
    return o.isValue() && o.value->def && o.value->def->kind == OpKind::Random && !o.value->def->observed;
  };
  std::unordered_set<const Value *> breakers;
  walk(body, [&](const Op &op) {
    if (op.kind != OpKind::Random || (op.family != Family::Product && op.family != Family::InnerProduct) ||
        op.operands.size() < 2)
      return;
    if (op.operands[0].isValue() && drawableFactor(op.operands[0].value) && latent(op.operands[1]))
      breakers.insert(op.operands[0].value);
  });
  return breakers;
}

std::optional<Family> familyOf(const Value *v) {
  for (int guard = 0; v && v->def && guard < 1000; ++guard) {
    const Op *d = v->def;
    if (d->kind == OpKind::Random)
      return d->family;
    if ((d->kind == OpKind::GateEnter || d->kind == OpKind::GateEnterPartial || d->kind == OpKind::GateEnterOne ||
         d->kind == OpKind::GateExit) &&
        d->operands.size() > 1 && d->operands[1].isValue()) {
      v = d->operands[1].value; // clones and merges have the family of what they copy
      continue;
    }
    if ((d->kind != OpKind::If && d->kind != OpKind::Match) || d->regions.empty())
      return std::nullopt;
    const Op *y = d->regions[0]->terminator();
    size_t i = 0;
    while (i < d->results.size() && d->results[i] != v)
      ++i;
    if (!y || i >= y->operands.size() || !y->operands[i].isValue())
      return std::nullopt;
    v = y->operands[i].value;
  }
  return std::nullopt;
}

bool verify(const Module &m, DiagnosticEngine &diags) { return Verifier(m, diags).run(); }

} // namespace ppc::ir
