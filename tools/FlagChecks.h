//===- tools/FlagChecks.h - flag values checked with a clear message --*- C++ -*-===//
//
// Checks for numeric flags of ppc and ppc-opt that CLI11's own would let
// through (nan, a negative seed wrapped to 2^64 - 1) or describe badly
// ("Value abc not in range 1 to 100000000", "not in range 0.000000 to
// 1797693134862315708..."). Each says what it wants and what it got.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace ppc::tools {

/// An integer from lo to hi (a leading '+' allowed).
inline CLI::Validator integerIn(int64_t lo, int64_t hi) {
  const std::string range = std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string &text) -> std::string {
        const char *first = text.data() + (!text.empty() && text[0] == '+'), *last = text.data() + text.size();
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(first, last, v);
        if (first == last || ec != std::errc() || end != last || v < lo || v > hi)
          return "must be an integer from " + range + "; got '" + text + "'";
        return {};
      },
      "INT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}

/// A finite number >= 0.
inline const CLI::Validator &finiteNonNegative() {
  static const CLI::Validator v(
      [](std::string &text) -> std::string {
        char *end = nullptr;
        const double x = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(x) || x < 0)
          return "must be a finite number >= 0; got '" + text + "'";
        return {};
      },
      "NUMBER>=0");
  return v;
}

/// An unsigned 64-bit integer (a seed).
inline const CLI::Validator &unsigned64() {
  static const CLI::Validator v(
      [](std::string &text) -> std::string {
        if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos ||
            (text.size() == 20 && text > "18446744073709551615"))
          return "must be an integer from 0 to 18446744073709551615; got '" + text + "'";
        return {};
      },
      "UINT64");
  return v;
}

} // namespace ppc::tools
