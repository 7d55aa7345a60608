//===- tools/ppc.cpp - the ppc compiler driver -----------------------------===//
//
//   ppc MODEL.ppl [-p NAME=VALUE]... --infer DATA.csv [run options] [--out DIR]
//   ppc MODEL.ppl --emit=ast|ir|plates|gated|messages|deps|schedule|data|plan|llvm
//   ppc repl [MODEL.ppl]                     (tools/Repl.cpp)
//   mpirun -np N ppc MODEL.ppl --infer ...   (docs/distributed.md)
//
//===----------------------------------------------------------------------===//
#include "codegen/exec/Checkpoint.h"
#include "codegen/exec/Distributed.h"
#include "codegen/exec/Executor.h"
#include "codegen/llvm/Jit.h"
#include "codegen/llvm/LLVMCodegen.h"
#include "codegen/plan/Plan.h"
#include "codegen/transforms/PlanPassManager.h"
#include "frontend/AST.h"
#include "ir/Aliasing.h"
#include "ir/Diagnostics.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"
#include "runtime/Binding.h"
#include "runtime/FloatEnvironment.h"
#include "runtime/MemoryLimits.h"
#include "runtime/Output.h"
#include "runtime/VectorIsa.h"
#include "tools/Driver.h"
#include "tools/FlagChecks.h"
#include "tools/Repl.h"
#include "tools/Report.h"
#include "tools/Stochastic.h"
#include "tools/UserPosteriors.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>
#include <numeric>
#include <set>
#include <unistd.h>

using namespace ppc;

namespace {
struct RunFlags {
  codegen::RunOptions run;
  std::string engine = "jit", out, vocab;
  bool quiet = false;
  int64_t threads = 1;
  std::string checkpoint, resume;
  int64_t checkpointEvery = 10;
  bool seedGiven = false; ///< --seed on the command line (a resumed run must not contradict it)
  codegen::PlanOptions plan;
  /// --print-after, --verify-each, --time-passes for the plan's steps.
  passes::PassManagerOptions passOptions;
  /// --init and --given: posteriors read from files before the run.
  std::vector<PosteriorSource> sources;
  /// After training (--heldout): scores held-out data with the trained
  /// globals given; null without --heldout.
  std::function<bool(const codegen::Inference &trained, rt::RunSummary::Heldout &out)> heldout;
  /// --report FILE.html (tools/Report.h): with the model's path and text.
  std::string report, modelPath, modelSource;
};

/// The processes of a data-parallel run (null: a plain run).
codegen::Communicator *gComm = nullptr;
bool isRoot() { return !gComm || gComm->rank() == 0; }

/// Observed values the report draws (a mixture's points): real-valued
/// variables of at most a million values, by name. Under mpirun each
/// process holds its part of the variables over the split plate: those are
/// gathered on process 0 in rank order (the plate's order), as the
/// posteriors' rows are, so that the picture shows every row.
std::map<std::string, std::vector<double>> observedForReport(const rt::BoundData &data, const ir::Value *split) {
  constexpr size_t kMostValues = 1000000;
  std::map<std::string, std::vector<double>> out;
  std::set<std::string> partitioned;
  for (const auto &[v, bv] : data.variables) {
    if (!gComm && bv.values.size() > kMostValues)
      continue;
    std::vector<double> &values = out[v->name] = bv.values;
    for (int64_t e : bv.missing) // missing values are scalars: element e is entry e
      values[size_t(e)] = std::numeric_limits<double>::quiet_NaN();
    if (split && !v->dims.empty() && v->dims.front() == split)
      partitioned.insert(v->name);
  }
  if (!gComm)
    return out;
  for (auto it = out.begin(); it != out.end();) { // by name: the same order on every process
    if (partitioned.count(it->first))
      it->second = gComm->gatherToRoot(it->second);
    it = it->second.size() > kMostValues ? out.erase(it) : std::next(it);
  }
  return out;
}

/// An error only this process met (its part of the data): named with the
/// process under mpirun, since the others go on without it.
void localError(const std::string &msg) {
  llvm::errs() << "ppc: error: ";
  if (gComm && gComm->size() > 1)
    llvm::errs() << "(process " << gComm->rank() << " of " << gComm->size() << ") ";
  llvm::errs() << msg << "\n";
}

void localWarning(const std::string &msg) {
  llvm::errs() << "ppc: warning: ";
  if (gComm && gComm->size() > 1)
    llvm::errs() << "(process " << gComm->rank() << " of " << gComm->size() << ") ";
  llvm::errs() << msg << "\n";
}

/// After a step that can fail on some processes only: true when all went
/// on; the others return 1 quietly (the failing one said why).
bool everyoneOk(bool ok) { return gComm ? gComm->allOk(ok) : ok; }

// Progress: one live line on a terminal, plain lines otherwise.
class Progress {
public:
  explicit Progress(bool quiet) : quiet_(quiet), tty_(::isatty(2) != 0) {}
  void report(const codegen::IterationReport &r) {
    if (quiet_)
      return;
    char line[160], change[32] = "        -"; // the first evaluation has nothing to change from
    if (!r.first)
      std::snprintf(change, sizeof change, "%.3e", r.change);
    std::snprintf(line, sizeof line, "iteration %4lld  ELBO %.10g  change %s  %.3f s", (long long)r.iteration, r.elbo,
                  change, r.seconds);
    if (tty_)
      std::fprintf(stderr, "\r%s\033[K", line);
    else
      std::fprintf(stderr, "%s\n", line);
    std::fflush(stderr);
    live_ = tty_;
  }
  void done() {
    if (live_)
      std::fprintf(stderr, "\n");
    live_ = false;
  }

private:
  bool quiet_, tty_, live_ = false;
};

int usageError(const std::string &msg) {
  if (isRoot())
    llvm::errs() << "ppc: error: " << msg << "\nRun 'ppc --help' for usage.\n";
  return 2;
}

/// The rows of partitioned posteriors, gathered from every process in
/// rank order (the order of the plate's elements) on process 0.
/// A table's rows from every process, in rank order, on process 0. Element
/// ids in the split plate count from each process's first element: offset
/// by `elements`, the split plate's elements on the processes before it.
void gatherRows(rt::PosteriorTable &table, int64_t elements) {
  table.values = gComm->gatherToRoot(table.values);
  const size_t nIndex = table.indexColumns.size();
  const int64_t offset = nIndex ? gComm->exclusiveSum(elements) : 0;
  std::vector<double> ids(table.indices.begin(), table.indices.end());
  for (size_t r = 0; nIndex && r * nIndex < ids.size(); ++r)
    ids[r * nIndex] += double(offset);
  ids = gComm->gatherToRoot(ids);
  table.indices.assign(ids.begin(), ids.end());
}

void gatherPartitioned(const codegen::Plan &plan, std::vector<rt::PosteriorTable> &tables) {
  size_t t = 0;
  for (const codegen::Posterior &post : plan.posteriors) {
    if (post.scratch)
      continue;
    if (post.partitioned && gComm)
      gatherRows(tables[t], post.rowDims.empty() ? 0 : post.rowDims[0].size);
    ++t;
  }
  // The missing observations' predictive tables follow the posteriors.
  for (const codegen::Plan::Predicted &pr : plan.predicted) {
    if (pr.partitioned && gComm)
      gatherRows(tables[t], pr.rowDims.empty() ? 0 : pr.rowDims[0].size);
    ++t;
  }
  // Predictive tables without rows (no value missing anywhere) are not written.
  tables.erase(std::remove_if(tables.begin(), tables.end(),
                              [](const rt::PosteriorTable &x) { return !x.columns.empty() && x.values.empty(); }),
               tables.end());
}
} // namespace

int infer(const ir::Module &module, const ir::Evaluation &evaluation, std::optional<rt::BoundData> &data,
          DiagnosticEngine &diags, const std::string &emit, const RunFlags &flags,
          std::map<std::string, std::string> options, std::chrono::steady_clock::time_point started,
          double dataSeconds) {
  std::string error;
  const ir::Value *partitioned = gComm ? rt::partitionPlate(module, error) : nullptr;
  codegen::PlanOptions planOptions = flags.plan;
  int64_t &l2CacheBytes = planOptions.lowering.l2CacheBytes;
  planOptions.lowering.partitionedPlate = partitioned;
  planOptions.lowering.threads = flags.threads;
  planOptions.lowering.elboEveryIteration = flags.run.elboEvery == 1;
  if (gComm) // the variables some process misses values of (each process asks for each)
    for (const auto &[v, bv] : data->variables)
      if (!gComm->allOk(bv.missing.empty()))
        planOptions.lowering.predicted.insert(v->name);
  // The L2 the plan is sized to: --l2-cache, else the checkpoint's being
  // resumed, else this machine's; process 0's for every process.
  if (l2CacheBytes <= 0 && !flags.resume.empty())
    l2CacheBytes = codegen::Checkpointer::recordedL2CacheBytes(flags.resume);
  if (l2CacheBytes <= 0)
    l2CacheBytes = codegen::hostL2CacheBytes();
  if (gComm) {
    std::string bytes = std::to_string(l2CacheBytes);
    gComm->broadcastFromRoot(bytes);
    l2CacheBytes = std::stoll(bytes);
  }
  std::unique_ptr<codegen::Plan> plan = codegen::buildPlan(module, evaluation, *data, true, diags, planOptions,
                                                           flags.passOptions, &llvm::outs(), &llvm::errs());
  std::map<std::string, std::vector<double>> observed;
  if (!flags.report.empty())
    observed = observedForReport(*data, partitioned);
  const std::vector<std::string> farFromZero = data->farFromZero;
  data.reset(); // the plan holds the data it reads
  if (!everyoneOk(plan != nullptr) || !plan)
    return 1;
  if (plan->elementOffsets >= 0) {
    // Random initial posteriors are keyed by the element's index in the whole plate.
    std::vector<int64_t> offsets(plan->posteriors.size(), 0);
    for (size_t pi = 0; pi < plan->posteriors.size(); ++pi)
      if (plan->posteriors[pi].partitioned)
        offsets[pi] = gComm->exclusiveSum(plan->posteriors[pi].flatElements);
    plan->buffers[size_t(plan->elementOffsets)].ints = std::move(offsets);
  }
  if (emit == "plan") {
    llvm::outs() << codegen::printPlan(*plan);
    return 0;
  }
  if (std::string problem = codegen::planMemoryProblem(*plan); !problem.empty()) {
    if (isRoot())
      llvm::errs() << "ppc: error: " << problem << "\n";
    return 1;
  }
  std::vector<std::string> vocab;
  if (!flags.vocab.empty()) {
    vocab = readRunVocabulary(flags.vocab, *plan, error);
    if (!error.empty()) {
      if (isRoot())
        llvm::errs() << "ppc: error: " << error << "\n";
      return 1;
    }
  }
  std::unique_ptr<codegen::JitSession> session;
  std::unique_ptr<codegen::Engine> engine;
  std::string optimized;
  if (flags.engine == "jit" || emit == "llvm") {
    session = codegen::JitSession::create(error);
    if (session)
      engine = codegen::createJitEngine(*plan, *session, emit == "llvm" ? &optimized : nullptr, error);
    if (!engine)
      localError(error);
    if (!everyoneOk(engine != nullptr))
      return 1;
    if (emit == "llvm") {
      llvm::outs() << optimized;
      return 0;
    }
  } else {
    engine = codegen::createInterpreter(*plan);
  }
  engine->setThreads(int(flags.threads));
  engine->parallel.comm = gComm;
  rt::RunSummary summary;
  summary.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  summary.dataSeconds = dataSeconds;
  options["engine"] = flags.engine;
  options["iters"] = std::to_string(flags.run.maxIterations);
  options["tol"] = ir::formatDouble(flags.run.tolerance);
  options["elbo_every"] = std::to_string(flags.run.elboEvery);
  options["seed"] = std::to_string(flags.run.seed);
  options["threads"] = std::to_string(flags.threads);
  options["l2_cache_bytes"] = std::to_string(plan->l2CacheBytes);
  options["vector_isa"] = std::string(rt::describe(rt::vectorIsa()));
  options["subnormals"] = std::string(rt::subnormalsName(rt::subnormals()));
  if (gComm)
    options["processes"] = std::to_string(gComm->size());
  summary.options = std::move(options);
  // The posteriors the user gives (--init, --given), read before anything runs.
  std::map<std::string, std::vector<double>> start;
  if (!readPosteriorSources(*plan, flags.sources, start, error)) {
    if (isRoot())
      llvm::errs() << "ppc: error: " << error << "\n";
    return 1;
  }
  codegen::Inference inference(*plan);
  uint64_t seed = flags.run.seed;
  auto initStart = std::chrono::steady_clock::now();
  if (!inference.initialize(*engine, seed, start, error)) {
    if (isRoot())
      llvm::errs() << "ppc: error: " << error << "\n";
    return 1;
  }
  summary.initSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - initStart).count();
  codegen::RunOptions runOptions = flags.run;
  runOptions.discreteObservations = rt::discreteObservations(module);
  runOptions.coupledElements = ir::coupledElements(module);
  runOptions.farFromZero = farFromZero;
  std::unique_ptr<codegen::Checkpointer> checkpoints;
  if (!flags.checkpoint.empty() || !flags.resume.empty()) {
    // --resume alone goes on checkpointing where it resumed from.
    checkpoints = std::make_unique<codegen::Checkpointer>(
        flags.checkpoint.empty() ? flags.resume : flags.checkpoint, inference, gComm);
    bool ok = true;
    if (!flags.resume.empty()) {
      bool found = false;
      ok = codegen::Checkpointer(flags.resume, inference, gComm).restore(inference, summary, seed, found, error);
      if (ok && found && flags.seedGiven && seed != flags.run.seed) {
        ok = false;
        error = "--seed " + std::to_string(flags.run.seed) + ": the run checkpointed in " + flags.resume +
                " started with --seed " + std::to_string(seed) + ", and a resumed run continues it (give that seed "
                "or none)";
      }
      if (ok && found && summary.iterations > flags.run.maxIterations) {
        ok = false;
        error = "--iters " + std::to_string(flags.run.maxIterations) + ": the run checkpointed in " + flags.resume +
                " has done " + std::to_string(summary.iterations) +
                " iterations, and a resumed run goes on to --iters (give at least " +
                std::to_string(summary.iterations) + ", or run without --resume)";
      }
      if (ok && found)
        summary.options["seed"] = std::to_string(seed); // the run's own
      if (!ok)
        localError(error);
      else if (isRoot() && !flags.quiet)
        llvm::errs() << (found ? "resuming after iteration " + std::to_string(summary.iterations) + " from " +
                                     flags.resume
                               : "no checkpoint in " + flags.resume + " yet: starting from the beginning")
                     << "\n";
    }
    if (ok && !checkpoints->prepare(error)) {
      localError(error);
      ok = false;
    }
    if (!everyoneOk(ok))
      return 1;
    {
      // Every k iterations and at the last (--iters below k saved nothing,
      // and a later --resume started afresh): a converged run needs none.
      int64_t every = flags.checkpointEvery, last = flags.run.maxIterations;
      runOptions.afterIteration = [&, every, last](const rt::RunSummary &s, std::string &err) {
        return (s.iterations % every != 0 && s.iterations != last) || checkpoints->save(s, seed, err);
      };
    }
  }
  Progress progress(flags.quiet || !isRoot());
  bool ok = inference.run(*engine, runOptions, summary,
                          [&](const codegen::IterationReport &r) { progress.report(r); }, error);
  progress.done();
  if (!ok) {
    // The processes agree on the ELBO and on whether a checkpoint was saved,
    // so they stop together: process 0 says why.
    if (isRoot())
      llvm::errs() << "ppc: error: " << error << "\n";
    return 1;
  }
  std::vector<rt::PosteriorTable> tables = inference.posteriors();
  for (rt::PosteriorTable &p : inference.predictions(*engine))
    tables.push_back(std::move(p));
  gatherPartitioned(*plan, tables);
  if (!isRoot())
    return 0;
  if (!flags.quiet)
    llvm::errs() << (summary.converged ? "converged" : "stopped") << " after " << summary.iterations
                 << (summary.iterations == 1 ? " iteration" : " iterations") << ": ELBO "
                 << llvm::format("%.10g", summary.elbo.empty() ? 0.0 : summary.elbo.back()) << " ("
                 << llvm::format("%.3f", summary.inferenceSeconds) << " s inference, "
                 << llvm::format("%.3f", summary.compileSeconds) << " s to compile)\n";
  printSummary(tables, vocab, llvm::outs());
  if (flags.heldout) {
    rt::RunSummary::Heldout h;
    if (!flags.heldout(inference, h))
      return 1;
    printHeldout(h, llvm::outs(), /*iterations=*/true);
    summary.heldout = h;
  }
  if (!flags.out.empty() && !rt::writeOutputs(flags.out, summary, tables, error)) {
    llvm::errs() << "ppc: error: " << error << "\n";
    return 1;
  }
  if (!flags.report.empty()) {
    ReportInput report = reportOfRun(summary, tables, flags.modelPath, flags.modelSource, vocab, &module);
    report.observed = std::move(observed);
    if (!writeReport(flags.report, report, error)) {
      llvm::errs() << "ppc: error: " << error << "\n";
      return 1;
    }
  }
  return 0;
}

static int ppcMain(int argc, char **argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "repl")
    return replMain(argc - 1, argv + 1);
  // Under mpirun: one process per part of the data (docs/distributed.md).
  // Only process 0 prints results; the others' stdout goes nowhere.
  std::string mpiError;
  std::unique_ptr<codegen::Communicator> comm = codegen::startMpiIfLaunched(&argc, &argv, mpiError);
  if (!mpiError.empty()) {
    llvm::errs() << "ppc: error: " << mpiError << "\n";
    return 1;
  }
  gComm = comm.get();
  if (!isRoot()) {
    int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, 1);
      ::close(null);
    }
  }
  CLI::App app{"ppc: a compiler for probabilistic models (variational message passing)", "ppc"};
  app.footer("Also: ppc repl [MODEL.ppl] [--threads N] (an interactive session, docs/repl.md); "
             "mpirun -np N ppc ... (a data-parallel run, docs/distributed.md).");
  std::string modelPath, emit, pipeline;
  bool pipelineGiven = false;
  std::vector<std::string> paramFlags, printAfter;
  passes::PassManagerOptions pmOptions;
  bool version = false;

  app.add_option("model", modelPath, "model file (.ppl)");
  app.add_option("--emit", emit,
                 "print an intermediate level and stop: ast, ir (the Model IR), plates (the plate tree), "
                 "gated (after the gate transform), messages (VMP statements), deps, deps-dot "
                 "(their dependencies), schedule, data (the data --infer binds), plan (the schedule's loop "
                 "nests over the bound data), llvm (the optimized LLVM IR the JIT runs)")
      ->check(CLI::IsMember(
          {"ast", "ir", "plates", "gated", "messages", "deps", "deps-dot", "schedule", "data", "plan", "llvm"}));
  rt::BindingOptions binding;
  std::vector<std::string> mapFlags;
  std::string weightColumn;
  app.add_option("--infer", binding.files, "a CSV data file for the observed variables (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--map", mapFlags, "bind a variable or a plate to a differently named column: --map NAME=COLUMN")
      ->allow_extra_args(false);
  app.add_option("--weight", weightColumn, "a column of nonnegative weights (repeated observations)");
  std::vector<std::string> initFlags;
  ScheduleOptions schedule;
  app.add_option("--schedule", schedule.schedule,
                 "auto (default): nested when the local variables form a cycle (LDA), plain otherwise; "
                 "nested; plain (one update of every variable per iteration)")
      ->check(CLI::IsMember({"auto", "nested", "plain"}));
  app.add_option("--local-iters", schedule.localIterations,
                 "nested schedule: at most this many sweeps of an element's local variables before the globals "
                 "update (default 10)")
      ->transform(tools::integerIn(1, 1000000));
  app.add_option("--local-tol", schedule.localTolerance,
                 "nested schedule: end an element's sweeps when its local posteriors change less than this on "
                 "average (default 1e-3; 0: always --local-iters sweeps)")
      ->check(tools::finiteNonNegative());
  app.add_flag("--local-restart,!--no-local-restart", schedule.localRestart,
               "nested schedule: restart each element's local variables from their priors every iteration "
               "(default; measured on AP: a far better optimum than continuing from the last iteration)");
  app.add_option("--init", initFlags,
                 "start a latent variable from a saved posterior (the CSV --out wrote for it): --init VAR=FILE "
                 "(repeatable)")
      ->allow_extra_args(false);
  std::vector<std::string> givenFlags;
  app.add_option("--given", givenFlags,
                 "hold a latent variable at a saved posterior (the CSV --out wrote for it; not updated, no "
                 "entropy term): --given VAR=FILE (repeatable)")
      ->allow_extra_args(false);
  std::vector<std::string> heldoutFiles;
  app.add_option("--heldout", heldoutFiles,
                 "after training, score this CSV (bound like --infer; repeatable) with the trained globals "
                 "given: its ELBO and bound per observation")
      ->allow_extra_args(false);
  app.add_option("-p,--param", paramFlags, "set a model parameter: -p NAME=VALUE (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--passes", pipeline, "run these passes instead of the default pipeline (a,b,c)");
  app.add_flag("--print-after-all", pmOptions.printAfterAll,
               "print the IR after every pass (and the plan after its lowering and every transformation)");
  app.add_option("--print-after", printAfter,
                 "print the IR after the named pass, or the plan after the named plan transformation or 'lower' "
                 "(repeatable)")
      ->allow_extra_args(false);
  app.add_flag("--verify-each", pmOptions.verifyEach, "verify the IR after every pass (and the plan after every step)");
  app.add_flag("--time-passes", pmOptions.timePasses, "print the time each pass (and plan step) took");
  RunFlags run;
  app.add_option("--iters", run.run.maxIterations, "maximum number of iterations (default 100)")
      ->transform(tools::integerIn(1, 100000000));
  app.add_option("--tol", run.run.tolerance, "stop when the relative ELBO change is below this (default 1e-6)")
      ->check(tools::finiteNonNegative());
  app.add_option("--elbo-every", run.run.elboEvery,
                 "evaluate the ELBO every this many iterations and at the last (default 1; 0: at the last only), "
                 "as scikit-learn's evaluate_every or gensim's eval_every: the iterations between skip its terms; "
                 "--tol compares the change per iteration between evaluations; the posteriors are the same")
      ->transform(tools::integerIn(0, 100000000));
  app.add_option("--seed", run.run.seed, "seed of the random initialization (default 0)")->transform(tools::unsigned64());
  app.add_option("--threads", run.threads,
                 "threads for the outermost data plate's elements (default 1); the result depends only on this "
                 "number")->transform(tools::integerIn(1, 1024));
  app.add_option("--engine", run.engine, "jit (LLVM ORC, default) or interp (the reference interpreter)")
      ->check(CLI::IsMember({"jit", "interp"}));
  app.add_option("--out", run.out, "write posteriors (one CSV per latent variable) and summary.json to this directory");
  app.add_option("--vocab", run.vocab, "a vocabulary file (one word per line): print the top words of each topic");
  app.add_option("--report", run.report,
                 "write a self-contained HTML report of the run to this file: the ELBO trace, a plot per latent "
                 "variable, the factor graph and the schedule (docs/report.md)");
  app.add_option("--checkpoint", run.checkpoint,
                 "save the whole variational state in this directory every --checkpoint-every iterations "
                 "(atomically: a run killed at any moment can --resume)");
  app.add_option("--checkpoint-every", run.checkpointEvery, "iterations between checkpoints (default 10)")
      ->transform(tools::integerIn(1, 100000000));
  app.add_option("--resume", run.resume,
                 "continue the run whose checkpoints are in this directory (the same command, --iters counting "
                 "from its start); checkpoints go on there unless --checkpoint names another directory");
  std::vector<std::string> disabledPlanOpts;
  app.add_option("--disable-plan-opt", disabledPlanOpts,
                 "skip a transformation of the plan, or a choice of its lowering (repeatable): " +
                     codegen::PlanOptions::names())
      ->allow_extra_args(false);
  std::string planPipeline;
  app.add_option("--plan-passes", planPipeline,
                 "run these plan transformations, in this order, instead of all of them (a,b,c; empty: none; "
                 "codegen/transforms/PlanPipeline.cpp lists them)")
      ->expected(0, 1);
  std::string l2Cache;
  app.add_option("--l2-cache", l2Cache,
                 "the per-core L2 cache the plan's blocking is sized to (bytes, or with K or M: 2M); default: "
                 "this machine's");
  std::string cpu;
  app.add_option("--cpu", cpu,
                 "generate and run code for this vector ISA level instead of this CPU's best: x86-64 (SSE2; "
                 "x86-64-v2 runs the same), x86-64-v3 (AVX2 + FMA), x86-64-v4 (AVX-512), native; the JIT targets "
                 "it and the runtime's kernels use their copies for it (to measure another CPU's code path on "
                 "this one)");
  const std::string flushName(rt::subnormalsName(rt::Subnormals::Flush)),
      keepName(rt::subnormalsName(rt::Subnormals::Keep));
  std::string subnormals = flushName;
  app.add_option("--subnormals", subnormals,
                 "flush (default): inference computes numbers below 2^-1022 as 0, which Intel CPUs otherwise "
                 "compute about 100x slower (a mixture's far components' responsibilities); keep: IEEE gradual "
                 "underflow, as the rest of the program")
      ->check(CLI::IsMember({flushName, keepName}));
  bool svi = false;
  StochasticOptions sviOptions;
  app.add_flag("--svi", svi,
               "stochastic variational inference (docs/svi.md): read the outermost data plate as a stream of "
               "batches and move the globals a step toward each batch's estimate; memory: the globals and one "
               "batch");
  app.add_option("--batch", sviOptions.batch,
                 "--svi: elements of the outermost data plate per step (per process under mpirun; default 1000)")
      ->transform(tools::integerIn(1, int64_t(1) << 40));
  app.add_option("--tau0", sviOptions.tau0, "--svi: step sizes rho_t = (tau0 + t)^-kappa (default tau0 10)")
      ->check(tools::finiteNonNegative());
  app.add_option("--kappa", sviOptions.kappa,
                 "--svi: the decay kappa of the step sizes, in [0, 1] (default 0.7; (0.5, 1] converges; 0 with "
                 "--tau0 0: every step 1)")
      ->check(CLI::Validator(
          [](std::string &text) -> std::string {
            char *end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (text.empty() || *end != '\0' || !(v >= 0 && v <= 1))
              return "must be a number from 0 to 1; got '" + text + "'";
            return {};
          },
          "0..1"));
  app.add_option("--epochs", sviOptions.epochs, "--svi: passes over the stream (default 1)")
      ->transform(tools::integerIn(1, 1000000));
  app.add_option("--data-size", sviOptions.dataSize,
                 "--svi: the number of elements the batches are scaled to (default: those in the stream, counted "
                 "by a first pass over it)")
      ->transform(tools::integerIn(1, int64_t(1) << 50));
  app.add_option("--heldout-every", sviOptions.heldoutEvery,
                 "--svi: score the --heldout files every this many steps (default: at the end only)")
      ->transform(tools::integerIn(1, 100000000));
  app.add_flag("-q,--quiet", run.quiet, "no progress lines");
  app.add_flag("--version", version, "print the version and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    return usageError(tools::parseErrorMessage(e));
  }
  if (version) {
    llvm::outs() << "ppc 0.1.0 (LLVM " << LLVM_VERSION_STRING << ")\n";
    return 0;
  }
  if (modelPath.empty())
    return usageError("no model file given");
  for (const char *flag : {"--batch", "--tau0", "--kappa", "--epochs", "--data-size", "--heldout-every"})
    if (!svi && app.count(flag))
      return usageError(std::string(flag) + " sets up a stochastic run, which needs --svi");
  if (svi) {
    for (const char *flag : {"--iters", "--tol", "--elbo-every", "--init", "--given", "--emit"})
      if (app.count(flag))
        return usageError(std::string("--svi runs --epochs passes over the stream; ") + flag +
                          " is for batch runs" + (std::string(flag) == "--emit" ? " (drop --svi to see a level)" : ""));
    if (binding.files.empty())
      return usageError("--svi reads its data from --infer FILE");
    if (sviOptions.heldoutEvery > 0 && heldoutFiles.empty())
      return usageError("--heldout-every scores the --heldout files, and none is given");
    if (!app.count("--batch"))
      sviOptions.batch = 1000;
    if (schedule.schedule == "plain")
      return usageError("--svi updates each batch's local variables before the globals read them (the nested "
                        "schedule); --schedule plain would update the globals from locals of another batch");
    schedule.stochastic = true;
  }
  if (app.count("--tol") && run.run.tolerance > 0 && run.run.elboEvery == 0)
    return usageError("--tol stops a run when the ELBO's change between evaluations is small, and --elbo-every 0 "
                      "evaluates it at the last iteration only: drop --tol, or give --elbo-every N");
  for (const char *flag : {"--local-iters", "--local-tol"})
    if (app.count(flag))
      schedule.localFlags.push_back(flag);
  if (app.count("--local-restart")) // one option, either spelling
    schedule.localFlags.push_back(schedule.localRestart ? "--local-restart" : "--no-local-restart");
  if (schedule.schedule == "plain" && !schedule.localFlags.empty())
    return usageError(schedule.localFlags.front() + " sets the nested schedule's local sweeps; --schedule plain has "
                      "none (give --schedule nested or auto)");
  pipelineGiven = app.count("--passes") > 0;
  run.seedGiven = app.count("--seed") > 0;
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
  for (const auto &[flags, given] : {std::pair{&initFlags, false}, std::pair{&givenFlags, true}})
    for (const std::string &f : *flags) {
      PosteriorSource source;
      if (!parsePosteriorSource(f, given, source, error))
        return usageError(error);
      run.sources.push_back(source);
    }
  // Applying a trained model to new rows: their observations may all be missing (predicted).
  binding.allowAllMissing = !givenFlags.empty();
  if (!heldoutFiles.empty() && binding.files.empty())
    return usageError("--heldout scores held-out data after training, which needs --infer FILE");
  if (!heldoutFiles.empty() && !emit.empty())
    return usageError("--heldout scores held-out data after a run; --emit=" + emit + " stops before it");
  if (emit == "ast" && (!paramFlags.empty() || !binding.files.empty()))
    return usageError(std::string(paramFlags.empty() ? "--infer" : "-p") +
                      ": --emit=ast prints the syntax tree, which parameters and data do not change (--emit=ir "
                      "and later levels check them)");
  if (!run.sources.empty() && emit == "ast")
    return usageError(run.sources.front().flag() + ": --emit=ast prints the syntax tree, which " +
                      (run.sources.front().given ? "--given" : "--init") + " does not change");
  if (!heldoutFiles.empty() && gComm)
    return usageError("--heldout is not supported under mpirun yet; run the evaluation in one process");
  for (const std::string &name : disabledPlanOpts)
    if (!run.plan.disable(name))
      return usageError("--disable-plan-opt: no plan transformation '" + name + "' (" +
                        codegen::PlanOptions::names() + ")");
  if (app.count("--plan-passes")) {
    codegen::PlanPassManager check;
    if (!check.addPipeline(planPipeline, error))
      return usageError("--plan-passes: " + error);
    run.plan.pipeline = planPipeline;
  }
  {
    // --print-after names a pass of either level (whether this command runs
    // it is checked once its pipeline is known, below).
    std::vector<std::string_view> known = codegen::planPassNames();
    for (const passes::PassInfo &p : passes::registeredPasses())
      known.push_back(p.name);
    if (!passes::checkPrintAfter(pmOptions, known, error))
      return usageError(error);
  }
  run.passOptions = pmOptions;
  if (app.count("--l2-cache")) {
    const char last = l2Cache.empty() ? '\0' : l2Cache.back();
    const int64_t unit = last == 'K' ? 1 << 10 : last == 'M' ? 1 << 20 : 1;
    const std::string digits = unit == 1 ? l2Cache : l2Cache.substr(0, l2Cache.size() - 1);
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(digits) == 0)
      return usageError("--l2-cache: '" + l2Cache + "' is not a size (bytes, or a number with K or M: 2M)");
    run.plan.lowering.l2CacheBytes = std::stoll(digits) * unit;
  }
  if (app.count("--cpu")) {
    std::optional<rt::VectorIsa> isa = rt::vectorIsaFromCpuName(cpu);
    if (!isa)
      return usageError("--cpu: '" + cpu + "' is not a CPU level ppc knows (x86-64, x86-64-v2, x86-64-v3, x86-64-v4, "
                        "native)");
    if (!rt::setVectorIsa(*isa, error))
      return usageError("--cpu " + cpu + ": " + error);
  }
  rt::setSubnormals(*rt::subnormalsFromName(subnormals)); // CLI11 checked the name
  if ((emit == "data" || emit == "plan" || emit == "llvm") && binding.files.empty())
    return usageError("--emit=" + emit + " needs --infer FILE");
  // Before the run, not after it: a long run must not end in "cannot write".
  // (Every process checks: they share the file system, and all must stop.)
  if (!run.report.empty()) {
    if (binding.files.empty() || !emit.empty())
      return usageError("--report draws a run, which needs --infer FILE" +
                        std::string(emit.empty() ? "" : " and no --emit"));
    if (std::string problem = checkReportPath(run.report); !problem.empty())
      return usageError(problem);
  }
  // No flag accepted and ignored: what only a run reads needs data, and
  // what a run writes needs the run (no --emit); the settings of a run
  // given with --emit (the run's command, to see one of its levels) have no
  // effect there, and ppc says so. --elbo-every shapes the plan.
  for (const auto &[flag, writes] : {std::pair{"--out", true}, {"--checkpoint", true}, {"--checkpoint-every", true},
                                     {"--resume", true}, {"--vocab", true}, {"--iters", false}, {"--tol", false},
                                     {"--elbo-every", false}, {"--seed", false}, {"--engine", false},
                                     {"--subnormals", false}}) {
    if (!app.count(flag))
      continue;
    if (binding.files.empty() || (writes && !emit.empty()))
      return usageError(std::string(flag) + " sets up a run, which needs --infer FILE" +
                        (emit.empty() ? std::string() : " and no --emit (--emit=" + emit + " stops before it)"));
    const bool shapesPlan = std::string_view(flag) == "--elbo-every" && (emit == "plan" || emit == "llvm");
    if (!emit.empty() && !shapesPlan && isRoot())
      llvm::errs() << "ppc: warning: " << flag << " has no effect with --emit=" << emit
                   << ", which stops before the run\n";
  }
  if (binding.files.empty())
    for (const char *flag : {"--map", "--weight", "--threads", "--plan-passes", "--disable-plan-opt", "--l2-cache",
                             "--cpu"})
      if (app.count(flag))
        return usageError(std::string(flag) + " applies to the data and the code generated for it, which need "
                                              "--infer FILE");
  if (app.count("--checkpoint-every") && run.checkpoint.empty() && run.resume.empty())
    return usageError("--checkpoint-every sets how often --checkpoint DIR saves, and no --checkpoint is given");
  for (const auto &[flag, value] : {std::pair<const char *, const std::string *>{"--out", &run.out},
                                    {"--checkpoint", &run.checkpoint}, {"--resume", &run.resume},
                                    {"--report", &run.report}, {"--vocab", &run.vocab}})
    if (app.count(flag) && value->empty())
      return usageError(std::string(flag) + " needs a path; got an empty one");
  // A batch run and a stochastic one keep different state: neither resumes
  // nor checkpoints in the other's directory.
  for (const std::string *dir : {&run.checkpoint, &run.resume}) {
    std::error_code ec;
    const char *other = svi ? "checkpoint.json" : "svi-checkpoint.json";
    if (!dir->empty() && std::filesystem::exists(std::filesystem::path(*dir) / other, ec))
      return usageError(std::string(dir == &run.resume ? "--resume " : "--checkpoint ") + *dir + " holds the " +
                        (svi ? "checkpoints of a batch run" : "checkpoints of an --svi run") + " (" + other +
                        "), which this " + (svi ? "--svi" : "batch") + " run cannot continue; give another directory");
  }
  // A checkpoint directory holds checkpoints only: an --out directory given
  // as --resume (meaning --init) would start afresh and leave checkpoints in
  // it, and --checkpoint would write beside the user's files.
  for (const std::string *dir : {&run.checkpoint, &run.resume})
    if (std::string name = foreignCheckpointFile(*dir); !name.empty())
      return usageError(std::string(dir == &run.resume ? "--resume " : "--checkpoint ") + *dir + " holds '" + name +
                        "', which is not a ppc checkpoint file" +
                        (name == "summary.json" ? " (it is an --out directory: --init VAR=" +
                                                      (std::filesystem::path(*dir) / "VAR.csv").string() +
                                                      " starts a run from its posteriors)"
                                                : "") +
                        "; checkpoints go in a directory of their own: give a new or empty one");
  // --out replaces its whole directory: nothing else the run writes or
  // reads may be in it (found after the run, it would lose the run).
  if (!run.out.empty())
    for (const auto &[flag, path] : {std::pair<const char *, const std::string *>{"--checkpoint", &run.checkpoint},
                                     {"--resume", &run.resume}, {"--report", &run.report}})
      if (!path->empty() && rt::pathWithin(*path, run.out))
        return usageError(std::string(flag) + " " + *path + " is inside --out " + run.out +
                          ", which the run's output replaces as a whole; give it another place");
  // Nor anything it reads: the new outputs would replace the inputs (an
  // earlier run's posterior given back, the next rows put beside it).
  if (!run.out.empty()) {
    std::vector<std::pair<std::string, std::string>> inputs{{"the model", modelPath}};
    for (const std::string &f : binding.files)
      inputs.emplace_back("--infer", f);
    for (const std::string &f : heldoutFiles)
      inputs.emplace_back("--heldout", f);
    for (const PosteriorSource &source : run.sources)
      inputs.emplace_back(source.given ? "--given" : "--init", source.file);
    if (!run.vocab.empty())
      inputs.emplace_back("--vocab", run.vocab);
    for (const auto &[what, path] : inputs)
      if (rt::pathWithin(path, run.out))
        return usageError(what + " " + path + " is inside --out " + run.out +
                          ", which the run's output replaces as a whole; give --out another directory");
  }
  if (!run.out.empty())
    if (std::string problem = rt::checkOutputDirectory(run.out); !problem.empty()) {
      if (isRoot())
        llvm::errs() << "ppc: error: --out: " << problem << "\n";
      return 1;
    }
  std::map<std::string, std::string> optionsUsed;
  {
    std::string command = "ppc";
    for (int i = 1; i < argc; ++i)
      command += std::string(" ") + argv[i];
    optionsUsed["command"] = command;
  }
  auto started = std::chrono::steady_clock::now();
  double dataSeconds = 0;
  // The default pipeline runs as far as the level asked for, then verifies;
  // an explicit --passes pipeline runs whole and --emit prints its result.
  if (!pipelineGiven)
    pipeline = pipelineForEmit(emit);
  {
    // --print-after of a pass this command does not run would print nothing.
    std::vector<std::string_view> planOnly = codegen::planPassNames(), known;
    for (const passes::PassInfo &p : passes::registeredPasses())
      known.push_back(p.name);
    std::vector<std::string> running;
    if (!passes::splitPipeline(pipeline, known, "pass", running, error))
      return usageError(error);
    for (const std::string &n : printAfter) {
      const bool planStep = std::find(planOnly.begin(), planOnly.end(), n) != planOnly.end();
      if (planStep && binding.files.empty())
        return usageError("--print-after=" + n + " prints the plan, which needs --infer FILE");
      if (planStep ? !(emit.empty() || emit == "plan" || emit == "llvm")
                   : std::find(running.begin(), running.end(), n) == running.end())
        return usageError("--print-after=" + n + ": " + (planStep ? "the plan" : "that pass") + " does not run " +
                          (planStep ? "with --emit=" + emit
                                    : "in this command's pipeline (" + (pipeline.empty() ? "none" : pipeline) + ")"));
    }
  }
  passes::PassManager pm(pmOptions);
  if (!pm.addPipeline(pipeline, error))
    return usageError(error);

  return runTool([&]() -> int {
    std::optional<std::string> source = readFile(modelPath, error);
    if (!source) {
      if (isRoot())
        llvm::errs() << "ppc: error: " << error << "\n";
      return 1;
    }
    run.modelPath = modelPath;
    run.modelSource = *source;
    // Every process compiles the same model: process 0 reports for all.
    DiagnosticEngine diags(modelPath, *source, isRoot() ? llvm::errs() : llvm::nulls());

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
    std::optional<rt::BoundData> data;
    if (!binding.files.empty() && !svi) {
      std::vector<std::string> errors;
      if (gComm) {
        const ir::Value *plate = rt::partitionPlate(*module, error);
        if (!plate) {
          if (isRoot())
            llvm::errs() << "ppc: error: " << error << "\n";
          return 1;
        }
        binding.partition = rt::Partition{plate, gComm->rank(), gComm->size(), std::nullopt};
      }
      auto loading = std::chrono::steady_clock::now();
      data = rt::bindData(*module, *evaluation, binding, errors);
      // Reading the data is not compiling: the clock of compile_seconds skips it.
      started += std::chrono::steady_clock::now() - loading;
      dataSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - loading).count();
      for (const std::string &e : errors)
        localError(e);
      if (!everyoneOk(data.has_value()) || !data)
        return 1;
      for (const std::string &w : data->warnings)
        localWarning(w);
      if (emit == "data") {
        printBoundData(*module, *data, llvm::outs());
        return 0;
      }
    }
    passes::PassContext ctx{diags, &llvm::outs(), {}, {}};
    schedule.apply(ctx);
    // --given marks variables in the IR (no messages to them); --init tells
    // the scheduler and the lowering which posteriors start from a file.
    if (!applyPosteriorSources(*module, run.sources, ctx.userInitializations, error)) {
      if (isRoot())
        llvm::errs() << "ppc: error: " << error << "\n";
      return 1;
    }
    run.plan.lowering.userInitialized.insert(ctx.userInitializations.begin(), ctx.userInitializations.end());
    if (!heldoutFiles.empty()) {
      HeldoutOptions h;
      h.modelPath = modelPath;
      h.source = *source;
      h.params = params;
      h.binding = binding;
      h.binding.files = heldoutFiles;
      h.binding.filesFlag = "--heldout";
      h.schedule = schedule;
      h.plan = run.plan;
      h.run = run.run;
      h.engine = run.engine;
      h.threads = int(run.threads);
      // Bound now as well as after training: a bad file must not cost the run.
      if (!checkHeldout(h))
        return 1;
      h.warned = true;
      run.heldout = [h](const codegen::Inference &trained, rt::RunSummary::Heldout &out) {
        return evaluateHeldout(h, trained, out);
      };
    }
    if (!pm.run(*module, ctx, llvm::outs(), llvm::errs()))
      return 1;
    if (svi) {
      StochasticRun sr;
      sr.module = module.get();
      sr.evaluation = &*evaluation;
      sr.source = *source;
      sr.params = params;
      sr.diags = &diags;
      sr.binding = binding;
      sr.plan = run.plan;
      sr.passOptions = run.passOptions;
      sr.seed = run.run.seed;
      sr.engine = run.engine;
      sr.threads = int(run.threads);
      sr.quiet = run.quiet || !isRoot();
      sr.out = run.out;
      sr.vocab = run.vocab;
      sr.checkpoint = run.checkpoint.empty() ? run.resume : run.checkpoint;
      sr.resume = run.resume;
      sr.checkpointEvery = run.checkpointEvery;
      sr.report = run.report;
      sr.modelPath = modelPath;
      sr.heldout = run.heldout;
      sr.options = optionsUsed;
      sr.comm = gComm;
      sr.started = started;
      return runStochastic(sr, sviOptions);
    }
    if (data && (emit.empty() || emit == "plan" || emit == "llvm"))
      return infer(*module, *evaluation, data, diags, emit, run, optionsUsed, started, dataSeconds);
    if (emit == "ir" || emit == "gated" || emit == "messages" || emit == "schedule" || emit.empty())
      ir::print(*module, llvm::outs());
    else if (emit == "plates")
      ir::printPlateTree(*module, &*evaluation, llvm::outs());
    return diags.hasErrors() ? 1 : 0;
  });
}

// The last line of defence: sizes are checked before they are allocated
// (runtime/MemoryLimits.h), but an allocation that still fails (memory taken
// by other processes meanwhile) ends with a message, not std::terminate.
int main(int argc, char **argv) {
  try {
    return finishStandardOutput("ppc", ppcMain(argc, argv));
  } catch (const std::bad_alloc &) {
    llvm::errs() << "ppc: error: out of memory (this machine has " << rt::formatBytes(rt::availableMemoryBytes())
                 << "); nothing was written\n";
  } catch (const std::exception &e) {
    llvm::errs() << "ppc: error: internal error: " << e.what() << "; nothing was written\n";
  }
  return 1;
}
