//===- runtime/FloatEnvironment.cpp - subnormal numbers during inference --===//
#include "runtime/FloatEnvironment.h"

#include <atomic>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace ppc::rt {

namespace {
std::atomic<Subnormals> mode{Subnormals::Flush};
#if defined(__x86_64__)
constexpr uint32_t kFlushToZero = 0x8000;     // MXCSR.FTZ: subnormal results become 0
constexpr uint32_t kDenormalsAreZero = 0x0040; // MXCSR.DAZ: subnormal inputs count as 0
#endif
} // namespace

void setSubnormals(Subnormals m) { mode.store(m); }
Subnormals subnormals() { return mode.load(); }
std::string_view subnormalsName(Subnormals m) { return m == Subnormals::Flush ? "flush" : "keep"; }
std::optional<Subnormals> subnormalsFromName(std::string_view name) {
  if (name == "flush")
    return Subnormals::Flush;
  if (name == "keep")
    return Subnormals::Keep;
  return std::nullopt;
}

#if defined(__x86_64__)
uint32_t floatControl() { return _mm_getcsr(); }
void setFloatControl(uint32_t control) { _mm_setcsr(control); }
uint32_t inferenceFloatControl() {
  const uint32_t flags = kFlushToZero | kDenormalsAreZero;
  const uint32_t own = floatControl();
  return subnormals() == Subnormals::Flush ? own | flags : own & ~flags;
}
#else
uint32_t floatControl() { return 0; }
void setFloatControl(uint32_t) {}
uint32_t inferenceFloatControl() { return 0; }
#endif

} // namespace ppc::rt
