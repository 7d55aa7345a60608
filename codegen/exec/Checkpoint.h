//===- codegen/exec/Checkpoint.h - saving and resuming a run --------------===//
//
// `--checkpoint DIR --checkpoint-every k` saves the whole variational state
// every k iterations; `--resume DIR` continues from the last one saved, and
// reaches the same posteriors as a run never stopped. In DIR:
//
//   state-<iteration>-<rank>.bin  each process's buffers (its part of the
//                                 data's locals, its copy of the globals)
//   checkpoint.json               the manifest: iteration, process count,
//                                 the plan's fingerprint, the seed, the
//                                 ELBO trace so far
//
// Every file is written to a temporary name, fsync'ed and renamed. The
// manifest is written (by rank 0) only once every process's state file is
// durable, and is the commit point: a run killed at any moment leaves the
// previous checkpoint whole. State files of older iterations are removed
// after the manifest moved on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ppc::rt { struct RunSummary; }

namespace ppc::codegen {

/// The checksum a checkpoint's state files end with (XXH3, 64 bits).
uint64_t checkpointChecksum(std::string_view bytes);
/// The error for a checkpoint file whose checksum does not match: `file`
/// damaged, and the advice to delete the checkpoint `dir` and start again.
std::string damagedCheckpoint(const std::string &file, const std::string &dir);

class Communicator;
class Inference;

class Checkpointer {
public:
  /// `comm`: the processes of a data-parallel run (null: one process).
  Checkpointer(std::string dir, const Inference &inference, Communicator *comm);

  /// Creates DIR if needed (every process calls it). False with `error` set
  /// when it cannot.
  bool prepare(std::string &error);
  /// Saves the state after `summary.iterations` iterations.
  bool save(const rt::RunSummary &summary, uint64_t seed, std::string &error);
  /// Restores the last checkpoint in DIR into `inference` (initialized with
  /// the same plan) and `summary` (the trace so far); `seed` gets the seed
  /// of the run that wrote it. Returns false with `error` set when DIR's
  /// checkpoint is damaged or belongs to another model, data, options or
  /// process count; `found` is false (and the result true) when DIR has
  /// no checkpoint yet, e.g. the run was killed before its first one.
  bool restore(Inference &inference, rt::RunSummary &summary, uint64_t &seed, bool &found, std::string &error);

  const std::string &directory() const { return dir_; }
  /// The L2 size the plan of DIR's checkpoint was sized to (0: none
  /// recorded or no checkpoint), so that a resume on another machine
  /// builds the same plan.
  static int64_t recordedL2CacheBytes(const std::string &dir);
  /// A hash of the plan's listing: same model, data sizes and options.
  uint64_t fingerprint() const { return fingerprint_; }

private:
  std::string statePath(int64_t iteration, int rank) const;
  std::string dir_;
  const Inference &inference_;
  Communicator *comm_;
  uint64_t fingerprint_ = 0;
};

} // namespace ppc::codegen
