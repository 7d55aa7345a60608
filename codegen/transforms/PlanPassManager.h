//===- codegen/transforms/PlanPassManager.h - the plan's pipeline --------===//
//
// The plan's twin of passes/PassManager.h: its transformations are
// registered by name in one ordered list (codegen/transforms/PlanPipeline.cpp),
// a pipeline is a comma-separated list of names (--plan-passes=a,b,c), and
// the same options print the plan after chosen transformations
// (--print-after=NAME, --print-after-all), check it after each
// (--verify-each) and time them (--time-passes). The lowering itself shows
// up as the step "lower".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/plan/Lowering.h"
#include "passes/PassManager.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace llvm { class raw_ostream; }

namespace ppc::codegen {

struct Plan;

struct PlanPassInfo {
  std::string_view name;
  std::string_view description;
  /// Transforms the plan; returns how many places changed.
  int (*run)(Plan &);
};

/// Every plan transformation, in the order the default pipeline runs them.
const std::vector<PlanPassInfo> &registeredPlanPasses();

/// The lowering choices that --disable-plan-opt also turns off (name,
/// description): optimisations decided while the schedule is lowered.
const std::vector<PlanPassInfo> &loweringChoices();

/// The default pipeline as a --plan-passes string: every transformation.
std::string defaultPlanPipeline();

/// The name of the lowering step for --print-after and --time-passes.
constexpr std::string_view kLoweringStep = "lower";

/// Every name --print-after may take at the plan level: the lowering step
/// and the transformations.
std::vector<std::string_view> planPassNames();

class PlanPassManager {
public:
  explicit PlanPassManager(const passes::PassManagerOptions &options = {}) : instrumentation_(options) {}

  /// Appends the transformations named in `pipeline` ("a,b,c"; empty: none).
  bool addPipeline(std::string_view pipeline, std::string &error);
  void addPass(const PlanPassInfo &pass) { passes_.push_back(&pass); }
  const std::vector<const PlanPassInfo *> &passes() const { return passes_; }

  /// Runs the transformations in order; plans go to `dumpOS` where asked.
  /// Returns false with `error` set when --verify-each finds a broken plan.
  bool run(Plan &p, llvm::raw_ostream &dumpOS, std::string &error);

  /// Where the lowering records its time and checks its plan too.
  passes::PassInstrumentation &instrumentation() { return instrumentation_; }
  /// Prints the plan after step `name` if asked, and verifies it if asked.
  bool afterStep(std::string_view name, Plan &p, llvm::raw_ostream &dumpOS, std::string &error);

private:
  passes::PassInstrumentation instrumentation_;
  std::vector<const PlanPassInfo *> passes_;
};

/// How ppc, the REPL and the tests build a plan.
struct PlanOptions {
  LoweringOptions lowering;
  /// --plan-passes: these transformations, in this order, instead of the
  /// default pipeline (every registered one).
  std::optional<std::string> pipeline;
  /// --disable-plan-opt: transformations left out of the pipeline (the
  /// default one or the one given), and lowering choices turned off.
  std::set<std::string> disabled;
  /// Turns off the transformation or lowering choice `name`; false for an
  /// unknown name.
  bool disable(const std::string &name);
  /// Every name disable() takes, comma-separated, in pipeline order.
  static std::string names();
};

/// Lowers the scheduled module (codegen/plan/Lowering.h) and runs the plan
/// pipeline. `passOptions` print, verify and time the steps (dumps to
/// `dumpOS`, the timing report to `timeOS`). Returns null after reporting
/// errors in `diags`.
std::unique_ptr<Plan> buildPlan(const ir::Module &m, const ir::Evaluation &eval, const rt::BoundData &data,
                                bool randomInitConditions, DiagnosticEngine &diags, const PlanOptions &options = {},
                                const passes::PassManagerOptions &passOptions = {},
                                llvm::raw_ostream *dumpOS = nullptr, llvm::raw_ostream *timeOS = nullptr);

} // namespace ppc::codegen
