//===- passes/CyclicOrder.h - positions in a schedule that repeats -*- C++ -*-===//
//
// An iteration schedule runs again and again, so "the next update of x" and
// "the last update of x" are found in cyclic order. dce and the scheduler's
// repeat removal keep each node's live positions in an ordered set and ask
// these, one lookup each, instead of scanning the cycle.
//
//===----------------------------------------------------------------------===//
#ifndef PPC_PASSES_CYCLICORDER_H
#define PPC_PASSES_CYCLICORDER_H

#include <cstddef>
#include <set>

namespace ppc::passes {

/// How far after position i of a cycle of `length` positions the first
/// position in `at` is (i itself does not count), or `length` if none.
inline size_t cyclicDistanceAfter(const std::set<size_t> &at, size_t i, size_t length) {
  auto it = at.upper_bound(i);
  if (it == at.end())
    it = at.begin();
  if (it == at.end() || *it == i)
    return length;
  return (*it + length - i) % length;
}

/// How far before position i the last position in `at` is (i itself does
/// not count), or `length` if none.
inline size_t cyclicDistanceBefore(const std::set<size_t> &at, size_t i, size_t length) {
  auto it = at.lower_bound(i);
  if (it == at.begin())
    it = at.end();
  if (it == at.begin())
    return length;
  --it;
  return *it == i ? length : (i + length - *it) % length;
}

} // namespace ppc::passes

#endif
