//===- codegen/transforms/ProductIdentityFolding.cpp - fold-products -----===//
//
// A product-form row (codegen/plan/ProductForm.cpp) starts as the identity
// and multiplies each factor in: lowering emits `fill 1; mul a; mul b`.
// `fill 1; mul a` is `copy a`, and `copy a; mul b` is `mul2 a b`: one pass
// over the row instead of three, without scalar stores that the vectorized
// multiply then reloads. The same products in the same order, so the same
// numbers.
//
//===----------------------------------------------------------------------===//
#include "codegen/transforms/Transforms.h"

#include "runtime/Symbols.h"

namespace ppc::codegen {
namespace {

int foldIn(Plan &p, std::vector<Stmt> &body) {
  int folded = 0;
  std::vector<Stmt> out;
  for (Stmt &s : body) {
    if (s.kind == Stmt::Kind::Loop)
      folded += foldIn(p, s.body);
    if (!out.empty() && isDiscardedCall(s, "ppc_mul_n")) {
      Stmt &prev = out.back();
      const Arg &n = s.args[0], &src = s.args[1], &dst = s.args[2];
      if (isDiscardedCall(prev, "ppc_fill") && p.sameArg(prev.args[0], n) && p.sameArg(prev.args[2], dst) &&
          p.doubleConstantOf(prev.args[1].expr) == 1.0) {
        prev.kernel = rt::findRuntimeKernel("ppc_copy_n");
        prev.args = {n, src, dst};
        prev.note = s.note;
        ++folded;
        continue;
      }
      if (isDiscardedCall(prev, "ppc_copy_n") && p.sameArg(prev.args[0], n) && p.sameArg(prev.args[2], dst)) {
        prev.kernel = rt::findRuntimeKernel("ppc_mul2_n");
        prev.args = {n, prev.args[1], src, dst};
        prev.note += ", " + s.note;
        ++folded;
        continue;
      }
    }
    out.push_back(std::move(s));
  }
  body = std::move(out);
  return folded;
}

} // namespace

int foldProductIdentities(Plan &p) {
  int folded = 0;
  for (auto &block : p.blocks)
    folded += foldIn(p, block);
  return folded;
}

} // namespace ppc::codegen
