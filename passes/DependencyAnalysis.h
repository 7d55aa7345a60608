//===- passes/DependencyAnalysis.h - statement dependencies (seed 000) -----===//
//
// The dependency graph the scheduler works on: one node per statement of the
// `messages` region (a message or a marginal), one edge A -> B when B reads
// what A computes, annotated Declaration (plain use), Required, Trigger or
// Fresh from the statement's operand annotations, which come from the
// operator catalogue (message lowering copies them). Trigger and Fresh apply
// transitively; cycles of Required, Trigger or Fresh edges are errors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Catalogue.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm { class raw_ostream; }

namespace ppc {
class DiagnosticEngine;
namespace ir { class Module; class Op; class Region; class Value; }

namespace passes {

struct DepEdge {
  unsigned from, to; ///< statement indices: `to` reads what `from` computes
  DepKind kind;      ///< Plain means a declaration dependency only
};

struct DependencyGraph {
  std::vector<ir::Op *> stmts;           ///< the statements, in the order of `messages`
  std::vector<const ir::Value *> values; ///< what each statement defines
  std::vector<DepEdge> edges;
  /// sources[i] / targets[i]: edge indices into `edges`.
  std::vector<std::vector<unsigned>> sources, targets;

  std::string name(unsigned stmt) const;
  bool isMarginal(unsigned stmt) const;
  /// Statements whose value does not depend on any marginal (priors and
  /// other constant messages): computed once, before the iterations.
  std::vector<bool> invariant;
};

/// The dependency graph as a cached analysis (passes/PassManager.h).
struct DependencyAnalysis {
  static const char ID;
  using Result = DependencyGraph;
  static std::unique_ptr<DependencyGraph> run(ir::Module &m, DiagnosticEngine &diags);
};

/// Builds the graph of the module's `messages` region; reports prohibited
/// cycles (naming the statements) and returns false if there are any.
bool analyzeDependencies(const ir::Module &m, DependencyGraph &g, DiagnosticEngine &diags);

/// `update %stmt` for the statement `stmt`, in region `parent`.
std::unique_ptr<ir::Op> makeUpdate(const ir::Op &stmt, ir::Region *parent);
/// A region of updates of the graph's statements `list`, in order.
std::unique_ptr<ir::Region> makeUpdates(const DependencyGraph &g, const std::vector<unsigned> &list);

/// Rebuilds the module's final schedule: the posteriors the iteration
/// schedule leaves stale (updated before a message that triggers them).
void computeFinalSchedule(ir::Module &m, const DependencyGraph &g);

/// --emit=deps: each statement with its dependencies, grouped by kind.
void printDependencies(const DependencyGraph &g, llvm::raw_ostream &os);
/// --emit=deps-dot: the graph in Graphviz DOT.
void printDependenciesDot(const DependencyGraph &g, llvm::raw_ostream &os);

} // namespace passes
} // namespace ppc
