//===- codegen/transforms/RowBlocks.cpp - calls on blocks of a loop's rows ===//
//
// Shared by the transformations that replace a per-row call in a loop over
// N rows by calls on many rows at once (RowKernelFission.cpp, BatchDot.cpp).
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"

namespace ppc::codegen {

void callsOnRowBlocks(Plan &p, ExprId bound, int64_t rowsPerBlock, bool parallel, std::vector<int32_t> reductions,
                      const std::function<Stmt(ExprId first, ExprId count, ExprId block)> &make,
                      std::vector<Stmt> &out) {
  const auto N = p.constantOf(bound);
  if (!N || *N < 2 * rowsPerBlock) {
    out.push_back(make(p.intConst(0), bound, p.intConst(0)));
    return;
  }
  const int64_t blocks = *N / rowsPerBlock, rest = *N % rowsPerBlock;
  Stmt blockLoop = edit::freshLoop(p, blocks);
  blockLoop.parallel = parallel;
  blockLoop.reductions = std::move(reductions);
  const ExprId b = p.loopVar(blockLoop.var);
  blockLoop.body.push_back(make(p.mul(b, p.intConst(rowsPerBlock)), p.intConst(rowsPerBlock), b));
  out.push_back(std::move(blockLoop));
  if (rest)
    out.push_back(make(p.intConst(blocks * rowsPerBlock), p.intConst(rest), p.intConst(blocks)));
}

} // namespace ppc::codegen
