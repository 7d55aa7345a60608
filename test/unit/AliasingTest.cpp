// ir/Aliasing: which reads of one random variable may be one element, and
// the leaves a deterministic factor reads through its operands.
#include "ir/Aliasing.h"
#include "ir/Diagnostics.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>

using namespace ppc;

namespace {

const char *kModel = R"(model @A() {
  %P.2 = plate 0 until 2
  for %i.m in %P.2 {
    %m = gaussian(0.0, 1.0) : real
  }
  for %i.c in %P.2 {
    %c = data() : real
  }
  %n = plate ?
  for %i.j in %n {
    %j = data() : real
  }
  for %i in %n {
    for %k in %P.2 {
      %loop = sum(%m[%k], %m[0]) : real
      %apart = sum(%m[1], %m[0]) : real
      %ids = sum(%m[%j[%i]], %m[0]) : real
      %first = sum(%m[%c[1]], %m[0]) : real
      %three = sum(%apart[%i][%k], %m[%k]) : real
    }
  }
}
)";

struct Parsed {
  std::string errors;
  std::unique_ptr<ir::Module> module;
  Parsed() {
    llvm::raw_string_ostream os(errors);
    DiagnosticEngine d("t.ir", kModel, os);
    module = ir::parseModule(kModel, d);
    if (module && !ir::verify(*module, d))
      module.reset();
  }
  /// The operands of the op defining `name`.
  const std::vector<ir::Operand> &operands(const std::string &name) const {
    return module->lookup(name)->def->operands;
  }
};

} // namespace

TEST(Aliasing, OverlapOfIndices) {
  Parsed p;
  ASSERT_TRUE(p.module) << p.errors;
  auto overlap = [&](const std::string &op) { return ir::overlap(p.operands(op)[0], p.operands(op)[1]); };
  EXPECT_EQ(overlap("loop"), ir::Overlap::Sometimes);       // m(k), m(0): where k = 0
  EXPECT_EQ(overlap("apart"), ir::Overlap::Never);          // m(1), m(0)
  EXPECT_EQ(overlap("ids"), ir::Overlap::WhereDataEqual);   // m(j(i)), m(0): rows with j = 0
  EXPECT_EQ(overlap("first"), ir::Overlap::Sometimes);      // c(1) is not read row by row
  EXPECT_EQ(ir::overlap(p.operands("loop")[1], p.operands("apart")[1]), ir::Overlap::Always);
  EXPECT_EQ(ir::overlap(p.operands("loop")[0], p.operands("three")[1]), ir::Overlap::Always);
}

TEST(Aliasing, LeavesFollowDeterministicFactors) {
  Parsed p;
  ASSERT_TRUE(p.module) << p.errors;
  std::vector<ir::Operand> leaves;
  ir::latentLeaves(p.operands("three")[0], leaves);
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_EQ(ir::toString(leaves[0]), "%m[1]");
  EXPECT_EQ(ir::toString(leaves[1]), "%m[0]");
  leaves.clear();
  ir::latentLeaves(p.operands("ids")[0].indices[0], leaves); // a Data id is not latent
  EXPECT_TRUE(leaves.empty());
}

TEST(Aliasing, DataDependentPairsAndCoupledElements) {
  Parsed p;
  ASSERT_TRUE(p.module) << p.errors;
  std::vector<ir::DataAlias> aliases = ir::dataDependentAliases(*p.module);
  ASSERT_EQ(aliases.size(), 1u);
  EXPECT_EQ(aliases[0].factor->result()->name, "ids");
  EXPECT_EQ(ir::sourceSpelling(aliases[0].left), "m(j(i))");
  EXPECT_EQ(ir::sourceSpelling(aliases[0].right), "m(0)");
  std::vector<std::string> coupled = ir::coupledElements(*p.module);
  ASSERT_EQ(coupled.size(), 1u);
  EXPECT_EQ(coupled[0], "'m(0)', 'm(1)' and 'm(k)' in the sum (+) at line 19:7");
}

TEST(Aliasing, SourceSpellingDropsUniquingSuffixes) {
  Parsed p;
  ASSERT_TRUE(p.module) << p.errors;
  ir::Operand o = p.operands("loop")[0];
  o.indices[0].value->name = "k.12";
  EXPECT_EQ(ir::sourceSpelling(o), "m(k)");
  o.indices[0].value->name = "i.y";
  EXPECT_EQ(ir::sourceSpelling(o), "m(i.y)");
  o.indices[0].value->name = "k";
}
