//===- passes/Scheduler.h - seed 000's scheduling algorithms ---------------===//
//
// The algorithms behind the `schedule` pass (see passes/Scheduler.cpp), on a
// dependency graph, so that they can be run and tested step by step.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "passes/DependencyAnalysis.h"

#include <limits>
#include <set>
#include <vector>

namespace ppc {
class DiagnosticEngine;
namespace ir { class Module; }

namespace passes {

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
  /// The initialization schedule for the current iteration schedule.
  void initialization();
  void finalization();
  void warnClobberedInitializations();

  const std::vector<unsigned> &iterationOrder() const { return iter_; }
  const std::vector<unsigned> &initializationOrder() const { return init_; }
  const std::vector<unsigned> &finalOrder() const { return final_; }

  /// Writes the schedules into the module as `update` statements.
  void emit(ir::Module &m) const;
  /// Writes only the initialization schedule (after a pass reordered the
  /// iteration schedule, the initialization must follow).
  void emitInitialization(ir::Module &m) const;

private:
  static constexpr long kWorst = std::numeric_limits<long>::min();
  void closures();
  long iterationScore(unsigned v) const;
  void scheduleIteration(unsigned v);

  const DependencyGraph &g_;
  std::vector<bool> userInitialized_;
  DiagnosticEngine &diags_;
  std::vector<std::vector<unsigned>> triggers_, freshSources_;
  std::vector<bool> valid_, fresh_, initUsed_;
  std::set<unsigned> waiting_;
  std::vector<unsigned> iter_, init_, final_;
};

} // namespace passes
} // namespace ppc
