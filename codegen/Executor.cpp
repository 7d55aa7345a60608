//===- codegen/Executor.cpp - state, the reference interpreter, iterations -===//
#include "codegen/Executor.h"

#include "codegen/Distributed.h"

#include "ir/IR.h"
#include "runtime/Symbols.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace ppc::codegen {

// ---- the reference interpreter ---------------------------------------------

namespace {

class Interpreter final : public Engine {
public:
  explicit Interpreter(const Plan &p) : Engine(p), p_(p), vars_(size_t(p.loopVars) + 1, 0) {}

  double runBlock(Plan::BlockId block, void *const *buffers) override {
    buffers_ = buffers;
    double elbo = 0;
    run(p_.blocks[block], elbo);
    return elbo;
  }
  std::string_view name() const override { return "interp"; }

private:
  int64_t evalInt(ExprId id) const {
    const Expr &e = p_.exprs[size_t(id)];
    switch (e.kind) {
    case Expr::Kind::IntConst: return e.value;
    case Expr::Kind::LoopVar: return vars_[size_t(e.var)];
    case Expr::Kind::AddInt: return evalInt(e.a) + evalInt(e.b);
    case Expr::Kind::MulInt: return evalInt(e.a) * evalInt(e.b);
    case Expr::Kind::LoadInt: return static_cast<const int64_t *>(buffers_[e.buffer])[evalInt(e.a)];
    default: return 0;
    }
  }
  double evalDouble(ExprId id) const {
    if (id == kNoExpr)
      return 1.0;
    const Expr &e = p_.exprs[size_t(id)];
    switch (e.kind) {
    case Expr::Kind::DoubleConst: return e.number;
    case Expr::Kind::LoadDouble: return static_cast<const double *>(buffers_[e.buffer])[evalInt(e.a)];
    case Expr::Kind::IntToDouble: return double(evalInt(e.a));
    case Expr::Kind::AddDouble: return evalDouble(e.a) + evalDouble(e.b);
    case Expr::Kind::MulDouble: return evalDouble(e.a) * evalDouble(e.b);
    case Expr::Kind::SubDouble: return evalDouble(e.a) - evalDouble(e.b);
    default: return double(evalInt(id));
    }
  }

  /// Runs loop s's iterations [begin, end), one at a time or in batches.
  void runRange(const Stmt &s, int64_t begin, int64_t end, double &elbo) {
    const int64_t step = s.batch ? s.batch : 1;
    for (int64_t i = begin; i < end; i += step) {
      vars_[size_t(s.var)] = i;
      if (s.batch)
        vars_[size_t(s.batchVar)] = std::min(s.batch, end - i);
      if (!run(s.body, elbo))
        break;
    }
  }

  /// Runs `body`; false when an ExitBelow left the enclosing loop.
  bool run(const std::vector<Stmt> &body, double &elbo) {
    for (const Stmt &s : body) {
      switch (s.kind) {
      case Stmt::Kind::Loop: {
        int64_t n = evalInt(s.bound);
        if (s.parallel) {
          void *const *shared = buffers_;
          elbo += parallel.run(
              s, shared, n,
              [&](void *const *table, int64_t begin, int64_t end) {
                buffers_ = table;
                double sum = 0;
                runRange(s, begin, end, sum);
                buffers_ = shared;
                return sum;
              },
              /*concurrent=*/false);
          break;
        }
        runRange(s, 0, n, elbo);
        break;
      }
      case Stmt::Kind::ExitBelow:
        if (static_cast<const double *>(buffers_[s.buffer])[evalInt(s.index)] < s.threshold)
          return false;
        break;
      case Stmt::Kind::Zero:
        std::memset(static_cast<double *>(buffers_[s.buffer]) + evalInt(s.index), 0, size_t(s.count) * sizeof(double));
        break;
      case Stmt::Kind::Call: {
        rt::KernelValue args[16];
        double temps[16];
        for (size_t i = 0; i < s.args.size(); ++i) {
          const Arg &a = s.args[i];
          switch (a.kind) {
          case Arg::Kind::Int: args[i].i = evalInt(a.expr); break;
          case Arg::Kind::Double: args[i].d = evalDouble(a.expr); break;
          case Arg::Kind::Null: args[i].p = nullptr; break;
          case Arg::Kind::Pointer: {
            int64_t idx = evalInt(a.expr);
            args[i].p = p_.buffers[size_t(a.buffer)].isInt
                            ? static_cast<void *>(static_cast<int64_t *>(buffers_[a.buffer]) + idx)
                            : static_cast<void *>(static_cast<double *>(buffers_[a.buffer]) + idx);
            break;
          }
          case Arg::Kind::TempPointer:
            temps[i] = evalDouble(a.expr);
            args[i].p = &temps[i];
            break;
          }
        }
        double r = s.kernel->invoke(args);
        if (s.result == Stmt::Result::Elbo)
          elbo += evalDouble(s.scale) * r;
        else if (s.result == Stmt::Result::Slot)
          static_cast<double *>(buffers_[s.buffer])[evalInt(s.index)] += evalDouble(s.scale) * r;
        else if (s.result == Stmt::Result::SlotProduct)
          static_cast<double *>(buffers_[s.buffer])[evalInt(s.index)] *= r;
        break;
      }
      }
    }
    return true;
  }

  const Plan &p_;
  std::vector<int64_t> vars_;
  void *const *buffers_ = nullptr;
};

} // namespace

std::unique_ptr<Engine> createInterpreter(const Plan &plan) { return std::make_unique<Interpreter>(plan); }

// ---- parallel loops -------------------------------------------------------------

/// Worker threads started once: a task is work(t) for t in [0, count), t
/// handed out by an atomic counter; the caller takes tasks too and returns
/// when all are done and no worker is still looking for one (so the next
/// task starts from a quiet pool).
///
/// A sweep runs several parallel loops a few milliseconds apart (LDA: the
/// topic update, its exponentials, the zero-fill, the documents, the sums),
/// and waking a sleeping thread costs tens of microseconds here: workers and
/// the caller spin for kSpin before they sleep, as OpenMP runtimes do.
namespace {
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
} // namespace

struct ParallelRunner::Pool {
  using Work = std::function<void(int64_t)>;
  static constexpr std::chrono::microseconds kSpin{200};
  explicit Pool(int workers) {
    for (int w = 0; w < workers; ++w)
      threads.emplace_back([this] { serve(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
      generation.fetch_add(1);
    }
    wake.notify_all();
    for (std::thread &t : threads)
      t.join();
  }
  size_t size() const { return threads.size(); }

  void run(int64_t count, const Work &work) {
    {
      std::unique_lock<std::mutex> lock(mutex);
      finished.wait(lock, [&] { return active.load() == 0; });
      task = &work;
      tasks = count;
      next.store(0);
      pending.store(count);
      generation.fetch_add(1);
    }
    wake.notify_all();
    take(work, count);
    auto done = [&] { return pending.load() == 0 && active.load() == 0; };
    spinUntil(done);
    std::unique_lock<std::mutex> lock(mutex);
    finished.wait(lock, done);
    task = nullptr;
  }

private:
  template <typename Ready> static void spinUntil(const Ready &ready) {
    auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 1; !ready(); ++i)
      if (i % 64 == 0 && std::chrono::steady_clock::now() > until)
        return;
      else
        cpuRelax();
  }
  void take(const Work &work, int64_t count) {
    for (int64_t t = next.fetch_add(1); t < count; t = next.fetch_add(1)) {
      work(t);
      if (pending.fetch_sub(1) == 1) {
        std::lock_guard<std::mutex> lock(mutex);
        finished.notify_all();
      }
    }
  }
  void serve() {
    uint64_t seen = 0;
    for (;;) {
      const Work *work = nullptr;
      int64_t count = 0;
      spinUntil([&] { return generation.load() != seen; });
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return generation.load() != seen; });
        seen = generation.load();
        if (stopping)
          return;
        if (!task)
          continue;
        work = task;
        count = tasks;
        active.fetch_add(1);
      }
      take(*work, count);
      std::lock_guard<std::mutex> lock(mutex);
      active.fetch_sub(1);
      finished.notify_all();
    }
  }

  std::vector<std::thread> threads;
  std::mutex mutex;
  std::condition_variable wake, finished;
  std::atomic<uint64_t> generation{0};
  bool stopping = false;
  std::atomic<int> active{0}; ///< workers inside take()
  const Work *task = nullptr;
  int64_t tasks = 0;
  std::atomic<int64_t> next{0}, pending{0};
};

ParallelRunner::ParallelRunner(const Plan &plan) : plan_(plan) {}
ParallelRunner::~ParallelRunner() = default;

void ParallelRunner::onPool(int64_t count, const std::function<void(int64_t)> &work) {
  // As many workers as the threads asked for (less one: the caller works
  // too); a smaller --threads after a larger one gets a smaller pool, so
  // that no idle worker wakes for every loop.
  const int64_t workers = std::max<int64_t>(threads, count) - 1;
  if (!pool_ || pool_->size() != size_t(workers))
    pool_ = std::make_unique<Pool>(int(workers));
  pool_->run(count, work);
}

std::vector<double> &ParallelRunner::storage(size_t thread, int32_t buffer) {
  if (storage_.size() <= thread) {
    storage_.resize(thread + 1);
    zeroed_.resize(thread + 1);
  }
  auto &perBuffer = storage_[thread];
  if (perBuffer.size() <= size_t(buffer)) {
    perBuffer.resize(size_t(buffer) + 1);
    zeroed_[thread].resize(size_t(buffer) + 1, 0);
  }
  std::vector<double> &s = perBuffer[size_t(buffer)];
  s.resize(size_t(plan_.buffers[size_t(buffer)].size));
  return s;
}

std::vector<int64_t> ParallelRunner::chunkStarts(const int64_t *costs, int64_t n, int64_t chunks) {
  std::vector<int64_t> starts(static_cast<size_t>(chunks + 1), n);
  for (int64_t t = 0; t < chunks; ++t) {
    if (!costs || costs[n] <= 0) {
      starts[size_t(t)] = n * t / chunks;
      continue;
    }
    // The element boundary whose cumulative cost is nearest chunk t's share.
    const int64_t share = static_cast<int64_t>(static_cast<__int128>(costs[n]) * t / chunks);
    int64_t e = std::lower_bound(costs, costs + n + 1, share) - costs;
    if (e > 0 && share - costs[e - 1] < costs[e] - share)
      --e;
    starts[size_t(t)] = std::max(e, t > 0 ? starts[size_t(t - 1)] : int64_t(0));
  }
  return starts;
}

double ParallelRunner::run(const Stmt &loop, void *const *buffers, int64_t n, const Body &body, bool concurrent) {
  bool distributed = loop.distributed && comm && comm->size() > 1;
  int64_t chunks = std::min<int64_t>(threads, n);
  if (chunks <= 1 && !distributed)
    return body(buffers, 0, n);
  chunks = std::max<int64_t>(chunks, 0); // a process without elements still joins the sum
  // Without processes to sum over, chunk 0 works on the shared buffers, as
  // one thread does; every other chunk on its own copies of the rows and on
  // zeroed copies of the sums (zeroed by its thread), added afterwards.
  bool direct = !distributed;
  std::vector<std::vector<void *>> tables(size_t(chunks),
                                          std::vector<void *>(buffers, buffers + plan_.buffers.size()));
  for (int64_t t = direct ? 1 : 0; t < chunks; ++t) {
    for (int32_t b : loop.privates) {
      tables[size_t(t)][size_t(b)] = storage(size_t(t), b).data();
      zeroed_[size_t(t)][size_t(b)] = 0;
    }
    for (int32_t b : loop.reductions)
      tables[size_t(t)][size_t(b)] = storage(size_t(t), b).data();
  }
  // The plan's costs, when they describe this n (a plan's bound data do).
  const bool costed = loop.costs >= 0 && plan_.buffers[size_t(loop.costs)].size == n + 1;
  const std::vector<int64_t> starts =
      chunkStarts(costed ? static_cast<const int64_t *>(buffers[loop.costs]) : nullptr, n, chunks);
  std::vector<double> elbo(size_t(chunks), 0.0), seconds(size_t(chunks), 0.0);
  auto chunk = [&](int64_t t) {
    auto start = std::chrono::steady_clock::now();
    if (!(direct && t == 0))
      for (int32_t b : loop.reductions) {
        std::vector<double> &s = storage_[size_t(t)][size_t(b)];
        if (!zeroed_[size_t(t)][size_t(b)])
          std::fill(s.begin(), s.end(), 0.0);
        zeroed_[size_t(t)][size_t(b)] = 0;
      }
    elbo[size_t(t)] = body(tables[size_t(t)].data(), starts[size_t(t)], starts[size_t(t + 1)]);
    seconds[size_t(t)] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Threads only for a loop whose last run had the work to pay for them (the
  // first run: on threads); the same chunks either way.
  auto last = lastWork_.find(&loop);
  bool threaded = concurrent && (last == lastWork_.end() || last->second >= kConcurrentWorkSeconds);
  auto onThreads = [&](const std::function<void(int64_t)> &work) {
    if (chunks == 0)
      return;
    if (!threaded) {
      for (int64_t t = 0; t < chunks; ++t)
        work(t);
      return;
    }
    onPool(chunks, work);
  };
  onThreads(chunk);
  double work = 0;
  for (double w : seconds)
    work += w;
  lastWork_[&loop] = work;
  if (direct) {
    // The copies' sums into the shared buffers, in chunk order for every
    // entry; each thread adds one slice of the entries, and zeroes the
    // copies' entries it read (in cache now), so that the next chunk finds
    // its copy zeroed (LDA K = 100: 8 MB less to fill on a chunk's thread).
    size_t entries = 0;
    for (int32_t b : loop.reductions)
      entries += size_t(plan_.buffers[size_t(b)].size);
    threaded = threaded && entries >= (size_t(1) << 16);
    onThreads([&](int64_t slice) {
      for (int32_t b : loop.reductions) {
        double *shared = static_cast<double *>(buffers[b]);
        size_t size = size_t(plan_.buffers[size_t(b)].size);
        size_t lo = size * size_t(slice) / size_t(chunks), hi = size * size_t(slice + 1) / size_t(chunks);
        for (int64_t t = 1; t < chunks; ++t) {
          double *c = storage_[size_t(t)][size_t(b)].data();
          for (size_t i = lo; i < hi; ++i) {
            shared[i] += c[i];
            c[i] = 0.0;
          }
        }
      }
    });
    for (int64_t t = 1; t < chunks; ++t)
      for (int32_t b : loop.reductions)
        zeroed_[size_t(t)][size_t(b)] = 1;
    double total = 0;
    for (int64_t t = 0; t < chunks; ++t)
      total += elbo[size_t(t)];
    return total;
  }
  // This process's sums (chunks in order), then the sum over the processes.
  size_t width = 1;
  for (int32_t b : loop.reductions)
    width += size_t(plan_.buffers[size_t(b)].size);
  std::vector<double> sums(width, 0.0);
  for (int64_t t = 0; t < chunks; ++t) {
    size_t at = 0;
    for (int32_t b : loop.reductions) {
      const std::vector<double> &s = storage_[size_t(t)][size_t(b)];
      for (size_t i = 0; i < s.size(); ++i)
        sums[at + i] += s[i];
      at += s.size();
    }
    sums[at] += elbo[size_t(t)];
  }
  comm->sumInRankOrder(sums.data(), sums.size());
  size_t at = 0;
  for (int32_t b : loop.reductions) {
    double *shared = static_cast<double *>(buffers[b]);
    for (int64_t i = 0; i < plan_.buffers[size_t(b)].size; ++i)
      shared[i] += sums[at + size_t(i)];
    at += size_t(plan_.buffers[size_t(b)].size);
  }
  return sums[at];
}

extern "C" double ppc_parallel_loop(void *runner, int64_t loop, void *const *buffers, int64_t n,
                                    double (*body)(void *const *, int64_t, int64_t)) {
  auto *r = static_cast<ParallelRunner *>(runner);
  return r->run(*r->loops[size_t(loop)], buffers, n, body, /*concurrent=*/true);
}

// ---- the state and the iterations -------------------------------------------

Inference::Inference(const Plan &plan) : plan_(plan) {
  doubles_.resize(plan.buffers.size());
  ints_.resize(plan.buffers.size());
  bases_.resize(plan.buffers.size());
}

void Inference::initialize(Engine &engine, uint64_t seed) {
  // Buffers filled at bind time (data, plate sizes, constants) are only
  // read by the plan: the state points at the plan's copy (one copy of the
  // data in memory, not two).
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const Buffer &buf = plan_.buffers[b];
    if (buf.isInt) {
      if (!buf.ints.empty()) {
        bases_[b] = const_cast<int64_t *>(buf.ints.data());
        continue;
      }
      ints_[b].assign(size_t(buf.size), 0);
      bases_[b] = ints_[b].data();
    } else {
      if (!buf.doubles.empty()) {
        bases_[b] = const_cast<double *>(buf.doubles.data());
        continue;
      }
      doubles_[b].assign(size_t(buf.size), 0.0);
      bases_[b] = doubles_[b].data();
    }
  }
  // The init block draws the gate conditions' random initial posteriors.
  if (plan_.seedBuffer >= 0)
    ints_[size_t(plan_.seedBuffer)][0] = static_cast<int64_t>(seed);
  if (plan_.localRestart >= 0)
    doubles_[size_t(plan_.localRestart)][0] = 1.0;
  engine.runBlock(Plan::Init, bases_.data());
}

double Inference::iterate(Engine &engine) {
  elboInIteration_ = engine.runBlock(Plan::Iteration, bases_.data());
  return elbo(engine);
}

void Inference::finish(Engine &engine) { engine.runBlock(Plan::Final, bases_.data()); }

double Inference::elbo(Engine &engine) { return elboInIteration_ + engine.runBlock(Plan::Elbo, bases_.data()); }

bool Inference::run(Engine &engine, const RunOptions &opts, rt::RunSummary &summary,
                    const std::function<void(const IterationReport &)> &progress, std::string &error) {
  auto start = std::chrono::steady_clock::now();
  double previous = summary.elbo.empty() ? 0 : summary.elbo.back();
  double earlier = summary.time.empty() ? 0 : summary.time.back(); // seconds before a resumed run
  for (int64_t it = summary.iterations + 1; it <= opts.maxIterations; ++it) {
    double value = iterate(engine);
    double seconds = earlier + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    IterationReport r;
    r.iteration = it;
    r.elbo = value;
    r.seconds = seconds;
    r.change = it == 1 ? 0 : (value - previous) / std::max(std::abs(value), 1e-300);
    summary.elbo.push_back(value);
    summary.time.push_back(seconds);
    summary.iterations = it;
    if (progress)
      progress(r);
    if (!std::isfinite(value)) {
      error = "the ELBO is not finite at iteration " + std::to_string(it) +
              " (a posterior became improper: check priors and data)";
      return false;
    }
    if (it > 1 && r.change < -opts.decreaseTolerance) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "the ELBO decreased at iteration %lld: %.17g -> %.17g (relative %.3g); variational message "
                    "passing never decreases it, so this is a bug in ppc",
                    static_cast<long long>(it), previous, value, r.change);
      error = buf;
      return false;
    }
    if (it > 1 && std::abs(r.change) < opts.tolerance) {
      summary.converged = true;
      previous = value;
      break;
    }
    previous = value;
    if (opts.interrupt && opts.interrupt->load())
      break;
    if (it > 1 && plan_.localRestart >= 0 && std::abs(r.change) < opts.restartUntil)
      doubles_[size_t(plan_.localRestart)][0] = 0.0; // from now on, strict coordinate ascent
    if (opts.afterIteration && !opts.afterIteration(summary, error))
      return false;
  }
  finish(engine);
  summary.inferenceSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

namespace {
constexpr char kStateMagic[8] = {'P', 'P', 'C', 'S', 'T', 'A', 'T', '1'};
} // namespace

std::string Inference::saveState() const {
  std::string out(kStateMagic, sizeof kStateMagic);
  auto put = [&](const void *p, size_t n) { out.append(static_cast<const char *>(p), n); };
  put(&elboInIteration_, sizeof elboInIteration_);
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    // Every buffer, in order, so that a state fits only its plan; memos
    // (restored empty) as their size alone.
    uint64_t n = plan_.buffers[b].isInt ? ints_[b].size() : doubles_[b].size();
    if (plan_.buffers[b].memo) {
      put(&n, sizeof n);
      continue;
    }
    put(&n, sizeof n);
    if (plan_.buffers[b].isInt)
      put(ints_[b].data(), n * sizeof(int64_t));
    else
      put(doubles_[b].data(), n * sizeof(double));
  }
  return out;
}

bool Inference::restoreState(const std::string &bytes, std::string &error) {
  size_t at = 0;
  auto get = [&](void *p, size_t n) {
    if (bytes.size() - at < n)
      return false;
    std::memcpy(p, bytes.data() + at, n);
    at += n;
    return true;
  };
  char magic[sizeof kStateMagic];
  double elbo = 0;
  if (!get(magic, sizeof magic) || std::memcmp(magic, kStateMagic, sizeof magic) != 0 || !get(&elbo, sizeof elbo)) {
    error = "not a ppc state (a damaged checkpoint?)";
    return false;
  }
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    bool isInt = plan_.buffers[b].isInt;
    uint64_t n = 0;
    uint64_t expected = isInt ? ints_[b].size() : doubles_[b].size();
    if (!get(&n, sizeof n) || n != expected) {
      error = "the state does not fit this plan (buffer " + plan_.buffers[b].name + ")";
      return false;
    }
    if (plan_.buffers[b].memo)
      continue; // not saved: emptied below
    if (!(isInt ? get(ints_[b].data(), n * sizeof(int64_t)) : get(doubles_[b].data(), n * sizeof(double)))) {
      error = "the state is truncated (buffer " + plan_.buffers[b].name + ")";
      return false;
    }
  }
  if (at != bytes.size()) {
    error = "the state does not fit this plan (extra bytes)";
    return false;
  }
  for (size_t b = 0; b < plan_.buffers.size(); ++b)
    if (plan_.buffers[b].memo)
      std::fill(doubles_[b].begin(), doubles_[b].end(), 0.0);
  elboInIteration_ = elbo;
  return true;
}

std::vector<std::string> Inference::adoptMatchingState(const Inference &old) {
  auto isState = [](const Buffer &b) { return b.doubles.empty() && b.ints.empty() && !b.memo; };
  std::map<std::string, size_t> byName;
  for (size_t b = 0; b < old.plan_.buffers.size(); ++b)
    if (isState(old.plan_.buffers[b]))
      byName[old.plan_.buffers[b].name] = b;
  std::vector<bool> copied(plan_.buffers.size(), false);
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const Buffer &buf = plan_.buffers[b];
    auto it = byName.find(buf.name);
    if (!isState(buf) || it == byName.end())
      continue;
    const Buffer &from = old.plan_.buffers[it->second];
    if (from.isInt != buf.isInt || from.size != buf.size)
      continue;
    if (buf.isInt)
      ints_[b] = old.ints_[it->second];
    else
      doubles_[b] = old.doubles_[it->second];
    bases_[b] = buf.isInt ? static_cast<void *>(ints_[b].data()) : static_cast<void *>(doubles_[b].data());
    copied[b] = true;
  }
  // Memos describe this plan's own earlier calls (its init block may have
  // filled them from other values than those adopted): start them empty.
  for (size_t b = 0; b < plan_.buffers.size(); ++b)
    if (plan_.buffers[b].memo)
      std::fill(doubles_[b].begin(), doubles_[b].end(), 0.0);
  elboInIteration_ = 0;
  std::vector<std::string> kept;
  for (const Posterior &post : plan_.posteriors)
    if (!post.scratch && copied[size_t(post.eta)] && copied[size_t(post.stats)])
      kept.push_back(post.variable->name);
  return kept;
}

std::vector<rt::PosteriorTable> Inference::posteriors() const {
  std::vector<rt::PosteriorTable> out;
  for (const Posterior &post : plan_.posteriors) {
    if (post.scratch)
      continue; // rows of the last element only
    rt::PosteriorTable t;
    t.variable = post.variable->name;
    t.family = post.family;
    t.dimension = post.dimension;
    const std::vector<double> &eta = doubles_[size_t(post.eta)], &stats = doubles_[size_t(post.stats)];
    for (int64_t e = 0; e < post.elements; ++e) {
      const double *n = eta.data() + e * post.width, *s = stats.data() + e * post.width;
      switch (post.family) {
      case Family::Dirichlet:
      case Family::Beta:
        for (int64_t k = 0; k < post.width; ++k)
          t.values.push_back(n[k] + 1);
        break;
      case Family::Categorical:
      case Family::Bernoulli:
        for (int64_t k = 0; k < post.width; ++k)
          t.values.push_back(s[k]);
        break;
      case Family::Gamma:
        t.values.push_back(n[1] + 1);
        t.values.push_back(-n[0]);
        break;
      case Family::Gaussian: {
        double tau = -2 * n[1];
        t.values.push_back(n[0] / tau);
        t.values.push_back(1 / tau);
        break;
      }
      case Family::Poisson: t.values.push_back(std::exp(n[0])); break;
      case Family::MvGaussian: { // from the statistics (E x, E x x^T)
        const int64_t D = post.dimension;
        for (int64_t i = 0; i < D; ++i)
          t.values.push_back(s[i]);
        for (int64_t i = 0; i < D; ++i)
          for (int64_t j = 0; j < D; ++j)
            t.values.push_back(s[D + i * D + j] - s[i] * s[j]);
        break;
      }
      case Family::Wishart: { // dof = 2 eta2 + D + 1, scale = E[L] / dof
        const int64_t D = post.dimension;
        const double dof = 2 * n[D * D] + double(D + 1);
        t.values.push_back(dof);
        for (int64_t i = 0; i < D * D; ++i)
          t.values.push_back(s[i] / dof);
        break;
      }
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

} // namespace ppc::codegen
