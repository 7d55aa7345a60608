//===- codegen/plan/Plan.h - the plan: the executable form of a schedule ---===//
//
// The last IR before machine code (DESIGN.md §4, step 11). A schedule's
// `update`, `fuse` and `local` statements, bound to data, become loop nests of
// runtime kernel calls over flat buffers:
//
//   * every latent variable has two buffers, its posterior's natural
//     parameters (eta) and expected statistics, one row per plate element;
//   * every message statement has an accumulator shaped like its target's
//     eta: a marginal update is eta = sum of its messages' accumulators,
//     then statistics = stats(eta);
//   * observed data, plate sizes (CSR offsets for ragged plates) and the
//     constants kernels take by pointer are buffers filled at bind time.
//
// Indices are small expression trees over loop variables (a plate element's
// flat index is `offsets[parent] + i` for a ragged plate, `parent * n + i`
// otherwise). Two back ends run a plan: the reference interpreter
// (codegen/exec/Interpreter.cpp) and LLVM code generation
// (codegen/llvm/LLVMCodegen.cpp); they call the same kernels in the same
// order, so they agree to rounding.
//
// A plan is made by lowering a schedule (codegen/plan/Lowering.h), then
// changed by the plan transformations, in the order
// codegen/transforms/PlanPipeline.cpp lists them; printPlan is its textual
// form (--emit=plan, --print-after) and verifyPlan its invariants.
//
// A plan has five blocks: `init` (once), `iteration`, `final` (after the last
// iteration), `elbo` and `predict` (missing observations' predictive, once
// at the end). Each returns the sum of the ELBO terms it computes:
// the ELBO of the state after an iteration is the iteration's sum (terms of
// a nested schedule's elements, computed while their rows are at hand) plus
// the elbo block's (the rest).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Catalogue.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ppc {
class DiagnosticEngine;
namespace ir { class Module; class Value; struct Evaluation; }
namespace rt { struct BoundData; struct RuntimeSymbol; }
} // namespace ppc

namespace ppc::codegen {

using ExprId = int32_t;
constexpr ExprId kNoExpr = -1;

/// An integer (index) or floating-point (weight) expression.
struct Expr {
  enum class Kind : uint8_t {
    IntConst,    ///< value
    LoopVar,     ///< var
    AddInt,      ///< a + b
    MulInt,      ///< a * b
    LoadInt,     ///< int64 buffer[a]
    DoubleConst, ///< number
    LoadDouble,  ///< double buffer[a]
    IntToDouble, ///< (double) a
    AddDouble,   ///< a + b
    MulDouble,   ///< a * b
    SubDouble,   ///< a - b
  };
  Kind kind = Kind::IntConst;
  int64_t value = 0;
  double number = 0;
  int32_t var = 0, buffer = -1;
  ExprId a = kNoExpr, b = kNoExpr;
  bool isDouble() const { return kind >= Kind::DoubleConst; }
};

/// A kernel argument.
struct Arg {
  enum class Kind : uint8_t {
    Int,       ///< int64 expression
    Double,    ///< double expression
    Pointer,   ///< &buffer[index]
    Null,      ///< nullptr
    TempPointer///< pointer to a temporary holding a double expression
  };
  Kind kind = Kind::Int;
  ExprId expr = kNoExpr; ///< Int, Double, TempPointer: the value; Pointer: the element index
  int32_t buffer = -1;
};

struct Stmt {
  enum class Kind : uint8_t {
    Loop,       ///< for var in [0, bound): body
    Call,       ///< kernel(args); the result optionally added somewhere
    Zero,       ///< buffer[index .. index + count) = 0
    ExitBelow,  ///< leave the innermost loop if buffer[index] < threshold
  };
  Kind kind = Kind::Call;
  // Loop
  int32_t var = 0;
  ExprId bound = kNoExpr;
  std::vector<Stmt> body;
  /// A loop whose iterations may run on several threads (the outermost
  /// data plate's elements): each thread gets its own copy of `privates`
  /// (rows of the element being processed) and a zeroed copy of
  /// `reductions` (sums over the elements), which are added to the shared
  /// buffers after the loop in thread order, as are the ELBO terms.
  bool parallel = false;
  std::vector<int32_t> privates, reductions;
  /// The plate a loop iterates, where it is one (null: a posterior's rows).
  const ir::Value *plate = nullptr;
  /// A loop in batches (codegen/transforms/RowBlocking.cpp): the body runs once per
  /// `batch` consecutive iterations (of each thread's range, in a parallel
  /// loop), `var` the first of them and `batchVar` how many (the last batch
  /// of a range may be shorter); 0: one iteration at a time.
  int64_t batch = 0;
  int32_t batchVar = -1;
  /// A parallel loop's cumulative cost by element (an int64 bound-data
  /// buffer of bound + 1 entries, codegen/transforms/ChunkBalancing.cpp): its chunks
  /// split where the cost crosses each thread's share (-1: equal counts).
  int32_t costs = -1;
  /// A top-level loop over the partitioned plate of a data-parallel run
  /// (always `parallel`): each process runs its own elements, then its
  /// `reductions` and ELBO terms are summed over the processes.
  bool distributed = false;
  // Call
  const rt::RuntimeSymbol *kernel = nullptr;
  std::vector<Arg> args;
  /// Where the result goes: nowhere, the block's ELBO sum, added to
  /// buffer[index] (Slot) or multiplied into it (SlotProduct, no scale).
  enum class Result : uint8_t { Discard, Elbo, Slot, SlotProduct } result = Result::Discard;
  ExprId scale = kNoExpr; ///< the result is multiplied by this double (kNoExpr: 1)
  /// An ELBO term and nothing else (Result::Elbo, no output but its value):
  /// iterations that do not evaluate the ELBO (--elbo-every) skip it
  /// (codegen/transforms/ElboGuards.cpp). Set where such a term is made.
  bool elboOnly = false;
  // Zero, ExitBelow and Slot results
  int32_t buffer = -1;
  ExprId index = kNoExpr;
  int64_t count = 0;
  double threshold = 0; ///< ExitBelow
  /// What the statement computes, for --emit=llvm comments and errors.
  std::string note;
};

struct Buffer {
  std::string name;
  bool isInt = false;
  int64_t size = 0;
  std::vector<double> doubles; ///< initial contents (constants, data); empty: zeros
  std::vector<int64_t> ints;
  /// A memo of other buffers' contents (zeros: empty): valid only with the
  /// data it was computed from, so never carried into another run (not
  /// adopted by a recompiled plan, emptied when a checkpoint is restored).
  /// Also the batch copies of a loop's private rows (codegen/transforms/RowBlocking.cpp),
  /// which no statement reads before writing: nothing to save either.
  bool memo = false;
};

/// A latent variable's posterior in the buffers.
struct Posterior {
  const ir::Value *variable = nullptr; ///< the random variable (its IR name names outputs)
  Family family = Family::Gaussian;    ///< Beta and Dirichlet share a layout
  int64_t dimension = 1;               ///< K for Dirichlet, Categorical (2 for Beta)
  int64_t width = 1;                   ///< doubles per element (eta and stats)
  int64_t elements = 0;
  int32_t eta = -1, stats = -1;
  /// Randomly initialized (a gate condition: symmetry breaking) by the init
  /// block, from a counter-based generator keyed by (seed, posterior, element).
  bool randomInit = false;
  /// Kept for one element of the nested schedule's plate only (LDA's
  /// per-token indicators: no tokens x topics buffer). The buffers hold the
  /// rows of the element being processed; the posterior is not an output.
  /// Only for locals whose every message the nested loop recomputes for
  /// each element (not one computed once before the iterations, as a
  /// message from data with constant parameters: PlanBuilder::findWholeRowLocals).
  bool scratch = false;
  /// Exponential-domain tables of the statistics (-1: none): exp of each row
  /// shifted by its maximum, refreshed with the row; exp of each column (one
  /// datum across the elements) shifted by the column's maximum, refreshed
  /// before the schedule statements that read it.
  int32_t expRows = -1, expColumns = -1;
  /// The shifts of those tables (one per row, one per column), for the log
  /// normalizer of a categorical computed from them.
  int32_t expRowShifts = -1, expColumnShifts = -1;
  /// A datum-major copy of the statistics (ELBO terms that read one datum's
  /// entry for every case), refreshed before the loop that reads it.
  int32_t statsT = -1;
  /// Its rows are elements of the partitioned plate of a data-parallel run
  /// (each process holds its part; outputs gather them in order).
  bool partitioned = false;
  /// Elements of the whole plate (a scratch posterior's `elements` counts
  /// the rows of one element of the nested plate only).
  int64_t flatElements = 0;
  /// The plates of its rows, outermost first: the index columns of its
  /// output. A plate of known size has `size` elements; a ragged one has
  /// the sizes in int64 buffer `sizes`, one per element of the plates
  /// before it.
  struct RowDim {
    std::string name; ///< the data's index column, else the plate's name
    int64_t size = 0;
    int32_t sizes = -1;
  };
  std::vector<RowDim> rowDims;
  /// Starts from the user's values (--init), written into eta and the
  /// statistics before the init block, which leaves them alone.
  bool userInit = false;
  /// Held at the user's values (--given): its buffers are filled before the
  /// init block and no statement writes them.
  bool given = false;
};

struct Plan {
  std::vector<Expr> exprs;
  std::vector<Buffer> buffers;
  std::vector<Posterior> posteriors;
  int32_t loopVars = 0;
  /// An int64 buffer of one element: the seed of the random initialization.
  int32_t seedBuffer = -1;
  /// A data-parallel run: the partitioned plate, and an int64 buffer with one
  /// entry per posterior: the global flat index of this process's first
  /// element, which keys the random initialization as in one process.
  const ir::Value *partitionedPlate = nullptr;
  /// A nested schedule's restart switch (one double, -1: no restarts): 1
  /// restarts each element's locals from their priors every iteration, 0
  /// continues from the last iteration's (strict coordinate ascent).
  int32_t localRestart = -1;
  /// With a partitioned plate: a switch (one double, -1: none) of the random
  /// starts of the locals: 1 draws them (the default), 0 leaves them zero
  /// (a stochastic run's later batches, whose locals restart from their
  /// priors: LDA K = 100 draws 100 numbers per token).
  int32_t randomLocals = -1;
  /// A switch (one double, -1: none) of the iteration block's ELBO terms
  /// (codegen/transforms/ElboGuards.cpp): 1 computes them (the default), 0
  /// skips them in an iteration whose ELBO is not evaluated (--elbo-every).
  int32_t elboSwitch = -1;
  int32_t elementOffsets = -1;
  /// With a partitioned plate: the buffers holding the state of the
  /// variables outside it (the globals' posteriors, their tables and the
  /// accumulators of their messages), which a stochastic run carries from
  /// one batch to the next (codegen/exec/Stochastic.h); the rest belongs to
  /// the batch.
  std::vector<int32_t> globalState;
  /// The per-core L2 cache the plan was sized to (bytes; 0: unknown).
  int64_t l2CacheBytes = 0;
  /// The threads it was planned for (LoweringOptions::threads).
  int64_t threads = 1;
  /// Whether every iteration evaluates the ELBO (LoweringOptions::elboEveryIteration).
  bool elboEveryIteration = true;
  /// Every iteration repeats the first (a nested schedule with nothing
  /// outside its local loop: every global given): one iteration is the run.
  bool onePass = false;
  enum BlockId { Init, Iteration, Final, Elbo, Predict, NumBlocks };
  std::vector<Stmt> blocks[NumBlocks];
  static constexpr const char *kBlockNames[NumBlocks] = {"init", "iteration", "final", "elbo", "predict"};
  /// Observed variables with missing values (rt::BoundVariable::missing):
  /// the `predict` block (after the run) sums each element's posterior
  /// predictive statistics into `buffer` (FactorEntry::predictiveKernel,
  /// weighted by the cases of the mixtures it is in).
  struct Predicted {
    const ir::Value *variable = nullptr; ///< the observed variable the data binds
    Family family = Family::Gaussian;
    int64_t dimension = 1, width = 1, elements = 0;
    int32_t buffer = -1;
    std::vector<Posterior::RowDim> rowDims; ///< its plates (index columns)
    std::vector<int64_t> missing;           ///< the elements to write out
    bool partitioned = false;
  };
  std::vector<Predicted> predicted;

  // Expression builders (constant-folded).
  ExprId intConst(int64_t v);
  ExprId doubleConst(double v);
  ExprId loopVar(int32_t var);
  ExprId add(ExprId a, ExprId b);
  ExprId mul(ExprId a, ExprId b);
  ExprId addDouble(ExprId a, ExprId b);
  ExprId mulDouble(ExprId a, ExprId b);
  ExprId subDouble(ExprId a, ExprId b);
  ExprId loadInt(int32_t buffer, ExprId index);
  ExprId loadDouble(int32_t buffer, ExprId index);
  ExprId intToDouble(ExprId a);
  std::optional<int64_t> constantOf(ExprId e) const;
  std::optional<double> doubleConstantOf(ExprId e) const;

  // Expression queries the plan transformations share.
  /// e reads loop variable `var`.
  bool usesVar(ExprId e, int32_t var) const;
  /// e loads from `buffer`.
  bool loads(ExprId e, int32_t buffer) const;
  /// s (or a statement in it, `skip` and its body left out) names `buffer`:
  /// as a pointer, in an index, a bound, a scale or a result slot.
  bool mentions(const Stmt &s, int32_t buffer, const Stmt *skip = nullptr) const;
  /// The buffer was filled at bind time (data, offsets, constants): no
  /// statement changes it.
  bool isBoundData(int32_t buffer) const;
  /// e loads only from bound-data buffers.
  bool onlyBoundData(ExprId e) const;
  /// a and b are the same expression (structurally).
  bool sameExpr(ExprId a, ExprId b) const;
  /// a and b pass the same value (same kind, buffer and expression).
  bool sameArg(const Arg &a, const Arg &b) const;
  /// The value of an integer expression over bound data and loop variable
  /// `var` (= value); none if it reads another variable or other buffers.
  std::optional<int64_t> evaluate(ExprId e, int32_t var = -1, int64_t value = 0) const;
};

/// A call of `kernel` whose result is discarded.
bool isDiscardedCall(const Stmt &s, std::string_view kernel);

/// Empty when the state the plan allocates (every buffer not filled at bind
/// time) fits this machine's memory; else an error naming the bytes needed
/// and the largest buffer (a -p size or a plate too large for the machine).
std::string planMemoryProblem(const Plan &p);

/// A readable listing of the plan (--emit=plan, --print-after, tests).
std::string printPlan(const Plan &p);

/// Checks the plan's invariants (buffers, loop variables in scope, calls
/// matching their kernels' signatures, parallel loops' lists); returns
/// false and describes the first violation in `error`.
bool verifyPlan(const Plan &p, std::string &error);

} // namespace ppc::codegen
