//===- codegen/exec/Checkpoint.cpp - saving and resuming a run ------------===//
#include "codegen/exec/Checkpoint.h"

#include "codegen/exec/Distributed.h"
#include "codegen/exec/Executor.h"
#include "codegen/exec/JsonFields.h"
#include "runtime/Output.h"

#include <llvm/Support/xxhash.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ppc::codegen {
namespace fs = std::filesystem;

namespace {
// Format 2: each state file ends with the XXH3 checksum of its bytes, and
// the manifest holds the checksum of its own text (docs/reliability.md).
constexpr const char *kFormat = "ppc checkpoint 2";


/// The manifest's text as checksummed: every field but "checksum", in order.
std::string manifestBody(nlohmann::ordered_json j) {
  j.erase("checksum");
  return j.dump(1);
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool readWhole(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}
} // namespace

uint64_t checkpointChecksum(std::string_view bytes) { return llvm::xxh3_64bits(llvm::StringRef(bytes)); }

std::string damagedCheckpoint(const std::string &file, const std::string &dir) {
  return "'" + file + "' is damaged (its checksum does not match its contents); --resume never continues from a "
         "damaged checkpoint: delete '" + dir + "' and start again";
}

namespace {
/// The plan's text (its shapes and statements) and its buffers' initial
/// contents (the data, the constants): a checkpoint of other data of the same
/// shape belongs to another run.
uint64_t planFingerprint(const Plan &plan) {
  uint64_t h = fnv1a(printPlan(plan));
  auto mix = [&h](const void *bytes, size_t size) {
    if (size)
      h = (h ^ llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(static_cast<const uint8_t *>(bytes), size))) *
          1099511628211ull;
  };
  for (const Buffer &b : plan.buffers) {
    mix(b.doubles.data(), b.doubles.size() * sizeof(double));
    mix(b.ints.data(), b.ints.size() * sizeof(int64_t));
  }
  return h;
}
} // namespace

Checkpointer::Checkpointer(std::string dir, const Inference &inference, Communicator *comm)
    : dir_(std::move(dir)), inference_(inference), comm_(comm), fingerprint_(planFingerprint(inference.plan())) {}

std::string Checkpointer::statePath(int64_t iteration, int rank) const {
  return (fs::path(dir_) / ("state-" + std::to_string(iteration) + "-" + std::to_string(rank) + ".bin")).string();
}

bool Checkpointer::prepare(std::string &error) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_, ec)) {
    error = "cannot use '" + dir_ + "' for checkpoints: " + (ec ? ec.message() : "it is not a directory");
    return false;
  }
  return true;
}

bool Checkpointer::save(const rt::RunSummary &summary, uint64_t seed, std::string &error) {
  int rank = comm_ ? comm_->rank() : 0, ranks = comm_ ? comm_->size() : 1;
  int64_t iteration = summary.iterations;
  // Each process's state starts with its own plan's fingerprint (its part
  // of the data differs); the manifest has process 0's.
  std::string state(reinterpret_cast<const char *>(&fingerprint_), sizeof fingerprint_);
  state += inference_.saveState();
  const uint64_t sum = checkpointChecksum(state);
  state.append(reinterpret_cast<const char *>(&sum), sizeof sum);
  bool ok = rt::writeFileAtomically(statePath(iteration, rank), state, error);
  if (comm_ && !comm_->allOk(ok)) { // every part durable before the manifest names them
    if (ok)
      error = "another process could not write its checkpoint in '" + dir_ + "'";
    return false;
  }
  if (!ok)
    return false;
  if (rank == 0) {
    nlohmann::ordered_json j;
    j["format"] = kFormat;
    j["iteration"] = iteration;
    j["processes"] = ranks;
    j["fingerprint"] = hex(fingerprint_);
    j["l2_cache_bytes"] = inference_.plan().l2CacheBytes; // a resume plans for it, on any machine
    j["seed"] = seed;
    j["elbo"] = summary.elbo;
    j["time"] = summary.time;
    j["elbo_iterations"] = summary.elboIterations;
    j["iteration_seconds"] = summary.iterationSeconds;
    j["checksum"] = hex(checkpointChecksum(manifestBody(j)));
    ok = rt::writeFileAtomically((fs::path(dir_) / "checkpoint.json").string(), j.dump(1) + "\n", error);
  }
  if (comm_ && !comm_->allOk(ok)) {
    if (ok)
      error = "process 0 could not write the checkpoint manifest in '" + dir_ + "'";
    return false;
  }
  if (!ok)
    return false;
  // The manifest names this iteration now: older states of this process go.
  std::error_code ec;
  std::string prefix = "state-", suffix = "-" + std::to_string(rank) + ".bin";
  for (const auto &entry : fs::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    // (and the temporary of a write a kill -9 cut short)
    const std::string stem = name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0
                                 ? name.substr(0, name.size() - 4)
                                 : name;
    if (stem.rfind(prefix, 0) == 0 && stem.size() > suffix.size() &&
        stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        entry.path() != fs::path(statePath(iteration, rank)))
      fs::remove(entry.path(), ec);
  }
  return true;
}

int64_t Checkpointer::recordedL2CacheBytes(const std::string &dir) {
  std::ifstream in(fs::path(dir) / "checkpoint.json");
  if (!in)
    return 0;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  try {
    return integerAt<int64_t>(j, "l2_cache_bytes");
  } catch (const std::exception &) {
    return 0; // damaged or older: restore says so, or the fingerprint does
  }
}

bool Checkpointer::restore(Inference &inference, rt::RunSummary &summary, uint64_t &seed, bool &found,
                           std::string &error) {
  int rank = comm_ ? comm_->rank() : 0, ranks = comm_ ? comm_->size() : 1;
  found = false;
  std::string manifestPath = (fs::path(dir_) / "checkpoint.json").string();
  std::error_code ec;
  if (!fs::exists(manifestPath, ec))
    return true;
  std::string text;
  nlohmann::ordered_json j;
  if (!readWhole(manifestPath, text)) {
    error = "cannot read '" + manifestPath + "'";
    return false;
  }
  try {
    j = nlohmann::ordered_json::parse(text);
    if (j.contains("format") && j["format"].is_string() && j["format"].get<std::string>() != kFormat) {
      error = "'" + manifestPath + "' is a checkpoint of another format ('" + j["format"].get<std::string>() +
              "', this ppc writes '" + kFormat + "'); start the run again";
      return false;
    }
    if (j.at("format").get<std::string>() != kFormat)
      throw std::runtime_error("format");
    if (j.at("checksum").get<std::string>() != hex(checkpointChecksum(manifestBody(j)))) {
      error = damagedCheckpoint(manifestPath, dir_);
      return false;
    }
    int processes = integerAt<int>(j, "processes");
    if (processes < 1)
      throw std::out_of_range("'processes' is " + std::to_string(processes) + ", not a number of processes");
    if (processes != ranks) {
      error = "the checkpoint in '" + dir_ + "' was written by " + std::to_string(processes) +
              (processes == 1 ? " process" : " processes") + "; resume it with " +
              (processes == 1 ? std::string("a plain run (no mpirun)") : "mpirun -np " + std::to_string(processes));
      return false;
    }
    std::string otherRun = "the checkpoint in '" + dir_ +
                           "' belongs to another model, data or schedule options (its plan or data differ); resume with the "
                           "command that wrote it (its --threads, whether its --elbo-every was 1, and its --l2-cache if it gave "
                           "one)";
    if (rank == 0 && j.at("fingerprint").get<std::string>() != hex(fingerprint_)) {
      error = otherRun;
      return false;
    }
    int64_t iteration = integerAt<int64_t>(j, "iteration");
    if (iteration < 0)
      throw std::out_of_range("'iteration' is " + std::to_string(iteration) + ", not a number of iterations");
    std::string state;
    std::string path = statePath(iteration, rank);
    if (!readWhole(path, state)) {
      error = "the checkpoint in '" + dir_ + "' lacks '" + path + "'";
      return false;
    }
    uint64_t written = 0, sum = 0;
    if (state.size() < sizeof written + sizeof sum) {
      error = "'" + path + "' is truncated";
      return false;
    }
    std::memcpy(&sum, state.data() + state.size() - sizeof sum, sizeof sum);
    state.resize(state.size() - sizeof sum);
    if (sum != checkpointChecksum(state)) {
      error = damagedCheckpoint(path, dir_);
      return false;
    }
    std::memcpy(&written, state.data(), sizeof written);
    if (written != fingerprint_) {
      error = otherRun;
      return false;
    }
    state.erase(0, sizeof written);
    if (!inference.restoreState(state, error)) {
      error = "'" + path + "': " + error;
      return false;
    }
    summary.elbo = j.at("elbo").get<std::vector<double>>();
    summary.time = j.at("time").get<std::vector<double>>();
    summary.iterations = iteration;
    if (j.contains("elbo_iterations")) { // --elbo-every: the evaluated iterations
      summary.elboIterations = integersIn<int64_t>(j.at("elbo_iterations"), "'elbo_iterations'");
      summary.iterationSeconds = j.at("iteration_seconds").get<double>();
    } else { // a checkpoint from before --elbo-every: every iteration
      summary.elboIterations.clear();
      for (size_t i = 0; i < summary.elbo.size(); ++i)
        summary.elboIterations.push_back(int64_t(i) + 1);
      summary.iterationSeconds = summary.time.empty() ? 0 : summary.time.back();
    }
    if (summary.time.size() != summary.elbo.size() || summary.elboIterations.size() != summary.elbo.size())
      throw std::runtime_error("trace");
    for (size_t i = 0; i < summary.elboIterations.size(); ++i)
      if (summary.elboIterations[i] <= (i ? summary.elboIterations[i - 1] : 0) ||
          summary.elboIterations[i] > iteration)
        throw std::runtime_error("trace");
    seed = integerAt<uint64_t>(j, "seed");
  } catch (const std::out_of_range &e) { // a field's value (JsonFields.h, above): say which
    error = "'" + manifestPath + "' is not a usable ppc checkpoint manifest: " + e.what();
    return false;
  } catch (const std::exception &) {
    error = "'" + manifestPath + "' is not a ppc checkpoint manifest (damaged?)";
    return false;
  }
  found = true;
  return true;
}

} // namespace ppc::codegen
