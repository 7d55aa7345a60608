//===- test/unit/CheckpointTest.cpp - a batch run's checkpoint manifest ---===//
//
// Checkpointer::restore (codegen/exec/Checkpoint.h) on manifests edited and
// sealed again with a matching checksum, as a program other than ppc could
// write them: each impossible field is an error naming the field and its
// value, a plain edit is damage, and the intact checkpoint restores.
//
//===----------------------------------------------------------------------===//
#include "FitSupport.h"
#include "codegen/exec/Checkpoint.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

using namespace ppc;
using namespace ppc::testing;

namespace {
std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// The manifest with `edit` applied and its checksum computed again as the
/// manifest's own definition says (docs/reliability.md): XXH3 of every
/// field but "checksum", in order, dumped with an indent of 1.
void reseal(const std::string &manifest, const std::function<void(nlohmann::ordered_json &)> &edit) {
  auto j = nlohmann::ordered_json::parse(readText(manifest));
  edit(j);
  j.erase("checksum");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(codegen::checkpointChecksum(j.dump(1))));
  j["checksum"] = hex;
  writeText(manifest, j.dump(1));
}

class CheckpointManifest : public ::testing::Test {
protected:
  void SetUp() override {
    FitOptions o;
    o.run.maxIterations = 3;
    o.run.tolerance = 0;
    f_ = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, o);
    ASSERT_TRUE(f_->ok) << f_->error;
    dir_ = (std::filesystem::temp_directory_path() /
            ("ppc-checkpoint-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    codegen::Checkpointer ck(dir_, *f_->inference, nullptr);
    std::string error;
    ASSERT_TRUE(ck.prepare(error)) << error;
    ASSERT_TRUE(ck.save(f_->summary, 0, error)) << error;
    manifest_ = dir_ + "/checkpoint.json";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// restore's result; its error in `error`.
  bool restore(std::string &error) {
    codegen::Checkpointer ck(dir_, *f_->inference, nullptr);
    rt::RunSummary summary;
    uint64_t seed = 0;
    bool found = false;
    bool ok = ck.restore(*f_->inference, summary, seed, found, error);
    if (ok)
      restoredIterations_ = summary.iterations;
    return ok && found;
  }

  std::unique_ptr<Fit> f_;
  std::string dir_, manifest_;
  int64_t restoredIterations_ = -1;
};

TEST_F(CheckpointManifest, IntactAndResealedUnchangedRestore) {
  std::string error;
  ASSERT_TRUE(restore(error)) << error;
  EXPECT_EQ(restoredIterations_, 3);
  reseal(manifest_, [](nlohmann::ordered_json &) {}); // the test's checksum is ppc's
  ASSERT_TRUE(restore(error)) << error;
  EXPECT_EQ(restoredIterations_, 3);
}

TEST_F(CheckpointManifest, AnEditWithoutItsChecksumIsDamage) {
  std::string text = readText(manifest_);
  const size_t at = text.find("\"iteration\": 3");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 14, "\"iteration\": 2");
  writeText(manifest_, text);
  std::string error;
  EXPECT_FALSE(restore(error));
  EXPECT_NE(error.find("is damaged (its checksum does not match its contents)"), std::string::npos) << error;
}

TEST_F(CheckpointManifest, ImpossibleProcessCountsNameTheField) {
  const std::pair<nlohmann::ordered_json, std::string> cases[] = {
      {-5, "'processes' is -5, not a number of processes"},
      {0, "'processes' is 0, not a number of processes"},
      {1.8e50, "'processes' is 1.8e+50, not an integer from"},
      {"2", "'processes' is \"2\", not an integer"},
  };
  for (const auto &[value, message] : cases) {
    reseal(manifest_, [&](nlohmann::ordered_json &j) { j["processes"] = value; });
    std::string error;
    EXPECT_FALSE(restore(error)) << value;
    EXPECT_NE(error.find("is not a usable ppc checkpoint manifest: " + message), std::string::npos) << error;
  }
}

TEST_F(CheckpointManifest, AnotherProcessCountSaysHowToResume) {
  reseal(manifest_, [](nlohmann::ordered_json &j) { j["processes"] = 4; });
  std::string error;
  EXPECT_FALSE(restore(error));
  EXPECT_NE(error.find("was written by 4 processes; resume it with mpirun -np 4"), std::string::npos) << error;
}

TEST_F(CheckpointManifest, ANegativeOrHugeIterationNamesTheField) {
  reseal(manifest_, [](nlohmann::ordered_json &j) { j["iteration"] = -1; });
  std::string error;
  EXPECT_FALSE(restore(error));
  EXPECT_NE(error.find("'iteration' is -1, not a number of iterations"), std::string::npos) << error;
  reseal(manifest_, [](nlohmann::ordered_json &j) { j["iteration"] = 1e30; });
  EXPECT_FALSE(restore(error));
  EXPECT_NE(error.find("'iteration' is 1e+30, not an integer"), std::string::npos) << error;
}

TEST_F(CheckpointManifest, AnIterationWithoutItsStateFileIsNamed) {
  reseal(manifest_, [](nlohmann::ordered_json &j) { j["iteration"] = 2; });
  std::string error;
  EXPECT_FALSE(restore(error));
  EXPECT_NE(error.find("lacks '"), std::string::npos) << error;
  EXPECT_NE(error.find("state-2-0.bin"), std::string::npos) << error;
}
} // namespace
