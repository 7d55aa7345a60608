//===- passes/Pipeline.cpp - every pass, and the default pipeline, in order -===//
//
// This file is the compiler at a glance: the passes ppc has and the order in
// which `ppc` runs them (docs/compiler.md walks through them).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

namespace ppc::passes {

const std::vector<PassInfo> &registeredPasses() {
  static const std::vector<PassInfo> passes = {
      {"gate", "conditionals and switches to gate.cases / enter / exit and `when` blocks (seed 001)",
       createGatePass},
      {"match", "algorithm matching: every random argument has a VMP operator in the catalogue", createMatchPass},
      {"messages", "VMP message and marginal statements for every edge, with the catalogue's annotations",
       createMessagesPass},
      {"schedule", "iteration, initialization and final schedules by seed 000's greedy algorithm",
       createSchedulePass},
      {"dce", "remove updates never read before the next update in cyclic order (seed 000)", createDeadCodePass},
      {"local-schedule", "nested schedules for local variables (--local-iters, --local-restart)",
       createLocalSchedulePass},
      {"fuse", "fuse loops, stream messages instead of storing them, mark parallel substeps", createFusionPass},
      {"verify", "check the IR's invariants (ir/Verifier.h)", createVerifyPass},
      {"print-deps", "print the statements' dependencies (Declaration, Required, Trigger, Fresh)",
       createPrintDepsPass},
      {"print-deps-dot", "print the dependency graph as Graphviz DOT", createPrintDepsDotPass},
      {"print-global-local", "print the outermost data plate and the local and global variables",
       createPrintGlobalLocalPass},
  };
  return passes;
}

std::string_view defaultPipeline() { return "gate,match,messages,schedule,dce,local-schedule,fuse,verify"; }

} // namespace ppc::passes
