//===- tools/ppc.cpp - the ppc compiler driver -----------------------------===//
//
//   ppc MODEL.ppl [--emit=ast|ir|plates] [-p NAME=VALUE]... [pass options]
//
//===----------------------------------------------------------------------===//
#include "frontend/AST.h"
#include "ir/Diagnostics.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"
#include "runtime/Binding.h"
#include "tools/Driver.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/raw_ostream.h>

using namespace ppc;

namespace {
// --emit=data: what each plate and observed variable got from the files.
void printBoundData(const ir::Module &m, const rt::BoundData &d, llvm::raw_ostream &os) {
  for (const auto &[plate, bp] : d.plates) {
    os << "plate %" << plate->name << ": ";
    if (bp.sizes.size() == 1) {
      os << bp.sizes[0] << (bp.sizes[0] == 1 ? " element" : " elements");
    } else {
      int64_t lo = *std::min_element(bp.sizes.begin(), bp.sizes.end());
      int64_t hi = *std::max_element(bp.sizes.begin(), bp.sizes.end());
      os << bp.flattened() << " elements in " << bp.sizes.size() << " groups (" << lo << " to " << hi
         << " per group)";
    }
    os << "\n";
  }
  for (const auto &[v, bv] : d.variables) {
    double lo = 0, hi = 0, total = 0;
    if (!bv.values.empty()) {
      lo = *std::min_element(bv.values.begin(), bv.values.end());
      hi = *std::max_element(bv.values.begin(), bv.values.end());
    }
    for (double w : bv.weights)
      total += w;
    os << "%" << v->name << " from " << bv.file << ": " << bv.values.size() << " values in ["
       << ir::formatDouble(lo) << ", " << ir::formatDouble(hi) << "]";
    if (!bv.weights.empty())
      os << ", total weight " << ir::formatDouble(total);
    os << "\n";
  }
  (void)m;
}

int usageError(const std::string &msg) {
  llvm::errs() << "ppc: error: " << msg << "\nRun 'ppc --help' for usage.\n";
  return 2;
}
} // namespace

int main(int argc, char **argv) {
  CLI::App app{"ppc: a compiler for probabilistic models (variational message passing)", "ppc"};
  std::string modelPath, emit, pipeline;
  bool pipelineGiven = false;
  std::vector<std::string> paramFlags, printAfter;
  passes::PassManagerOptions pmOptions;
  bool version = false;

  app.add_option("model", modelPath, "model file (.ppl)");
  app.add_option("--emit", emit,
                 "print an intermediate level and stop: ast, ir (the Model IR), plates (the plate tree), "
                 "gated (after the gate transform), messages (VMP statements), deps, deps-dot "
                 "(their dependencies), schedule, data (the data --infer binds)")
      ->check(CLI::IsMember({"ast", "ir", "plates", "gated", "messages", "deps", "deps-dot", "schedule", "data"}));
  rt::BindingOptions binding;
  std::vector<std::string> mapFlags;
  std::string weightColumn;
  app.add_option("--infer", binding.files, "a CSV data file for the observed variables (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--map", mapFlags, "bind a variable or a plate to a differently named column: --map NAME=COLUMN")
      ->allow_extra_args(false);
  app.add_option("--weight", weightColumn, "a column of nonnegative weights (repeated observations)");
  std::vector<std::string> initFlags;
  int64_t localIters = 1;
  bool localRestart = false;
  app.add_option("--local-iters", localIters,
                 "sweeps of the local variables per element of the outermost data plate before the globals "
                 "update (nested schedule)")
      ->check(CLI::Range(int64_t(1), int64_t(1000000)));
  app.add_flag("--local-restart", localRestart, "restart the local variables from their priors every iteration");
  app.add_option("--init", initFlags, "initialize a latent variable's posterior: --init VAR=FILE (repeatable)")
      ->allow_extra_args(false);
  app.add_option("-p,--param", paramFlags, "set a model parameter: -p NAME=VALUE (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--passes", pipeline, "run these passes instead of the default pipeline (a,b,c)");
  app.add_flag("--print-after-all", pmOptions.printAfterAll, "print the IR after every pass");
  app.add_option("--print-after", printAfter, "print the IR after the named pass (repeatable)")
      ->allow_extra_args(false);
  app.add_flag("--verify-each", pmOptions.verifyEach, "verify the IR after every pass");
  app.add_flag("--time-passes", pmOptions.timePasses, "print the time each pass took");
  app.add_flag("--version", version, "print the version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    return usageError(e.what());
  }
  if (version) {
    llvm::outs() << "ppc 0.1.0 (LLVM " << LLVM_VERSION_STRING << ")\n";
    return 0;
  }
  if (modelPath.empty())
    return usageError("no model file given");
  pipelineGiven = app.count("--passes") > 0;
  pmOptions.printAfter.insert(printAfter.begin(), printAfter.end());

  std::map<std::string, std::string> params;
  std::string error;
  if (!parseParamFlags(paramFlags, params, error))
    return usageError(error);
  for (const std::string &f : mapFlags) {
    size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == f.size())
      return usageError("--map expects NAME=COLUMN; got '" + f + "'");
    if (!binding.map.emplace(f.substr(0, eq), f.substr(eq + 1)).second)
      return usageError("--map " + f.substr(0, eq) + " is given twice");
  }
  if (!weightColumn.empty())
    binding.weight = weightColumn;
  if (emit == "data" && binding.files.empty())
    return usageError("--emit=data needs --infer FILE");
  // The default pipeline runs as far as the level asked for, then verifies;
  // an explicit --passes pipeline runs whole and --emit prints its result.
  if (!pipelineGiven) {
    if (emit == "gated")
      pipeline = "gate,verify";
    else if (emit == "messages")
      pipeline = "gate,match,messages,verify";
    else if (emit == "deps")
      pipeline = "gate,match,messages,verify,print-deps";
    else if (emit == "deps-dot")
      pipeline = "gate,match,messages,verify,print-deps-dot";
    else if (emit == "schedule")
      pipeline = "gate,match,messages,schedule,dce,local-schedule,fuse,verify";
    else if (emit == "ir" || emit == "plates" || emit == "ast" || emit == "data")
      pipeline = "";
    else
      pipeline = std::string(passes::defaultPipeline());
  }
  passes::PassManager pm(pmOptions);
  if (!pm.addPipeline(pipeline, error))
    return usageError(error);

  return runTool([&]() -> int {
    std::optional<std::string> source = readFile(modelPath, error);
    if (!source) {
      llvm::errs() << "ppc: error: " << error << "\n";
      return 1;
    }
    DiagnosticEngine diags(modelPath, *source, llvm::errs());

    std::unique_ptr<ast::Model> ast;
    std::unique_ptr<ir::Module> module = compileModel(*source, diags, &ast, emit == "ast");
    if (emit == "ast") {
      if (!ast)
        return 1;
      ast::print(*ast, llvm::outs());
      return 0;
    }
    if (!module)
      return 1;
    // Parameter values: checked whenever given, required once there is data.
    std::optional<ir::Evaluation> evaluation =
        ir::evaluate(*module, params, /*requireAll=*/!binding.files.empty(), diags);
    if (!evaluation)
      return 1;
    if (!binding.files.empty()) {
      std::vector<std::string> errors;
      std::optional<rt::BoundData> data = rt::bindData(*module, *evaluation, binding, errors);
      for (const std::string &e : errors)
        llvm::errs() << "ppc: error: " << e << "\n";
      if (!data)
        return 1;
      if (emit == "data") {
        printBoundData(*module, *data, llvm::outs());
        return 0;
      }
      if (emit.empty()) {
        llvm::errs() << "ppc: error: the data binds, but inference needs the code generator, which ppc does not "
                        "have yet; --emit=data shows the bound data\n";
        return 1;
      }
    }
    passes::PassContext ctx{diags, &llvm::outs(), {}, {}};
    ctx.localIterations = localIters;
    ctx.localRestart = localRestart;
    for (const std::string &f : initFlags) {
      size_t eq = f.find('=');
      std::string var = f.substr(0, eq);
      ir::Value *v = module->lookup(var);
      if (eq == std::string::npos || eq == 0 || !v || !v->def || !v->def->isRandom() || v->def->observed) {
        llvm::errs() << "ppc: error: --init " << f << ": expected VAR=FILE with VAR a latent random variable of the model\n";
        return 2;
      }
      ctx.userInitializations.push_back(var);
    }
    if (!pm.run(*module, ctx, llvm::outs(), llvm::errs()))
      return 1;
    if (emit == "ir" || emit == "gated" || emit == "messages" || emit == "schedule" || emit.empty())
      ir::print(*module, llvm::outs());
    else if (emit == "plates")
      ir::printPlateTree(*module, &*evaluation, llvm::outs());
    return diags.hasErrors() ? 1 : 0;
  });
}
