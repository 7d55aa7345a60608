//===- test/unit/StreamCheckpointTest.cpp - a stochastic run's state file -===//
//
// encodeStreamState / decodeStreamState (codegen/exec/StreamCheckpoint.h):
// a state comes back as it was written; a damaged file is refused by its
// checksum before anything is read; and a file with a matching checksum but
// numbers no ppc writes (edited, or another program's) is refused with what
// is wrong, never read past its end or converted out of range.
//
//===----------------------------------------------------------------------===//
#include "codegen/exec/StreamCheckpoint.h"

#include <gtest/gtest.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/xxhash.h>

#include <cstring>
#include <string>

using namespace ppc::codegen;

namespace {
StreamState sample() {
  StreamState s;
  s.step = 12;
  s.offsets = {{"theta", 340}, {"z", 7}};
  s.summary.elbo = {-10.5, -9.25};
  s.summary.time = {0.5, 1.0};
  s.summary.stochastic = ppc::rt::RunSummary::Stochastic();
  s.summary.stochastic->rho = {1.0, 0.5};
  s.summary.stochastic->heldout = {{10, 0.75, -8.5}};
  s.globals = {{"phi.q.eta", {1.0, 2.0, 3.0}}, {"phi.q.stats", {-0.5}}};
  return s;
}

/// `body` with the checksum a state file ends with.
std::string withChecksum(std::string body) {
  const uint64_t sum = llvm::xxh3_64bits(llvm::StringRef(body));
  body.append(reinterpret_cast<const char *>(&sum), sizeof sum);
  return body;
}

/// A length line and `head`, then `blob`, checksummed.
std::string file(const std::string &head, const std::string &blob = "") {
  return withChecksum(std::to_string(head.size()) + "\n" + head + blob);
}

std::string errorOf(const std::string &bytes) {
  StreamState s;
  s.summary.stochastic = ppc::rt::RunSummary::Stochastic();
  NamedBuffers effective;
  try {
    decodeStreamState(bytes, "state.bin", "ck", s, effective);
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

const std::string kHead = R"({"step":3,"offsets":{},"elbo":[],"time":[],"rho":[],"heldout":[],"buffers":[)";
} // namespace

TEST(StreamCheckpoint, StatesComeBackAsWritten) {
  const StreamState s = sample();
  const NamedBuffers effective = {{"phi.B", {4.0, 5.0}}, {"empty", {}}}; // an empty one: no null memcpy (UBSan)
  StreamState back;
  back.summary.stochastic = ppc::rt::RunSummary::Stochastic();
  NamedBuffers effectiveBack;
  decodeStreamState(encodeStreamState(s, effective), "state.bin", "ck", back, effectiveBack);
  EXPECT_EQ(back.step, 12);
  EXPECT_EQ(back.offsets, s.offsets);
  EXPECT_EQ(back.globals, s.globals);
  EXPECT_EQ(effectiveBack, effective);
  EXPECT_EQ(back.summary.elbo, s.summary.elbo);
  EXPECT_EQ(back.summary.time, s.summary.time);
  EXPECT_EQ(back.summary.stochastic->rho, s.summary.stochastic->rho);
  ASSERT_EQ(back.summary.stochastic->heldout.size(), 1u);
  EXPECT_EQ(back.summary.stochastic->heldout[0].step, 10);
  EXPECT_EQ(back.summary.stochastic->heldout[0].perObservation, -8.5);
}

TEST(StreamCheckpoint, AnyChangedByteIsDamage) {
  const std::string bytes = encodeStreamState(sample(), {});
  for (size_t at : {size_t(0), size_t(5), bytes.size() / 2, bytes.size() - 20, bytes.size() - 1}) {
    std::string bad = bytes;
    bad[at] = char(bad[at] ^ 0x10);
    EXPECT_NE(errorOf(bad).find("'state.bin' is damaged (its checksum does not match its contents)"),
              std::string::npos)
        << at;
  }
  EXPECT_NE(errorOf(bytes.substr(0, bytes.size() - 3)).find("is damaged"), std::string::npos);
  EXPECT_NE(errorOf("abc").find("is damaged"), std::string::npos);
  EXPECT_EQ(errorOf(bytes), "");
}

TEST(StreamCheckpoint, ChecksummedNonsenseIsRefusedWithItsReason) {
  // A length of 2^61 + 1 doubles: its bytes wrap around 2^64 to 8.
  EXPECT_EQ(errorOf(file(kHead + R"(["global","a",2305843009213693953]]})", std::string(8, '\0'))),
            "'state.bin' is truncated");
  EXPECT_EQ(errorOf(file(kHead + R"(["global","a",2]]})", std::string(8, '\0'))), "'state.bin' is truncated");
  EXPECT_EQ(errorOf(file(kHead + R"(["global","a",1]]})", std::string(9, '\0'))),
            "'state.bin' has bytes past its buffers");
  EXPECT_EQ(errorOf(withChecksum("99999\n{}")), "'state.bin' is truncated");
  EXPECT_EQ(errorOf(withChecksum("x1\n{}")), "'state.bin' is not a ppc state file");
  EXPECT_EQ(errorOf(file(R"({"step":1e50})")),
            "'step' is 1e+50, not an integer from -9223372036854775808 to 9223372036854775807");
  EXPECT_EQ(errorOf(file(R"({"step":-3})")), "'step' is negative");
  EXPECT_EQ(errorOf(file(R"({"step":3,"offsets":[1]})")), "'offsets' is not an object");
  EXPECT_NE(errorOf(file(R"({"step":3,"offsets":{"z":0.5}})")).find("an offset is 0.5"), std::string::npos);
  EXPECT_EQ(errorOf(file(kHead + R"(["global","a",1]]})", std::string(8, '\0'))), "");
}
