//===- passes/PassManager.h - running passes over the Model IR -------------===//
//
// Modelled on LLVM's new pass manager: passes are registered by name
// (passes/Pipeline.cpp is the one list, in order), a pipeline is a
// comma-separated list of names (--passes=a,b,c), and the manager can print
// the IR after every pass or chosen ones, verify after each, and time them.
//
// The plan, the IR level below (codegen/plan/Plan.h), has a pass manager of
// its own (codegen/transforms/PlanPassManager.h) that shares the options,
// the pipeline syntax and the instrumentation declared here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace llvm { class raw_ostream; }

namespace ppc {
class DiagnosticEngine;
namespace ir { class Module; }

namespace passes {

/// Caches analysis results (the dependency graph, ...) between passes.
/// An analysis is a type with `static const char ID`, a `Result` type and
/// `static std::unique_ptr<Result> run(ir::Module &, DiagnosticEngine &)`
/// (null on failure, after reporting). Results stay valid until a pass that
/// does not preserve them runs; the pass manager then invalidates them.
class AnalysisManager {
public:
  template <typename A> typename A::Result *get(ir::Module &m, DiagnosticEngine &diags) {
    auto it = cache_.find(&A::ID);
    if (it != cache_.end()) {
      ++hits_;
      return static_cast<typename A::Result *>(it->second.get());
    }
    std::unique_ptr<typename A::Result> r = A::run(m, diags);
    if (!r)
      return nullptr;
    auto *raw = r.get();
    cache_[&A::ID] = std::shared_ptr<void>(r.release(), [](void *p) { delete static_cast<typename A::Result *>(p); });
    return raw;
  }
  void invalidateAll() { cache_.clear(); }
  /// Drops every result for which `keep(id)` is false.
  template <typename Keep> void invalidateUnless(Keep keep) {
    for (auto it = cache_.begin(); it != cache_.end();)
      it = keep(it->first) ? std::next(it) : cache_.erase(it);
  }
  void invalidate(const void *id) { cache_.erase(id); }
  bool cached(const void *id) const { return cache_.count(id) != 0; }
  unsigned hits() const { return hits_; }

private:
  std::map<const void *, std::shared_ptr<void>> cache_;
  unsigned hits_ = 0;
};

struct PassContext {
  DiagnosticEngine &diags;
  /// Where printing passes (print-deps) write.
  llvm::raw_ostream *out = nullptr;
  /// Variables the user initializes (--init VAR=FILE): the scheduler avoids
  /// recomputing or invalidating them before they are used.
  std::vector<std::string> userInitializations;
  AnalysisManager analyses;
  /// Nested schedules (passes/GlobalLocal.cpp): Plain keeps one update of
  /// every variable per iteration; Nested runs the local variables of each
  /// element to convergence (at most localIterations sweeps, until their mean
  /// change is below localTolerance) before the globals update; Auto picks
  /// Nested when the locals form a cycle (LDA's theta and z), where it
  /// reaches a better optimum sooner, and Plain otherwise.
  /// NestedWhereLocal: nested, and no word when there are no locals (--svi).
  enum class LocalSchedule { Plain, Auto, Nested, NestedWhereLocal } localSchedule = LocalSchedule::Plain;
  int64_t localIterations = 1;
  double localTolerance = 0;
  bool localRestart = false;
  /// The local-sweep flags the user gave (--local-iters, ...): warned about
  /// when the schedule has no sweeps for them to set.
  std::vector<std::string> localFlags = {};
  /// Gate conditions start from random posteriors (symmetry breaking of
  /// mixtures); the scheduler uses those initializations before recomputing
  /// them. ppc always runs with it; ppc-opt with --random-init.
  bool randomInitConditions = false;
  /// A fuse pass runs later in the pipeline: it reorders the iteration and
  /// redoes its initialization, and the diagnostics about the user's starts
  /// (--init) are made there, from the final order (set by PassManager::run).
  bool fusionLater = false;
};

class Pass {
public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  /// Transforms or checks `m`; returns false after reporting errors.
  virtual bool run(ir::Module &m, PassContext &ctx) = 0;
  /// Whether the IR is unchanged (analyses stay valid). Transformations
  /// return false; checks and printers true.
  virtual bool preservesAnalyses() const { return false; }
  /// Whether the analysis with this ID stays valid after the pass.
  virtual bool preserves(const void *analysisID) const { (void)analysisID; return preservesAnalyses(); }
};

struct PassInfo {
  std::string_view name;
  std::string_view description;
  std::unique_ptr<Pass> (*create)();
};

/// Every pass ppc has, in pipeline order.
const std::vector<PassInfo> &registeredPasses();
/// The pipeline `ppc` runs by default, as a --passes string.
std::string_view defaultPipeline();

/// What the user asked to see of the passes (--print-after-all,
/// --print-after=NAME, --verify-each, --time-passes): the same flags for the
/// Model IR's passes and the plan's transformations.
struct PassManagerOptions {
  bool printAfterAll = false;
  std::set<std::string> printAfter;
  bool verifyEach = false;
  bool timePasses = false;
};

/// Splits a comma-separated pipeline ("a,b,c"; empty: no passes) into names,
/// each of which must be one of `known`; `what` names them in errors
/// ("pass", "plan transformation"). On an unknown or empty name, sets
/// `error` and returns false.
bool splitPipeline(std::string_view pipeline, const std::vector<std::string_view> &known, std::string_view what,
                   std::vector<std::string> &names, std::string &error);

/// Checks that every --print-after name is one of `known` (the tools pass
/// every level's pass names).
bool checkPrintAfter(const PassManagerOptions &options, const std::vector<std::string_view> &known,
                     std::string &error);

/// What a pass manager does around each pass: decides whether to print the
/// unit after it and collects the times for LLVM's -time-passes report.
class PassInstrumentation {
public:
  explicit PassInstrumentation(const PassManagerOptions &options) : options_(options) {}
  const PassManagerOptions &options() const { return options_; }
  bool printsAfter(std::string_view pass) const {
    return options_.printAfterAll || options_.printAfter.count(std::string(pass)) != 0;
  }
  /// Records a pass's time; `note` is printed after its name (e.g. how many
  /// statements a plan transformation changed).
  void addTime(std::string_view pass, double seconds, std::string note = {});
  /// The report (when --time-passes), titled like LLVM's ("Pass execution
  /// timing report", ...).
  void printTimes(llvm::raw_ostream &os, std::string_view title) const;

private:
  PassManagerOptions options_;
  struct Entry {
    std::string name, note;
    double seconds;
  };
  std::vector<Entry> times_;
};

class PassManager {
public:
  explicit PassManager(PassManagerOptions options = {}) : options_(std::move(options)) {}

  /// Appends the passes named in `pipeline` ("a,b,c"; empty is no passes).
  /// On an unknown name, sets `error` and returns false. (--print-after
  /// names are checked by checkPrintAfter: they may name plan passes.)
  bool addPipeline(std::string_view pipeline, std::string &error);
  void addPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  size_t size() const { return passes_.size(); }

  /// Runs the passes in order; IR dumps go to `dumpOS`, timings to `timeOS`.
  bool run(ir::Module &m, PassContext &ctx, llvm::raw_ostream &dumpOS, llvm::raw_ostream &timeOS);

private:
  PassManagerOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

} // namespace passes
} // namespace ppc
