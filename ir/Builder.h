//===- ir/Builder.h - creating ops at an insertion point -------------------===//
#pragma once

#include "ir/IR.h"

namespace ppc::ir {

/// Appends ops to a region and keeps parent links and value dims right.
class Builder {
public:
  explicit Builder(Module &m) : m_(m), region_(&m.body) {}

  Module &module() { return m_; }
  Region *insertionRegion() const { return region_; }
  void setInsertionRegion(Region *r) { region_ = r; }

  /// Appends a new op of `kind` at the insertion point.
  Op *create(OpKind kind, SourceRange loc);
  /// Appends a new op of `kind` at the end of `r`.
  Op *createIn(Region *r, OpKind kind, SourceRange loc) {
    Region *saved = region_;
    region_ = r;
    Op *op = create(kind, loc);
    region_ = saved;
    return op;
  }
  /// Adds a result to `op` named after `hint`; its dims are the plates of
  /// the loops around `op`.
  Value *addResult(Op *op, std::string_view hint, Type type);
  /// Adds a region to `op`.
  Region *addRegion(Op *op);
  /// Creates `for %index in plate { }`; the caller fills the body.
  Op *createFor(const Operand &plate, std::string_view indexHint, SourceRange loc);

  /// Plates of the loops enclosing the insertion point, outermost first.
  std::vector<Value *> enclosingPlates() const;

private:
  Module &m_;
  Region *region_;
};

/// Plates of the loops enclosing region `r`, outermost first.
std::vector<Value *> enclosingPlates(const Region *r);

} // namespace ppc::ir
