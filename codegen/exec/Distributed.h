//===- codegen/exec/Distributed.h - the processes of a data-parallel run ---===//
//
// `mpirun -np N ppc ...` runs one process per part of the outermost data
// plate (docs/distributed.md). The plan's distributed loops run each
// process's elements; what they sum over the elements (the globals'
// statistics, the ELBO terms) is then summed over the processes here, in
// rank order, so that every process holds the same globals and a run
// depends only on N. The interface keeps MPI out of every other header.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ppc::codegen {

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// data[i] becomes the sum of every process's data[i], added in rank
  /// order (bit-identical on every process).
  virtual void sumInRankOrder(double *data, size_t n) = 0;
  /// The sum of `value` over the processes before this one.
  virtual int64_t exclusiveSum(int64_t value) = 0;
  /// True when every process passes true: the processes agree to go on
  /// (after a step that can fail on one of them, e.g. reading its data).
  virtual bool allOk(bool ok) = 0;
  /// Rank 0 gets every process's values concatenated in rank order (others
  /// get an empty vector).
  virtual std::vector<double> gatherToRoot(const std::vector<double> &mine) = 0;
  /// Rank 0's bytes on every process (e.g. a decision only rank 0 can make).
  virtual void broadcastFromRoot(std::string &bytes) = 0;
  virtual void barrier() = 0;
  /// Ends every process now (an error one process met alone, mid-run).
  [[noreturn]] virtual void abort(int code) = 0;
};

/// MPI, when this process was started by mpirun (OpenMPI's environment
/// says so); null when it was not, with `error` empty. MPI_Finalize runs
/// when the communicator is destroyed.
std::unique_ptr<Communicator> startMpiIfLaunched(int *argc, char ***argv, std::string &error);

} // namespace ppc::codegen
