//===- passes/Scheduler.h - seed 000's scheduling algorithms ---------------===//
//
// The algorithms behind the `schedule` pass (see passes/Scheduler.cpp), on a
// dependency graph, so that they can be run and tested step by step.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/DependencyAnalysis.h"

#include <limits>
#include <memory>
#include <set>
#include <vector>

namespace ppc {
class DiagnosticEngine;
namespace ir {
class Module;
class Region;
} // namespace ir

namespace passes {

struct PassContext;

/// The statements holding an initialization the schedule must use before
/// recomputing: the user's (--init VAR) and, with
/// PassContext::randomInitConditions, the posteriors of gate conditions (the
/// targets of evidence messages), which start random to break symmetry.
/// `automatic` (if non-null) marks the random ones: no warning when unused.
/// `warm` (if non-null) gets the conditions a warm start computes from the
/// user's posteriors instead of drawing them (neither initialized nor
/// automatic).
std::vector<bool> initializedStatements(const DependencyGraph &g, const PassContext &ctx,
                                        std::vector<bool> *automatic = nullptr, std::set<unsigned> *warm = nullptr);

/// Whether `schedule` is the schedule pass's flat list of updates, which dce
/// and local-schedule rewrite: not yet nested (`local`) or grouped and
/// marked streamed (`fuse`).
bool isFlatSchedule(const ir::Region &schedule);

class Scheduler;
/// The scheduler for a pass context's initializations (the user's, the
/// random ones, warm starts): the schedule pass's, and the one fusion
/// recomputes the initialization schedule with.
std::unique_ptr<Scheduler> makeScheduler(const DependencyGraph &g, const PassContext &ctx);

class Scheduler {
public:
  /// `userInitialized[s]`: statement s holds a user's initialization (--init).
  Scheduler(const DependencyGraph &g, std::vector<bool> userInitialized, DiagnosticEngine &diags);

  /// All steps: iteration, initialization, final refresh, clobber warnings.
  bool run();

  /// The greedy iteration schedule; false (after an error) if it gets stuck.
  bool iteration();
  /// Replaces the iteration schedule (to study initialization alone).
  void setIteration(std::vector<unsigned> order) { iter_ = std::move(order); }
  /// Initializations ppc made itself (random): never warned about.
  void setAutomaticInitializations(std::vector<bool> a) { automatic_ = std::move(a); }
  /// The initializations the iteration schedule is shaped around (the
  /// random starts of gate conditions, or the user's values in their
  /// place): by default all of them. A user's start of another variable
  /// (--init) changes where a run starts, not its schedule, so that a run
  /// started from another's posteriors continues it.
  void setScheduledInitializations(std::vector<bool> s) { scheduled_ = std::move(s); }
  void setWarmConditions(std::set<unsigned> s) { warmConditions_ = std::move(s); }
  /// The initialization schedule for the current iteration schedule.
  void initialization();
  void finalization();
  /// About the user's starts (--init), on the current iteration order: a
  /// warning for each the iteration recomputes before reading (no effect),
  /// a note naming the posteriors it reads before recomputing that start
  /// as in a fresh run.
  void diagnoseInitializations();

  const std::vector<unsigned> &iterationOrder() const { return iter_; }
  const std::vector<unsigned> &initializationOrder() const { return init_; }
  const std::vector<unsigned> &finalOrder() const { return final_; }

  /// Writes the schedules into the module as `update` statements.
  void emit(ir::Module &m) const;
  /// Writes only the initialization schedule (after a pass reordered the
  /// iteration schedule, the initialization must follow).
  void emitInitialization(ir::Module &m) const;

private:
  void warnClobberedInitializations();
  void noteFreshStarts();
  static constexpr long kWorst = std::numeric_limits<long>::min();
  void closures();
  long iterationScore(unsigned v) const;
  void scheduleIteration(unsigned v);
  void rescoreTouched();
  void refresh(unsigned u);
  void dropRepeatedUpdates();

  const DependencyGraph &g_;
  std::vector<bool> userInitialized_, automatic_, scheduled_;
  /// Gate conditions a warm start computes at initialization from the
  /// user's posteriors instead of drawing them (initializedStatements).
  std::set<unsigned> warmConditions_;
  DiagnosticEngine &diags_;
  std::vector<std::vector<unsigned>> triggers_;
  std::vector<bool> valid_, fresh_, initUsed_;
  std::set<unsigned> waiting_;
  /// The iteration's greedy choice, kept as it goes (rescoreTouched): the
  /// nodes whose marks scheduleIteration changed, each waiting node's
  /// score, whether it is in the ranking, the ranking (score, node), and
  /// the nodes that trigger each node.
  std::vector<unsigned> touched_;
  std::vector<long> score_;
  std::vector<bool> ranked_;
  struct BestFirst {
    bool operator()(const std::pair<long, unsigned> &a, const std::pair<long, unsigned> &b) const {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    }
  };
  std::set<std::pair<long, unsigned>, BestFirst> ranking_;
  std::vector<std::vector<unsigned>> triggeredBy_;
  std::vector<std::set<unsigned>> unreadBy_; ///< statements that have not yet read each statement
  std::vector<unsigned> iter_, init_, final_;
};

} // namespace passes
} // namespace ppc
