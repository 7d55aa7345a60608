#include "ir/Diagnostics.h"

#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>

using namespace ppc;

TEST(Diagnostics, PrintsLocationLineAndCaret) {
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine d("m.ppl", "line one\n  val x = thta\n", os);
  d.error(SourceRange({2, 11}, 4), "unknown name 'thta'");
  EXPECT_EQ(os.str(), "m.ppl:2:11: error: unknown name 'thta'\n"
                      "    val x = thta\n"
                      "            ^~~~\n");
  EXPECT_EQ(d.errorCount(), 1u);
}

TEST(Diagnostics, KeepsTabsSoTheCaretLinesUp) {
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine d("m.ppl", "\tval x = ?\n", os);
  d.error(SourceRange({1, 10}), "bad");
  EXPECT_NE(os.str().find("\n  \t        ^\n"), std::string::npos) << os.str();
}

TEST(Diagnostics, StopsAfterTheErrorLimit) {
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine d("m.ppl", "x\n", os);
  d.setMaxErrors(3);
  for (int i = 0; i < 10; ++i)
    d.error(SourceRange({1, 1}), "e" + std::to_string(i));
  EXPECT_TRUE(d.tooManyErrors());
  EXPECT_NE(os.str().find("e2"), std::string::npos);
  EXPECT_EQ(os.str().find("e3"), std::string::npos);
  EXPECT_NE(os.str().find("too many errors (3)"), std::string::npos);
}

TEST(Diagnostics, ClosestNameSuggestsSmallEdits) {
  std::vector<std::string> names{"theta", "phi", "alpha"};
  EXPECT_EQ(closestName("thta", names), "theta");
  EXPECT_EQ(closestName("alpah", names), "alpha");
  EXPECT_EQ(closestName("zzzzzz", names), "");
}
