//===- codegen/plan/Lowering.cpp - a scheduled module -> its plan --------===//
//
// See Lowering.h. The builder walks the schedule (update / fuse / local),
// finds each statement in the `messages` region and emits its loop nest with
// the loops that an enclosing fuse or local binds removed; the ELBO block
// walks the gated model. PlanBuilder.h lists which file lowers what.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/Lowering.h"

#include "codegen/plan/PlanBuilder.h"

#include "runtime/Binding.h"

#include <unistd.h>

namespace ppc::codegen {
namespace lowering {

/// Whether every iteration computes what the first did, so that one is the
/// converged answer: (a) the iteration is one nested loop that restarts
/// each element's locals and updates nothing after them (LDA with its
/// topics given: --given, --heldout); or (b) it has no nested loop and no
/// statement in it reads a value the iteration updates at or after that
/// statement, i.e. nothing carries over from the previous iteration (a
/// mixture with every global given, a conjugate model of one variable).
static bool iterationRepeatsFirst(const Region &iteration) {
  const auto &ops = iteration.ops;
  if (ops.size() == 1 && ops[0]->kind == OpKind::Local && ops[0]->restart && ops[0]->regions.size() == 2 &&
      ops[0]->regions[1]->ops.empty())
    return true;
  std::vector<const Op *> order; // the statements, in the order they run
  bool nested = false;
  std::function<void(const Region &)> collect = [&](const Region &r) {
    for (const auto &op : r.ops) {
      if (op->kind == OpKind::Local)
        nested = true;
      else if (op->kind == OpKind::Update && !op->operands.empty() && op->operands[0].isValue() &&
               op->operands[0].value->def)
        order.push_back(op->operands[0].value->def);
      for (const auto &inner : op->regions)
        collect(*inner);
    }
  };
  collect(iteration);
  if (nested || order.empty())
    return false;
  std::set<const Value *> pending; // updated in the iteration, not yet in this pass
  for (const Op *stmt : order)
    pending.insert(stmt->result());
  std::function<bool(const Operand &)> readsPending = [&](const Operand &o) {
    if (o.isValue() && pending.count(o.value))
      return true;
    for (const Operand &i : o.indices)
      if (readsPending(i))
        return true;
    return false;
  };
  for (const Op *stmt : order) {
    for (const Operand &o : stmt->operands)
      if (readsPending(o))
        return false;
    for (const auto &[condition, which] : stmt->gates)
      if (readsPending(condition) || readsPending(which))
        return false;
    pending.erase(stmt->result());
  }
  return true;
}

/// The steps, in order: the posteriors and their buffers; the lowering
/// choices that must be made before any statement is emitted (which
/// categoricals take the product form); the random initial posteriors; the
/// init, iteration and final schedules; the ELBO.
bool PlanBuilder::run() {
  if (!m_.messages || !m_.iterationSchedule) {
    diags_.error("the module has no schedule: run the scheduling passes first");
    return false;
  }
  collectGated(m_.body);
  // Markov chains: their marginals run over all the elements of a chain,
  // and their transition rows are read and written whole.
  ir::walk(m_.body, [&](const Op &op) {
    if (op.kind != OpKind::Random)
      return;
    const int whole = wholeRowsOperand(op.family); // rows or K values, read whole
    if (whole >= 0 && size_t(whole) < op.operands.size() && op.operands[size_t(whole)].isValue() &&
        !op.operands[size_t(whole)].value->dims.empty())
      wholePlates_.insert(op.operands[size_t(whole)].value->dims.back());
    if (isChainFamily(op.family))
      wholePlates_.insert(op.result()->dims.back());
    // A vector chain's transition matrix as one MvGaussian is vec(A): D * D
    // (the front end checks it where both are numbers before the parameters).
    if (op.family != Family::MvGaussianChain)
      return;
    const ir::Operand &A = op.operands[2];
    if (A.isValue() && A.value->dims.empty() && A.value->type.hasDim()) {
      const int64_t D = dimValue(op.result()->type.dim, op.loc), dimA = dimValue(A.value->type.dim, op.loc);
      int64_t squared = 0; // a D too large to square is no vec(A) either
      const bool overflows = __builtin_mul_overflow(D, D, &squared);
      if (overflows || dimA != squared)
        fail(op.operandLoc(2), "the transition matrix '" + A.value->name + "' of a chain of vectors of dimension " +
                                   std::to_string(D) + " as one MvGaussian (vec(A)) must have dimension " +
                                   (overflows ? std::to_string(D) + " * " + std::to_string(D) : std::to_string(squared)) +
                                   "; it has " + std::to_string(dimA));
    }
  });
  // Missing observations are masked out of their factors' messages; the
  // product form multiplies exponential tables, which no mask reaches.
  // (Every process of a data-parallel run decides the same: from the
  // variables some process misses values of.)
  if (partitioned_)
    productForm = productForm && predicted_.empty();
  else
    for (const auto &[v, bv] : data_.variables)
      productForm = productForm && bv.missing.empty();
  findNestedPlate();
  collectPosteriors();
  if (!ok_)
    return false;
  p_.seedBuffer = addBuffer("seed", true, 1);
  if (partitioned_) {
    p_.partitionedPlate = partitioned_;
    p_.elementOffsets = addBuffer("element.offset", true, int64_t(p_.posteriors.size()));
  }
  if (productForm) {
    planProductForms();
    planLogEntries();
    planCollapsedElbo();
  }
  emitRandomInit(p_.blocks[Plan::Init]);
  emitUserPosteriorTables(p_.blocks[Plan::Init]);
  p_.onePass = iterationRepeatsFirst(*m_.iterationSchedule);
  const Region *schedules[] = {m_.initSchedule.get(), m_.iterationSchedule.get(), m_.finalSchedule.get()};
  for (int b = 0; b < 3 && ok_; ++b)
    if (schedules[b]) {
      Context ctx;
      block_ = Plan::BlockId(b);
      emitSchedule(*schedules[b], p_.blocks[b], ctx);
    }
  for (int pi : recomputedUnread_)
    if (initRead_.count(pi)) {
      const Value *v = p_.posteriors[size_t(pi)].variable;
      diags_.warning(v->def ? v->def->loc : SourceRange{},
                     "the random initialization of %" + v->name +
                         " is recomputed before anything reads it, so it cannot break the symmetry of the "
                         "mixture components; this schedule may leave them identical");
    }
  if (ok_) {
    Env env;
    std::vector<ExprId> weights;
    emitElbo(m_.body, p_.blocks[Plan::Elbo], env, weights, /*top=*/true);
    emitPredictiveBlock();
    emitPendingTransposes(p_.blocks[Plan::Elbo], p_.blocks[Plan::Elbo].begin());
  }
  if (ok_ && partitioned_) {
    markDistributedLoops();
    recordGlobalState();
  }
  return ok_;
}

/// The buffers a stochastic run carries from batch to batch: the posteriors
/// of the variables outside the partitioned plate, their tables, and the
/// accumulators of the messages to them.
void PlanBuilder::recordGlobalState() {
  std::set<int32_t> state;
  for (const Posterior &post : p_.posteriors)
    if (!post.partitioned && !post.scratch)
      for (int32_t b : {post.eta, post.stats, post.expRows, post.expRowShifts, post.expColumns, post.expColumnShifts,
                        post.statsT})
        if (b >= 0)
          state.insert(b);
  for (const auto &[msg, acc] : accOf_) {
    auto it = posteriorOfQ_.find(msg->def->target->value);
    if (it != posteriorOfQ_.end() && !p_.posteriors[size_t(it->second)].partitioned &&
        !p_.posteriors[size_t(it->second)].scratch)
      state.insert(acc);
  }
  p_.globalState.assign(state.begin(), state.end());
}

/// A data-parallel run: every top-level loop over the partitioned plate
/// runs this process's elements, and its sums over them (the `reductions`
/// recorded where the loop was emitted) and its ELBO terms are summed
/// over the processes.
void PlanBuilder::markDistributedLoops() {
  for (auto &block : p_.blocks)
    for (Stmt &s : block)
      if (s.kind == Stmt::Kind::Loop && s.plate == partitioned_) {
        s.distributed = true;
        s.parallel = true;
      }
}

/// A nested schedule whose `local` loop ends the iteration lets the
/// element's deeper locals live in scratch rows (and their ELBO terms be
/// computed in that loop): the plate of that loop, if any.
void PlanBuilder::findNestedPlate() {
  const auto &ops = m_.iterationSchedule->ops;
  if (ops.empty() || ops.back()->kind != OpKind::Local)
    return;
  nestedLocal_ = ops.back().get();
  const Value *plate = nestedLocal_->operands[0].value;
  if (plate->dims.empty())
    nestedPlate_ = plate;
  if (nestedPlate_)
    findWholeRowLocals();
}

/// Scratch rows hold an element's values only while the loop over the
/// nested plate is at that element: every element writes the same rows,
/// and a parallel loop's other threads work on zeroed copies of them
/// (LowerLocal.cpp). So a deeper local may live in them only if each
/// statement that writes its posterior (its marginals, the messages they
/// sum) runs inside a loop over the nested plate's elements, and, if the
/// init block computes it, the iteration's `local` loop computes it again
/// for each element. A loop invariant breaks this: the message from an
/// observation with constant parameters (`c = Gaussian(s, 1.0)` observed
/// through `Gaussian(c, 2.0)`: c.B.y) or a mixture's evidence from fixed
/// components is computed once, before the iterations, into rows that every
/// element then reads as its own (the sum of all the elements' messages, or
/// the last element's, or zeros). Those locals keep rows for the whole
/// plate, as under the plain schedule.
void PlanBuilder::findWholeRowLocals() {
  std::set<const Value *> perElement, inElementLoops, elsewhere;
  auto collect = [](const Op &op, std::set<const Value *> &into) {
    if (op.kind == OpKind::Update && !op.operands.empty() && op.operands[0].isValue())
      into.insert(op.operands[0].value);
    for (const auto &r : op.regions)
      ir::walk(*r, [&](const Op &u) {
        if (u.kind == OpKind::Update && !u.operands.empty() && u.operands[0].isValue())
          into.insert(u.operands[0].value);
      });
  };
  collect(*nestedLocal_, perElement);
  for (const Region *schedule : {m_.initSchedule.get(), m_.iterationSchedule.get()}) {
    if (!schedule)
      continue;
    for (const auto &op : schedule->ops) {
      if (op.get() == nestedLocal_)
        continue;
      const bool overElements = (op->kind == OpKind::Fuse || op->kind == OpKind::Local) &&
                                op->operands[0].value == nestedPlate_;
      collect(*op, overElements ? inElementLoops : elsewhere);
    }
  }
  auto persists = [&](const Value *stmt) {
    return elsewhere.count(stmt) || (inElementLoops.count(stmt) && !perElement.count(stmt));
  };
  // The init block passes over the elements once per fused loop: a message
  // that reads a local's marginal computed by an earlier pass (not yet by
  // its own) would read the last element's rows. With a noise of known
  // precision, `si + 2.0` observed through Gaussian(., 1.0) computes
  // y.1.back in one pass and reads it in the next.
  std::set<const Value *> readAcrossPasses;
  if (m_.initSchedule)
    for (const auto &op : m_.initSchedule->ops) {
      if (!((op->kind == OpKind::Fuse || op->kind == OpKind::Local) && op->operands[0].value == nestedPlate_))
        continue;
      std::set<const Value *> computed;
      for (const auto &r : op->regions)
        ir::walk(*r, [&](const Op &u) {
          if (u.kind != OpKind::Update || u.operands.empty() || !u.operands[0].isValue())
            return;
          const Value *stmt = u.operands[0].value;
          if (stmt->def && stmt->def->kind == OpKind::Msg)
            for (const ir::Operand &o : stmt->def->operands)
              if (o.isValue() && o.value->def && o.value->def->kind == OpKind::Marginal && !computed.count(o.value))
                readAcrossPasses.insert(o.value);
          computed.insert(stmt);
        });
    }
  // A missing value's posterior predictive (the Predict block, after the
  // run) reads its factor's operands for every missing element: a value
  // computed per element (mu(d) + si) must keep its rows.
  ir::walk(m_.body, [&](const Op &op) {
    if (op.kind != OpKind::Random || !op.observed || op.results.empty())
      return;
    // (In a data-parallel run every process builds the same plan: the
    // variables missing values anywhere.)
    auto bound = data_.variables.find(op.result());
    if (bound == data_.variables.end() ||
        (partitioned_ ? !predicted_.count(op.result()->name) : bound->second.missing.empty()))
      return;
    for (const ir::Operand &o : op.operands)
      if (o.isValue() && o.value->dims.size() == 2 && o.value->dims[0] == nestedPlate_)
        wholeRowLocals_.insert(o.value);
  });
  ir::walk(*m_.messages, [&](const Op &op) {
    const Value *q = nullptr, *stmt = op.result();
    if (op.kind == OpKind::Marginal)
      q = stmt;
    else if (op.kind == OpKind::Msg && op.target && op.target->isValue())
      q = op.target->value;
    if (q && q->def && q->def->kind == OpKind::Marginal && !q->def->operands.empty() &&
        (persists(stmt) || (op.kind == OpKind::Marginal && readAcrossPasses.count(stmt) && inElementLoops.count(stmt))))
      wholeRowLocals_.insert(q->def->operands[0].value);
  });
}

bool PlanBuilder::scratchDims(const Value *var, const std::vector<Value *> &dims) const {
  return nestedPlate_ && dims.size() == 2 && dims[0] == nestedPlate_ && !wholeRowLocals_.count(var);
}

void PlanBuilder::fail(SourceRange where, const std::string &msg) {
  if (ok_ || !diags_.hasErrors())
    diags_.error(where, msg);
  ok_ = false;
}

} // namespace lowering

std::unique_ptr<Plan> lowerSchedule(const ir::Module &m, const ir::Evaluation &eval, const rt::BoundData &data,
                                    bool randomInitConditions, DiagnosticEngine &diags,
                                    const LoweringOptions &options) {
  auto plan = std::make_unique<Plan>();
  lowering::PlanBuilder b(m, eval, data, randomInitConditions, diags, *plan, options);
  if (!b.run())
    return nullptr;
  plan->l2CacheBytes = options.l2CacheBytes > 0 ? options.l2CacheBytes : hostL2CacheBytes();
  plan->threads = options.threads > 0 ? options.threads : 1;
  plan->elboEveryIteration = options.elboEveryIteration;
  return plan;
}

int64_t hostL2CacheBytes() {
  const long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return bytes > 0 ? int64_t(bytes) : 0;
}

} // namespace ppc::codegen
