//===- tools/ppc-opt.cpp - textual IR in, passes, textual IR out -----------===//
//
//   ppc-opt FILE.ir [--passes=a,b,c] [--print-after-all] [--verify-each] ...
//
// With no passes it prints its input back, byte for byte; this is how each
// pass is tested alone (test/lit).
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "passes/PassManager.h"
#include "tools/Driver.h"
#include "tools/FlagChecks.h"

#include <CLI/CLI.hpp>
#include <llvm/Support/raw_ostream.h>

using namespace ppc;

int main(int argc, char **argv) {
  CLI::App app{"ppc-opt: run ppc passes on textual Model IR", "ppc-opt"};
  std::string input, pipeline;
  std::vector<std::string> printAfter;
  passes::PassManagerOptions pmOptions;
  bool listPasses = false;
  int64_t localIters = 1;
  bool localRestart = false;
  app.add_option("--local-iters", localIters, "local sweeps per element (local-schedule)")
      ->transform(tools::integerIn(1, 1000000));
  app.add_flag("--local-restart", localRestart, "restart locals every iteration (local-schedule)");
  double localTol = 0;
  app.add_option("--local-tol", localTol, "end the local sweeps when the locals change less (local-schedule)")
      ->check(tools::finiteNonNegative());
  std::string schedule = "plain";
  app.add_option("--schedule", schedule, "plain (default), auto or nested (local-schedule)")
      ->check(CLI::IsMember({"plain", "auto", "nested"}));
  bool randomInit = false;
  app.add_flag("--random-init", randomInit,
               "schedule as ppc does: gate conditions start from random posteriors (schedule, fuse)");
  app.add_option("input", input, "IR file ('-' for standard input)");
  app.add_option("--passes", pipeline, "passes to run, in order (a,b,c)");
  app.add_flag("--print-after-all", pmOptions.printAfterAll, "print the IR after every pass");
  app.add_option("--print-after", printAfter, "print the IR after the named pass (repeatable)")
      ->allow_extra_args(false);
  app.add_flag("--verify-each", pmOptions.verifyEach, "verify the IR after every pass");
  app.add_flag("--time-passes", pmOptions.timePasses, "print the time each pass took");
  app.add_flag("--list-passes", listPasses, "list the passes and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    llvm::errs() << "ppc-opt: error: " << tools::parseErrorMessage(e) << "\n";
    return 2;
  }
  if (listPasses) {
    for (const passes::PassInfo &p : passes::registeredPasses())
      llvm::outs() << p.name << "\t" << p.description << "\n";
    return 0;
  }
  if (input.empty()) {
    llvm::errs() << "ppc-opt: error: no input file\n";
    return 2;
  }
  pmOptions.printAfter.insert(printAfter.begin(), printAfter.end());
  passes::PassManager pm(pmOptions);
  std::string error;
  if (!pm.addPipeline(pipeline, error)) {
    llvm::errs() << "ppc-opt: error: " << error << "\n";
    return 2;
  }
  return finishStandardOutput("ppc-opt", runTool([&]() -> int {
    std::optional<std::string> text = readFile(input, error);
    if (!text) {
      llvm::errs() << "ppc-opt: error: " << error << "\n";
      return 1;
    }
    DiagnosticEngine diags(input == "-" ? "<stdin>" : input, *text, llvm::errs());
    std::unique_ptr<ir::Module> m = ir::parseModule(*text, diags);
    if (!m || !ir::verify(*m, diags))
      return 1;
    passes::PassContext ctx{diags, &llvm::outs(), {}, {}};
    ctx.localSchedule = schedule == "auto"     ? passes::PassContext::LocalSchedule::Auto
                        : schedule == "nested" ? passes::PassContext::LocalSchedule::Nested
                                               : passes::PassContext::LocalSchedule::Plain;
    ctx.localIterations = localIters;
    ctx.localTolerance = localTol;
    ctx.localRestart = localRestart;
    ctx.randomInitConditions = randomInit;
    if (!pm.run(*m, ctx, llvm::outs(), llvm::errs()))
      return 1;
    ir::print(*m, llvm::outs());
    return 0;
  }));
}
