//===- codegen/transforms/Transforms.h - the plan transformations --------===//
//
// One entry point per transformation, one transformation per file of this
// folder. Each changes a plan without changing what it computes (the same
// numbers, or the same sums in another order where its comment says so) and
// returns how many places it changed. The pass manager runs them in the order
// of codegen/transforms/PlanPipeline.cpp; tests call them directly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>

#include "codegen/plan/Plan.h"

namespace ppc::codegen {

/// `fill 1; mul a; mul b` on a product-form row becomes `mul2 a b`
/// (ProductIdentityFolding.cpp).
int foldProductIdentities(Plan &p);

/// Sums over a data plate of an observed Gaussian or MvGaussian factor's
/// messages and ELBO terms, case by case, become matrix products of the
/// data's tabulated sufficient statistics (BatchStatistics.cpp).
int batchObservedStatistics(Plan &p);

/// The mixtures' dense products (weighted moments, moment products), one
/// call each, become parallel loops of calls on ranges of the cases, one per
/// thread of the plan (CaseSplitting.cpp).
int splitCasesOverThreads(Plan &p);

/// The same for observed factors linear in a scalar datum (a Bernoulli in a
/// mixture, column by column): weighted column means W^T X and linear forms
/// X H^T (LinearStatistics.cpp).
int batchLinearStatistics(Plan &p);

/// Per-element calls of statistics and entropy row kernels that end a loop
/// become calls on all its rows after it (RowKernelFission.cpp).
/// The calls `make(first, count, block)` covering rows [0, bound): one call
/// when the bound is unknown or under two blocks, else a loop over whole
/// blocks of `rowsPerBlock` (parallel as asked, with these reductions), then
/// one call on the rest, block index `blocks` (RowBlocks.cpp).
void callsOnRowBlocks(Plan &p, ExprId bound, int64_t rowsPerBlock, bool parallel, std::vector<int32_t> reductions,
                      const std::function<Stmt(ExprId first, ExprId count, ExprId block)> &make,
                      std::vector<Stmt> &out);

/// Inner products with a known operand's rows (w.dot(x(i))): their forward
/// statistics before the data loop and their messages after it, as calls on
/// blocks of rows, with X^T X tabulated once (BatchDot.cpp).
int batchInnerProducts(Plan &p);

/// Where every reader of an inner product's rows of second moments sums
/// them affinely with the same coefficient per row, the rows' variances
/// x_i^T Cov x_i become one sum tr(Cov X^T X) (VarianceSums.cpp).
int deferInnerProductVariances(Plan &p);

/// An inner product's message rows that are affine in one data column (a
/// Gaussian child's e_i = (tau (y_i - b), -tau / 2)) are summed from X^T 1,
/// X^T y and X^T X tabulated once, not from a pass over X (AffineRows.cpp).
int sumAffineMessageRows(Plan &p);
int hoistRowKernels(Plan &p);

/// Parallel loops over a posterior's rows that add column k of a
/// datum-major sum to row k split around that call, which becomes a
/// parallel loop adding every column by tiles (ColumnFission.cpp).
int splitColumnSums(Plan &p);

/// A posterior's statistics in the iteration block also store what its
/// entropy in the ELBO block needs (a Dirichlet's log normalizers, an
/// MvGaussian's or Wishart's log-determinants), which the entropy then reads
/// instead of computing again (EntropySharing.cpp).
int shareEntropies(Plan &p);

/// A categorical's product, normalization and message to a parent, when
/// nothing else reads the rows between them, become one call that stores
/// neither (ProductNormalizerFusion.cpp).
int fuseProductNormalizers(Plan &p);

/// Optional outputs (the random initialization's log q) of scratch
/// posteriors that no statement reads are not computed (UnreadOutputs.cpp).
int dropUnreadOutputs(Plan &p);

/// The log normalizers a fused refresh adds to the ELBO are summed by one
/// vectorized call after its loop (LogBatching.cpp).
int batchLogNormalizers(Plan &p);

/// Calls that add each element's message into a loop's reductions move to a
/// loop of their own after it, so that the row work left vectorizes; the
/// same sums in the same order (ReductionFission.cpp).
int splitReductions(Plan &p);

/// A factored sum's loop over an element's data, one ppc_dot_inverse_axpy per
/// datum on the table row the datum chooses, becomes one call on the data's
/// index and weight rows (GatherDots.cpp): the same sum in the same order.
int gatherFactoredDots(Plan &p);

/// An element's rows of a table that every one of its sweeps reads (after
/// gather-dots) are copied out of the table once, before the sweeps, which
/// then read the copy (LocalRows.cpp): the same values.
int copyLocalRows(Plan &p);

/// A loop that computes a Dirichlet's statistics only for their exponential
/// table (LDA's sweeps) computes the table from the natural parameters, and
/// the statistics after the loop (DeferStats.cpp): the same statistics, the
/// table equal to rounding.
int deferLoopStatistics(Plan &p);

/// Parallel loops whose elements run loops over their data (ragged plates)
/// get the cumulative cost of their elements, so that threads get equal
/// work, not equal counts (ChunkBalancing.cpp).
int balanceChunks(Plan &p);

/// Parallel loops whose elements' data loops read rows of a large table
/// chosen by a datum run in batches of elements, their data by blocks of
/// the table's rows (RowBlocking.cpp), sized to a per-core L2 cache of
/// `l2Bytes` (none below 2 MiB); the pipeline passes the plan's
/// l2CacheBytes.
int blockIndexedRows(Plan &p, int64_t l2Bytes);

/// Loops that read rows of a large table chosen by a datum prefetch the
/// row of a datum a few iterations ahead (RowPrefetch.cpp).
int prefetchIndexedRows(Plan &p);

/// Top-level zero-fills of 65536 entries or more become parallel loops
/// over blocks (ParallelZero.cpp).
int parallelizeLargeZeros(Plan &p);

/// Adjacent loops over the same elements whose iterations touch only their
/// element's rows of whatever statements change become one loop, parallel
/// when one of them was (ElementLoopFusion.cpp).
int fuseElementLoops(Plan &p);

/// The iteration block's statements that only add a term to the ELBO run
/// under a switch (the buffer Plan::elboSwitch) that iterations which do
/// not evaluate the ELBO turn off (ElboGuards.cpp, --elbo-every).
int guardElboTerms(Plan &p);

} // namespace ppc::codegen
