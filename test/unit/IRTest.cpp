// Model IR: every example prints, parses and prints back identically; the
// verifier rejects IR that breaks its invariants.
#include "ir/Diagnostics.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "tools/Driver.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>

using namespace ppc;

namespace {

std::vector<std::filesystem::path> examples() {
  std::vector<std::filesystem::path> out;
  for (auto &e : std::filesystem::directory_iterator(std::filesystem::path(PPC_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".ppl")
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::unique_ptr<ir::Module> compileFile(const std::filesystem::path &p, std::string &errors) {
  std::string err;
  auto src = readFile(p.string(), err);
  EXPECT_TRUE(src) << err;
  llvm::raw_string_ostream os(errors);
  DiagnosticEngine d(p.string(), *src, os);
  return compileModel(*src, d);
}

std::unique_ptr<ir::Module> parseText(const std::string &text, std::string &errors) {
  llvm::raw_string_ostream os(errors);
  DiagnosticEngine d("t.ir", text, os);
  auto m = ir::parseModule(text, d);
  if (m && !ir::verify(*m, d))
    return nullptr;
  return m;
}

} // namespace

TEST(IR, EveryExampleRoundTrips) {
  auto files = examples();
  ASSERT_GE(files.size(), 6u);
  for (const auto &f : files) {
    std::string errors;
    auto m = compileFile(f, errors);
    ASSERT_TRUE(m) << f << ":\n" << errors;
    std::string once = ir::toString(*m);
    auto reparsed = parseText(once, errors);
    ASSERT_TRUE(reparsed) << f << ":\n" << errors << "\n" << once;
    EXPECT_EQ(ir::toString(*reparsed), once) << f;
  }
}

TEST(IR, FloatsRoundTripExactly) {
  for (double v : {0.1, 1e-300, 1.0 / 3.0, 2.0, -0.0, 123456789.125, 5e-324})
    EXPECT_EQ(std::strtod(ir::formatDouble(v).c_str(), nullptr), v) << ir::formatDouble(v);
  EXPECT_EQ(ir::formatDouble(2.0), "2.0");
}

TEST(IR, VerifierRejectsWrongIndexCount) {
  std::string errors;
  auto m = parseText("model @M(%K: long) {\n"
                     "  %P = plate 0 until %K\n"
                     "  for %i in %P {\n"
                     "    %phi = dirichlet(1.0, 3) : simplex<3>\n"
                     "  }\n"
                     "  %z = categorical(%phi) : cat<3>\n"
                     "}\n",
                     errors);
  EXPECT_FALSE(m);
  EXPECT_NE(errors.find("t.ir:6:3: error: %phi is an array over 1 plate(s) but is used with 0 index(es)"),
            std::string::npos)
      << errors;
}

TEST(IR, VerifierRejectsSwitchOfWrongSize) {
  std::string errors;
  auto m = parseText("model @M() {\n"
                     "  %P = plate 0 until 3\n"
                     "  for %i in %P {\n"
                     "    %phi = dirichlet(1.0, 4) : simplex<4>\n"
                     "  }\n"
                     "  %w = dirichlet(1.0, 2) : simplex<2>\n"
                     "  %z = categorical(%w) : cat<2>\n"
                     "  %x = categorical(%phi[%z]) : cat<4>\n"
                     "}\n",
                     errors);
  EXPECT_FALSE(m);
  EXPECT_NE(errors.find("%z takes 2 values but dimension 0 of %phi is plate %P (0 until 3)"), std::string::npos)
      << errors;
}

TEST(IR, VerifierRejectsBranchLocalUseOutsideTheBranch) {
  std::string errors;
  auto m = parseText("model @M() {\n"
                     "  %c = bernoulli(0.5) : bool\n"
                     "  %y = if %c {\n"
                     "    %a = gaussian(0.0, 1.0) : real\n"
                     "    yield %a\n"
                     "  } else {\n"
                     "    %b = gaussian(1.0, 1.0) : real\n"
                     "    yield %b\n"
                     "  }\n"
                     "  %x = gaussian(%a, 1.0) : real\n"
                     "}\n",
                     errors);
  EXPECT_FALSE(m);
  EXPECT_NE(errors.find("%a is not visible here"), std::string::npos) << errors;
}

TEST(IR, VerifierChecksSupportsNotConjugacy) {
  std::string errors;
  // A Beta rate has positive values: the right type for Poisson (whether VMP
  // can handle it is algorithm matching's question).
  EXPECT_TRUE(parseText("model @M() {\n"
                        "  %r = beta(1.0, 1.0) : unit\n"
                        "  %x = poisson(%r) : count\n"
                        "}\n",
                        errors))
      << errors;
  auto m = parseText("model @M() {\n"
                     "  %r = gaussian(1.0, 1.0) : real\n"
                     "  %x = poisson(%r) : count\n"
                     "}\n",
                     errors);
  EXPECT_FALSE(m);
  EXPECT_NE(errors.find("Poisson rate cannot be %r of type real; it must be a positive constant or a Gamma random variable"),
            std::string::npos)
      << errors;
}

TEST(IR, ParserReportsUndefinedValues) {
  std::string errors;
  auto m = parseText("model @M() {\n  %x = gaussian(%mu, 1.0) : real\n}\n", errors);
  EXPECT_FALSE(m);
  EXPECT_NE(errors.find("t.ir:2:17: error: use of undefined value %mu"), std::string::npos) << errors;
}

TEST(Evaluate, ComputesPlateSizesAndChecksParameters) {
  std::string errors;
  auto m = parseText("model @M(%K: long, %a: double = 0.5) {\n"
                     "  %n = add(%K, 1) : long\n"
                     "  %P = plate 1 to %n\n"
                     "  %w = dirichlet(%a, %K) : simplex<%K>\n"
                     "}\n",
                     errors);
  ASSERT_TRUE(m) << errors;
  llvm::raw_string_ostream os(errors);
  DiagnosticEngine d("t.ir", "", os);
  auto ev = ir::evaluate(*m, {{"K", "4"}}, true, d);
  ASSERT_TRUE(ev) << errors;
  EXPECT_EQ(ev->plateSizes.at(m->lookup("P")), 5);
  EXPECT_EQ(*ev->valueOf(m->lookup("a")), 0.5);
  EXPECT_FALSE(ir::evaluate(*m, {{"K", "4"}, {"a", "-1"}}, true, d));
  EXPECT_NE(errors.find("Dirichlet concentration must be a positive constant; got a = -1"), std::string::npos)
      << errors;
  EXPECT_FALSE(ir::evaluate(*m, {{"K", "x"}}, true, d));
  EXPECT_NE(errors.find("parameter 'K' is a Long; expected an integer"), std::string::npos) << errors;
  EXPECT_FALSE(ir::evaluate(*m, {}, true, d));
  EXPECT_NE(errors.find("needs values for: K"), std::string::npos) << errors;
}
