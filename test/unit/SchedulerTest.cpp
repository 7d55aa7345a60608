// Seed 000's scheduling algorithms, step by step on small dependency graphs.
#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "ir/Parser.h"
#include "passes/CyclicOrder.h"
#include "passes/DependencyAnalysis.h"
#include "passes/Scheduler.h"

#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>

using namespace ppc;

namespace {

// "Suppose A invalidates B, C depends on (but does not require) B, and the
// iteration schedule begins with C." D requires A, so whether the
// initialization updates A depends on where A comes in the iteration.
const char *kSeedExample = R"(model @M() {
  %u = gaussian(0.0, 1.0) : real
  %v = gaussian(%u, 1.0) : real
}
messages {
  %B = marginal %u (trigger %A) : real
  %E = marginal %v (trigger %C, trigger %D) : real
  %A = msg ppc_gaussian_mean_avglog(%E) to %B : real
  %C = msg ppc_gaussian_sample_avglog(%B) to %E : real
  %D = msg ppc_gaussian_sample_avglog(required %A) to %E : real
}
)";

struct Fixture {
  std::string errors;
  llvm::raw_string_ostream os{errors};
  DiagnosticEngine diags{"seed.ir", kSeedExample, os};
  std::unique_ptr<ir::Module> module;
  passes::DependencyGraph graph;

  Fixture() {
    module = ir::parseModule(kSeedExample, diags);
    EXPECT_TRUE(module) << errors;
    EXPECT_TRUE(passes::analyzeDependencies(*module, graph, diags)) << errors;
  }
  unsigned id(const std::string &name) const {
    for (unsigned s = 0; s < graph.values.size(); ++s)
      if (graph.values[s]->name == name)
        return s;
    ADD_FAILURE() << "no statement " << name;
    return 0;
  }
  std::vector<std::string> names(const std::vector<unsigned> &order) const {
    std::vector<std::string> out;
    for (unsigned s : order)
      out.push_back(graph.values[s]->name);
    return out;
  }
};

} // namespace

TEST(Scheduler, InitializationUpdatesWhatItsUpdatesInvalidate) {
  Fixture f;
  passes::Scheduler s(f.graph, {}, f.diags);
  // C first, and D requires A before the iteration computes A: the
  // initialization updates A, and then B, which A invalidates and C uses first.
  s.setIteration({f.id("C"), f.id("D"), f.id("A"), f.id("B"), f.id("E")});
  s.initialization();
  EXPECT_EQ(f.names(s.initializationOrder()), (std::vector<std::string>{"A", "B"}));
}

TEST(Scheduler, NoInitializationOfBWhenANeedsNone) {
  Fixture f;
  passes::Scheduler s(f.graph, {}, f.diags);
  // A before D: nothing needs initializing, so B need not be either.
  s.setIteration({f.id("A"), f.id("B"), f.id("C"), f.id("D"), f.id("E")});
  s.initialization();
  EXPECT_TRUE(s.initializationOrder().empty()) << ::testing::PrintToString(f.names(s.initializationOrder()));
}

TEST(Scheduler, GreedyIterationLeavesEveryNodeValidAndReadsNothingInvalid) {
  Fixture f;
  passes::Scheduler s(f.graph, {}, f.diags);
  ASSERT_TRUE(s.iteration()) << f.errors;
  // Replay: no statement may read an invalid (triggered, not recomputed) value.
  std::vector<bool> valid(f.graph.stmts.size(), true);
  for (unsigned v : s.iterationOrder()) {
    for (unsigned e : f.graph.sources[v]) {
      if (f.graph.edges[e].kind != DepKind::Trigger) {
        EXPECT_TRUE(valid[f.graph.edges[e].from]) << f.graph.name(v) << " reads an invalid value";
      }
    }
    valid[v] = true;
    for (unsigned e : f.graph.targets[v])
      if (f.graph.edges[e].kind == DepKind::Trigger)
        valid[f.graph.edges[e].to] = false;
  }
  // Every statement runs at least once.
  for (unsigned st = 0; st < f.graph.stmts.size(); ++st)
    EXPECT_NE(std::find(s.iterationOrder().begin(), s.iterationOrder().end(), st), s.iterationOrder().end())
        << f.graph.name(st);
}

// The cyclic lookups of dce and the repeat removal against a walk around the
// cycle, for every subset of positions of small cycles and every start.
TEST(CyclicOrder, LookupsMatchAWalkAroundTheCycle) {
  for (size_t length = 1; length <= 6; ++length)
    for (unsigned mask = 0; mask < (1u << length); ++mask) {
      std::set<size_t> at;
      for (size_t p = 0; p < length; ++p)
        if (mask & (1u << p))
          at.insert(p);
      for (size_t i = 0; i < length; ++i) {
        size_t after = length, before = length;
        for (size_t d = 1; d < length && after == length; ++d)
          if (at.count((i + d) % length))
            after = d;
        for (size_t d = 1; d < length && before == length; ++d)
          if (at.count((i + length - d) % length))
            before = d;
        EXPECT_EQ(passes::cyclicDistanceAfter(at, i, length), after) << "mask " << mask << " at " << i;
        EXPECT_EQ(passes::cyclicDistanceBefore(at, i, length), before) << "mask " << mask << " at " << i;
      }
    }
}
