#include "runtime/Output.h"

#include "ir/Printer.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace ppc::rt {
namespace {

namespace fs = std::filesystem;

// Writes a whole file and fsyncs it; on failure `reason` says why (errno's
// sentence: the caller names the file the user knows).
bool writeFile(const fs::path &path, const std::string &text, std::string &reason) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    reason = std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      reason = std::strerror(errno);
      ::close(fd);
      return false;
    }
    done += size_t(n);
  }
  bool ok = ::fsync(fd) == 0;
  if (!ok)
    reason = std::strerror(errno);
  ::close(fd);
  return ok;
}

volatile sig_atomic_t gDeferredSignal = 0;
extern "C" void deferSignal(int signal) { gDeferredSignal = signal; }

/// Holds SIGINT, SIGTERM and SIGHUP while outputs are written: one that
/// arrives meanwhile takes effect when they are whole and in place (or
/// cleaned away), never halfway (test/lit/reliability/faults.test). A
/// handler, not a signal mask: the signal may go to any of the process's
/// threads (the guarded stack's, the workers, main waiting for them).
class DeferredTermination {
public:
  DeferredTermination() {
    gDeferredSignal = 0;
    struct sigaction defer {};
    defer.sa_handler = deferSignal;
    sigemptyset(&defer.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) {
      sigaction(kSignals[i], &defer, &previous_[i]);
      if (previous_[i].sa_handler == SIG_IGN) // ignored (nohup): stays ignored
        sigaction(kSignals[i], &previous_[i], nullptr);
    }
  }
  ~DeferredTermination() {
    for (size_t i = 0; i < kSignals.size(); ++i)
      sigaction(kSignals[i], &previous_[i], nullptr);
    if (const int signal = gDeferredSignal)
      ::raise(signal); // now: the default action ends the process, a handler (the REPL's Ctrl-C) runs
  }
  DeferredTermination(const DeferredTermination &) = delete;
  DeferredTermination &operator=(const DeferredTermination &) = delete;

private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> previous_{};
};

void syncDirectory(const fs::path &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

bool validName(const std::string &v) {
  if (v.empty() || v[0] == '.')
    return false;
  for (char c : v)
    if (c == '/' || c == '\0')
      return false;
  return true;
}

} // namespace

bool writeFileAtomically(const std::string &path, const std::string &bytes, std::string &error) {
  DeferredTermination deferred;
  fs::path target(path);
  fs::path tmp = target;
  tmp += ".tmp";
  std::string reason;
  std::error_code ec;
  if (!writeFile(tmp, bytes, reason)) {
    error = "cannot write '" + path + "': " + reason;
    fs::remove(tmp, ec); // a full disk leaves no partial file behind
    return false;
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    fs::remove(tmp, ec);
    return false;
  }
  syncDirectory(target.parent_path().empty() ? fs::path(".") : target.parent_path());
  return true;
}

std::vector<std::string> posteriorColumns(Family f, int64_t dimension) {
  return factorEntry(f).outputColumns(dimension);
}

namespace {
/// `p` is `dir` or lies inside it (both absolute and normal).
bool isWithin(const fs::path &p, const fs::path &dir) {
  return std::mismatch(dir.begin(), dir.end(), p.begin(), p.end()).first == dir.end();
}

fs::path outputTarget(const std::string &dir) {
  fs::path target = fs::absolute(fs::path(dir)).lexically_normal();
  if (target.filename().empty())
    target = target.parent_path();
  // A link to a directory: the directory is what is replaced (a rename onto
  // the link itself would fail after the run).
  std::error_code ec;
  if (fs::is_symlink(target, ec))
    if (fs::path real = fs::canonical(target, ec); !ec)
      target = real;
  return target;
}

/// The CSV files a summary.json that ppc wrote lists under "posteriors";
/// nullopt if `path` is not such a file.
std::optional<std::set<std::string>> listedOutputs(const fs::path &path) {
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("posteriors") || !j["posteriors"].is_object() || !j.contains("options"))
    return std::nullopt;
  std::set<std::string> files;
  for (const auto &[variable, entry] : j["posteriors"].items())
    if (entry.is_object() && entry.contains("file") && entry["file"].is_string())
      files.insert(entry["file"].get<std::string>());
  return files;
}

/// A directory ppc's --out wrote: its summary.json and the CSVs that lists,
/// nothing else (a CSV put there since, the next run's input perhaps, would
/// be lost with the directory).
bool isPreviousOutput(const fs::path &dir, std::string &foreign) {
  std::error_code ec;
  for (const char *manifest : {"checkpoint.json", "svi-checkpoint.json"}) // named before its state files
    if (fs::exists(dir / manifest, ec)) {
      foreign = std::string("'") + manifest + "': it is a checkpoint directory";
      return false;
    }
  const fs::path summary = dir / "summary.json";
  std::optional<std::set<std::string>> listed;
  if (fs::is_regular_file(summary, ec))
    listed = listedOutputs(summary);
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == "summary.json" && listed)
      continue;
    if (listed && listed->count(name) && e.is_regular_file(ec))
      continue;
    foreign = name == "summary.json" ? "a summary.json that ppc did not write" : "'" + name + "', which ppc did not write";
    return false;
  }
  if (ec) {
    foreign = "files it cannot list (" + ec.message() + ")";
    return false;
  }
  return true;
}
} // namespace

namespace {
/// Makes the hidden temporary directory beside `target` that its contents
/// are written into before the rename (.NAME.tmp- and a unique suffix);
/// empty with errno set when it cannot be made.
fs::path makeTemporaryBeside(const fs::path &target) {
  // mkdtemp replaces the template's six trailing X's with a unique suffix.
  std::string pattern =
      (target.parent_path() / ("." + target.filename().string() + ".tmp-" + std::string(6, 'X'))).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  return ::mkdtemp(buf.data()) ? fs::path(buf.data()) : fs::path();
}
} // namespace

std::string creationProblem(const std::string &path) {
  DeferredTermination deferred; // a signal between mkdtemp and rmdir would leave the directory behind
  const fs::path tmp = makeTemporaryBeside(fs::absolute(fs::path(path)).lexically_normal());
  if (tmp.empty())
    return std::strerror(errno);
  ::rmdir(tmp.c_str());
  return {};
}

std::string checkOutputDirectory(const std::string &dir, bool probe) {
  const fs::path target = outputTarget(dir);
  const fs::path parent = target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    return "cannot write '" + dir + "': " +
           (fs::exists(parent, ec) ? "'" + parent.string() + "' is a file, not a directory"
                                   : "the directory '" + parent.string() + "' does not exist");
  if (fs::is_symlink(target, ec)) // canonical() could not follow it
    return "cannot write '" + dir + "': it is a symbolic link to nothing";
  // The outputs are made beside the target and renamed onto it.
  if (std::string problem = probe ? creationProblem(target.string()) : std::string(); !problem.empty())
    return "cannot write '" + dir + "': " + problem;
  if (!fs::exists(target, ec))
    return {};
  if (!fs::is_directory(target, ec))
    return "cannot write '" + dir + "': it exists and is not a directory";
  const fs::path cwd = fs::current_path(ec);
  if (!ec && isWithin(cwd, target))
    return "cannot write '" + dir + "': --out replaces the whole directory, and this one holds the current directory";
  std::string foreign;
  if (!isPreviousOutput(target, foreign))
    return "cannot write '" + dir + "': it holds " + foreign +
           "; --out replaces the whole directory, so give a new or empty directory, or "
           "the --out of an earlier run";
  return {};
}

bool pathWithin(const std::string &path, const std::string &dir) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec); // fails on an empty path: in nothing
  return !ec && isWithin(fs::weakly_canonical(absolute, ec), fs::weakly_canonical(outputTarget(dir), ec));
}

bool writeOutputs(const std::string &dir, const RunSummary &summary, const std::vector<PosteriorTable> &posteriors,
                  std::string &error) {
  const fs::path target = outputTarget(dir);
  const fs::path parent = target.parent_path();
  std::error_code ec;
  // (No probe: the temporary directory is made next, and its failure said the same way.)
  if (std::string problem = checkOutputDirectory(dir, /*probe=*/false); !problem.empty()) {
    error = problem;
    return false;
  }
  DeferredTermination deferred;
  const fs::path tmp = makeTemporaryBeside(target);
  if (tmp.empty()) {
    error = "cannot write '" + dir + "': " + std::strerror(errno);
    return false;
  }
  auto fail = [&](const std::string &why) {
    error = why;
    fs::remove_all(tmp, ec);
    return false;
  };

  nlohmann::ordered_json columns = nlohmann::ordered_json::object();
  for (const PosteriorTable &p : posteriors) {
    if (!validName(p.variable))
      return fail("cannot name an output file after variable '" + p.variable + "'");
    const FactorEntry &entry = factorEntry(p.family);
    const bool predictive = !p.columns.empty();
    std::vector<std::string> cols = predictive ? p.columns : posteriorColumns(p.family, p.dimension);
    std::vector<std::string> summaries = predictive ? std::vector<std::string>{} : entry.summaryColumns(p.dimension);
    const size_t nIndex = p.indexColumns.size();
    if (cols.empty() || p.values.size() % cols.size() != 0 ||
        p.indices.size() != p.values.size() / cols.size() * nIndex)
      return fail("internal error: the posterior of '" + p.variable + "' does not have " +
                  std::to_string(cols.size()) + " columns");
    std::string text;
    std::vector<std::string> header = p.indexColumns;
    header.insert(header.end(), cols.begin(), cols.end());
    header.insert(header.end(), summaries.begin(), summaries.end());
    for (size_t c = 0; c < header.size(); ++c)
      text += (c ? "," : "") + header[c];
    text += '\n';
    std::vector<double> summary;
    for (size_t r = 0; r * cols.size() < p.values.size(); ++r) {
      for (size_t j = 0; j < nIndex; ++j)
        text += std::to_string(p.indices[r * nIndex + j]) + ',';
      const double *row = p.values.data() + r * cols.size();
      summary.clear();
      if (!predictive)
        entry.summaries(p.dimension, row, summary);
      for (size_t c = 0; c < cols.size(); ++c)
        text += (c ? "," : "") + ir::formatDouble(row[c]);
      for (double v : summary)
        text += ',' + ir::formatDouble(v);
      text += '\n';
    }
    nlohmann::ordered_json c;
    c["file"] = p.variable + ".csv";
    c["family"] = std::string(familySpec(p.family).spelling);
    if (predictive)
      c["predictive"] = true; // a missing observation's, not a posterior
    c["rows"] = p.values.size() / cols.size();
    c["index"] = p.indexColumns;
    c["parameters"] = cols;
    c["summaries"] = summaries;
    columns[p.variable] = std::move(c);
    std::string reason;
    if (!writeFile(tmp / (p.variable + ".csv"), text, reason))
      return fail("cannot write --out '" + dir + "': " + reason + " (writing " + p.variable + ".csv)");
  }

  nlohmann::ordered_json j;
  j["elbo"] = summary.elbo;
  j["time"] = summary.time;
  if (summary.elboIterations.size() == summary.elbo.size()) // a batch run (--elbo-every: not every iteration)
    j["elbo_iterations"] = summary.elboIterations;
  j["iterations"] = summary.iterations;
  j["converged"] = summary.converged;
  j["compile_seconds"] = summary.compileSeconds;
  j["data_seconds"] = summary.dataSeconds;
  j["init_seconds"] = summary.initSeconds;
  j["inference_seconds"] = summary.inferenceSeconds;
  j["options"] = summary.options;
  if (summary.heldout) {
    const RunSummary::Heldout &h = *summary.heldout;
    nlohmann::ordered_json hj;
    hj["file"] = h.file;
    hj["elbo"] = h.elbo;
    hj["observations"] = h.observations;
    hj["bound_per_observation"] = h.perObservation;
    hj["perplexity"] = std::exp(-h.perObservation);
    hj["iterations"] = h.iterations;
    hj["converged"] = h.converged;
    hj["seconds"] = h.seconds;
    j["heldout"] = std::move(hj);
  }
  if (summary.stochastic) {
    const RunSummary::Stochastic &st = *summary.stochastic;
    nlohmann::ordered_json sj;
    sj["steps"] = st.steps;
    sj["epochs"] = st.epochs;
    sj["batches_per_epoch"] = st.batches;
    sj["batch_elements"] = st.batchElements;
    sj["data_size"] = st.dataSize;
    sj["rho"] = st.rho;
    sj["scan_seconds"] = st.scanSeconds;
    sj["scan_megabytes_per_second"] = st.scanSeconds > 0 ? st.scanBytes / 1e6 / st.scanSeconds : 0.0;
    nlohmann::ordered_json points = nlohmann::ordered_json::array();
    for (const RunSummary::Stochastic::Point &p : st.heldout)
      points.push_back({{"step", p.step},
                        {"seconds", p.seconds},
                        {"bound_per_observation", p.perObservation},
                        {"perplexity", std::exp(-p.perObservation)}});
    sj["heldout"] = std::move(points);
    j["svi"] = std::move(sj);
  }
  // Which column of each posterior's file is which.
  j["posteriors"] = std::move(columns);
  if (std::string reason; !writeFile(tmp / "summary.json", j.dump(2) + "\n", reason))
    return fail("cannot write --out '" + dir + "': " + reason + " (writing summary.json)");
  syncDirectory(tmp);
  // mkdtemp made it private (0700): the outputs get the mode a new directory
  // would have under this process's umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmp.c_str(), 0777 & ~mask);

  // Into place in one step: rename, or swap with an existing directory.
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    if (errno != ENOTEMPTY && errno != EEXIST)
      return fail("cannot write '" + dir + "': " + std::strerror(errno));
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) != 0)
      return fail("cannot replace '" + dir + "': " + std::strerror(errno));
    fs::remove_all(tmp, ec); // now the old contents
  }
  syncDirectory(parent);
  return true;
}

} // namespace ppc::rt
