// The stochastic step of codegen/exec/Stochastic.h, on hand-made loops: the
// Robbins-Monro blend of a batch's sum into an accumulator, scaled to the
// data size, in each mode, against the formula computed here.
#include "codegen/exec/Stochastic.h"
#include "codegen/plan/Plan.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace ppc::codegen;

namespace {

/// A plan with one accumulator of 3 entries (a global's, or not) and a
/// distributed loop that sums into it.
struct OneLoop {
  Plan plan;
  Stmt loop;
  std::vector<double> acc = {0, 0, 0};
  void *buffers[1] = {acc.data()};
  explicit OneLoop(bool global = true) {
    Buffer b;
    b.name = "phi.B";
    b.size = 3;
    plan.buffers.push_back(b);
    if (global)
      plan.globalState.push_back(0);
    loop.kind = Stmt::Kind::Loop;
    loop.parallel = loop.distributed = true;
    loop.reductions = {0};
    plan.blocks[Plan::Iteration].push_back(loop);
  }
  /// The loop as the plan runs it: zeroed before, `sum` added, `elbo` returned.
  double run(StochasticStep &step, const std::vector<double> &sum, double elbo) {
    std::fill(acc.begin(), acc.end(), 0.0);
    step.before(loop, buffers);
    for (size_t i = 0; i < 3; ++i)
      acc[i] += sum[i];
    return step.after(loop, buffers, elbo);
  }
};

} // namespace

TEST(StochasticStep, StartThenBlendsTowardTheScaledBatch) {
  OneLoop l;
  StochasticStep step;
  step.setPlan(l.plan);
  step.scale = 10; // D / n
  step.mode = StochasticStep::Mode::Start;
  EXPECT_EQ(l.run(step, {1, 2, 3}, -5.0), -50.0); // the batch's ELBO terms scaled to the data
  EXPECT_EQ(l.acc, (std::vector<double>{10, 20, 30}));
  std::vector<double> e = {10, 20, 30};
  double rho = stepSize(1, 0.7, 1);
  EXPECT_DOUBLE_EQ(rho, std::pow(2.0, -0.7));
  step.mode = StochasticStep::Mode::Blend;
  step.rho = rho;
  step.beginStep();
  l.run(step, {4, 0, 1}, 0);
  const std::vector<double> sum = {4, 0, 1};
  for (size_t i = 0; i < 3; ++i) {
    e[i] = (1 - rho) * e[i] + rho * 10 * sum[i];
    EXPECT_DOUBLE_EQ(l.acc[i], e[i]);
    EXPECT_DOUBLE_EQ(step.effective["phi.B"][i], e[i]);
  }
}

TEST(StochasticStep, ASecondSumInOneStepReplacesTheFirst) {
  // A global updated twice in an iteration (a mean, its precision, the mean
  // again): the second sum blends from the accumulator as the step found it.
  OneLoop l;
  StochasticStep step;
  step.setPlan(l.plan);
  step.scale = 2;
  step.mode = StochasticStep::Mode::Start;
  l.run(step, {1, 1, 1}, 0);
  step.mode = StochasticStep::Mode::Blend;
  step.rho = 0.25;
  step.beginStep();
  l.run(step, {100, 100, 100}, 0);
  l.run(step, {3, 5, 7}, 0);
  const double start[] = {2, 2, 2}, second[] = {3, 5, 7};
  for (size_t i = 0; i < 3; ++i)
    EXPECT_DOUBLE_EQ(l.acc[i], 0.75 * start[i] + 0.25 * 2 * second[i]);
  // A new step starts from the blended value.
  step.beginStep();
  l.run(step, {0, 0, 0}, 0);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_DOUBLE_EQ(l.acc[i], 0.75 * (0.75 * start[i] + 0.5 * second[i]));
}

TEST(StochasticStep, RhoOneAndScaleOneIsTheBatchSumExactly) {
  OneLoop l;
  StochasticStep step;
  step.setPlan(l.plan);
  step.mode = StochasticStep::Mode::Start;
  l.run(step, {0.1, 0.2, 0.3}, 0);
  step.mode = StochasticStep::Mode::Blend;
  step.rho = stepSize(0, 0, 7);
  EXPECT_EQ(step.rho, 1.0);
  step.beginStep();
  const std::vector<double> sum = {1.0 / 3, 2.0 / 7, 1e-300};
  EXPECT_EQ(l.run(step, sum, 0.1), 0.1);
  EXPECT_EQ(l.acc, sum); // bit for bit: a batch iteration's sum
}

TEST(StochasticStep, DiscardAndKeepLeaveTheGlobalsAsTheyWere) {
  OneLoop l;
  StochasticStep step;
  step.setPlan(l.plan);
  step.scale = 4;
  step.mode = StochasticStep::Mode::Start;
  l.run(step, {1, 2, 3}, 0);
  for (auto mode : {StochasticStep::Mode::Discard, StochasticStep::Mode::Keep}) {
    step.mode = mode;
    EXPECT_EQ(l.run(step, {9, 9, 9}, 1.5), 6.0); // ELBO terms still scaled
    EXPECT_EQ(l.acc, (std::vector<double>{4, 8, 12}));
  }
}

TEST(StochasticStep, ALaterInitBlockStepsASumOnlyItMakes) {
  // A message from the data alone is hoisted into the init block, which no
  // loop of the iteration sums again: a later batch's init block (Discard)
  // takes the step for it; Keep (resumed after the last step) does not.
  OneLoop l;
  l.plan.blocks[Plan::Iteration].clear();
  l.plan.blocks[Plan::Init].push_back(l.loop);
  StochasticStep step;
  step.setPlan(l.plan);
  EXPECT_EQ(step.steppedInInit(), (std::set<int32_t>{0}));
  step.scale = 4;
  step.mode = StochasticStep::Mode::Start;
  l.run(step, {1, 2, 3}, 0);
  step.rho = 0.25;
  step.beginStep();
  step.mode = StochasticStep::Mode::Discard;
  EXPECT_EQ(l.run(step, {9, 9, 9}, 1.5), 6.0);
  const double start[] = {4, 8, 12};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(l.acc[i], 0.75 * start[i] + 0.25 * 4 * 9);
    EXPECT_DOUBLE_EQ(step.effective["phi.B"][i], l.acc[i]);
  }
  step.mode = StochasticStep::Mode::Keep;
  l.run(step, {100, 100, 100}, 0);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_DOUBLE_EQ(l.acc[i], 0.75 * start[i] + 9);
  // Summed in the iteration too (a mixture's weights): the init block's sum
  // is the random start's, dropped as before.
  OneLoop both;
  both.plan.blocks[Plan::Init].push_back(both.loop);
  step.setPlan(both.plan);
  EXPECT_TRUE(step.steppedInInit().empty());
}

TEST(StochasticStep, RefusesASumThatIsNoGlobalsMessage) {
  OneLoop global(true), local(false);
  EXPECT_EQ(StochasticStep::unsupported(global.plan), "");
  EXPECT_EQ(StochasticStep::unsupported(local.plan),
            "the loop over the data plate sums 'phi.B', which is not a message to a global variable");
}
