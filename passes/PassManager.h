//===- passes/PassManager.h - running passes over the Model IR -------------===//
//
// Modelled on LLVM's new pass manager: passes are registered by name
// (passes/Pipeline.cpp is the one list, in order), a pipeline is a
// comma-separated list of names (--passes=a,b,c), and the manager can print
// the IR after every pass or chosen ones, verify after each, and time them.
//
//===----------------------------------------------------------------------===//
#pragma once

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

struct PassContext {
  DiagnosticEngine &diags;
  /// Where printing passes (print-deps) write.
  llvm::raw_ostream *out = nullptr;
  /// Variables the user initializes (--init VAR=FILE): the scheduler avoids
  /// recomputing or invalidating them before they are used.
  std::vector<std::string> userInitializations;
};

class Pass {
public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  /// Transforms or checks `m`; returns false after reporting errors.
  virtual bool run(ir::Module &m, PassContext &ctx) = 0;
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

struct PassManagerOptions {
  bool printAfterAll = false;
  std::set<std::string> printAfter;
  bool verifyEach = false;
  bool timePasses = false;
};

class PassManager {
public:
  explicit PassManager(PassManagerOptions options = {}) : options_(std::move(options)) {}

  /// Appends the passes named in `pipeline` ("a,b,c"; empty is no passes).
  /// On an unknown name, sets `error` and returns false.
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
