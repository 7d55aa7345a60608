//===- codegen/exec/Executor.h - running a plan: state, engines, iterations ---===//
//
// An Inference owns the variational state of one model bound to data (the
// plan's buffers) and runs its blocks through an Engine: the JIT-compiled
// code (LLVM ORC, codegen/llvm/LLVMCodegen.h) or the reference interpreter
// (Interpreter.cpp). ParallelRunner.cpp runs the parallel loops of both;
// Inference.cpp the iterations. The state outlives engines,
// so a REPL can continue inference after recompiling, and the buffers are
// plain arrays a distributed run can all-reduce.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/plan/Plan.h"
#include "runtime/FloatEnvironment.h"
#include "runtime/Output.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace ppc::codegen {

class Communicator;
class StochasticStep;

/// Runs a plan's parallel loops (Stmt::parallel): contiguous chunks of the
/// elements, one per thread, each with its own copies of the loop's
/// per-element buffers and zeroed copies of its sums, which are added to the
/// shared buffers after the loop in chunk order (as are the ELBO terms), so
/// a run is deterministic for a given number of threads. One thread runs the
/// loop on the shared buffers directly, with the same result.
///
/// The chunks alone decide the arithmetic, not which thread runs them: a
/// loop whose last run did too little work to pay for waking a thread
/// (under kConcurrentWorkSeconds) runs its chunks one after another on the
/// calling thread, with the same result. The other threads are a pool
/// started once, not one thread per loop.
class ParallelRunner {
public:
  /// Where each of `chunks` chunks of [0, n) starts (and n): at equal
  /// shares of the cumulative `costs` (n + 1 entries) or, without them, of
  /// the count.
  static std::vector<int64_t> chunkStarts(const int64_t *costs, int64_t n, int64_t chunks);
  using Body = std::function<double(void *const *buffers, int64_t begin, int64_t end)>;
  explicit ParallelRunner(const Plan &plan);
  ~ParallelRunner();
  ParallelRunner(const ParallelRunner &) = delete;
  ParallelRunner &operator=(const ParallelRunner &) = delete;
  /// `concurrent`: chunks on threads (generated code) or one after another
  /// (the interpreter, whose state is not thread-safe; same arithmetic).
  double run(const Stmt &loop, void *const *buffers, int64_t n, const Body &body, bool concurrent);
  int threads = 1;
  /// Work (seconds summed over a loop's chunks) below which its next run
  /// stays on the calling thread. The workers spin between loops, so a
  /// loop of a few tens of microseconds gains from them (the digits
  /// mixture's categorical rows, 20-35 us: 4% of its iteration on two
  /// threads against 50 us here).
  static constexpr double kConcurrentWorkSeconds = 10e-6;
  /// Loops the generated code names by index (ppc_parallel_loop).
  std::vector<const Stmt *> loops;
  /// A data-parallel run's processes: a `distributed` loop's sums and ELBO
  /// terms are summed over them after the loop (null: one process).
  Communicator *comm = nullptr;
  /// A stochastic run's step: rescales and blends what each distributed
  /// loop sums (after the processes' sum; null: a batch run).
  StochasticStep *stochastic = nullptr;

private:
  double runChunks(const Stmt &loop, void *const *buffers, int64_t n, const Body &body, bool concurrent);
  std::vector<double> &storage(size_t thread, int32_t buffer);
  /// work(t) for t in [0, count), on this thread and the pool's workers:
  /// each t goes to whichever thread asks first.
  void onPool(int64_t count, const std::function<void(int64_t)> &work);
  const Plan &plan_;
  std::vector<std::vector<std::vector<double>>> storage_; ///< [thread][buffer]
  /// [thread][buffer]: the copy is all zeros (left so by the sum that
  /// added it to the shared buffer), so the next chunk need not zero it.
  std::vector<std::vector<char>> zeroed_;
  std::map<const Stmt *, double> lastWork_; ///< seconds of each loop's last run
  struct Pool;
  std::unique_ptr<Pool> pool_;
};

/// Runs the blocks of a plan over the state's buffers; returns the block's
/// ELBO sum (0 for blocks without ELBO terms).
class Engine {
public:
  explicit Engine(const Plan &plan) : parallel(plan) {}
  virtual ~Engine() = default;
  /// Runs the block in inference's floating-point mode (subnormals flushed
  /// unless ppc --subnormals keep: runtime/FloatEnvironment.h).
  double runBlock(Plan::BlockId block, void *const *buffers) {
    rt::ScopedFloatControl mode(rt::inferenceFloatControl());
    return execute(block, buffers);
  }
  virtual std::string_view name() const = 0;
  void setThreads(int n) { parallel.threads = n < 1 ? 1 : n; }
  ParallelRunner parallel;

protected:
  virtual double execute(Plan::BlockId block, void *const *buffers) = 0;
};

/// Called by generated code for a parallel loop: runs `body` over [0, n)
/// through the engine's runner (`runner`), loop `loop` of its list.
extern "C" double ppc_parallel_loop(void *runner, int64_t loop, void *const *buffers, int64_t n,
                                    double (*body)(void *const *, int64_t, int64_t));

/// Each row's element in each of the posterior's plates (rows x
/// post.rowDims.size(), row-major): the index columns of its output.
std::vector<int64_t> rowIndices(const Plan &plan, const Posterior &post);
std::vector<int64_t> rowIndices(const Plan &plan, const std::vector<Posterior::RowDim> &dims);

/// The reference interpreter: walks the plan, calls every kernel through
/// the runtime's symbol table.
std::unique_ptr<Engine> createInterpreter(const Plan &plan);


struct RunOptions {
  int64_t maxIterations = 100;
  double tolerance = 1e-6; ///< on the relative ELBO change
  uint64_t seed = 0;
  /// Relative decrease of the ELBO tolerated as rounding.
  double decreaseTolerance = 1e-9;
  /// Nested schedules with restarts: after the first iteration whose
  /// relative ELBO change is below this, the locals continue from their
  /// last values instead (restarts find better optima early, but only
  /// coordinate ascent never decreases the ELBO).
  double restartUntil = 1e-4;
  /// Evaluate the ELBO every this many iterations and at the last (0: at
  /// the last only). The iterations between skip the ELBO block and the
  /// iteration block's own ELBO terms (Plan::elboSwitch), and record
  /// nothing; the tolerance, the restart switch and the check that the
  /// ELBO does not decrease use the change per iteration between the
  /// evaluated ones. The posteriors do not depend on it.
  int64_t elboEvery = 1;
  /// Checked after each iteration: when set, the run stops there (Ctrl-C in
  /// the REPL), keeping the state of the last finished iteration.
  const std::atomic<bool> *interrupt = nullptr;
  /// The observed variables when all are discrete (rt::discreteObservations):
  /// the ELBO bounds a log probability, so a positive one is a numerical
  /// failure (weights or counts past double precision), not a result.
  std::vector<std::string> discreteObservations;
  /// Gaussian observations far from zero for their spread (rt::BoundData's
  /// farFromZero): a decrease of the ELBO is then said to be rounding.
  std::vector<std::string> farFromZero;
  /// Plate variables with three or more elements in one linear combination
  /// (ir::coupledElements): their joint step may then lower the ELBO.
  std::vector<std::string> coupledElements;
  /// Called after each iteration with the summary so far (checkpoints).
  std::function<bool(const rt::RunSummary &, std::string &error)> afterIteration;
};

struct IterationReport {
  int64_t iteration = 0; ///< 1-based
  /// change: relative, per iteration since the last evaluated one.
  double elbo = 0, change = 0, seconds = 0;
  /// No evaluation before it (change is 0, not measured).
  bool first = false;
};

class Inference {
public:
  explicit Inference(const Plan &plan);

  /// Fills the state: zeros, constants and data, random initial posteriors
  /// of gate conditions (from `seed`), then runs the init block.
  void initialize(Engine &engine, uint64_t seed);
  /// The same, with the posteriors the plan takes from the user (--init,
  /// --given: Posterior::userInit, given) set from `start` (natural
  /// parameters by variable, as rt::readPosteriorFile gives them) before
  /// the init block. False with `error` set when a value does not fit.
  bool initialize(Engine &engine, uint64_t seed, const std::map<std::string, std::vector<double>> &start,
                  std::string &error);
  /// Whether initialize draws the random starts of the locals (Plan::randomLocals).
  bool drawRandomLocals = true;

  /// One iteration; returns the ELBO after it. `beforeElbo`, if set, is
  /// called between the iteration block and the ELBO block.
  double iterate(Engine &engine, const std::function<void()> &beforeElbo = {});
  /// Runs `final` (refreshes posteriors left stale).
  void finish(Engine &engine);

  /// Iterates until the relative ELBO change is below the tolerance or the
  /// maximum is reached, continuing after `summary.iterations` (a resumed
  /// run: its trace so far in `summary`). `progress` is called after each
  /// iteration. Returns false with `error` set when the ELBO decreases or is
  /// not finite, or when `opts.afterIteration` fails.
  bool run(Engine &engine, const RunOptions &opts, rt::RunSummary &summary,
           const std::function<void(const IterationReport &)> &progress, std::string &error);

  /// The variational state as bytes: every buffer the plan does not fill at
  /// bind time, and the last iteration's ELBO terms. Restoring it (into an
  /// Inference of the same plan, initialized) continues a run exactly.
  std::string saveState() const;
  bool restoreState(const std::string &bytes, std::string &error);

  /// After a recompile (the REPL): copies every state buffer of `old`
  /// whose name and size match one of this plan's (the posteriors and
  /// messages of variables a change left alone; any state is a valid start
  /// for the next iteration, which recomputes the rest). Returns the
  /// variables whose posteriors were kept.
  std::vector<std::string> adoptMatchingState(const Inference &old);

  /// The posteriors in their families' standard parameters.
  std::vector<rt::PosteriorTable> posteriors() const;
  /// Runs the predict block and gives each observed variable's missing
  /// elements' posterior predictive (`<var>.predicted`), one row each.
  std::vector<rt::PosteriorTable> predictions(Engine &engine);
  /// A posterior's expected statistics (E log p of a Dirichlet, q of a Categorical, ...).
  const std::vector<double> &buffer(int32_t b) const { return doubles_[size_t(b)]; }
  const Plan &plan() const { return plan_; }
  void *const *buffers() const { return bases_.data(); }

private:
  /// Sets a posterior's natural parameters and computes its statistics.
  bool startFrom(const Posterior &post, const std::vector<double> &eta, std::string &error);
  /// The ELBO block, only ever right after the iteration block: plan
  /// transformations rely on it (codegen/transforms/EntropySharing.cpp reads what the
  /// iteration's statistics stored).
  double elbo(Engine &engine);

  const Plan &plan_;
  std::vector<std::vector<double>> doubles_;
  std::vector<std::vector<int64_t>> ints_;
  std::vector<void *> bases_;
  double elboInIteration_ = 0; ///< the last iteration's ELBO terms (nested schedules)
};

} // namespace ppc::codegen
