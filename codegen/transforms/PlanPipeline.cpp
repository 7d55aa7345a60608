//===- codegen/transforms/PlanPipeline.cpp - the plan's steps, in order --===//
//
// The back half of the compiler at a glance, as passes/Pipeline.cpp is the
// front half: a scheduled module is lowered to a plan (codegen/plan/), then
// these transformations run in this order (one file each in this folder),
// then the plan is JIT-compiled (codegen/llvm/) or interpreted
// (codegen/exec/). Every one of them can be left out with
// --disable-plan-opt=NAME, and --plan-passes=a,b,c runs a chosen list.
//
//===----------------------------------------------------------------------===//
#include "codegen/transforms/PlanPassManager.h"
#include "codegen/transforms/Transforms.h"

namespace ppc::codegen {

const std::vector<PlanPassInfo> &loweringChoices() {
  static const std::vector<PlanPassInfo> choices = {
      {"product-form",
       "categorical posteriors as normalized products of exponential tables of their Dirichlet parents "
       "(codegen/plan/ProductForm.cpp); off: a softmax of summed messages",
       nullptr},
  };
  return choices;
}

const std::vector<PlanPassInfo> &registeredPlanPasses() {
  static const std::vector<PlanPassInfo> passes = {
      {"fold-products", "`fill 1; mul a; mul b` on a product-form row becomes one `mul2 a b`",
       foldProductIdentities},
      {"batch-statistics",
       "an observed (Mv)Gaussian's per-datum, per-case messages and ELBO terms become matrix products of the "
       "data's sufficient statistics",
       batchObservedStatistics},
      {"batch-linear",
       "an observed Bernoulli's per-datum, per-column, per-case messages, ELBO terms and evidence become the "
       "products W^T X and X H^T",
       batchLinearStatistics},
      {"split-cases",
       "the mixtures' dense products (Gaussian and 0/1 data) run as parallel calls on ranges of the cases, one per "
       "thread (--threads)",
       splitCasesOverThreads},
      {"batch-dot",
       "an inner product with a known operand (w.dot(x(i))) runs on blocks of rows before and after its data "
       "loop, its message's X^T X tabulated once",
       batchInnerProducts},
      {"variance-sums",
       "an inner product's per-row variances x_i^T Cov x_i, where only their sum is read (a Gaussian child "
       "with a global precision), become tr(Cov X^T X) from X^T X tabulated once",
       deferInnerProductVariances},
      {"affine-rows",
       "an inner product's message rows affine in one data column (a Gaussian child's tau (y_i - b)) are summed "
       "from X^T 1, X^T y and X^T X tabulated once",
       sumAffineMessageRows},
      {"row-fission", "statistics and entropy calls that end a loop run on all its rows after it", hoistRowKernels},
      {"column-fission", "datum-major column sums into a posterior's rows become one tiled parallel loop",
       splitColumnSums},
      {"share-entropy",
       "a posterior's statistics also store what its entropy reads (a Dirichlet's log normalizers, an "
       "MvGaussian's or Wishart's log-determinants)",
       shareEntropies},
      {"fuse-normalizers", "a categorical's product, normalization and message become one call",
       fuseProductNormalizers},
      {"drop-unread", "optional outputs of scratch posteriors that nothing reads are not computed",
       dropUnreadOutputs},
      {"batch-logs", "the log normalizers a fused refresh adds to the ELBO are summed once after its loop",
       batchLogNormalizers},
      {"split-reductions",
       "calls that add each element's message into a global run in a loop of their own after its row loop, "
       "which then vectorizes (the same sums in the same order)",
       splitReductions},
      {"balance-chunks", "parallel loops over ragged elements split at equal cost, not equal counts",
       balanceChunks},
      {"block-rows",
       "data loops that read rows of a large table run in batches of elements by blocks of rows sized to the L2",
       [](Plan &p) { return blockIndexedRows(p, p.l2CacheBytes); }},
      {"prefetch", "loops that read rows of a large table chosen by a datum prefetch a few rows ahead",
       prefetchIndexedRows},
      {"gather-dots",
       "a factored sum's loop over an element's data (LDA's tokens), one dot product and axpy per datum on the "
       "table row it chooses, becomes one call: the dot products, the divisions, then the same sum in the same "
       "order",
       gatherFactoredDots},
      {"local-rows",
       "an element's rows of a table that each of its sweeps reads are copied out of the table once, before the "
       "sweeps, which read the copy",
       copyLocalRows},
      {"defer-stats",
       "a loop that computes a Dirichlet's statistics only for their exponentials (LDA's sweeps) computes the "
       "exponentials without the logarithms, and the statistics once after the loop",
       deferLoopStatistics},
      {"fuse-element-loops",
       "adjacent loops over the same elements (a mixture's components) whose iterations touch only their "
       "element's rows become one loop, parallel when one of them was, moved past the statements between that "
       "touch none of their buffers",
       fuseElementLoops},
      {"parallel-zero", "large top-level zero-fills become parallel loops over blocks", parallelizeLargeZeros},
      {"skip-elbo",
       "the iteration block's statements that only add a term to the ELBO run under a switch, which iterations "
       "that do not evaluate the ELBO (--elbo-every) turn off",
       guardElboTerms},
  };
  return passes;
}

} // namespace ppc::codegen
