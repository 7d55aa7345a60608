//===- tools/FlagChecks.h - flag values checked with a clear message --*- C++ -*-===//
//
// Checks for numeric flags of ppc and ppc-opt that CLI11's own would let
// through (nan, a negative seed wrapped to 2^64 - 1) or describe badly
// ("Value abc not in range 1 to 100000000", "not in range 0.000000 to
// 1797693134862315708...") or read differently from what it checked ("010"
// as octal 8). Each says what it wants and what it got; the integer ones
// rewrite the text as plain decimal digits for CLI11 (->transform).
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

/// The decimal integer `text` (a leading '+' allowed), rewritten as its
/// plain digits: CLI11 converts with base 0, where "010" would be octal 8
/// and "0x10" hex. Use with ->transform(), which hands the rewritten text on
/// (->check() works on a copy).
template <typename Int> bool decimal(std::string &text, Int &value) {
  const char *first = text.data() + (!text.empty() && text[0] == '+'), *last = text.data() + text.size();
  if (first != text.data() && first != last && *first == '-') // "+-5"
    return false;
  const auto [end, ec] = std::from_chars(first, last, value);
  if (first == last || ec != std::errc() || end != last)
    return false;
  text = std::to_string(value);
  return true;
}

/// An integer from lo to hi, in decimal (->transform).
inline CLI::Validator integerIn(int64_t lo, int64_t hi) {
  const std::string range = std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [lo, hi, range](std::string &text) -> std::string {
        const std::string given = text;
        int64_t v = 0;
        if (!decimal(text, v) || v < lo || v > hi) {
          text = given;
          return "must be an integer from " + range + "; got '" + given + "'";
        }
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

/// An unsigned 64-bit integer (a seed), in decimal (->transform).
inline const CLI::Validator &unsigned64() {
  static const CLI::Validator v(
      [](std::string &text) -> std::string {
        const std::string given = text;
        uint64_t value = 0;
        if (!decimal(text, value)) { // from_chars takes no sign for an unsigned type
          text = given;
          return "must be an integer from 0 to 18446744073709551615; got '" + given + "'";
        }
        return {};
      },
      "UINT64");
  return v;
}

/// CLI11's message for a parse error, said in ppc's words where CLI11's
/// own reads oddly ("--out: At Most 1 required but received 2").
inline std::string parseErrorMessage(const CLI::ParseError &e) {
  const std::string what = e.what();
  const std::string mark = ": At Most 1 required but received ";
  if (const size_t at = what.find(mark); at != std::string::npos)
    return what.substr(0, at) + " is given " + what.substr(at + mark.size()) + " times; it takes one value";
  return what;
}

} // namespace ppc::tools
