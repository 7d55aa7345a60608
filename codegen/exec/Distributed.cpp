//===- codegen/exec/Distributed.cpp - MPI for data-parallel runs ----------===//
#include "codegen/exec/Distributed.h"

#include <algorithm>
#include <cstdlib>
#include <mpi.h>

namespace ppc::codegen {
namespace {

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCommunicator() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // Gathered on rank 0, added there in rank order, broadcast: a sum whose
  // order does not depend on MPI's choice of reduction algorithm.
  void sumInRankOrder(double *data, size_t n) override {
    constexpr size_t kChunk = size_t(1) << 24; // doubles per collective (MPI counts are int)
    for (size_t at = 0; at < n; at += kChunk) {
      int count = int(std::min(kChunk, n - at));
      if (rank_ == 0)
        all_.resize(size_t(count) * size_t(size_));
      MPI_Gather(data + at, count, MPI_DOUBLE, rank_ == 0 ? all_.data() : nullptr, count, MPI_DOUBLE, 0,
                 MPI_COMM_WORLD);
      if (rank_ == 0)
        for (int i = 0; i < count; ++i) {
          double sum = all_[size_t(i)];
          for (int r = 1; r < size_; ++r)
            sum += all_[size_t(r) * size_t(count) + size_t(i)];
          data[at + size_t(i)] = sum;
        }
      MPI_Bcast(data + at, count, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
  }

  int64_t exclusiveSum(int64_t value) override {
    long long v = value, out = 0;
    MPI_Exscan(&v, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return rank_ == 0 ? 0 : int64_t(out);
  }

  bool allOk(bool ok) override {
    int mine = ok ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all != 0;
  }

  std::vector<double> gatherToRoot(const std::vector<double> &mine) override {
    int count = int(mine.size());
    std::vector<int> counts(static_cast<size_t>(size_)), displs(static_cast<size_t>(size_));
    MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<double> all;
    if (rank_ == 0) {
      size_t total = 0;
      for (int r = 0; r < size_; ++r) {
        displs[size_t(r)] = int(total);
        total += size_t(counts[size_t(r)]);
      }
      all.resize(total);
    }
    MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    return all;
  }

  void broadcastFromRoot(std::string &bytes) override {
    unsigned long long n = bytes.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    bytes.resize(size_t(n));
    MPI_Bcast(bytes.data(), int(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  }

  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

private:
  int rank_ = 0, size_ = 1;
  std::vector<double> all_;
};

} // namespace

std::unique_ptr<Communicator> startMpiIfLaunched(int *argc, char ***argv, std::string &error) {
  // mpirun (OpenMPI's launcher, or a PMIx one) sets these; a plain run does
  // not pay for MPI_Init.
  if (!std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMIX_RANK"))
    return nullptr;
  if (MPI_Init(argc, argv) != MPI_SUCCESS) {
    error = "MPI_Init failed";
    return nullptr;
  }
  // Errors in MPI calls (a peer that died) end the job rather than return.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  return std::make_unique<MpiCommunicator>();
}

} // namespace ppc::codegen
