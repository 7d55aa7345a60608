//===- runtime/Symbols.h - the runtime's kernels by name -------------------===//
#pragma once

#include <span>
#include <string_view>

namespace ppc::rt {

struct RuntimeSymbol {
  std::string_view name;
  void *address;
};

/// Every extern "C" kernel of runtime/Operators.h and runtime/Special.h.
std::span<const RuntimeSymbol> runtimeSymbols();
/// The kernel's address, or null.
void *findRuntimeSymbol(std::string_view name);

} // namespace ppc::rt
