//===- ir/StackGuard.h - bounded recursion on any input --------------===//
//
// The parser, the AST builder and lowering are recursive. Instead of trusting
// the input's nesting, they run on a large dedicated stack and check how much
// of it is used; a model nested beyond that gets a clean error, never a crash.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <functional>

namespace ppc {

/// Runs `fn` on a thread with a `stackBytes` stack and waits for it. Inside,
/// stackExhausted() becomes true when less than a safety margin is left.
void runWithLargeStack(size_t stackBytes, const std::function<void()> &fn);

/// True when the current thread has used most of the stack that
/// runWithLargeStack gave it (always false on other threads).
bool stackExhausted();

/// Thrown by recursive walkers when stackExhausted(); caught where the
/// error can be reported with a position.
struct NestingTooDeep {};

} // namespace ppc
