//===- codegen/exec/JsonFields.h - Checked integers from JSON ---*- C++ -*-===//
//
// The integers of a checkpoint's manifest, read back by --resume. The file
// may have been edited or damaged, and nlohmann's get<int>() of a value such
// as 1e50 is undefined behaviour (a float converted out of range), so each
// integer is checked for its type and range first and a bad one throws, as
// every other malformed field does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ppc::codegen {

/// \p value as a T, or std::out_of_range naming \p what if it is not an
/// integer T holds.
template <typename T, typename Json> T integerValue(const Json &value, const std::string &what = "a count") {
  static_assert(std::is_integral_v<T>, "an integer type");
  if (value.is_number_unsigned()) {
    const uint64_t u = value.template get<uint64_t>();
    if (u <= uint64_t(std::numeric_limits<T>::max()))
      return T(u);
  } else if (value.is_number_integer()) {
    const int64_t i = value.template get<int64_t>();
    if constexpr (std::is_signed_v<T>) {
      if (i >= int64_t(std::numeric_limits<T>::min()) && i <= int64_t(std::numeric_limits<T>::max()))
        return T(i);
    } else if (i >= 0 && uint64_t(i) <= uint64_t(std::numeric_limits<T>::max())) {
      return T(i);
    }
  }
  throw std::out_of_range(what + " is " + value.dump() + ", not an integer from " +
                          std::to_string(std::numeric_limits<T>::min()) + " to " +
                          std::to_string(std::numeric_limits<T>::max()));
}

/// The integer field \p key of the object \p j (nlohmann::json::out_of_range
/// if absent, std::out_of_range if not an integer T holds).
template <typename T, typename Json> T integerAt(const Json &j, const std::string &key) {
  return integerValue<T>(j.at(key), "'" + key + "'");
}

/// The array \p j of integers.
template <typename T, typename Json> std::vector<T> integersIn(const Json &j, const std::string &what = "a list") {
  if (!j.is_array())
    throw std::out_of_range(what + " is not a list");
  std::vector<T> out;
  for (const auto &value : j)
    out.push_back(integerValue<T>(value, "an element of " + what));
  return out;
}

} // namespace ppc::codegen
