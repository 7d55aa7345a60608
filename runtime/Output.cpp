#include "runtime/Output.h"

#include "ir/Printer.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

namespace ppc::rt {
namespace {

namespace fs = std::filesystem;

// Writes a whole file and fsyncs it.
bool writeFile(const fs::path &path, const std::string &text, std::string &error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot write '" + path.string() + "': " + std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error = "cannot write '" + path.string() + "': " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    done += size_t(n);
  }
  bool ok = ::fsync(fd) == 0;
  if (!ok)
    error = "cannot write '" + path.string() + "': " + std::strerror(errno);
  ::close(fd);
  return ok;
}

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
  fs::path target(path);
  fs::path tmp = target;
  tmp += ".tmp";
  if (!writeFile(tmp, bytes, error))
    return false;
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    std::error_code ec;
    fs::remove(tmp, ec);
    return false;
  }
  syncDirectory(target.parent_path().empty() ? fs::path(".") : target.parent_path());
  return true;
}

std::vector<std::string> posteriorColumns(Family f, int64_t dimension) {
  return factorEntry(f).outputColumns(dimension);
}

bool writeOutputs(const std::string &dir, const RunSummary &summary, const std::vector<PosteriorTable> &posteriors,
                  std::string &error) {
  fs::path target = fs::absolute(fs::path(dir)).lexically_normal();
  if (target.filename().empty())
    target = target.parent_path();
  fs::path parent = target.parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) {
    error = "cannot write '" + dir + "': the directory '" + parent.string() + "' does not exist";
    return false;
  }
  if (fs::exists(target, ec) && !fs::is_directory(target, ec)) {
    error = "cannot write '" + dir + "': it exists and is not a directory";
    return false;
  }
  // mkdtemp replaces the template's six trailing X's with a unique suffix.
  std::string pattern = (parent / ("." + target.filename().string() + ".tmp-" + std::string(6, 'X'))).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    error = "cannot write '" + dir + "': " + std::strerror(errno);
    return false;
  }
  fs::path tmp(buf.data());
  auto fail = [&](const std::string &why) {
    error = why;
    fs::remove_all(tmp, ec);
    return false;
  };

  for (const PosteriorTable &p : posteriors) {
    if (!validName(p.variable))
      return fail("cannot name an output file after variable '" + p.variable + "'");
    std::vector<std::string> cols = posteriorColumns(p.family, p.dimension);
    if (cols.empty() || p.values.size() % cols.size() != 0)
      return fail("internal error: the posterior of '" + p.variable + "' does not have " +
                  std::to_string(cols.size()) + " columns");
    std::string text;
    for (size_t c = 0; c < cols.size(); ++c)
      text += (c ? "," : "") + cols[c];
    text += '\n';
    for (size_t i = 0; i < p.values.size(); ++i) {
      text += ir::formatDouble(p.values[i]);
      text += (i + 1) % cols.size() == 0 ? '\n' : ',';
    }
    if (!writeFile(tmp / (p.variable + ".csv"), text, error))
      return fail(error);
  }

  nlohmann::ordered_json j;
  j["elbo"] = summary.elbo;
  j["time"] = summary.time;
  j["iterations"] = summary.iterations;
  j["converged"] = summary.converged;
  j["compile_seconds"] = summary.compileSeconds;
  j["data_seconds"] = summary.dataSeconds;
  j["init_seconds"] = summary.initSeconds;
  j["inference_seconds"] = summary.inferenceSeconds;
  j["options"] = summary.options;
  if (!writeFile(tmp / "summary.json", j.dump(2) + "\n", error))
    return fail(error);
  syncDirectory(tmp);

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
