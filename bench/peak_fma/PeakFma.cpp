//===- bench/peak_fma/PeakFma.cpp - the host's peak multiply-add rate -----===//
//
//   ppc_peak_fma [x86-64|x86-64-v3|x86-64-v4] [THREADS]
//
// Prints the double-precision multiply-adds per second (G/s) one core
// sustains with the vector ISA of the level given (default: the best this
// CPU has): 12 independent chains of fused multiply-adds (registers to spare on
// AVX2), more than the latency times the issue width of current cores, so the
// figure is the throughput limit. With THREADS, that many threads run the
// chains at once and the figure is their mean: a core's rate while the
// others are busy too, as in a run on that many threads. The bench scripts
// divide the multiply-adds of a model's iteration by it (the iteration's
// arithmetic floor), measured beside each run: this host's speed moves by
// 10-20% within minutes.
//
//===----------------------------------------------------------------------===//
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr long kIterations = 40'000'000;
constexpr int kChains = 12;

template <int W> struct Lanes {
  typedef double Vec __attribute__((vector_size(W * 8)));
};

template <int W> __attribute__((always_inline)) inline double rate() {
  typename Lanes<W>::Vec acc[kChains], x, y;
  for (int j = 0; j < W; ++j) {
    x[j] = 0.999999;
    y[j] = 1e-9;
  }
  for (auto &a : acc)
    a = x;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < kIterations; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = acc[c] * x + y;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double sink = 0;
  for (auto &a : acc)
    sink += a[0];
  if (sink == 42.0)
    std::puts("");
  return double(kIterations) * kChains * W / seconds / 1e9;
}

__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma"))) double rateAvx512() { return rate<8>(); }
__attribute__((target("avx2,fma"))) double rateAvx2() { return rate<4>(); }
double rateSse2() { return rate<2>(); }

} // namespace

int main(int argc, char **argv) {
  __builtin_cpu_init();
  std::string level = argc > 1 ? argv[1] : "";
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (level.empty())
    level = avx512 ? "x86-64-v4" : avx2 ? "x86-64-v3" : "x86-64";
  double (*rate)() = nullptr;
  if (level == "x86-64-v4" && avx512)
    rate = rateAvx512;
  else if (level == "x86-64-v3" && avx2)
    rate = rateAvx2;
  else if (level == "x86-64" || level == "x86-64-v2")
    rate = rateSse2;
  else {
    std::fprintf(stderr, "ppc_peak_fma: this CPU cannot run %s code\n", level.c_str());
    return 1;
  }
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  if (threads < 1 || threads > 1024) {
    std::fprintf(stderr, "ppc_peak_fma: THREADS must be 1 to 1024, not %s\n", argv[2]);
    return 1;
  }
  std::vector<double> rates(static_cast<size_t>(threads));
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t)
    others.emplace_back([&rates, rate, t] { rates[static_cast<size_t>(t)] = rate(); });
  rates[0] = rate();
  for (std::thread &t : others)
    t.join();
  double mean = 0;
  for (double r : rates)
    mean += r / threads;
  if (threads == 1)
    std::printf("%.1f G multiply-adds/s (%s, one core)\n", mean, level.c_str());
  else
    std::printf("%.1f G multiply-adds/s (%s, per core, %d at once)\n", mean, level.c_str(), threads);
  return 0;
}
