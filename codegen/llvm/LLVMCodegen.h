//===- codegen/llvm/LLVMCodegen.h - a plan as JIT-compiled code ----------===//
//
// The plan's loop nests become LLVM IR that calls the runtime's kernels,
// whose bitcode is linked in so that LLVM inlines and vectorizes them inside
// the loops; the module is optimized for the host (O3) and compiled by the
// ORC JIT (Jit.h). The result is an Engine (codegen/exec/Executor.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>

namespace ppc::codegen {

struct Plan;
class Engine;
class JitSession;

/// Generates LLVM IR for the plan, optimizes it (O3, host CPU) and
/// JIT-compiles it in `session`. `optimizedIR`, if non-null, receives the
/// optimized module's text (--emit=llvm). Returns null and sets `error` on
/// failure. The code is released when the engine is destroyed.
std::unique_ptr<Engine> createJitEngine(const Plan &plan, JitSession &session, std::string *optimizedIR,
                                        std::string &error);

/// The LLVM IR of a plan, unoptimized (tests, --emit=llvm before -O3).
std::string planToLLVMText(const Plan &plan);

} // namespace ppc::codegen
