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
#include "passes/DependencyAnalysis.h"

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
    DependencyGraph *graph = ctx.analyses.get<DependencyAnalysis>(m, ctx.diags);
    if (!graph)
      return false;
    const DependencyGraph &g = *graph;
    std::map<const ir::Value *, unsigned> index;
    for (unsigned s = 0; s < g.values.size(); ++s)
      index[g.values[s]] = s;
    auto nodeOf = [&](const ir::Op &update) { return index.at(update.operands[0].value); };
    auto reads = [&](unsigned reader, unsigned v) {
      for (unsigned e : g.sources[reader])
        if (g.edges[e].from == v)
          return true;
      return false;
    };

    // Sweeps until one removes nothing (restarting from the first update
    // after every removal took 0.9 s for a chain of 400 scalar variables).
    auto &ops = m.iterationSchedule->ops;
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < ops.size(); ++i) {
        const size_t L = ops.size();
        unsigned v = nodeOf(*ops[i]);
        bool used = false, again = false;
        for (size_t d = 1; d < L; ++d) {
          unsigned w = nodeOf(*ops[(i + d) % L]);
          if (reads(w, v)) {
            used = true;
            break;
          }
          if (w == v) {
            again = true;
            break;
          }
        }
        // An update nobody reads before the next one; keep the only update of a posterior.
        if (!used && (again || !g.isMarginal(v))) {
          ops.erase(ops.begin() + long(i));
          changed = true;
          --i; // the next update is at i now
        }
      }
    }

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
