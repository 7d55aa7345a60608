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
  template <size_t... I> static double call(R (*fn)(A...), const KernelValue *args, std::index_sequence<I...>) {
    if constexpr (std::is_void_v<R>) {
      fn(unpack<A>(args[I])...);
      return 0;
    } else {
      return static_cast<double>(fn(unpack<A>(args[I])...));
    }
  }
  static double invoke(void *address, const KernelValue *args) {
    return call(reinterpret_cast<R (*)(A...)>(address), args, std::index_sequence_for<A...>{});
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
        &::ppc::rt::symbols::Kernel<&name>::Traits::invoke, {}                                                   \
  }

// A PPC_ROW_KERNEL (runtime/VecMath.h) is compiled once per vector ISA by
// GCC's target_clones, as local symbols NAME.default, NAME.avx2 and
// NAME.avx512f of the kernel's own object file: PPC_DECLARE_CLONES(name),
// in that file, names them, and PPC_ROW_SYMBOL(name) records them, so that
// `ppc --cpu` can choose a copy (runtime/VectorIsa.h) instead of the one the
// CPU would pick. (Clang names its clones otherwise; a clang build, such as
// ./build.sh fuzz, records none and runs the copy the CPU picks.)
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__gnu_linux__)
#define PPC_DECLARE_CLONES(name)                                                                                 \
  extern "C" decltype(name) name##_clone_default __asm__(#name ".default");                                     \
  extern "C" decltype(name) name##_clone_avx2 __asm__(#name ".avx2");                                           \
  extern "C" decltype(name) name##_clone_avx512 __asm__(#name ".avx512f");
#define PPC_ROW_SYMBOL(name)                                                                                     \
  ::ppc::rt::RuntimeSymbol {                                                                                     \
    #name, reinterpret_cast<void *>(&name), ::ppc::rt::symbols::Kernel<&name>::signature,                        \
        &::ppc::rt::symbols::Kernel<&name>::Traits::invoke,                                                      \
        {reinterpret_cast<void *>(&name##_clone_default), reinterpret_cast<void *>(&name##_clone_avx2),           \
         reinterpret_cast<void *>(&name##_clone_avx512)}                                                         \
  }
#else
#define PPC_DECLARE_CLONES(name)
#define PPC_ROW_SYMBOL(name) PPC_SYMBOL(name)
#endif
