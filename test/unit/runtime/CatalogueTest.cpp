// The operator catalogue agrees with the language's family table and with the
// kernels the runtime actually has.
#include "runtime/Catalogue.h"
#include "runtime/Distributions.h"
#include "runtime/Operators.h"
#include "runtime/Symbols.h"
#include "runtime/VectorIsa.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <set>
#include <sstream>
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
  // Every kernel header: one per family and per group (a new one is covered
  // without editing this test), and the special functions.
  std::vector<std::filesystem::path> headers = {std::filesystem::path(PPC_SOURCE_DIR) / "runtime/Special.h"};
  for (const char *dir : {"runtime/factors", "runtime/kernels"})
    for (const auto &entry : std::filesystem::directory_iterator(std::filesystem::path(PPC_SOURCE_DIR) / dir))
      if (entry.path().extension() == ".h" && entry.path().filename() != "KernelSupport.h")
        headers.push_back(entry.path());
  EXPECT_GE(headers.size(), 17u);
  for (const std::filesystem::path &header : headers) {
    std::ifstream in(header);
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
  for (const std::string &d : declared)
    EXPECT_TRUE(listed.count(d)) << d << " is declared but not in the symbol table";
  for (const std::string &l : listed)
    EXPECT_TRUE(declared.count(l)) << l << " is in the symbol table but not declared";
}

/// A family whose variables are always observed (a Binomial): no posterior
/// layout, no message to its sample, an ELBO term for observations only.
bool observedOnly(Family f) { return factorEntry(f).width(3) == 0; }

TEST(Catalogue, EveryRandomArgumentHasAMessageOperator) {
  for (const FamilySpec &spec : allFamilies()) {
    const FactorOperators &ops = factorOperators(spec.family);
    EXPECT_EQ(ops.family, spec.family);
    ASSERT_EQ(ops.toArgument.size(), spec.params.size() + 1) << spec.spelling;
    if (observedOnly(spec.family)) {
      EXPECT_FALSE(ops.toArgument[0].exists()) << spec.spelling;
      EXPECT_FALSE(ops.observedElboKernel.empty()) << spec.spelling;
      for (size_t i = 0; i < spec.params.size(); ++i)
        EXPECT_EQ(!ops.toArgument[i + 1].observedKernel.empty(), !spec.params[i].parents.empty())
            << spec.spelling << " " << spec.params[i].name;
      continue;
    }
    EXPECT_TRUE(ops.toArgument[0].exists()) << spec.spelling << " has no message to its sample";
    // A deterministic factor has no density: its message to its value is the
    // forward kernel, and it has neither an ELBO term nor an entropy.
    EXPECT_EQ(ops.elboKernel.empty(), spec.deterministic) << displayName(spec.family);
    EXPECT_EQ(factorEntry(spec.family).entropyKernel.empty(), spec.deterministic) << displayName(spec.family);
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
      // Only a local bound's message reads its target (the links' bound
      // points: runtime/factors/Sigmoid.cpp, Softmax.cpp).
      for (const OperatorInput &in : m.reads) {
        if (spec.family != Family::Sigmoid && spec.family != Family::Softmax) {
          EXPECT_NE(&m, &ops.toArgument[in.arg]) << spec.spelling << ": a message cannot read its own target";
        }
      }
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

// Each family's entry (runtime/factors/<Family>.cpp) agrees with the runtime:
// its posterior layout with runtime/Distributions.h, its calling patterns
// with its kernels' C signatures, its point masses with the point-mass
// kernels, its output with its standard parameters.
namespace {
rt::Mat spd(int D) {
  rt::Mat m = rt::Mat::Identity(D, D) * 2.0;
  for (int i = 0; i + 1 < D; ++i)
    m(i, i + 1) = m(i + 1, i) = 0.5;
  return m;
}
/// The natural parameters and statistics of a typical posterior of family f, dimension k.
std::pair<rt::Vec, rt::Vec> example(Family f, int k) {
  switch (f) {
  case Family::Dirichlet: {
    rt::Dirichlet d(rt::Vec::LinSpaced(k, 0.5, 3.0));
    return {d.natural(), d.expectedStats()};
  }
  case Family::Beta: {
    rt::Beta b(2.0, 3.0);
    return {b.natural(), b.expectedStats()};
  }
  case Family::Categorical: {
    rt::Categorical c(rt::Vec::Constant(k, 1.0 / k));
    return {c.natural(), c.expectedStats()};
  }
  case Family::Bernoulli: {
    rt::Bernoulli b(0.3);
    return {b.natural(), b.expectedStats()};
  }
  case Family::Gamma: {
    rt::Gamma g(2.0, 3.0);
    return {g.natural(), g.expectedStats()};
  }
  case Family::Poisson: {
    rt::Poisson p(4.0);
    return {p.natural(), p.expectedStats()};
  }
  case Family::Gaussian: {
    rt::Gaussian g(1.5, 4.0);
    return {g.natural(), g.expectedStats()};
  }
  case Family::MvGaussian: {
    rt::MvGaussian g(rt::Vec::LinSpaced(k, -1.0, 1.0), spd(k));
    return {g.natural(), g.expectedStats()};
  }
  case Family::Wishart: {
    rt::Wishart w(k + 3.0, spd(k));
    return {w.natural(), w.expectedStats()};
  }
  case Family::Binomial:
  case Family::Multinomial: return {}; // observed only: no posterior
  case Family::MarkovChain:
  case Family::GaussianChain:
  case Family::MvGaussianChain: return {}; // a structured posterior (MarkovChainTest.cpp, GaussianChainTest.cpp)
  case Family::Sum:
  case Family::Difference:
  case Family::Product:
  case Family::InnerProduct:
  case Family::Scale:
  case Family::Sigmoid:
  case Family::Softmax:
  case Family::Stack: return {}; // computed forward (ArithmeticTest.cpp)
  }
  return {};
}
} // namespace

void checkPosteriorLayout(const FactorEntry &e, int k, rt::Vec eta, rt::Vec stats);

TEST(Catalogue, EveryFamilysEntryAgreesWithItsDistributionAndKernels) {
  for (const FamilySpec &spec : allFamilies()) {
    SCOPED_TRACE(std::string(spec.spelling));
    const FactorEntry &e = factorEntry(spec.family);
    EXPECT_EQ(e.operators.family, spec.family);
    const int k = spec.family == Family::Beta ? 2 : 3;
    auto [eta, stats] = example(spec.family, k);
    // (A chain's structured posterior: MarkovChainTest.cpp, GaussianChainTest.cpp.)
    if (!observedOnly(spec.family) && !spec.deterministic && !isChainFamily(spec.family))
      checkPosteriorLayout(e, k, eta, stats);
    // Every kernel the operators name has a calling pattern of its arity, and
    // every pattern names a kernel the family has.
    std::vector<std::string_view> named = {e.operators.elboKernel, e.operators.observedElboKernel, e.entropyKernel};
    for (const MessageOperator &m : e.operators.toArgument)
      named.insert(named.end(), {m.kernel, m.observedKernel});
    for (std::string_view kernel : named) {
      if (kernel.empty() || kernel == "ppc_poisson_avglogfactor") // a latent Poisson is refused before its ELBO
        continue;
      std::string_view pattern = callingPattern(kernel);
      ASSERT_FALSE(pattern.empty()) << kernel << " has no calling pattern";
      const rt::RuntimeSymbol *s = rt::findRuntimeKernel(kernel);
      ASSERT_NE(s, nullptr) << kernel;
      std::istringstream tokens{std::string(pattern)};
      size_t count = 0;
      for (std::string t; tokens >> t;)
        ++count;
      EXPECT_EQ(count + 1, s->signature.size()) << kernel << ": pattern '" << pattern << "', signature " << s->signature;
    }
    for (const KernelPattern &p : e.patterns)
      EXPECT_NE(rt::findRuntimeKernel(p.kernel), nullptr) << p.kernel;
  }
}

/// The statistics kernel and the standard parameters of a posterior of the
/// entry's family agree with runtime/Distributions.h.
void checkPosteriorLayout(const FactorEntry &e, int k, rt::Vec eta, rt::Vec stats) {
  {
    EXPECT_EQ(e.width(k), eta.size());
    EXPECT_EQ(e.width(k), stats.size());
    // The statistics kernel maps the natural parameters to the statistics.
    const rt::RuntimeSymbol *sk = rt::findRuntimeKernel(e.statsKernel);
    ASSERT_NE(sk, nullptr) << e.statsKernel;
    EXPECT_EQ(sk->signature.size(), e.statsTakesDimension ? 5u : 4u) << sk->signature;
    std::vector<rt::KernelValue> args;
    std::vector<double> out(size_t(eta.size()), -1.0);
    args.push_back({.i = 1});
    if (e.statsTakesDimension)
      args.push_back({.i = k});
    args.push_back({.p = eta.data()});
    args.push_back({.p = out.data()});
    sk->call(args.data());
    for (int i = 0; i < eta.size(); ++i)
      EXPECT_NEAR(out[size_t(i)], stats[i], 1e-10 * std::max(1.0, std::abs(stats[i]))) << i;
    // Standard parameters: one value per output column.
    std::vector<double> standard;
    e.standardParameters(k, eta.data(), stats.data(), standard);
    EXPECT_EQ(standard.size(), e.outputColumns(k).size());
  }
}

TEST(Catalogue, PointMassesAreTheStatisticsOfAConstant) {
  auto same = [](const std::vector<double> &a, const std::vector<double> &b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(a[i], b[i], 1e-15 * std::max(1.0, std::abs(b[i]))) << i;
  };
  const double c = 0.7;
  std::vector<double> s(2);
  ppc_gamma_pointmass_stats(c, s.data());
  same(factorEntry(Family::Gamma).pointMass(c, 1), s);
  ppc_gaussian_pointmass_stats(c, s.data());
  same(factorEntry(Family::Gaussian).pointMass(c, 1), s);
  // Beta's point mass at p is the K = 2 Dirichlet's at (p, 1 - p).
  const double p2[] = {c, 1 - c};
  ppc_dirichlet_pointmass_stats(2, p2, s.data());
  same(factorEntry(Family::Beta).pointMass(c, 2), s);
  const int64_t D = 3;
  std::vector<double> x(D, c), mv(size_t(D + D * D));
  ppc_mvgaussian_pointmass_stats(D, x.data(), mv.data());
  same(factorEntry(Family::MvGaussian).pointMass(c, D), mv);
  std::vector<double> L(D * D, 0.0), w(size_t(D * D + 1)), scratch(D * D);
  for (int64_t i = 0; i < D; ++i)
    L[size_t(i * D + i)] = c;
  ASSERT_EQ(ppc_wishart_pointmass_stats(D, L.data(), w.data(), scratch.data()), 0);
  same(factorEntry(Family::Wishart).pointMass(c, D), w);
}

// Every kernel compiled once per vector ISA (PPC_ROW_KERNEL in the sources)
// has its copies in the symbol table, so that `ppc --cpu` can choose one;
// choosing a level points the table at that level's copies.
TEST(Catalogue, RowKernelsHaveACopyPerVectorIsaAndTheTableFollowsTheChoice) {
  std::set<std::string> rowKernels;
  for (const char *dir : {"runtime/factors", "runtime/kernels"})
    for (const auto &entry : std::filesystem::directory_iterator(std::filesystem::path(PPC_SOURCE_DIR) / dir))
      if (entry.path().extension() == ".cpp") {
        std::ifstream in(entry.path());
        std::stringstream ss;
        ss << in.rdbuf();
        const std::string text = ss.str();
        std::regex decl(R"(PPC_ROW_KERNEL\s+(?:void|double|int|int64_t)\s+(ppc_[a-z0-9_]+)\()");
        for (auto it = std::sregex_iterator(text.begin(), text.end(), decl); it != std::sregex_iterator(); ++it)
          rowKernels.insert((*it)[1]);
      }
  EXPECT_GE(rowKernels.size(), 40u);
  for (const std::string &name : rowKernels) {
    const rt::RuntimeSymbol *s = rt::findRuntimeKernel(name);
    ASSERT_NE(s, nullptr) << name;
    for (int level = 0; level < rt::kNumVectorIsas; ++level)
      EXPECT_NE(s->clones[level], nullptr) << name << " has no copy for level " << level;
  }
  const rt::RuntimeSymbol *stats = rt::findRuntimeKernel("ppc_dirichlet_stats_n");
  std::string error;
  for (int level = 0; level <= int(rt::hostVectorIsa()); ++level) {
    ASSERT_TRUE(rt::setVectorIsa(rt::VectorIsa(level), error)) << error;
    EXPECT_EQ(stats->address, stats->clones[level]);
    EXPECT_EQ(rt::findRuntimeSymbol("ppc_dirichlet_stats_n"), stats->clones[level]);
  }
  if (rt::hostVectorIsa() != rt::VectorIsa::Avx512) {
    EXPECT_FALSE(rt::setVectorIsa(rt::VectorIsa::Avx512, error));
    EXPECT_NE(error.find("this CPU cannot run x86-64-v4 code"), std::string::npos) << error;
  }
  ASSERT_TRUE(rt::setVectorIsa(rt::hostVectorIsa(), error));
}
