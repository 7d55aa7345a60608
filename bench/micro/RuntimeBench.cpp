// Micro-benchmarks of the runtime's hot kernels. Items processed are elements
// (slice kernels) or token x topic pairs (LDA), so Google Benchmark's
// items_per_second / 1e9 is the throughput in elements per nanosecond.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/Operators.h"
#include "runtime/Special.h"
#include "runtime/Symbols.h"
#include "runtime/SymbolTable.h"
#include "runtime/VectorIsa.h"

namespace {

std::vector<double> uniformVector(int64_t n, double lo, double hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(rng);
  return v;
}

/// The copy of row kernel `name` for the vector ISA level `level` (what
/// `ppc --cpu` runs: an AVX-512 host measures its AVX2 path too), with the
/// level's name as the benchmark's label.
template <class Fn>
Fn rowKernel(benchmark::State& state, const char* name, int64_t level) {
  const ppc::rt::RuntimeSymbol* symbol = ppc::rt::findRuntimeKernel(name);
  if (!symbol || !symbol->clones[level]) {
    state.SkipWithError("no copy of the kernel for this level");
    return nullptr;
  }
  state.SetLabel(std::string(ppc::rt::describe(ppc::rt::VectorIsa(level))));
  return reinterpret_cast<Fn>(symbol->clones[level]);
}

/// Arguments {size, level} for each size and every vector ISA level this CPU runs.
template <int64_t... Sizes>
void everyIsa(benchmark::internal::Benchmark* b) {
  for (int64_t n : {Sizes...})
    for (int level = 0; level <= int(ppc::rt::hostVectorIsa()); ++level)
      b->Args({n, level});
}

using SliceKernel = void (*)(int64_t, const double*, double*);

void sliceBench(benchmark::State& state, const char* name, double lo, double hi) {
  const auto kernel = rowKernel<SliceKernel>(state, name, state.range(1));
  if (!kernel)
    return;
  const int64_t n = state.range(0);
  const std::vector<double> x = uniformVector(n, lo, hi, 1);
  std::vector<double> out(static_cast<size_t>(n));
  for (auto _ : state) {
    kernel(n, x.data(), out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Digamma(benchmark::State& s) { sliceBench(s, "ppc_digamma_n", 0.01, 100.0); }
void BM_Lgamma(benchmark::State& s) { sliceBench(s, "ppc_lgamma_n", 0.01, 100.0); }
void BM_Exp(benchmark::State& s) { sliceBench(s, "ppc_exp_n", -30.0, 30.0); }
void BM_Log(benchmark::State& s) { sliceBench(s, "ppc_log_n", 1e-5, 1e5); }
BENCHMARK(BM_Digamma)->Apply(everyIsa<4096>);
BENCHMARK(BM_Lgamma)->Apply(everyIsa<4096>);
BENCHMARK(BM_Exp)->Apply(everyIsa<4096>);
BENCHMARK(BM_Log)->Apply(everyIsa<4096>);

// One LDA token update: softmax of K log-potentials plus two weighted
// accumulations. Items = K per token.
void BM_LdaToken(benchmark::State& state) {
  const int64_t K = state.range(0);
  const std::vector<double> et = uniformVector(K, -6.0, -0.5, 2);
  const std::vector<double> ep = uniformVector(K, -12.0, -3.0, 3);
  std::vector<double> r(K), dt(K, 0.0), dp(K, 0.0);
  double total = 0.0;
  for (auto _ : state) {
    total += ppc_lda_token(K, et.data(), ep.data(), 1.0, r.data(), dt.data(), dp.data());
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(total);
  state.SetItemsProcessed(state.iterations() * K);
}
BENCHMARK(BM_LdaToken)->Arg(20)->Arg(100);

// A document of 200 distinct words over a vocabulary of 10000 (phi statistics
// V x K = 1.6 MB at K = 20), through ppc_lda_doc. Items = words x K.
void BM_LdaDoc(benchmark::State& state) {
  const int64_t K = state.range(0), V = 10000, n = 200;
  const std::vector<double> et = uniformVector(K, -6.0, -0.5, 4);
  const std::vector<double> ep = uniformVector(V * K, -12.0, -3.0, 5);
  std::vector<double> dp(static_cast<size_t>(V * K), 0.0), dt(K, 0.0), r(K);
  std::mt19937_64 rng(6);
  std::uniform_int_distribution<int64_t> word(0, V - 1);
  std::vector<int64_t> words(n);
  for (auto& w : words) w = word(rng);
  const std::vector<double> counts = uniformVector(n, 1.0, 4.0, 7);
  double total = 0.0;
  for (auto _ : state) {
    total += ppc_lda_doc(n, K, words.data(), counts.data(), et.data(), ep.data(), r.data(), dt.data(), dp.data());
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(total);
  state.SetItemsProcessed(state.iterations() * n * K);
}
BENCHMARK(BM_LdaDoc)->Arg(20)->Arg(100);

// One document's exponential statistics per local sweep (LDA, K topics):
// ppc_dirichlet_stats_n then ppc_exp_shifted_n, against
// ppc_dirichlet_exp_stats (codegen/transforms/DeferStats.cpp). Items = rows.
void BM_DocStatsThenExp(benchmark::State& state) {
  const int64_t K = state.range(0), rows = 256;
  const std::vector<double> eta = uniformVector(K * rows, -0.9, 60.0, 9);
  std::vector<double> stats(static_cast<size_t>(K)), exp(static_cast<size_t>(K));
  double shift = 0;
  for (auto _ : state)
    for (int64_t r = 0; r < rows; ++r) {
      ppc_dirichlet_stats_n(1, K, eta.data() + r * K, stats.data());
      ppc_exp_shifted_n(K, stats.data(), exp.data(), &shift);
      benchmark::DoNotOptimize(exp.data());
      benchmark::ClobberMemory();
    }
  state.SetItemsProcessed(state.iterations() * rows);
}
BENCHMARK(BM_DocStatsThenExp)->Arg(20)->Arg(100);

void BM_DocExpStats(benchmark::State& state) {
  const auto expStats =
      rowKernel<void (*)(int64_t, const double*, double*, double*)>(state, "ppc_dirichlet_exp_stats", state.range(1));
  if (!expStats)
    return;
  const int64_t K = state.range(0), rows = 256;
  const std::vector<double> eta = uniformVector(K * rows, -0.9, 60.0, 9);
  std::vector<double> exp(static_cast<size_t>(K));
  double shift = 0;
  for (auto _ : state)
    for (int64_t r = 0; r < rows; ++r) {
      expStats(K, eta.data() + r * K, exp.data(), &shift);
      benchmark::DoNotOptimize(exp.data());
      benchmark::ClobberMemory();
    }
  state.SetItemsProcessed(state.iterations() * rows);
}
BENCHMARK(BM_DocExpStats)->Apply(everyIsa<20, 100>);

// The documents' rows of LDA's topic table copied out before their sweeps
// (ppc_gather_rows, codegen/transforms/LocalRows.cpp): AP's shape, 2246
// documents of 20 to 250 distinct words (Zipf-like) from a 10473 x K table,
// which is evicted from L2 before each pass, as an iteration's other work
// does. Items = rows.
void BM_GatherRows(benchmark::State& state) {
  const int64_t K = state.range(0), V = 10473, D = 2246;
  const std::vector<double> table = uniformVector(V * K, 0.0, 1.0, 10);
  std::vector<double> other(static_cast<size_t>(4 << 20) / sizeof(double), 1.0);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::vector<int64_t>> docs(static_cast<size_t>(D));
  int64_t rows = 0, longest = 0;
  for (auto& d : docs) {
    const int n = 20 + static_cast<int>(230 * u(rng));
    for (int i = 0; i < n; ++i) d.push_back(static_cast<int64_t>(V * u(rng) * u(rng)));
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    rows += static_cast<int64_t>(d.size());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(d.size()));
  }
  std::vector<double> dst(static_cast<size_t>(longest * K));
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t j = 0; j < other.size(); j += 8) other[j] += 1.0;
    benchmark::ClobberMemory();
    state.ResumeTiming();
    for (const auto& d : docs) {
      ppc_gather_rows(static_cast<int64_t>(d.size()), K, table.data(), d.data(), dst.data());
      benchmark::ClobberMemory();
    }
  }
  benchmark::DoNotOptimize(other.data());
  state.SetItemsProcessed(state.iterations() * rows);
}
BENCHMARK(BM_GatherRows)->Arg(20)->Arg(100);

// E[log phi] of a K x V topic matrix (digamma of every entry plus row sums).
void BM_DirichletElog(benchmark::State& state) {
  const auto elogRows =
      rowKernel<void (*)(int64_t, int64_t, const double*, double*)>(state, "ppc_dirichlet_elog_n", state.range(1));
  if (!elogRows)
    return;
  const int64_t K = 20, V = state.range(0);
  const std::vector<double> alpha = uniformVector(K * V, 0.01, 50.0, 8);
  std::vector<double> elog(static_cast<size_t>(K * V));
  for (auto _ : state) {
    elogRows(K, V, alpha.data(), elog.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * K * V);
}
BENCHMARK(BM_DirichletElog)->Apply(everyIsa<10000>);

// LDA's topics' refresh each iteration: the statistics of 20 rows of V
// entries with their log normalizers (ppc_dirichlet_stats_lognorm_n: a
// digamma and an lgamma per entry). Items = entries.
void BM_DirichletStatsLognorm(benchmark::State& state) {
  const auto statsLognorm = rowKernel<void (*)(int64_t, int64_t, const double*, double*, double*)>(
      state, "ppc_dirichlet_stats_lognorm_n", state.range(1));
  if (!statsLognorm)
    return;
  const int64_t K = 20, V = state.range(0);
  const std::vector<double> eta = uniformVector(K * V, -0.99, 300.0, 12);
  std::vector<double> stats(static_cast<size_t>(K * V)), lognorm(static_cast<size_t>(K));
  for (auto _ : state) {
    statsLognorm(K, V, eta.data(), stats.data(), lognorm.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * K * V);
}
BENCHMARK(BM_DirichletStatsLognorm)->Apply(everyIsa<10473>);

// The same rows' statistics alone (ppc_dirichlet_stats_n: a digamma per
// entry), as iterations that evaluate no ELBO refresh them. Items = entries.
void BM_DirichletStats(benchmark::State& state) {
  const auto statsRows = rowKernel<void (*)(int64_t, int64_t, const double*, double*)>(
      state, "ppc_dirichlet_stats_n", state.range(1));
  if (!statsRows)
    return;
  const int64_t K = 20, V = state.range(0);
  const std::vector<double> eta = uniformVector(K * V, -0.99, 300.0, 12);
  std::vector<double> stats(static_cast<size_t>(K * V));
  for (auto _ : state) {
    statsRows(K, V, eta.data(), stats.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * K * V);
}
BENCHMARK(BM_DirichletStats)->Apply(everyIsa<10473>);

}  // namespace

namespace {
// A Gaussian mixture's per-component posterior update at D = 64 (digits):
// the Cholesky factorization, inverse and log-determinant of an SPD matrix.
// Items = matrices.
void BM_SpdInverse(benchmark::State& state) {
  const int64_t D = state.range(0);
  std::vector<double> A(static_cast<size_t>(D * D)), inv(A.size()), scratch(A.size());
  const std::vector<double> B = uniformVector(D * D, -1.0, 1.0, 4);
  for (int64_t r = 0; r < D; ++r)
    for (int64_t c = 0; c < D; ++c) {
      double s = r == c ? double(D) : 0.0;
      for (int64_t k = 0; k < D; ++k) s += B[size_t(r * D + k)] * B[size_t(c * D + k)] / double(D);
      A[size_t(r * D + c)] = s;
    }
  double logdet = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ppc_spd_inverse_logdet(D, A.data(), inv.data(), &logdet, scratch.data()));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SpdInverse)->Arg(16)->Arg(64);
} // namespace
