//===- runtime/MemoryLimits.h - what fits in this machine's memory -*- C++ -*-===//
//
// Sizes that come from the input (a plate index in a CSV, a -p size, a
// count) are checked against the machine's memory before anything is
// allocated: an error that names the input and the bytes it would need,
// never std::bad_alloc.
//
//===----------------------------------------------------------------------===//
#ifndef PPC_RUNTIME_MEMORYLIMITS_H
#define PPC_RUNTIME_MEMORYLIMITS_H

#include <cstdint>
#include <optional>
#include <string>

namespace ppc::rt {

/// The machine's physical memory in bytes (sysconf), or a cgroup's limit
/// where one is lower (a container). PPC_MEMORY_LIMIT (bytes, or with K, M,
/// G) overrides it, for tests.
uint64_t availableMemoryBytes();

/// count * bytesEach, or nullopt where it overflows 64 bits.
std::optional<uint64_t> multiplyBytes(uint64_t count, uint64_t bytesEach);

/// "1.5 GiB", "3.2 TiB", "512 bytes".
std::string formatBytes(uint64_t bytes);

/// Empty when `bytes` fits (with room for the rest of the run), else the end
/// of an error message: "needs at least 3.2 TiB of memory; this machine has
/// 24.0 GiB". nullopt `bytes` (overflow) reads "more than 2^64 bytes".
std::string memoryProblem(std::optional<uint64_t> bytes);

} // namespace ppc::rt

#endif // PPC_RUNTIME_MEMORYLIMITS_H
