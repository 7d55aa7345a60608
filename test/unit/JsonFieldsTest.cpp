//===- test/unit/JsonFieldsTest.cpp - Checked integers from JSON ----------===//
//
// --resume reads its step, iteration, process count and seed through these:
// a value that is not an integer of the field's type must throw, never be
// converted (1e50 to int was undefined behaviour the fuzzer found).
//
//===----------------------------------------------------------------------===//
#include "codegen/exec/JsonFields.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using ppc::codegen::integerAt;
using ppc::codegen::integersIn;
using ppc::codegen::integerValue;
using json = nlohmann::json;

TEST(JsonFields, IntegersInRangeAreRead) {
  EXPECT_EQ(integerValue<int>(json::parse("-7")), -7);
  EXPECT_EQ(integerValue<int>(json::parse("2147483647")), INT32_MAX);
  EXPECT_EQ(integerValue<int>(json::parse("-2147483648")), INT32_MIN);
  EXPECT_EQ(integerValue<int64_t>(json::parse("-9223372036854775808")), INT64_MIN);
  EXPECT_EQ(integerValue<uint64_t>(json::parse("18446744073709551615")), UINT64_MAX);
  EXPECT_EQ(integerValue<size_t>(json::parse("0")), 0u);
  EXPECT_EQ(integerAt<int64_t>(json::parse(R"({"step": 12})"), "step"), 12);
  EXPECT_EQ(integersIn<int64_t>(json::parse("[1, 3, 5]")), (std::vector<int64_t>{1, 3, 5}));
}

TEST(JsonFields, OtherValuesThrow) {
  for (const char *text : {"1e50", "1.0", "-1e300", "\"3\"", "null", "true", "[1]", "{}"})
    EXPECT_THROW(integerValue<int>(json::parse(text)), std::exception) << text;
  EXPECT_THROW(integerValue<int>(json::parse("2147483648")), std::exception);
  EXPECT_THROW(integerValue<int>(json::parse("-2147483649")), std::exception);
  EXPECT_THROW(integerValue<int64_t>(json::parse("9223372036854775808")), std::exception);
  EXPECT_THROW(integerValue<uint64_t>(json::parse("-1")), std::exception);
  EXPECT_THROW(integerValue<size_t>(json::parse("-1")), std::exception);
  EXPECT_THROW(integerAt<int>(json::parse(R"({"step": 1})"), "steps"), std::exception);
  EXPECT_THROW(integersIn<int64_t>(json::parse("[1, 2.5]")), std::exception);
  EXPECT_THROW(integersIn<int64_t>(json::parse(R"({"a": 1})")), std::exception);
}
