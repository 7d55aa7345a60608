//===- runtime/VectorIsa.cpp - which vector instructions the kernels use -===//
#include "runtime/VectorIsa.h"

#include "runtime/Symbols.h"

#include <atomic>

namespace ppc::rt {
namespace {
std::atomic<int> gChosen{-1}; // -1: the host's
} // namespace

VectorIsa hostVectorIsa() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const VectorIsa host = [] {
    __builtin_cpu_init();
    // The kernels' AVX-512 copies use F, DQ, VL and BW (x86-64-v4); AVX2's use AVX2 and FMA (x86-64-v3).
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
      return VectorIsa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return VectorIsa::Avx2;
    return VectorIsa::Baseline;
  }();
  return host;
#else
  return VectorIsa::Baseline;
#endif
}

VectorIsa vectorIsa() {
  const int chosen = gChosen.load(std::memory_order_relaxed);
  return chosen < 0 ? hostVectorIsa() : VectorIsa(chosen);
}

bool vectorIsaOverridden() { return gChosen.load(std::memory_order_relaxed) >= 0; }

bool setVectorIsa(VectorIsa isa, std::string &error) {
  if (int(isa) > int(hostVectorIsa())) {
    error = "this CPU cannot run " + std::string(cpuNameOf(isa)) + " code (" + std::string(describe(isa)) +
            "); its best level is " + std::string(cpuNameOf(hostVectorIsa())) + " (" +
            std::string(describe(hostVectorIsa())) + ")";
    return false;
  }
  gChosen.store(int(isa), std::memory_order_relaxed);
  selectKernelClones(isa);
  return true;
}

std::optional<VectorIsa> vectorIsaFromCpuName(std::string_view name) {
  if (name == "x86-64" || name == "x86-64-v2")
    return VectorIsa::Baseline;
  if (name == "x86-64-v3")
    return VectorIsa::Avx2;
  if (name == "x86-64-v4")
    return VectorIsa::Avx512;
  if (name == "native")
    return hostVectorIsa();
  return std::nullopt;
}

std::string_view cpuNameOf(VectorIsa isa) {
  switch (isa) {
  case VectorIsa::Baseline: return "x86-64";
  case VectorIsa::Avx2: return "x86-64-v3";
  case VectorIsa::Avx512: return "x86-64-v4";
  }
  return "x86-64";
}

std::string_view describe(VectorIsa isa) {
  switch (isa) {
  case VectorIsa::Baseline: return "SSE2";
  case VectorIsa::Avx2: return "AVX2";
  case VectorIsa::Avx512: return "AVX-512";
  }
  return "?";
}

} // namespace ppc::rt
