//===- passes/DeadCode.cpp - redundant updates in cyclic order (seed 000) --===//
//
// The scheduler is conservative: it leaves every node valid at the end of an
// iteration, so it may append an update whose value nothing reads before the
// same node is updated again at the start of the next iteration (seed 000:
// "A invalidates B"; the optimal schedule begins with B and ends with A, and
// the scheduler appends a redundant B). Such updates are removed, scanning
// the iteration schedule in cyclic order; the last update of a posterior is
// always kept (posteriors are outputs). Posteriors the pruned iteration
// leaves stale are refreshed once after the last iteration.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/CyclicOrder.h"
#include "passes/DependencyAnalysis.h"
#include "passes/Scheduler.h"

#include <map>
#include <set>

namespace ppc::passes {
namespace {

class DeadCodePass : public Pass {
public:
  std::string_view name() const override { return "dce"; }
  bool preserves(const void *id) const override { return id == &DependencyAnalysis::ID; }

  bool run(ir::Module &m, PassContext &ctx) override {
    if (!m.iterationSchedule) {
      ctx.diags.error("dead-code elimination needs a schedule (run the 'schedule' pass first)");
      return false;
    }
    if (!isFlatSchedule(*m.iterationSchedule)) {
      ctx.diags.error("dead-code elimination runs on the schedule pass's flat schedule: run 'dce' before "
                      "'local-schedule' and 'fuse'");
      return false;
    }
    DependencyGraph *graph = ctx.analyses.get<DependencyAnalysis>(m, ctx.diags);
    if (!graph)
      return false;
    const DependencyGraph &g = *graph;
    std::map<const ir::Value *, unsigned> index;
    for (unsigned s = 0; s < g.values.size(); ++s)
      index[g.values[s]] = s;
    auto &ops = m.iterationSchedule->ops;
    const size_t L = ops.size();
    std::vector<unsigned> node(L);
    for (size_t i = 0; i < L; ++i)
      node[i] = index.at(ops[i]->operands[0].value);

    // The live positions (in the schedule as it was) of each node's updates
    // and of the updates that read each node: an update's next reader and
    // next update, in cyclic order, are each one lookup, where a scan of the
    // cycle made the pass quadratic (5000 independent variables: 1 s).
    std::vector<std::set<size_t>> updates(g.values.size()), readers(g.values.size());
    for (size_t i = 0; i < L; ++i) {
      updates[node[i]].insert(i);
      for (unsigned e : g.sources[node[i]])
        readers[g.edges[e].from].insert(i);
    }
    // Sweeps until one removes nothing; within a sweep, each removal is seen
    // by the updates after it.
    std::vector<bool> live(L, true);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < L; ++i) {
        if (!live[i])
          continue;
        const unsigned v = node[i];
        // A reader at the next update's own position (a node that reads
        // itself) counts as a read.
        const size_t read = cyclicDistanceAfter(readers[v], i, L), again = cyclicDistanceAfter(updates[v], i, L);
        const bool used = read != L && read <= again;
        // An update nobody reads before the next one; keep the only update of a posterior.
        if (used || (again == L && g.isMarginal(v)))
          continue;
        live[i] = false;
        updates[v].erase(i);
        for (unsigned e : g.sources[v])
          readers[g.edges[e].from].erase(i);
        changed = true;
      }
    }
    size_t kept = 0;
    for (size_t i = 0; i < L; ++i)
      if (live[i])
        ops[kept++] = std::move(ops[i]);
    ops.resize(kept);

    // Refresh, after the loop, the posteriors the iteration leaves stale.
    computeFinalSchedule(m, g);
    return true;
  }
};

class PrintDepsPass : public Pass {
public:
  explicit PrintDepsPass(bool dot) : dot_(dot) {}
  std::string_view name() const override { return dot_ ? "print-deps-dot" : "print-deps"; }
  bool preservesAnalyses() const override { return true; }
  bool run(ir::Module &m, PassContext &ctx) override {
    DependencyGraph *g = ctx.analyses.get<DependencyAnalysis>(m, ctx.diags);
    if (!g)
      return false;
    if (dot_)
      printDependenciesDot(*g, *ctx.out);
    else
      printDependencies(*g, *ctx.out);
    return true;
  }

private:
  bool dot_;
};

} // namespace

std::unique_ptr<Pass> createDeadCodePass() { return std::make_unique<DeadCodePass>(); }
std::unique_ptr<Pass> createPrintDepsPass() { return std::make_unique<PrintDepsPass>(false); }
std::unique_ptr<Pass> createPrintDepsDotPass() { return std::make_unique<PrintDepsPass>(true); }

} // namespace ppc::passes
