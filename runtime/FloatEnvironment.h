//===- runtime/FloatEnvironment.h - subnormal numbers during inference ----===//
//
// Inference runs with subnormal numbers flushed to zero: results below
// 2^-1022 become 0 (x86's MXCSR FTZ) and such inputs count as 0 (DAZ).
// Why: a mixture's responsibilities of the components far from a datum
// underflow through the subnormal range, and Intel's cores take a microcode
// assist of about a hundred cycles for each vector operation that meets
// one. On the GMM on digits that was 35-40% of an iteration on a Xeon (AMD's
// cores pay nothing), for values 2^-1022 below the sums they join
// (docs/performance.md, "Subnormal numbers"). `ppc --subnormals keep`
// keeps IEEE gradual underflow.
//
// Engine::runBlock (codegen/exec/Executor.h) sets the mode around every
// block it runs, and the parallel loops' workers take their caller's.
// Elsewhere (reading data, writing results, the unit tests) the process
// keeps the default environment. Other architectures than x86-64 keep it
// everywhere.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ppc::rt {

enum class Subnormals { Flush, Keep };

/// The process's choice for inference (ppc --subnormals); Flush unless set.
void setSubnormals(Subnormals mode);
Subnormals subnormals();
/// "flush" or "keep", the flag's spelling (and summary.json's), and back.
std::string_view subnormalsName(Subnormals mode);
std::optional<Subnormals> subnormalsFromName(std::string_view name);

/// The calling thread's floating-point control word (x86-64: MXCSR; 0
/// elsewhere) and its replacement.
uint32_t floatControl();
void setFloatControl(uint32_t control);

/// A scope with the given control word, the thread's own restored at its end.
class ScopedFloatControl {
public:
  explicit ScopedFloatControl(uint32_t control) : saved_(floatControl()) {
    if (control != saved_)
      setFloatControl(control);
  }
  ~ScopedFloatControl() {
    if (floatControl() != saved_)
      setFloatControl(saved_);
  }
  ScopedFloatControl(const ScopedFloatControl &) = delete;
  ScopedFloatControl &operator=(const ScopedFloatControl &) = delete;

private:
  uint32_t saved_;
};

/// The control word inference runs with: the thread's own, with subnormals
/// flushed unless setSubnormals(Keep).
uint32_t inferenceFloatControl();

} // namespace ppc::rt
