//===- codegen/exec/Stochastic.cpp - a stochastic variational step --------===//
#include "codegen/exec/Stochastic.h"

#include "codegen/plan/Plan.h"

#include <algorithm>
#include <cmath>

namespace ppc::codegen {

std::string StochasticStep::unsupported(const Plan &plan) {
  const std::set<int32_t> global(plan.globalState.begin(), plan.globalState.end());
  for (const auto &block : plan.blocks) {
    for (const Stmt &s : block) {
      if (s.kind != Stmt::Kind::Loop || !s.distributed)
        continue;
      for (int32_t b : s.reductions)
        if (!global.count(b))
          return "the loop over the data plate sums '" + plan.buffers[size_t(b)].name +
                 "', which is not a message to a global variable";
    }
  }
  return {};
}

void StochasticStep::setPlan(const Plan &plan) {
  plan_ = &plan;
  std::set<int32_t> iterated;
  for (const Stmt &s : plan.blocks[Plan::Iteration])
    if (s.kind == Stmt::Kind::Loop && s.distributed)
      iterated.insert(s.reductions.begin(), s.reductions.end());
  steppedInInit_.clear();
  for (const Stmt &s : plan.blocks[Plan::Init])
    if (s.kind == Stmt::Kind::Loop && s.distributed)
      for (int32_t b : s.reductions)
        if (!iterated.count(b))
          steppedInInit_.insert(b);
}

void StochasticStep::before(const Stmt &loop, void *const *buffers) {
  for (int32_t b : loop.reductions) {
    const double *p = static_cast<const double *>(buffers[b]);
    before_[b].assign(p, p + plan_->buffers[size_t(b)].size);
  }
}

double StochasticStep::after(const Stmt &loop, void *const *buffers, double elbo) {
  for (int32_t b : loop.reductions) {
    double *acc = static_cast<double *>(buffers[b]);
    const std::vector<double> &was = before_[b];
    const std::string &name = plan_->buffers[size_t(b)].name;
    std::vector<double> &e = effective[name];
    const size_t n = was.size();
    e.resize(n, 0.0);
    // A message from the data alone: this init block is its only sum, so the step.
    const Mode m = (mode == Mode::Discard && steppedInInit_.count(b)) ? Mode::Blend : mode;
    // A schedule may update a global twice in an iteration (a mean, its
    // precision, the mean again): the later sum replaces the earlier one
    // in the step, which starts from the accumulator as the step found it.
    const std::vector<double> &start = m == Mode::Blend ? stepStart_.try_emplace(name, e).first->second : e;
    for (size_t i = 0; i < n; ++i) {
      const double sum = acc[i] - was[i]; // the batch's sum (exact when the loop began from 0)
      switch (m) {
      case Mode::Start: e[i] = scale * sum; break;
      case Mode::Blend: e[i] = (1 - rho) * start[i] + rho * (scale * sum); break;
      case Mode::Discard:
      case Mode::Keep: break;
      }
      acc[i] = was[i] + e[i];
    }
  }
  return scale * elbo;
}

double stepSize(double tau0, double kappa, int64_t t) { return std::pow(tau0 + double(t), -kappa); }

} // namespace ppc::codegen
