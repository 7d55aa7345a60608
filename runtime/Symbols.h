//===- runtime/Symbols.h - the runtime's kernels by name -------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace ppc::rt {

/// One kernel argument or result, as the reference interpreter passes it.
union KernelValue {
  int64_t i;
  double d;
  void *p;
};

enum class VectorIsa : unsigned char;

struct RuntimeSymbol {
  std::string_view name;
  /// The code the JIT and the interpreter call: a kernel with copies per
  /// vector ISA (PPC_ROW_KERNEL) points at the copy of the chosen level.
  void *address;
  /// The C signature: the result then the parameters, one letter each:
  /// v void, i int (result only), l int64_t, d double, p pointer.
  /// "dlpp" is double f(int64_t, T*, T*).
  std::string_view signature;
  /// Calls the kernel at `address` with arguments unpacked from `args` (one
  /// per parameter, as the signature says); returns the result as a double
  /// (0 for void). The interpreter's way to call any kernel.
  double (*invoke)(void *address, const KernelValue *args);
  /// The copies per vector ISA (runtime/VectorIsa.h: baseline, AVX2,
  /// AVX-512) of a kernel compiled for each; null for the others.
  void *clones[3] = {nullptr, nullptr, nullptr};
  /// Calls this kernel (the chosen copy).
  double call(const KernelValue *args) const { return invoke(address, args); }
};

/// Every extern "C" kernel of the runtime (runtime/factors/, runtime/kernels/,
/// runtime/Special.h).
std::span<const RuntimeSymbol> runtimeSymbols();
/// The kernel's address, or null.
void *findRuntimeSymbol(std::string_view name);
/// The kernel's entry, or null.
const RuntimeSymbol *findRuntimeKernel(std::string_view name);
/// Points every kernel with copies per vector ISA at the copy of `isa`
/// (runtime/VectorIsa.h's setVectorIsa calls it).
void selectKernelClones(VectorIsa isa);

} // namespace ppc::rt
