// --out: posteriors and summary.json, written atomically.
#include "runtime/Output.h"

#include "ir/Printer.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace ppc;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("ppc-output-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string slurp(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<rt::PosteriorTable> sample() {
  rt::PosteriorTable theta{"theta", Family::Dirichlet, 3, {0.1, 2.5, 1.0 / 3.0, 4.0, 5.0, 6.0}, {"doc"}, {0, 1}, {}};
  rt::PosteriorTable mu{"mu", Family::Gaussian, 1, {-1.25, 0.01}, {}, {}, {}};
  return {theta, mu};
}

rt::RunSummary summary() {
  rt::RunSummary s;
  s.elbo = {-10.5, -9.25, -9.0};
  s.time = {0.1, 0.2, 0.3};
  s.iterations = 3;
  s.converged = true;
  s.compileSeconds = 0.02;
  s.inferenceSeconds = 0.3;
  s.options = {{"tol", "1e-06"}, {"seed", "1"}};
  return s;
}

} // namespace

TEST(Output, ColumnsFollowTheFamily) {
  EXPECT_EQ(rt::posteriorColumns(Family::Gaussian, 1), (std::vector<std::string>{"mean", "variance"}));
  EXPECT_EQ(rt::posteriorColumns(Family::Gamma, 1), (std::vector<std::string>{"shape", "rate"}));
  EXPECT_EQ(rt::posteriorColumns(Family::Beta, 1), (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(rt::posteriorColumns(Family::Bernoulli, 1), (std::vector<std::string>{"p"}));
  EXPECT_EQ(rt::posteriorColumns(Family::Dirichlet, 3), (std::vector<std::string>{"alpha_0", "alpha_1", "alpha_2"}));
  EXPECT_EQ(rt::posteriorColumns(Family::Categorical, 2), (std::vector<std::string>{"p_0", "p_1"}));
}

TEST(Output, WritesPosteriorsAndSummaryExactly) {
  TempDir t;
  std::string error;
  fs::path out = t.path / "run";
  ASSERT_TRUE(rt::writeOutputs(out.string(), summary(), sample(), error)) << error;
  // The index column, the parameters, then the means a Dirichlet's
  // parameters are not (alpha / sum alpha).
  EXPECT_EQ(slurp(out / "theta.csv"),
            "doc,alpha_0,alpha_1,alpha_2,mean_0,mean_1,mean_2\n"
            "0,0.1,2.5,0.3333333333333333," +
                ir::formatDouble(0.1 / (0.1 + 2.5 + 1.0 / 3.0)) + "," + ir::formatDouble(2.5 / (0.1 + 2.5 + 1.0 / 3.0)) +
                "," + ir::formatDouble(1.0 / 3.0 / (0.1 + 2.5 + 1.0 / 3.0)) +
                "\n1,4.0,5.0,6.0,0.26666666666666666,0.3333333333333333,0.4\n");
  EXPECT_EQ(slurp(out / "mu.csv"), "mean,variance\n-1.25,0.01\n");
  EXPECT_EQ(std::stod("0.3333333333333333"), 1.0 / 3.0);
  auto j = nlohmann::json::parse(slurp(out / "summary.json"));
  EXPECT_EQ(j["elbo"].get<std::vector<double>>(), summary().elbo);
  EXPECT_EQ(j["time"].get<std::vector<double>>(), summary().time);
  EXPECT_EQ(j["iterations"], 3);
  EXPECT_EQ(j["converged"], true);
  EXPECT_EQ(j["options"]["tol"], "1e-06");
  EXPECT_EQ(j["posteriors"]["theta"]["index"], nlohmann::json::array({"doc"}));
  EXPECT_EQ(j["posteriors"]["theta"]["parameters"], nlohmann::json::array({"alpha_0", "alpha_1", "alpha_2"}));
  EXPECT_EQ(j["posteriors"]["theta"]["summaries"], nlohmann::json::array({"mean_0", "mean_1", "mean_2"}));
  EXPECT_EQ(j["posteriors"]["theta"]["rows"], 2);
  EXPECT_EQ(j["posteriors"]["mu"]["family"], "Gaussian");
  // No temporary directory is left next to the output.
  for (auto &e : fs::directory_iterator(t.path))
    EXPECT_EQ(e.path().filename(), "run");
}

TEST(Output, ReplacesAnExistingDirectoryInOneStep) {
  TempDir t;
  fs::path out = t.path / "run";
  // An earlier run's --out, with a posterior this run has not.
  auto earlier = sample();
  earlier.push_back(rt::PosteriorTable{"stale", Family::Gaussian, 1, {0.5, 1.0}, {}, {}, {}});
  std::string error;
  ASSERT_TRUE(rt::writeOutputs(out.string(), summary(), earlier, error)) << error;
  ASSERT_TRUE(fs::exists(out / "stale.csv"));
  ASSERT_TRUE(rt::writeOutputs(out.string(), summary(), sample(), error)) << error;
  EXPECT_FALSE(fs::exists(out / "stale.csv"));
  EXPECT_TRUE(fs::exists(out / "theta.csv"));
  size_t entries = 0;
  for (auto &e : fs::directory_iterator(t.path)) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
}

// --out replaces the whole directory, so one that holds anything but an
// earlier run's outputs is refused and left as it was: a user's CSV, a
// summary.json ppc did not write, and, beside an earlier
// run's outputs, a CSV that run did not write (the next run's input, say),
// another file, a subdirectory.
TEST(Output, RefusesToReplaceADirectoryItDidNotWrite) {
  TempDir t;
  struct Case {
    std::string name;   // what the user put there
    bool earlierRun;    // beside an earlier run's outputs
    std::string said;   // what the error says it holds
  };
  const std::vector<Case> cases = {
      {"data.csv", false, "'data.csv', which ppc did not write"},
      {"summary.json", false, "a summary.json that ppc did not write"},
      {"data.csv", true, "'data.csv', which ppc did not write"},
      {"notes.txt", true, "'notes.txt', which ppc did not write"},
      {"sub/", true, "'sub', which ppc did not write"}};
  int n = 0;
  for (const Case &c : cases) {
    fs::path out = t.path / ("run-" + std::to_string(n++));
    std::string error;
    if (c.earlierRun) {
      ASSERT_TRUE(rt::writeOutputs(out.string(), summary(), sample(), error)) << error;
    }
    fs::create_directories(out);
    if (c.name.back() == '/')
      fs::create_directories(out / c.name);
    else
      std::ofstream(out / c.name) << "{\"mine\": 1}\n";
    EXPECT_FALSE(rt::writeOutputs(out.string(), summary(), sample(), error)) << c.name;
    EXPECT_NE(error.find("it holds " + c.said + "; --out replaces the whole directory"), std::string::npos) << error;
    EXPECT_TRUE(fs::exists(out / c.name)) << c.name;
    EXPECT_EQ(fs::exists(out / "theta.csv"), c.earlierRun) << c.name;
  }
}

TEST(Output, FailureLeavesNothingBehind) {
  TempDir t;
  std::string error;
  EXPECT_FALSE(rt::writeOutputs((t.path / "missing" / "run").string(), summary(), sample(), error));
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
  auto bad = sample();
  bad.push_back(rt::PosteriorTable{"../evil", Family::Gaussian, 1, {0, 1}, {}, {}, {}});
  EXPECT_FALSE(rt::writeOutputs((t.path / "run").string(), summary(), bad, error));
  EXPECT_NE(error.find("cannot name an output file after variable '../evil'"), std::string::npos) << error;
  auto ragged = sample();
  ragged[1].values.push_back(3.0); // 3 values for 2 columns
  EXPECT_FALSE(rt::writeOutputs((t.path / "run").string(), summary(), ragged, error));
  EXPECT_TRUE(fs::is_empty(t.path)) << "a failed write left files behind";
}
