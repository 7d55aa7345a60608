//===- runtime/kernels/IsaVectors.h - width-generic kernels' support ------===//
//
// What the dense kernels written once for any vector width W (doubles per
// register) share: W-wide vectors, the target attributes of their copies per
// vector ISA, the width of the copies the chosen level runs
// (runtime/VectorIsa.h), and the weights' memo. Internal to runtime/kernels.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/VectorIsa.h"

#include <cstdint>
#include <cstring>

// The JIT calls these precompiled kernels (they dispatch by ISA themselves).
#if defined(PPC_RUNTIME_BITCODE)
#define PPC_DISPATCHED_KERNEL __attribute__((section(".text.ppc.precompiled")))
#else
#define PPC_DISPATCHED_KERNEL
#endif

// One copy per vector ISA of each kernel template (the bitcode has none).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PPC_RUNTIME_BITCODE)
#define PPC_TARGET_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")))
#define PPC_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define PPC_HAVE_ISA_COPIES 1
#endif

namespace ppc::rt::isa {

// Vectors of W doubles, through memcpy (unaligned rows) and macros (a
// function taking or returning a vector would have an ISA-dependent ABI).
template <int W> struct Lanes {
  typedef double Vec __attribute__((vector_size(W * 8)));
};

/// The vector width the chosen level's copies use.
inline int levelWidth() {
#ifdef PPC_HAVE_ISA_COPIES
  switch (ppc::rt::vectorIsa()) {
  case ppc::rt::VectorIsa::Avx512: return 8;
  case ppc::rt::VectorIsa::Avx2: return 4;
  case ppc::rt::VectorIsa::Baseline: break;
  }
#endif
  return 2;
}

/// The weights' memo (1 + count doubles): true when w equals what it holds
/// (bitwise); otherwise it keeps a copy of w.
inline bool sameWeights(int64_t count, const double* w, double* memo) {
  if (memo[0] == 1.0 && std::memcmp(memo + 1, w, sizeof(double) * static_cast<size_t>(count)) == 0) return true;
  std::memcpy(memo + 1, w, sizeof(double) * static_cast<size_t>(count));
  memo[0] = 1.0;
  return false;
}

} // namespace ppc::rt::isa

#define PPC_VLOAD(W, p) ({ typename ::ppc::rt::isa::Lanes<W>::Vec v_; __builtin_memcpy(&v_, (p), sizeof v_); v_; })
#define PPC_VSTORE(p, v) do { auto v_ = (v); __builtin_memcpy((p), &v_, sizeof v_); } while (0)
#define PPC_VZERO(W) (typename ::ppc::rt::isa::Lanes<W>::Vec{})
