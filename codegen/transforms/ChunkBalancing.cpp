//===- codegen/transforms/ChunkBalancing.cpp - equal work per thread ------===//
//
// A plan transformation. A parallel loop runs as one contiguous chunk of its
// elements per thread (codegen/exec/Executor.cpp). Where the elements run loops
// over their own data (a ragged plate: LDA's documents and their tokens),
// equal counts of elements are not equal work: AP's first 1,123 documents
// hold 1.9% more (document, word) pairs than the others, and a corpus ordered by date or
// length can be far more uneven. Each such loop gets a bound-data buffer of
// its elements' cumulative cost, evaluated from the data: kElementCost per
// element plus one per iteration of each loop whose bound the element's
// data decide (times the iterations of the loops around it). The executor
// splits at equal shares of the cost; the split still depends only on the
// number of threads, so a run stays deterministic.
//
//===----------------------------------------------------------------------===//
#include "codegen/transforms/Transforms.h"

#include <algorithm>

namespace ppc::codegen {
namespace {

/// An element's own work (the statements outside its data loops: LDA's
/// topic-mix update at K = 100 costs about as much as a dozen tokens), in
/// data-loop iterations.
constexpr int64_t kElementCost = 8;

/// The data-dependent iterations of `body` for element `value` of loop
/// variable `var`, each counted `times`; false where a bound that reads the
/// element cannot be evaluated.
bool dataIterations(const Plan &p, const std::vector<Stmt> &body, int32_t var, int64_t value, int64_t times,
                    int64_t &sum, bool &dataDependent) {
  for (const Stmt &s : body) {
    if (s.kind != Stmt::Kind::Loop)
      continue;
    int64_t iterations = 1;
    if (auto c = p.constantOf(s.bound)) {
      iterations = *c;
    } else if (p.usesVar(s.bound, var)) {
      auto v = p.evaluate(s.bound, var, value);
      if (!v)
        return false;
      iterations = *v;
      sum += times * iterations;
      dataDependent = true;
    }
    if (!dataIterations(p, s.body, var, value, times * std::max<int64_t>(iterations, 0), sum, dataDependent))
      return false;
  }
  return true;
}

/// Some loop in `body` has a bound that reads `var` (checked before
/// evaluating every element: a mixture's million points have none).
bool hasDataLoop(const Plan &p, const std::vector<Stmt> &body, int32_t var) {
  for (const Stmt &s : body)
    if (s.kind == Stmt::Kind::Loop && (p.usesVar(s.bound, var) || hasDataLoop(p, s.body, var)))
      return true;
  return false;
}

} // namespace

int balanceChunks(Plan &p) {
  int balanced = 0;
  for (auto &block : p.blocks)
    for (Stmt &loop : block) {
      if (loop.kind != Stmt::Kind::Loop || !loop.parallel || loop.costs >= 0 || !hasDataLoop(p, loop.body, loop.var))
        continue;
      auto n = p.evaluate(loop.bound);
      if (!n || *n < 2)
        continue;
      Buffer costs;
      costs.name = "costs." + std::to_string(loop.var);
      costs.isInt = true;
      costs.size = *n + 1;
      costs.ints.assign(size_t(*n + 1), 0);
      bool dataDependent = false, ok = true;
      for (int64_t e = 0; e < *n && ok; ++e) {
        int64_t work = kElementCost;
        ok = dataIterations(p, loop.body, loop.var, e, 1, work, dataDependent);
        costs.ints[size_t(e + 1)] = costs.ints[size_t(e)] + work;
      }
      if (!ok || !dataDependent)
        continue;
      // Loops over the same elements and data (init's and the iteration's) share one.
      for (size_t b = 0; b < p.buffers.size() && loop.costs < 0; ++b)
        if (p.buffers[b].isInt && p.buffers[b].name.rfind("costs.", 0) == 0 && p.buffers[b].ints == costs.ints)
          loop.costs = int32_t(b);
      if (loop.costs < 0) {
        p.buffers.push_back(std::move(costs));
        loop.costs = int32_t(p.buffers.size() - 1);
      }
      ++balanced;
    }
  return balanced;
}

} // namespace ppc::codegen
