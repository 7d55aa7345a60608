//===- codegen/exec/Stochastic.h - a stochastic variational step ----------===//
//
// Stochastic variational inference (Hoffman, Blei, Wang & Paisley, JMLR
// 2013; docs/svi.md) on a plan whose partitioned plate holds one batch of
// the data: the plan's distributed loops (every top-level loop over that
// plate) sum the batch's messages to the globals. After each such loop,
// this hook replaces the batch's sum S in each accumulator by the step
//
//     E <- (1 - rho) E + rho (D / n) S
//
// where E is the data's part of the accumulator so far, D the data size and
// n the batch's elements: the global's natural parameters (its prior's
// message plus E) move by rho toward the estimate the batch gives of the
// whole data's. The loop's ELBO terms are scaled by D / n likewise. With
// one batch of all the data and rho = 1, a step is a batch iteration.
//
// A message from the data alone (a conjugate global's, whose other
// parents are constants) is summed in the init block only: the schedule
// hoists it out of the iteration, which would compute it again unchanged.
// A later batch's init block takes the step for such an accumulator, as no
// loop of the iteration will.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ppc::codegen {

struct Plan;
struct Stmt;

class StochasticStep {
public:
  enum class Mode : uint8_t {
    Start,   ///< the first batch's init block: E = (D / n) S (the start of the globals)
    Discard, ///< a later batch's init block: E unchanged (the globals are restored after it), but
             ///< stepped as in Blend for the accumulators only the init block sums (steppedInInit)
    Blend,   ///< a step: E = (1 - rho) E + rho (D / n) S, from E as the step found it
    Keep,    ///< after the step (final, ELBO blocks): E unchanged, S dropped
  };
  /// The plan whose state the next loops run over (a batch of another
  /// shape runs another plan; the accumulators go by name).
  void setPlan(const Plan &plan);
  /// The accumulators (buffers of the plan) that the init block's loops over
  /// the batch sum and the iteration's do not: a later batch's init block
  /// steps them, and the globals restored after it must leave them alone.
  const std::set<int32_t> &steppedInInit() const { return steppedInInit_; }
  /// Checks that the plan's distributed loops sum into accumulators of the
  /// globals only; an error names the buffer.
  static std::string unsupported(const Plan &plan);

  Mode mode = Mode::Start;
  double rho = 1, scale = 1; ///< the step size and D / n
  /// Starts a step.
  void beginStep() { stepStart_.clear(); }

  /// Around a distributed loop over the buffers of a state.
  void before(const Stmt &loop, void *const *buffers);
  double after(const Stmt &loop, void *const *buffers, double elbo);

  /// The data's part of each accumulator (by buffer name), saved in checkpoints.
  std::map<std::string, std::vector<double>> effective;

private:
  const Plan *plan_ = nullptr;
  std::set<int32_t> steppedInInit_;
  std::map<int32_t, std::vector<double>> before_;
  std::map<std::string, std::vector<double>> stepStart_; ///< E when the step began, by accumulator
};

/// Robbins-Monro step sizes: rho_t = (tau0 + t)^-kappa, t = 1, 2, ...
double stepSize(double tau0, double kappa, int64_t t);

} // namespace ppc::codegen
