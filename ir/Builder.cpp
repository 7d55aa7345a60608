#include "ir/Builder.h"

namespace ppc::ir {

std::vector<Value *> enclosingPlates(const Region *r) {
  std::vector<Value *> plates;
  for (Op *p = r ? r->parent : nullptr; p; p = p->parentOp())
    if (p->kind == OpKind::For)
      plates.insert(plates.begin(), p->operands[0].value);
  return plates;
}

std::vector<Value *> Builder::enclosingPlates() const { return ir::enclosingPlates(region_); }

Op *Builder::create(OpKind kind, SourceRange loc) {
  auto op = std::make_unique<Op>();
  op->kind = kind;
  op->loc = loc;
  op->parentRegion = region_;
  Op *raw = op.get();
  region_->ops.push_back(std::move(op));
  return raw;
}

Value *Builder::addResult(Op *op, std::string_view hint, Type type) {
  Value *v = m_.newValue(hint, type);
  v->def = op;
  v->dims = ir::enclosingPlates(op->parentRegion);
  op->results.push_back(v);
  return v;
}

Region *Builder::addRegion(Op *op) {
  op->regions.push_back(std::make_unique<Region>());
  Region *r = op->regions.back().get();
  r->parent = op;
  return r;
}

Op *Builder::createFor(const Operand &plate, std::string_view indexHint, SourceRange loc) {
  Op *op = create(OpKind::For, loc);
  op->operands.push_back(plate);
  Value *idx = m_.newValue(indexHint, Type::of(TypeKind::Index));
  idx->loop = op;
  op->index = idx;
  addRegion(op);
  return op;
}

} // namespace ppc::ir
