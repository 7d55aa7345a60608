//===- test/unit/FloatEnvironmentTest.cpp - subnormals during inference ---===//
//
// runtime/FloatEnvironment.h: inference's control word flushes subnormal
// numbers (or keeps them with setSubnormals(Keep)), a scope restores the
// thread's own, and a parallel loop's chunks on the pool's workers compute
// in their caller's mode, also when it changes between loops (the workers
// outlive a loop).
//
//===----------------------------------------------------------------------===//
#include "codegen/exec/Executor.h"
#include "runtime/FloatEnvironment.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace ppc {
namespace {

/// 2^-1000 * 2^-40: a subnormal result, or 0 where subnormals are flushed.
bool flushes() {
  volatile double a = 0x1p-1000, b = 0x1p-40;
  volatile double product = a * b;
  return product == 0.0;
}

#if defined(__x86_64__)
TEST(FloatEnvironment, ModeNames) {
  EXPECT_EQ(rt::subnormalsName(rt::Subnormals::Flush), "flush");
  EXPECT_EQ(rt::subnormalsName(rt::Subnormals::Keep), "keep");
  EXPECT_EQ(rt::subnormalsFromName("keep"), rt::Subnormals::Keep);
  EXPECT_EQ(rt::subnormalsFromName("flush"), rt::Subnormals::Flush);
  EXPECT_EQ(rt::subnormalsFromName("sometimes"), std::nullopt);
}

TEST(FloatEnvironment, InferenceFlushesSubnormalsAndTheScopeRestores) {
  ASSERT_FALSE(flushes()); // the process's default: IEEE gradual underflow
  ASSERT_EQ(rt::subnormals(), rt::Subnormals::Flush);
  {
    rt::ScopedFloatControl mode(rt::inferenceFloatControl());
    EXPECT_TRUE(flushes());
    // A subnormal input counts as 0 (DAZ): its product with 2^60 too.
    volatile double tiny = 0x1p-1040, big = 0x1p60;
    EXPECT_EQ(tiny * big, 0.0);
  }
  EXPECT_FALSE(flushes());
  const uint32_t flushing = rt::inferenceFloatControl();
  rt::setSubnormals(rt::Subnormals::Keep);
  {
    rt::ScopedFloatControl outer(flushing);
    ASSERT_TRUE(flushes());
    rt::ScopedFloatControl mode(rt::inferenceFloatControl()); // keep clears what the thread had
    EXPECT_FALSE(flushes());
  }
  rt::setSubnormals(rt::Subnormals::Flush);
  EXPECT_FALSE(flushes());
}

TEST(FloatEnvironment, ParallelChunksComputeInTheCallersMode) {
  codegen::Plan plan;
  codegen::Stmt loop;
  loop.kind = codegen::Stmt::Kind::Loop;
  loop.parallel = true;
  codegen::ParallelRunner runner(plan);
  runner.threads = 4;
  // Each chunk notes its thread and whether it flushed; a millisecond of
  // work keeps the loop on the pool's threads (ParallelRunner's choice).
  std::mutex m;
  std::set<std::thread::id> ids;
  int flushed = 0, kept = 0;
  auto body = [&](void *const *, int64_t, int64_t) {
    const bool f = flushes();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
    while (std::chrono::steady_clock::now() < until) {
    }
    std::lock_guard<std::mutex> lock(m);
    ids.insert(std::this_thread::get_id());
    (f ? flushed : kept) += 1;
    return 0.0;
  };
  const uint32_t own = rt::floatControl(), flushing = rt::inferenceFloatControl();
  ASSERT_NE(own, flushing);
  for (int round = 0; round < 4; ++round) {
    const bool flush = round % 2 == 0; // the pool starts in one mode and serves the other
    rt::ScopedFloatControl mode(flush ? flushing : own);
    flushed = kept = 0;
    runner.run(loop, nullptr, 4, body, /*concurrent=*/true);
    EXPECT_EQ(flush ? flushed : kept, 4) << "round " << round;
  }
  EXPECT_GT(ids.size(), 1u) << "the chunks never left the calling thread: the test shows nothing";
}
#else
// Elsewhere inference keeps IEEE gradual underflow (FloatEnvironment.h).
TEST(FloatEnvironment, OtherArchitecturesKeepSubnormals) {
  rt::ScopedFloatControl mode(rt::inferenceFloatControl());
  EXPECT_FALSE(flushes());
}
#endif

} // namespace
} // namespace ppc
