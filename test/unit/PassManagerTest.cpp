// The pass manager: pipelines by name, and analyses cached until a pass that
// does not preserve them runs.
#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/DependencyAnalysis.h"
#include "passes/PassManager.h"
#include "tools/Driver.h"

#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>

using namespace ppc;

namespace {
std::unique_ptr<ir::Module> twoCoins(DiagnosticEngine &d, std::string &src) {
  std::string err;
  src = *readFile(std::string(PPC_SOURCE_DIR) + "/examples/two_coins.ppl", err);
  d.setSource("two_coins.ppl", src);
  return compileModel(src, d);
}
} // namespace

TEST(PassManager, RejectsUnknownPassesAndEmptyNames) {
  passes::PassManager pm;
  std::string error;
  EXPECT_FALSE(pm.addPipeline("gate,nosuch", error));
  EXPECT_NE(error.find("unknown pass 'nosuch'"), std::string::npos);
  EXPECT_FALSE(pm.addPipeline("gate,,verify", error));
  EXPECT_TRUE(pm.addPipeline("", error));
}

TEST(PassManager, CachesTheDependencyGraphAcrossPassesThatPreserveIt) {
  std::string out, src;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine d("", "", os);
  auto m = twoCoins(d, src);
  ASSERT_TRUE(m) << out;
  passes::PassManager pm;
  std::string error;
  ASSERT_TRUE(pm.addPipeline("gate,messages,schedule,dce,print-deps,verify", error)) << error;
  std::string printed;
  llvm::raw_string_ostream ps(printed);
  passes::PassContext ctx{d, &ps, {}, {}};
  ASSERT_TRUE(pm.run(*m, ctx, ps, ps)) << out;
  // schedule computes the graph; dce and print-deps reuse it.
  EXPECT_EQ(ctx.analyses.hits(), 2u);
  EXPECT_TRUE(ctx.analyses.cached(&passes::DependencyAnalysis::ID));
}

TEST(PassManager, InvalidatesAnalysesAfterATransformation) {
  std::string out, src;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine d("", "", os);
  auto m = twoCoins(d, src);
  ASSERT_TRUE(m) << out;
  passes::PassManager pm;
  std::string error;
  ASSERT_TRUE(pm.addPipeline("gate,messages,print-deps", error));
  std::string printed;
  llvm::raw_string_ostream ps(printed);
  passes::PassContext ctx{d, &ps, {}, {}};
  ASSERT_TRUE(pm.run(*m, ctx, ps, ps));
  EXPECT_TRUE(ctx.analyses.cached(&passes::DependencyAnalysis::ID));
  // A pass that changes the IR drops the cached graph.
  passes::PassManager again;
  ASSERT_TRUE(again.addPipeline("gate", error));
  ASSERT_TRUE(again.run(*m, ctx, ps, ps));
  EXPECT_FALSE(ctx.analyses.cached(&passes::DependencyAnalysis::ID));
}
