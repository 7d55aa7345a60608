#include "ir/IR.h"

namespace ppc::ir {

TypeKind supportType(Support s) {
  switch (s) {
  case Support::Simplex: return TypeKind::Simplex;
  case Support::Unit: return TypeKind::Unit;
  case Support::Cat: return TypeKind::Cat;
  case Support::Bool: return TypeKind::Bool;
  case Support::Positive: return TypeKind::Positive;
  case Support::Count: return TypeKind::Count;
  case Support::Real: return TypeKind::Real;
  case Support::Vector: return TypeKind::Vector;
  case Support::PDMatrix: return TypeKind::PDMatrix;
  }
  return TypeKind::None;
}

std::string_view typeKeyword(TypeKind k) {
  switch (k) {
  case TypeKind::None: return "none";
  case TypeKind::Long: return "long";
  case TypeKind::Double: return "double";
  case TypeKind::Plate: return "plate";
  case TypeKind::Index: return "index";
  case TypeKind::Simplex: return "simplex";
  case TypeKind::Unit: return "unit";
  case TypeKind::Cat: return "cat";
  case TypeKind::Bool: return "bool";
  case TypeKind::Positive: return "positive";
  case TypeKind::Count: return "count";
  case TypeKind::Real: return "real";
  case TypeKind::Vector: return "vector";
  case TypeKind::PDMatrix: return "pdmatrix";
  case TypeKind::Cases: return "cases";
  }
  return "?";
}

Type randomResultType(Family family, const std::vector<Operand> &operands) {
  Type t = Type::of(supportType(familySpec(family).support));
  auto dimOf = [](const Operand &d) { return d.isValue() ? Dim::of(d.value) : Dim::of(d.intValue); };
  switch (family) {
  case Family::Dirichlet:
    if (operands.size() > 1)
      t.dim = dimOf(operands[1]);
    break;
  case Family::MvGaussian:
  case Family::Wishart:
    if (operands.size() > 2)
      t.dim = dimOf(operands[2]);
    break;
  case Family::MvGaussianChain:
    if (operands.size() > 4)
      t.dim = dimOf(operands[4]);
    break;
  case Family::Softmax: // K probabilities from a plate of K values read whole
    if (!operands.empty() && operands[0].isValue() && !operands[0].value->dims.empty())
      if (auto n = knownPlateSize(*operands[0].value->dims.back()->def))
        t.dim = *n;
    break;
  case Family::Multinomial: // K counts, K from the probabilities
    if (operands.size() > 1 && operands[1].isValue() && operands[1].value->type.kind == TypeKind::Simplex)
      t.dim = operands[1].value->type.dim;
    break;
  case Family::MarkovChain:
  case Family::Categorical: {
    const Operand *p = operands.empty() ? nullptr : &operands[0];
    t.dim = p && p->isValue() && p->value->type.kind == TypeKind::Simplex ? p->value->type.dim : Dim::of(2);
    break;
  }
  default: break;
  }
  return t;
}

std::string_view opKindName(OpKind k) {
  switch (k) {
  case OpKind::Plate: return "plate";
  case OpKind::For: return "for";
  case OpKind::If: return "if";
  case OpKind::Match: return "match";
  case OpKind::Yield: return "yield";
  case OpKind::Add: return "add";
  case OpKind::Sub: return "sub";
  case OpKind::Mul: return "mul";
  case OpKind::Div: return "div";
  case OpKind::Neg: return "neg";
  case OpKind::Random: return "random";
  case OpKind::Data: return "data";
  case OpKind::GateCases: return "gate.cases";
  case OpKind::GateEnter: return "gate.enter";
  case OpKind::GateEnterPartial: return "gate.enter_partial";
  case OpKind::GateEnterOne: return "gate.enter_one";
  case OpKind::GateExit: return "gate.exit";
  case OpKind::When: return "when";
  case OpKind::Msg: return "msg";
  case OpKind::Marginal: return "marginal";
  case OpKind::Update: return "update";
  case OpKind::Local: return "local";
  case OpKind::Fuse: return "fuse";
  }
  return "?";
}

std::optional<OpKind> callOpFromName(std::string_view name) {
  for (OpKind k : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Neg, OpKind::Data, OpKind::GateCases,
                   OpKind::GateEnter, OpKind::GateEnterPartial, OpKind::GateEnterOne, OpKind::GateExit})
    if (opKindName(k) == name)
      return k;
  return std::nullopt;
}

std::string_view Op::name() const {
  return kind == OpKind::Random ? familySpec(family).irName : opKindName(kind);
}

Op *Region::terminator() const {
  if (ops.empty() || ops.back()->kind != OpKind::Yield)
    return nullptr;
  return ops.back().get();
}

Module::Module() { body.parent = nullptr; }

std::string Module::uniqueName(std::string_view hint) const {
  std::string base(hint.empty() ? "v" : hint);
  if (!byName_.count(base))
    return base;
  for (unsigned i = 1;; ++i) {
    std::string candidate = base + "." + std::to_string(i);
    if (!byName_.count(candidate))
      return candidate;
  }
}

Value *Module::newValue(std::string_view hint, Type type) {
  Value &v = values_.emplace_back();
  v.name = uniqueName(hint);
  v.type = type;
  byName_.emplace(v.name, &v);
  return &v;
}

void Module::rename(Value *v, std::string_view hint) {
  if (v->name == hint)
    return;
  byName_.erase(v->name);
  v->name = uniqueName(hint);
  byName_.emplace(v->name, v);
}

Value *Module::lookup(std::string_view name) const {
  auto it = byName_.find(std::string(name));
  return it == byName_.end() ? nullptr : it->second;
}

const Param *Module::findParam(std::string_view name) const {
  for (const Param &p : params)
    if (p.value->name == name)
      return &p;
  return nullptr;
}

std::optional<Dim> knownPlateSize(const Op &plate) {
  if (plate.kind != OpKind::Plate || plate.plateKind == Op::PlateKind::Data)
    return std::nullopt;
  const Operand &lo = plate.operands[0], &hi = plate.operands[1];
  bool to = plate.plateKind == Op::PlateKind::To;
  if (lo.kind == Operand::Kind::Int && hi.kind == Operand::Kind::Int)
    return Dim::of(hi.intValue - lo.intValue + (to ? 1 : 0));
  if (lo.kind == Operand::Kind::Int && lo.intValue == (to ? 1 : 0) && hi.isValue() && hi.indices.empty())
    return Dim::of(hi.value);
  return std::nullopt;
}

std::vector<Op *> enclosingLoopsOfRegion(const Region &r) {
  std::vector<Op *> loops;
  for (Op *p = r.parent; p; p = p->parentOp())
    if (p->kind == OpKind::For)
      loops.insert(loops.begin(), p);
  return loops;
}

std::vector<Op *> enclosingLoops(const Op &op) {
  std::vector<Op *> loops;
  for (Op *p = op.parentOp(); p; p = p->parentOp())
    if (p->kind == OpKind::For)
      loops.insert(loops.begin(), p);
  return loops;
}

} // namespace ppc::ir
