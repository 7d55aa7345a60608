//===- runtime/VectorIsa.h - which vector instructions the kernels use ---===//
//
// The runtime's precompiled kernels come in one copy per vector ISA level
// (x86-64 baseline, x86-64-v3: AVX2 + FMA, x86-64-v4: AVX-512), and the JIT
// compiles for a CPU. By default both use the best level this CPU has;
// `ppc --cpu NAME` chooses a lower one, so that one host measures the code
// another would run (an AVX-512 host the AVX2 path). The choice is made once,
// before the JIT session and before any kernel runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ppc::rt {

enum class VectorIsa : unsigned char { Baseline = 0, Avx2 = 1, Avx512 = 2 };
constexpr int kNumVectorIsas = 3;

/// The best level this CPU runs.
VectorIsa hostVectorIsa();
/// The level the kernels use now (the host's unless setVectorIsa chose).
VectorIsa vectorIsa();
/// Whether setVectorIsa chose a level (the JIT then targets that level's
/// generic CPU instead of the host's own).
bool vectorIsaOverridden();
/// Chooses a level; false (with `error` set) when this CPU cannot run it.
bool setVectorIsa(VectorIsa isa, std::string &error);

/// The --cpu names: x86-64 (and x86-64-v2: no wider vectors than the
/// baseline's), x86-64-v3, x86-64-v4, native (the host's level).
std::optional<VectorIsa> vectorIsaFromCpuName(std::string_view name);
/// x86-64, x86-64-v3 or x86-64-v4 (the LLVM CPU name of the level).
std::string_view cpuNameOf(VectorIsa isa);
/// "SSE2", "AVX2", "AVX-512", for reports.
std::string_view describe(VectorIsa isa);

} // namespace ppc::rt
