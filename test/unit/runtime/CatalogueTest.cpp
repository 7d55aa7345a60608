// The operator catalogue agrees with the language's family table and with the
// kernels the runtime actually has.
#include "runtime/Catalogue.h"
#include "runtime/Symbols.h"

#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <set>
#include <sstream>

using namespace ppc;

TEST(Catalogue, EveryNamedKernelExistsInTheRuntime) {
  std::vector<std::string_view> kernels = catalogueKernels();
  EXPECT_GT(kernels.size(), 20u);
  for (std::string_view k : kernels)
    EXPECT_NE(rt::findRuntimeSymbol(k), nullptr) << k;
}

TEST(Catalogue, SymbolTableListsEveryDeclaredKernel) {
  std::set<std::string> declared;
  for (const char *header : {"runtime/Operators.h", "runtime/Special.h"}) {
    std::ifstream in(std::string(PPC_SOURCE_DIR) + "/" + header);
    ASSERT_TRUE(in) << header;
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    std::regex decl(R"(\n(?:void|double|int|int64_t) (ppc_[a-z0-9_]+)\()");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), decl); it != std::sregex_iterator(); ++it)
      declared.insert((*it)[1]);
  }
  std::set<std::string> listed;
  for (const rt::RuntimeSymbol &s : rt::runtimeSymbols()) {
    EXPECT_NE(s.address, nullptr) << s.name;
    listed.insert(std::string(s.name));
  }
  EXPECT_EQ(declared, listed);
}

TEST(Catalogue, EveryRandomArgumentHasAMessageOperator) {
  for (const FamilySpec &spec : allFamilies()) {
    const FactorOperators &ops = factorOperators(spec.family);
    EXPECT_EQ(ops.family, spec.family);
    ASSERT_EQ(ops.toArgument.size(), spec.params.size() + 1) << spec.spelling;
    EXPECT_TRUE(ops.toArgument[0].exists()) << spec.spelling << " has no message to its sample";
    EXPECT_FALSE(ops.elboKernel.empty()) << spec.spelling;
    for (size_t i = 0; i < spec.params.size(); ++i) {
      bool acceptsVariables = !spec.params[i].parents.empty();
      EXPECT_EQ(ops.toArgument[i + 1].exists(), acceptsVariables)
          << spec.spelling << " " << spec.params[i].name;
    }
    auto validReads = [&](std::span<const OperatorInput> reads) {
      for (const OperatorInput &in : reads)
        EXPECT_LE(in.arg, spec.params.size()) << spec.spelling;
    };
    for (const MessageOperator &m : ops.toArgument) {
      validReads(m.reads);
      for (const OperatorInput &in : m.reads)
        EXPECT_NE(&m, &ops.toArgument[in.arg]) << spec.spelling << ": a message cannot read its own target";
    }
    validReads(ops.elboReads);
  }
}

TEST(Catalogue, GateOperatorsCoverSeed001) {
  std::set<std::string_view> names;
  for (const GateOperator &g : gateOperators())
    names.insert(g.name);
  EXPECT_EQ(names, (std::set<std::string_view>{"gate.cases", "gate.enter", "gate.enter_partial",
                                               "gate.enter_one", "gate.exit"}));
}
