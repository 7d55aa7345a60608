//===- runtime/SymbolTable.h - a kernel's entry in the symbol table ------===//
//
// PPC_SYMBOL(name) makes the RuntimeSymbol of an extern "C" kernel: its
// address, its C signature as letters and a thunk through which the
// interpreter calls it, all derived from the kernel's C type. Each file of
// runtime/factors/ and runtime/kernels/ lists its kernels this way, beside
// them; runtime/Catalogue.cpp gathers the lists.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Symbols.h"

#include <array>
#include <type_traits>
#include <utility>

namespace ppc::rt::symbols {

// Signatures and interpreter thunks, derived from each kernel's C type.
template <typename T> constexpr char typeLetter() {
  if constexpr (std::is_void_v<T>)
    return 'v';
  else if constexpr (std::is_same_v<T, int>)
    return 'i';
  else if constexpr (std::is_same_v<T, int64_t>)
    return 'l';
  else if constexpr (std::is_same_v<T, double>)
    return 'd';
  else {
    static_assert(std::is_pointer_v<T>, "kernel parameters are int64_t, double or pointers");
    return 'p';
  }
}

template <typename T> T unpack(const KernelValue &v) {
  if constexpr (std::is_same_v<T, int64_t>)
    return v.i;
  else if constexpr (std::is_same_v<T, double>)
    return v.d;
  else
    return static_cast<T>(v.p);
}

template <typename F> struct KernelTraits;
template <typename R, typename... A> struct KernelTraits<R (*)(A...)> {
  static constexpr std::array<char, sizeof...(A) + 2> signature{typeLetter<R>(), typeLetter<A>()..., '\0'};
  template <auto Fn, size_t... I> static double call(const KernelValue *args, std::index_sequence<I...>) {
    if constexpr (std::is_void_v<R>) {
      Fn(unpack<A>(args[I])...);
      return 0;
    } else {
      return static_cast<double>(Fn(unpack<A>(args[I])...));
    }
  }
  template <auto Fn> static double invoke(const KernelValue *args) {
    return call<Fn>(args, std::index_sequence_for<A...>{});
  }
};

template <auto Fn> struct Kernel {
  using Traits = KernelTraits<decltype(Fn)>;
  static constexpr std::string_view signature{Traits::signature.data(), Traits::signature.size() - 1};
};

} // namespace ppc::rt::symbols

#define PPC_SYMBOL(name)                                                                                         \
  ::ppc::rt::RuntimeSymbol {                                                                                     \
    #name, reinterpret_cast<void *>(&name), ::ppc::rt::symbols::Kernel<&name>::signature,                        \
        &::ppc::rt::symbols::Kernel<&name>::Traits::invoke<&name>                                                \
  }
