//===- passes/Pipeline.cpp - every pass, and the default pipeline, in order -===//
//
// This file is the compiler at a glance: the passes ppc has and the order in
// which `ppc` runs them (DESIGN.md §4).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

namespace ppc::passes {

const std::vector<PassInfo> &registeredPasses() {
  static const std::vector<PassInfo> passes = {
      {"gate", "conditionals and switches to gate.cases / enter / exit and `when` blocks (seed 001)",
       createGatePass},
      {"messages", "VMP message and marginal statements for every edge, with the catalogue's annotations",
       createMessagesPass},
      {"verify", "check the IR's invariants (ir/Verifier.h)", createVerifyPass},
  };
  return passes;
}

std::string_view defaultPipeline() { return "gate,messages,verify"; }

} // namespace ppc::passes
