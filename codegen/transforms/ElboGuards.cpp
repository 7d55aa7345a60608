//===- codegen/transforms/ElboGuards.cpp - skip-elbo ----------------------===//
//
// A plan transformation, the last. The iteration block computes the ELBO
// terms of a nested schedule's elements while their rows are at hand (LDA:
// each document's log normalizers and the Dirichlet terms of its
// proportions, about 6% of an iteration on AP). With --elbo-every N the
// ELBO is evaluated every N iterations only, so the statements that only
// add a term to it (Stmt::elboOnly) are wrapped, each run of them, in a
// switch that the executor turns off in the iterations between
// (codegen/exec/Inference.cpp, which also skips the ELBO block):
//
//   for g < 1 { exit loop if elbo.on[0] < 0.5; elbo += ...; elbo += ... }
//
// Nothing else changes: the posteriors are the same bits whatever N.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"

#include <vector>

namespace ppc::codegen {
namespace {

class ElboGuards {
public:
  explicit ElboGuards(Plan &p) : p_(p) {}

  int run() {
    guardRuns(p_.blocks[Plan::Iteration]);
    return guarded_;
  }

private:
  void guardRuns(std::vector<Stmt> &body) {
    std::vector<Stmt> out;
    for (size_t i = 0; i < body.size();) {
      if (!body[i].elboOnly) {
        if (body[i].kind == Stmt::Kind::Loop)
          guardRuns(body[i].body);
        out.push_back(std::move(body[i++]));
        continue;
      }
      Stmt guard = switchedOn();
      while (i < body.size() && body[i].elboOnly)
        guard.body.push_back(std::move(body[i++]));
      out.push_back(std::move(guard));
      ++guarded_;
    }
    body = std::move(out);
  }

  Stmt switchedOn() {
    if (p_.elboSwitch < 0)
      p_.elboSwitch = edit::addBuffer(p_, "elbo.on", 1);
    return edit::whileSwitchedOn(p_, p_.elboSwitch, "the ELBO's own terms, in iterations that evaluate it (elbo.on)");
  }

  Plan &p_;
  int guarded_ = 0;
};

} // namespace

int guardElboTerms(Plan &p) { return ElboGuards(p).run(); }

} // namespace ppc::codegen
