//===- codegen/llvm/Jit.h - one live LLVM ORC JIT session -----------------===//
//
// The code generator's back end: LLVM modules are optimized for the host CPU
// (O3) and JIT-compiled with ORC's LLJIT. Each module gets its own resource
// tracker, so dropping a compiled model releases its code (a REPL recompiles
// many times; memory must not grow). The runtime's kernels (runtime/Symbols.h)
// are defined in the session, so generated code calls them directly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/IntrusiveRefCntPtr.h>

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class Error;
template <typename T> class Expected;
namespace orc {
class LLJIT;
class ResourceTracker;
} // namespace orc
} // namespace llvm

namespace ppc::codegen {

/// A module's code in the session; release() (or destruction) frees it.
class CompiledModule {
public:
  CompiledModule() = default;
  CompiledModule(CompiledModule &&) noexcept;
  CompiledModule &operator=(CompiledModule &&) noexcept;
  ~CompiledModule();

  /// The address of a function the module defines, or null.
  void *lookup(const std::string &name) const;
  /// Frees the module's code; lookups fail afterwards.
  void release();
  /// The name a function of the module has in the session.
  std::string sessionName(const std::string &name) const { return name + prefix_; }
  bool live() const { return tracker_ != nullptr; }

private:
  friend class JitSession;
  llvm::orc::LLJIT *jit_ = nullptr;
  llvm::IntrusiveRefCntPtr<llvm::orc::ResourceTracker> tracker_;
  std::string prefix_; ///< symbols are unique per module: name + prefix
};

class JitSession {
public:
  /// A session for the host CPU; returns null and sets `error` on failure.
  static std::unique_ptr<JitSession> create(std::string &error);
  ~JitSession();

  /// Optimizes `m` (O3, host CPU) in place. Returns the optimized IR text
  /// when `printed` is non-null (--emit=llvm).
  void optimize(llvm::Module &m, std::string *printed = nullptr);

  /// Optimizes and compiles `m`. Function names are suffixed internally so
  /// that modules never clash; lookups take the names as written.
  /// `printed`, if non-null, receives the optimized IR (--emit=llvm).
  CompiledModule add(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx, std::string &error,
                     std::string *printed = nullptr);

  /// The address of a symbol by its session name, or null if the session has
  /// no such symbol (any more).
  void *lookupSymbol(const std::string &sessionName);

private:
  JitSession() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  unsigned counter_ = 0;
  bool perfMap_ = false; ///< PPC_PERF_MAP: functions named in /tmp/perf-PID.map for perf

};

} // namespace ppc::codegen
