//===- codegen/exec/StreamCheckpoint.h - a stochastic run's state file ----===//
//
// What a stochastic run (--svi, tools/Stochastic.cpp) carries from step to
// step, and its checkpoint's state file, one per process: a line with the
// head's length, the head (JSON: step, the stream's offsets, the traces, the
// buffers' names and lengths), the buffers' doubles, then the XXH3 checksum
// of everything before it, as a batch run's state files end
// (codegen/exec/Checkpoint.cpp, docs/reliability.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Output.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ppc::codegen {

using NamedBuffers = std::map<std::string, std::vector<double>>;

struct StreamState {
  int64_t step = 0; ///< steps done
  /// The globals' buffers (a posterior's parameters, its tables).
  NamedBuffers globals;
  /// Per partitioned posterior: its elements in this epoch's batches so far
  /// (the random start of an element is keyed by its place in the stream).
  std::map<std::string, int64_t> offsets;
  rt::RunSummary summary; ///< its `stochastic` part engaged
};

/// The state file of `state` and the step's effective accumulators.
std::string encodeStreamState(const StreamState &state, const NamedBuffers &effective);

/// Reads back a state file written by encodeStreamState: its checksum
/// first (a damaged file is never read), then the head and the buffers,
/// each number checked (codegen/exec/JsonFields.h). Throws
/// std::runtime_error naming `path` and what is wrong; `dir` is the
/// checkpoint's, for the advice to start again.
void decodeStreamState(const std::string &bytes, const std::string &path, const std::string &dir, StreamState &state,
                       NamedBuffers &effective);

} // namespace ppc::codegen
