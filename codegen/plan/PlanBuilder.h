//===- codegen/plan/PlanBuilder.h - the lowering's state (private) -------===//
//
// Lowering a scheduled module bound to data to a plan (codegen/plan/Lowering.h)
// is one object, PlanBuilder, whose member functions are spread over the
// files of codegen/plan/ by what they lower. This header is private to those
// files; the rest of ppc calls lowerSchedule().
//
//   Lowering.cpp       run(): the order of the steps; errors
//   Layout.cpp         buffers, plates and flat indices, posteriors, data
//   Operands.cpp       where a factor's arguments come from (posteriors, data, constants)
//   KernelCalls.cpp    calls of runtime kernels from the catalogue's calling patterns
//   LowerSchedule.cpp  `update` statements: marginals and messages, their loop nests
//   LowerLocal.cpp     `fuse` and `local` loops: reductions, local sweeps, restarts
//   ProductForm.cpp    categorical posteriors in the exponential domain (a lowering choice)
//   LowerElbo.cpp      the ELBO block (and a nested schedule's per-element terms)
//   LowerPredictive.cpp the predict block: missing observations' posterior predictive
//   LowerInit.cpp      random initial posteriors (symmetry breaking), the user's posteriors' tables
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/plan/Lowering.h"
#include "codegen/plan/Plan.h"
#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "runtime/Catalogue.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ppc {
namespace ir { struct Evaluation; struct Dim; }
namespace rt { struct BoundData; }
} // namespace ppc

namespace ppc::codegen::lowering {

using ir::Op;
using ir::OpKind;
using ir::Operand;
using ir::Region;
using ir::Value;

/// What a kernel computes, from the catalogue: a message to argument
/// `target` of a family's factor, its expected log density, or an entropy.
struct KernelRole {
  Family family = Family::Gaussian;
  enum Kind { Message, Elbo, Entropy } kind = Message;
  int target = 0;
};
/// The role of a kernel the catalogue names (none for others).
std::optional<KernelRole> roleOf(std::string_view kernel);

/// An argument of a factor as the generated code reads it.
struct Source {
  enum Kind { Constant, Latent, Data } kind = Constant;
  double value = 0;             ///< Constant
  int posterior = -1;           ///< Latent
  const Value *data = nullptr;  ///< Data: the bound variable
  ExprId element = kNoExpr;     ///< Latent, Data: flat element index
  int64_t dimension = 1;        ///< Categorical, vector or matrix dimension (Latent, Data)
};

/// Loop index -> its index expression.
using Env = std::map<const Value *, ExprId>;

class PlanBuilder {
public:
  PlanBuilder(const ir::Module &m, const ir::Evaluation &ev, const rt::BoundData &data, bool randomInit,
              DiagnosticEngine &diags, Plan &plan, const LoweringOptions &options)
      : m_(m), ev_(ev), data_(data), randomInit_(randomInit), diags_(diags), p_(plan),
        productForm(options.productForm), partitioned_(options.partitionedPlate),
        userInitialized_(options.userInitialized), predicted_(options.predicted) {}

  /// Lowers the init, iteration and final schedules and the ELBO; false
  /// after reporting errors.
  bool run();

private:
  // ---- Lowering.cpp: the nested schedule's plate, errors, distributed loops ----
  void findNestedPlate();
  void findWholeRowLocals();
  /// Whether the posterior of `var` (over `dims`) lives in scratch rows.
  bool scratchDims(const Value *var, const std::vector<Value *> &dims) const;
  void markDistributedLoops();
  void recordGlobalState();
  Stmt guardRandomLocal(const Posterior &post, Stmt draw);
  void fail(SourceRange where, const std::string &msg);

  // ---- Layout.cpp: buffers, plates and flat indices, posteriors, data ----
  struct PlateInfo {
    bool ragged = false;
    int64_t size = 0;                 ///< not ragged
    int32_t sizes = -1, offsets = -1; ///< ragged: int buffers
    int64_t total = 0;                ///< ragged: elements over all parents
  };
  enum class Data { Double, Int, Weight, Observed };
  int32_t addBuffer(std::string name, bool isInt, int64_t size);
  int32_t constantBuffer(const std::vector<double> &values);
  const PlateInfo *plate(const Value *pl, SourceRange where);
  int64_t elementCount(const std::vector<Value *> &dims, SourceRange where, bool scratch = false);
  ExprId indexExpr(const Operand &o, const Env &env, SourceRange where);
  /// A case label (`when %c case %k`, evidence to case %k): a loop index
  /// over `lo until hi` names case lo + its position (the gate pass's loop
  /// over the cases after those a `match` lists).
  ExprId caseExpr(const Operand &o, const Env &env, SourceRange where);
  /// A known plate's bounds (`lo`, `hi` of `lo until hi`), if known.
  std::optional<int64_t> plateBound(const Value *plate, size_t which) const;
  std::optional<int64_t> plateLowerBound(const Value *plate) const { return plateBound(plate, 0); }
  std::optional<int64_t> plateUpperBound(const Value *plate) const { return plateBound(plate, 1); }
  ExprId flatIndex(const std::vector<Value *> &dims, const std::vector<Operand> &idx, const Env &env,
                   SourceRange where, bool scratch = false);
  ExprId loopBound(const Op &loop, const Env &env);
  /// An empty plan loop over the plate of `for` op `loop`; `inner` is `env`
  /// with the loop's index bound to the new loop variable.
  Stmt plateLoop(const Op &loop, const Env &env, Env &inner);
  void collectGated(const Region &r);
  void collectPosteriors();
  int64_t dimValue(const ir::Dim &d, SourceRange where);
  int32_t dataBuffer(const Value *v, Data kind);
  /// The index columns of a posterior's output: its plates, named after the
  /// data's index columns (else the plates' names).
  /// `reserved`: the file's other columns (a variable named `rate` over a
  /// plate of its own must not name an index column `rate` beside a Gamma's
  /// `rate`).
  std::vector<Posterior::RowDim> rowDims(const std::vector<Value *> &dims, SourceRange where,
                                         const std::vector<std::string> &reserved);
  /// The statistics of a known input's values as point masses of `parent`,
  /// one row of `width` doubles per element (a constant per element).
  int32_t pointMassBuffer(const Value *v, Family parent, int64_t dimension, int64_t &width);

  // ---- Operands.cpp: sources of factor arguments, weights, reads ----
  Source constantSource(double v);
  Source resolveMessageOperand(const Operand &o, const Env &env, SourceRange where);
  Source resolveValue(const Operand &o, const Env &env, SourceRange where);
  Source resolveGated(const Operand &o, const Env &env, SourceRange where);
  ExprId replication(const std::vector<Op *> &loops, const Env &env, const Operand *target, SourceRange where);
  ExprId times(ExprId a, ExprId b);
  /// 0 where the observation among `operands` is missing, else 1 (kNoExpr
  /// when none of them misses values): a factor's messages and ELBO terms
  /// are multiplied by it, which marginalises a missing value out.
  ExprId missingMask(const std::vector<Operand> &operands, const Env &env, SourceRange where);
  void noteRead(int posterior, SourceRange where);
  ExprId gateWeight(const std::vector<std::pair<Source, ExprId>> &gates);

  // ---- KernelCalls.cpp: kernel calls ----
  std::vector<double> pointMass(Family family, int param, double c, int64_t dimension);
  std::optional<Stmt> marshal(std::string_view kernel, const KernelRole &role,
                              const std::vector<std::optional<Source>> &args, ExprId gateWeight, ExprId repl,
                              std::optional<std::pair<int32_t, ExprId>> dst, SourceRange where,
                              bool *replUsed = nullptr);
  Stmt kernelCall(std::string_view kernel, std::vector<Arg> args, std::string note = {});
  Arg exprArg(Arg::Kind kind, ExprId e);
  Arg intArg(int64_t v);
  Arg doubleArg(double v);
  Arg ptrArg(int32_t buffer, ExprId index);

  // ---- LowerSchedule.cpp: update statements and their loop nests ----
  struct Level {
    const Value *plate;
    int32_t var;
  };
  struct Context {
    std::vector<Level> levels;
    /// Reductions across an enclosing fuse/local: statement -> the update op
    /// that computes it (the last in the loop body); others are skipped.
    std::map<const Op *, const Op *> reductionAt;
  };
  static const Op *statementOf(const Op &update) { return update.operands[0].value->def; }
  int32_t newVar() { return p_.loopVars++; }
  bool bindContext(const Op &stmt, const std::vector<Op *> &loops, const Context &ctx, Env &env);
  void emitNest(const std::vector<Op *> &loops, size_t from, Env &env, std::vector<Stmt> &out,
                const std::function<void(Env &, std::vector<Stmt> &)> &inner);
  static bool usesIndex(const Operand &o, const Value *index);
  /// A message's target depends on loop `index` element by element: an id
  /// read from the data (u.q[%user[%i]]) makes the loop a sum into any
  /// element (a scatter), not one element per iteration.
  static bool targetUsesIndex(const Operand &target, const Value *index);
  /// The target has an id read from the data among its indices.
  static bool scatters(const Operand &target);
  static std::vector<Operand> indicesOf(const std::vector<Op *> &loops);
  void emitZeroTargets(const Op &msg, const std::vector<Op *> &loops, size_t from, Env env, std::vector<Stmt> &out);
  void emitSchedule(const Region &r, std::vector<Stmt> &out, Context &ctx);
  void emitUpdate(const Op &update, std::vector<Stmt> &out, Context &ctx);
  bool touchesScratch(const Op &stmt);
  void emitChainMarginal(const Op &marg, const std::vector<Op *> &loops, Env &env, std::vector<Stmt> &out,
                         size_t from);
  void emitMarginal(const Op &marg, const std::vector<Op *> &loops, Env &env, std::vector<Stmt> &out,
                    size_t from);
  void emitMessage(const Op &msg, const std::vector<Op *> &loops, Env &env, std::vector<Stmt> &out, size_t from,
                   bool reducedOutside);
  void markSum(const Op &msg, const std::vector<Op *> &loops, size_t from, std::vector<Stmt> &out);
  void emitMessageCall(const Op &msg, Env &env, std::vector<Stmt> &out);
  void collectUpdates(const Region &r, std::vector<const Op *> &updates, bool repeated,
                      std::set<const Op *> &inRepeated);

  // ---- LowerLocal.cpp: fuse and local loops ----
  void emitFused(const Op &op, std::vector<Stmt> &out, Context &ctx);
  void dropScratch();
  void emitSweeps(const Op &local, std::vector<Stmt> &out, Context &ctx);
  void emitRestart(const Op &local, std::vector<Stmt> &out, Context &ctx);

  // ---- ProductForm.cpp: categorical posteriors in the exponential domain ----
  enum class Linear { None, Row, Entry };
  Linear linearForm(const Op &msg);
  bool entryEvidence(const Op &msg) const;
  bool scatterForm(const Op &msg);
  void planLogEntries();
  void planProductForms();
  void planCollapsedElbo();
  bool onlyLinearFactors(const Value *z) const;
  void shareProductAccumulator(const Op &marginal, const std::vector<const Op *> &updates);
  void emitColumnRefresh(int pi, std::vector<Stmt> &out);
  void emitProductMessage(const Op &msg, Env &env, std::vector<Stmt> &out);
  void addProductShift(const Value *q, ExprId shift);
  void emitTransposedScatter(const Op &msg, Env &env, std::vector<Stmt> &out);
  void emitLogEntryMessage(const Op &msg, Env &env, std::vector<Stmt> &out);

  // ---- LowerElbo.cpp: the ELBO ----
  bool emitCaseSumElbo(const Op &loop, std::vector<Stmt> &out, Env &env, const std::vector<ExprId> &weights);
  bool usesExpr(ExprId e, ExprId needle) const;
  void emitPendingTransposes(std::vector<Stmt> &out, std::vector<Stmt>::iterator at);
  void emitElbo(const Region &r, std::vector<Stmt> &out, Env &env, std::vector<ExprId> &weights, bool top);
  void emitFactorElbo(const Op &f, std::vector<Stmt> &out, Env &env, const std::vector<ExprId> &weights);

  // ---- LowerPredictive.cpp: missing observations' posterior predictive ----
  void emitPredictiveBlock();
  void emitPredictive(const Region &r, std::vector<Stmt> &out, Env &env, std::vector<ExprId> &weights);
  void emitFactorPredictive(const Op &f, std::vector<Stmt> &out, Env &env, const std::vector<ExprId> &weights);
  bool scratchGate_ = false;                 ///< inside a case of a scratch condition
  std::set<const Value *> unpredicted_;     ///< variables warned about

  // ---- LowerInit.cpp: random initial posteriors ----
  void emitRandomInit(std::vector<Stmt> &out);
  /// The tables derived from the statistics (exponential rows) of the
  /// posteriors the user gives (--init, --given), which no update refreshes
  /// before they are read.
  void emitUserPosteriorTables(std::vector<Stmt> &out);
  Stmt randomCall(int pi, ExprId element, ExprId row);
  void emitScratchRandomInit(int32_t var, std::vector<Stmt> &out, SourceRange where);

  // ---- state ----
  const ir::Module &m_;
  const ir::Evaluation &ev_;
  const rt::BoundData &data_;
  bool randomInit_;
  DiagnosticEngine &diags_;
  Plan &p_;
  /// The lowering choice `product-form` (ProductForm.cpp).
  bool productForm = true;
  /// A data-parallel run's partitioned plate (null: one process).
  const Value *partitioned_ = nullptr;
  /// Variables whose posteriors the user gives the starting values of (--init).
  std::set<std::string> userInitialized_;
  /// LoweringOptions::predicted (a data-parallel run).
  std::set<std::string> predicted_;
  bool ok_ = true;
  bool checkReads_ = true;
  int64_t targetDimension_ = 1;
  /// The plates a Markov chain reads whole (its transition rows, its own
  /// elements): an array over them may be used without its last index,
  /// which then stands for its first element (the start of the rows).
  std::set<const Value *> wholePlates_;
  /// The `P` token of the message being marshalled: its element's position in
  /// its innermost loop (a chain's first element is position 0).
  ExprId position_ = kNoExpr;
  std::map<const Value *, PlateInfo> plates_;
  std::map<const Value *, int> posteriorOfQ_, posteriorOfVar_;
  std::map<const Value *, int32_t> accOf_;
  std::map<const Value *, const Op *> exitOf_;
  std::map<std::vector<double>, int32_t> constants_;
  std::map<std::pair<const Value *, int>, int32_t> dataBuffers_;
  std::map<std::pair<const Value *, Family>, std::pair<int32_t, int64_t>> pointMassBuffers_;
  std::set<int> computed_, initRead_, recomputedUnread_;
  Plan::BlockId block_ = Plan::Init;
  const Op *nestedLocal_ = nullptr;
  const Value *nestedPlate_ = nullptr;
  /// Locals of the nested plate's elements that keep rows for the whole
  /// plate (findWholeRowLocals): a statement writing their posterior is not
  /// recomputed for each element in the nested loop.
  std::set<const Value *> wholeRowLocals_;
  std::set<const Op *> elboFused_, skippedFinal_, productForm_, transposed_;
  /// Categoricals whose ELBO terms are their log normalizer (planCollapsedElbo).
  std::set<int> collapsed_;
  bool refreshing_ = false; ///< emitting the nested local loop's `then` region
  std::map<const Value *, ExprId> productShift_;
  std::set<int> pendingTransposes_;
  std::map<const Op *, int32_t> sharedAcc_; ///< product-form statements -> the accumulator they share
  std::map<const Op *, std::vector<int>> columnReaders_;
  std::map<const Op *, std::vector<int>> statsTReaders_; ///< top-level statements -> datum-major copies they read
  std::set<const Op *> logEntry_;                        ///< planLogEntries' messages
  std::vector<int32_t> elementTemporaries_; ///< per-element buffers of the current outermost loop
};

} // namespace ppc::codegen::lowering
