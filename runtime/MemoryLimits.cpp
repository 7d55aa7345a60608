//===- runtime/MemoryLimits.cpp - what fits in this machine's memory ------===//
#include "runtime/MemoryLimits.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace ppc::rt {

namespace {
std::optional<uint64_t> parseBytes(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v > 0))
    return std::nullopt;
  double scale = 1;
  switch (*end) {
  case 'K': case 'k': scale = 1024.0; ++end; break;
  case 'M': case 'm': scale = 1024.0 * 1024; ++end; break;
  case 'G': case 'g': scale = 1024.0 * 1024 * 1024; ++end; break;
  case '\0': break;
  default: return std::nullopt;
  }
  if (*end != '\0' || v * scale >= 1.8e19)
    return std::nullopt;
  return uint64_t(v * scale);
}

/// cgroup v2's memory.max (or v1's limit), where a number.
std::optional<uint64_t> cgroupLimit() {
  for (const char *path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    std::string text;
    if (in >> text)
      if (std::optional<uint64_t> v = parseBytes(text))
        return v;
  }
  return std::nullopt;
}
} // namespace

uint64_t availableMemoryBytes() {
  if (const char *env = std::getenv("PPC_MEMORY_LIMIT"))
    if (std::optional<uint64_t> v = parseBytes(env))
      return *v;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t bytes = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : (uint64_t(1) << 62);
  if (std::optional<uint64_t> limit = cgroupLimit(); limit && *limit < bytes)
    bytes = *limit;
  return bytes;
}

std::optional<uint64_t> multiplyBytes(uint64_t count, uint64_t bytesEach) {
  uint64_t r;
  if (__builtin_mul_overflow(count, bytesEach, &r))
    return std::nullopt;
  return r;
}

std::string formatBytes(uint64_t bytes) {
  static const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 6) {
    v /= 1024.0;
    ++u;
  }
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string memoryProblem(std::optional<uint64_t> bytes) {
  const uint64_t have = availableMemoryBytes();
  if (bytes && *bytes <= have)
    return {};
  return "needs " + (bytes ? "at least " + formatBytes(*bytes) : std::string("more than 2^64 bytes")) +
         " of memory; this machine has " + formatBytes(have);
}

} // namespace ppc::rt
