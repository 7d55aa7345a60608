//===- codegen/transforms/ParallelZero.cpp - large zero-fills shared among threads ---===//
//
// A plan transformation. The sums over a parallel loop's elements start
// from zero: LDA's topic counts at K = 100 are 1M doubles (8 MB), zeroed
// before the documents' loop on one thread while the other waits (1.5 ms of
// a 27 ms iteration on 2 threads). A top-level zero-fill of at least
// kLargeFill entries becomes a parallel loop over blocks of kBlock entries;
// the executor runs it on one thread when the work is too small to share.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"

namespace ppc::codegen {
namespace {
constexpr int64_t kLargeFill = 1 << 16;
constexpr int64_t kBlock = 1 << 15;
} // namespace

int parallelizeLargeZeros(Plan &p) {
  int changed = 0;
  for (auto &block : p.blocks) {
    std::vector<Stmt> out;
    for (Stmt &s : block) {
      if (s.kind != Stmt::Kind::Zero || s.count < kLargeFill) {
        out.push_back(std::move(s));
        continue;
      }
      // Whole blocks [index + b * kBlock, + kBlock) in parallel, then the rest.
      const int64_t whole = s.count / kBlock, rest = s.count % kBlock;
      Stmt loop = edit::freshLoop(p, whole);
      loop.parallel = true;
      Stmt part = s;
      part.index = p.add(s.index, p.mul(p.loopVar(loop.var), p.intConst(kBlock)));
      part.count = kBlock;
      loop.body.push_back(std::move(part));
      out.push_back(std::move(loop));
      if (rest) {
        Stmt tail = s;
        tail.index = p.add(s.index, p.intConst(whole * kBlock));
        tail.count = rest;
        out.push_back(std::move(tail));
      }
      ++changed;
    }
    block = std::move(out);
  }
  return changed;
}

} // namespace ppc::codegen
