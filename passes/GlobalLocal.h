//===- passes/GlobalLocal.h - global and local variables (DESIGN.md step 9) ===//
#pragma once

#include <memory>
#include <set>
#include <string>

namespace ppc {
class DiagnosticEngine;
namespace ir { class Module; class Value; }

namespace passes {

struct GlobalLocalInfo {
  /// The outermost data plate (null if the model has no local structure).
  const ir::Value *plate = nullptr;
  /// Latent variables over `plate` (local) and over no data plate (global).
  std::set<const ir::Value *> locals, globals;
  /// Why the locals are not independent per element, when they are not.
  std::string whyNot;
};

/// The classification as a cached analysis (passes/PassManager.h).
struct GlobalLocalAnalysis {
  static const char ID;
  using Result = GlobalLocalInfo;
  static std::unique_ptr<GlobalLocalInfo> run(ir::Module &m, DiagnosticEngine &diags);
};

/// A nested schedule updates the globals first, from the messages the
/// elements sent before. When the initialization (scheduled for the
/// iteration's reads) leaves some of those messages uncomputed, it ends
/// with one pass of the element's statements, so that the globals start
/// from the initialized locals (Bayesian PCA: from z computed with the
/// random W, not from the prior alone). The fusion pass calls it after
/// rescheduling the initialization.
void initializeMessagesToGlobals(ir::Module &m);

} // namespace passes
} // namespace ppc
