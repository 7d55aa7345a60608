//===- tools/Stochastic.h - ppc --svi: streaming stochastic inference -----===//
//
// `ppc MODEL --infer DATA --svi --batch N` (docs/svi.md): the outermost data
// plate is read as a stream of batches of N elements; each step binds one
// batch, runs the plan's init and iteration blocks on it with the globals
// carried over from the last step, and moves the globals by a
// Robbins-Monro step toward the batch's estimate of the whole data's
// (codegen/exec/Stochastic.h). Memory is the globals plus one batch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/exec/Executor.h"
#include "codegen/transforms/PlanPassManager.h"
#include "passes/PassManager.h"
#include "runtime/Binding.h"
#include "runtime/Output.h"

#include <chrono>
#include <functional>
#include <map>
#include <string>

namespace ppc {
class DiagnosticEngine;
namespace ir { class Module; struct Evaluation; }
namespace codegen { class Communicator; }

struct StochasticOptions {
  int64_t batch = 0;        ///< --batch: elements of the outermost data plate per step (and process)
  double tau0 = 10;         ///< --tau0
  double kappa = 0.7;       ///< --kappa: rho_t = (tau0 + t)^-kappa
  int64_t epochs = 1;       ///< --epochs: passes over the stream
  int64_t dataSize = 0;     ///< --data-size (0: the elements the stream has)
  int64_t heldoutEvery = 0; ///< --heldout-every: steps between held-out scores (0: at the end only)
};

/// What the driver hands a stochastic run.
struct StochasticRun {
  /// The scheduled module and its parameters; the model's text, which each
  /// batch binds to as compiled (before the passes renamed what it observes).
  const ir::Module *module = nullptr;
  const ir::Evaluation *evaluation = nullptr;
  std::string source;
  std::map<std::string, std::string> params;
  DiagnosticEngine *diags = nullptr;
  rt::BindingOptions binding;
  codegen::PlanOptions plan;
  passes::PassManagerOptions passOptions;
  uint64_t seed = 0;
  std::string engine = "jit";
  int threads = 1;
  bool quiet = false;
  std::string out, vocab, checkpoint, resume, report, modelPath;
  int64_t checkpointEvery = 10;
  /// Scores the held-out files with the globals of a state (--heldout).
  std::function<bool(const codegen::Inference &, rt::RunSummary::Heldout &)> heldout;
  std::map<std::string, std::string> options; ///< for summary.json
  codegen::Communicator *comm = nullptr;
  std::chrono::steady_clock::time_point started;
};

/// Runs it; returns the process's exit code (errors are printed).
int runStochastic(const StochasticRun &run, const StochasticOptions &options);

} // namespace ppc
