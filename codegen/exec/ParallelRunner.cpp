//===- codegen/exec/ParallelRunner.cpp - parallel loops -------------------===//
//
// See ParallelRunner in Executor.h: deterministic chunks, per-thread copies
// of private rows and sums, added in chunk order; a pool of threads started
// once.
//
//===----------------------------------------------------------------------===//
#include "codegen/exec/Executor.h"

#include "codegen/exec/Distributed.h"
#include "codegen/exec/Stochastic.h"
#include "runtime/FloatEnvironment.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace ppc::codegen {

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
      control = rt::floatControl(); // the workers compute as the caller does (FloatEnvironment.h)
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
      uint32_t taskControl = 0;
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
        taskControl = control;
        active.fetch_add(1);
      }
      {
        rt::ScopedFloatControl mode(taskControl);
        take(*work, count);
      }
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
  uint32_t control = 0;       ///< the task's floating-point control word, set under the mutex
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
  if (!stochastic || !loop.distributed)
    return runChunks(loop, buffers, n, body, concurrent);
  stochastic->before(loop, buffers);
  return stochastic->after(loop, buffers, runChunks(loop, buffers, n, body, concurrent));
}

double ParallelRunner::runChunks(const Stmt &loop, void *const *buffers, int64_t n, const Body &body,
                                 bool concurrent) {
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

} // namespace ppc::codegen
