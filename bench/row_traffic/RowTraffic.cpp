//===- bench/row_traffic/RowTraffic.cpp - LDA's row traffic, no arithmetic ---===//
//
// The memory floor of LDA's documents' loop (bench/lda_sweep.py prints it
// next to ppc's sweep): the same rows in the same order as ppc's nested
// schedule with one local sweep in the documents' order
// (--disable-plan-opt=block-rows), without the arithmetic. Per document, a
// first pass reads the K-wide row of each token's word in a V x K table (the
// topics' exponentials); a second pass reads that row again and adds it to
// the word's row of a second V x K table (the topic counts, a private copy
// per thread, as ppc's threads have), scaled by the document's own row.
// Rows of tables of 4 MiB or more are prefetched about 4 KB ahead (5 rows
// of 800 bytes), as ppc's RowPrefetch does. Threads take contiguous
// shares of the documents, as ppc's chunks do. Not replayed: the zeroing
// of each thread's copy and the sum of the copies after the loop, which
// ppc also pays on two threads.
//
//   ppc_row_traffic CSV K THREADS [REPEATS [blocked]]
//   (CSV: doc,word,count sorted by doc, then by word within a document)
//
// Prints the median milliseconds of one pass over the corpus. `blocked`
// replays the order of codegen/transforms/RowBlocking.cpp (ppc's default): each
// thread takes its documents in batches of 256, each with its own row (the
// sums of the first pass, read by the second), and walks a batch's tokens
// by blocks of 256 words (ppc's blocks are 512 words; the replay, with
// less per-token work, was no faster with them), each pass in turn.
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Corpus {
  std::vector<int64_t> words;   ///< per token, grouped by document
  std::vector<int64_t> offsets; ///< document d: tokens [offsets[d], offsets[d+1])
  int64_t vocabulary = 0;
};

bool readCorpus(const char *path, Corpus &c) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line))
    return false;
  int64_t lastDoc = -1, lastWord = -1;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    int64_t doc = 0, word = 0;
    char comma = 0;
    if (!(fields >> doc >> comma >> word) || doc < lastDoc || word < 0 || (doc == lastDoc && word <= lastWord))
      return false;
    if (doc != lastDoc)
      c.offsets.push_back(int64_t(c.words.size()));
    lastDoc = doc;
    lastWord = word;
    c.words.push_back(word);
    c.vocabulary = std::max(c.vocabulary, word + 1);
  }
  c.offsets.push_back(int64_t(c.words.size()));
  return !c.words.empty();
}

/// RowPrefetch's rule: tables of 4 MiB or more, about 4 KB ahead.
int64_t prefetchDistance(const Corpus &c, int64_t k) {
  if (c.vocabulary * k * int64_t(sizeof(double)) < (int64_t(4) << 20))
    return 0;
  return std::clamp<int64_t>(4096 / (k * int64_t(sizeof(double))), 2, 16);
}

void prefetchRow(const double *row, int64_t k) {
  const uintptr_t end = reinterpret_cast<uintptr_t>(row + k);
  for (uintptr_t line = reinterpret_cast<uintptr_t>(row) & ~uintptr_t(63); line < end; line += 64)
    __builtin_prefetch(reinterpret_cast<const void *>(line));
}

/// Documents [begin, end): both passes; returns a sum so that the reads stay.
double documents(const Corpus &c, int64_t k, const double *table, double *counts, int64_t begin, int64_t end) {
  const int64_t ahead = prefetchDistance(c, k);
  std::vector<double> document(size_t(k), 1.0); // as ppc's document row
  double *own = document.data();
  for (int64_t d = begin; d < end; ++d) {
    const int64_t lo = c.offsets[size_t(d)], hi = c.offsets[size_t(d) + 1];
    for (int64_t i = lo; i < hi; ++i) {
      if (ahead && i + ahead < hi)
        prefetchRow(table + c.words[size_t(i + ahead)] * k, k);
      const double *row = table + c.words[size_t(i)] * k;
      for (int64_t j = 0; j < k; ++j)
        own[j] += row[j];
    }
    for (int64_t i = lo; i < hi; ++i) {
      if (ahead && i + ahead < hi) {
        prefetchRow(table + c.words[size_t(i + ahead)] * k, k);
        prefetchRow(counts + c.words[size_t(i + ahead)] * k, k);
      }
      const double *row = table + c.words[size_t(i)] * k;
      double *sum = counts + c.words[size_t(i)] * k;
      for (int64_t j = 0; j < k; ++j)
        sum[j] += row[j] * own[j];
    }
  }
  double sink = 0;
  for (double a : document)
    sink += a;
  return sink;
}

constexpr int64_t kBatch = 256, kWordBlock = 256;

/// The same rows as documents(), by batches of documents and blocks of words.
double blocked(const Corpus &c, int64_t k, const double *table, double *counts, int64_t begin, int64_t end) {
  std::vector<double> batchRows(size_t(kBatch * k), 1.0); // one row per document of a batch
  std::vector<int64_t> cursor(static_cast<size_t>(kBatch));
  for (int64_t b0 = begin; b0 < end; b0 += kBatch) {
    const int64_t b1 = std::min(end, b0 + kBatch);
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t d = b0; d < b1; ++d)
        cursor[size_t(d - b0)] = c.offsets[size_t(d)];
      for (int64_t w1 = kWordBlock; w1 < c.vocabulary + kWordBlock; w1 += kWordBlock)
        for (int64_t d = b0; d < b1; ++d) {
          double *own = batchRows.data() + (d - b0) * k;
          int64_t i = cursor[size_t(d - b0)];
          for (const int64_t hi = c.offsets[size_t(d) + 1]; i < hi && c.words[size_t(i)] < w1; ++i) {
            const double *row = table + c.words[size_t(i)] * k;
            if (pass == 0) {
              for (int64_t j = 0; j < k; ++j)
                own[j] += row[j];
            } else {
              double *sum = counts + c.words[size_t(i)] * k;
              for (int64_t j = 0; j < k; ++j)
                sum[j] += row[j] * own[j];
            }
          }
          cursor[size_t(d - b0)] = i;
        }
    }
  }
  double sink = 0;
  for (double a : batchRows)
    sink += a;
  return sink;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s CSV K THREADS [REPEATS [blocked]]\n", argv[0]);
    return 2;
  }
  Corpus corpus;
  if (!readCorpus(argv[1], corpus)) {
    std::fprintf(stderr, "%s: not a doc,word,count CSV sorted by doc and word\n", argv[1]);
    return 1;
  }
  const int64_t k = std::atoll(argv[2]);
  const int threads = std::atoi(argv[3]);
  const int repeats = argc > 4 ? std::atoi(argv[4]) : 9;
  const bool inBlocks = argc > 5 && std::string(argv[5]) == "blocked";
  auto run = inBlocks ? blocked : documents;
  if (k <= 0 || threads <= 0 || repeats <= 0 || (argc > 5 && !inBlocks)) {
    std::fprintf(stderr, "K, THREADS and REPEATS must be positive; the fifth argument, if any, `blocked`\n");
    return 2;
  }
  const int64_t docs = int64_t(corpus.offsets.size()) - 1;
  std::vector<double> table(size_t(corpus.vocabulary * k), 1.0 / double(k));
  std::vector<std::vector<double>> counts(size_t(threads), std::vector<double>(size_t(corpus.vocabulary * k), 0.0));
  std::vector<double> millis, sinks(static_cast<size_t>(threads), 0.0);
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t)
      pool.emplace_back([&, t] {
        sinks[size_t(t)] = run(corpus, k, table.data(), counts[size_t(t)].data(), docs * t / threads,
                                     docs * (t + 1) / threads);
      });
    sinks[0] = run(corpus, k, table.data(), counts[0].data(), 0, docs / threads);
    for (std::thread &t : pool)
      t.join();
    millis.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(millis.begin(), millis.end());
  double sink = 0;
  for (double s : sinks)
    sink += s;
  std::printf("%.3f\n", millis[millis.size() / 2] + (sink < 0 ? 1 : 0));
  return 0;
}
