//===- codegen/plan/LowerLocal.cpp - fused loops and local schedules --------===//
//
// `fuse` and `local` statements become one loop over their plate with the
// statements inside it; a nested schedule's `local` loop also runs the
// element's local sweeps (until their change is below the tolerance), its
// restart from the priors, its refresh, and (in the iteration block) the
// element's ELBO terms while its scratch rows are at hand. The outermost
// data plate's loops are parallel: their private rows and sums are listed.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanBuilder.h"
#include "codegen/plan/PlanEdits.h"

#include "runtime/Symbols.h"

namespace ppc::codegen::lowering {

void PlanBuilder::emitFused(const Op &op, std::vector<Stmt> &out, Context &ctx) {
  const Value *plateValue = op.operands[0].value;
  const PlateInfo *pi = plate(plateValue, op.loc);
  if (!pi)
    return;
  Level level{plateValue, newVar()};
  size_t depth = ctx.levels.size();
  // The loop's range: a ragged plate's size for the element the outer levels bind.
  ExprId bound;
  if (!pi->ragged) {
    bound = p_.intConst(pi->size);
  } else {
    if (plateValue->dims.size() != depth) {
      fail(op.loc, "internal: fused loop over %" + plateValue->name + " at the wrong depth");
      return;
    }
    ExprId f = p_.intConst(0);
    for (size_t j = 0; j < depth; ++j) {
      const PlateInfo *outer = plate(ctx.levels[j].plate, op.loc);
      ExprId i = p_.loopVar(ctx.levels[j].var);
      f = outer->ragged ? p_.add(p_.loadInt(outer->offsets, f), i) : p_.add(p_.mul(f, p_.intConst(outer->size)), i);
    }
    bound = p_.loadInt(pi->sizes, f);
  }
  // Messages whose target does not depend on this loop are sums over its
  // elements: reset before the loop, computed at their last update inside.
  std::vector<const Op *> updates;
  std::set<const Op *> inRepeated;
  for (const auto &r : op.regions)
    collectUpdates(*r, updates, false, inRepeated);
  Context inner = ctx;
  inner.levels.push_back(level);
  std::vector<int32_t> reductions;
  if (depth == 0)
    elementTemporaries_.clear();
  for (const Op *u : updates) {
    const Op *stmt = statementOf(*u);
    if (!stmt || stmt->kind != OpKind::Msg || ctx.reductionAt.count(stmt))
      continue;
    std::vector<Op *> loops = ir::enclosingLoops(*stmt);
    if (loops.size() <= depth || targetUsesIndex(*stmt->target, loops[depth]->index))
      continue;
    if (!inner.reductionAt.count(stmt)) {
      Env env;
      if (!bindContext(*stmt, loops, ctx, env))
        return;
      emitZeroTargets(*stmt, loops, depth + 1, env, out);
      reductions.push_back(accOf_.at(stmt->result()));
    }
    inner.reductionAt[stmt] = u; // the last one wins
  }
  for (const auto &[stmt, u] : inner.reductionAt)
    if (inRepeated.count(u)) {
      fail(op.loc, "internal: a sum over %" + plateValue->name + " is computed inside repeated local sweeps");
      return;
    }
  Stmt loop;
  loop.kind = Stmt::Kind::Loop;
  loop.var = level.var;
  loop.bound = bound;
  loop.note = std::string(op.kind == OpKind::Fuse ? "fuse " : "local ") + plateValue->name;
  loop.plate = plateValue;
  // Scratch rows hold one element: nothing in them is valid on entry.
  bool overElements = depth == 0 && plateValue == nestedPlate_;
  if (overElements) {
    dropScratch();
    if (block_ == Plan::Init)
      emitScratchRandomInit(level.var, loop.body, op.loc);
  }
  if (op.kind == OpKind::Fuse) {
    emitSchedule(*op.regions[0], loop.body, inner);
  } else {
    if (op.restart) {
      // Guarded by a flag the run clears near convergence (Inference::run):
      // restarts help early and only coordinate ascent is monotone.
      if (p_.localRestart < 0)
        p_.localRestart = addBuffer("local.restart", false, 1);
      Stmt guard = edit::whileSwitchedOn(p_, p_.localRestart, "restart the element's locals while local.restart is on");
      emitRestart(op, guard.body, inner);
      loop.body.push_back(std::move(guard));
    }
    emitSweeps(op, loop.body, inner);
    if (op.regions.size() > 1) {
      refreshing_ = &op == nestedLocal_ && block_ == Plan::Iteration;
      emitSchedule(*op.regions[1], loop.body, inner);
      refreshing_ = false;
    }
    if (&op == nestedLocal_ && block_ == Plan::Iteration && ok_) {
      // The element's ELBO terms, while its scratch rows are at hand.
      bool saved = checkReads_;
      std::vector<ExprId> weights;
      for (const auto &f : m_.body.ops)
        if (f->kind == OpKind::For && f->operands[0].value == plateValue) {
          Env env;
          env[f->index] = p_.loopVar(level.var);
          emitElbo(*f->regions[0], loop.body, env, weights, false);
          elboFused_.insert(f.get());
        }
      checkReads_ = saved;
      emitPendingTransposes(out, out.end()); // before the loop: the parents do not change in it
    }
  }
  if (overElements)
    dropScratch();
  if (depth == 0 && (op.parallel || plateValue == partitioned_)) {
    loop.parallel = block_ != Plan::Final; // (a distributed run marks it later in every block)
    loop.reductions = reductions;
    loop.privates = elementTemporaries_;
    if (overElements)
      for (const Posterior &post : p_.posteriors)
        if (post.scratch) {
          loop.privates.push_back(post.eta);
          loop.privates.push_back(post.stats);
        }
    ir::walk(*m_.messages, [&](const Op &msg) {
      if (msg.kind == OpKind::Msg && msg.target && overElements &&
          p_.posteriors[size_t(posteriorOfQ_.at(msg.target->value))].scratch)
        loop.privates.push_back(accOf_.at(msg.result()));
    });
  }
  out.push_back(std::move(loop));
}

void PlanBuilder::dropScratch() {
  for (size_t pi = 0; pi < p_.posteriors.size(); ++pi)
    if (p_.posteriors[pi].scratch)
      computed_.erase(int(pi));
}

/// The local sweeps of one element: at most `iterations`, ended early
/// when the element's posteriors over the plate (LDA: theta) change less
/// than the tolerance on average.
void PlanBuilder::emitSweeps(const Op &local, std::vector<Stmt> &out, Context &ctx) {
  struct Tracked {
    int32_t eta, prev;
    ExprId row;
    int64_t width;
  };
  std::vector<Tracked> tracked;
  if (local.tolerance > 0 && local.iterations > 1) {
    std::vector<const Op *> updates;
    std::set<const Op *> unused;
    collectUpdates(*local.regions[0], updates, false, unused);
    std::set<int> seen;
    for (const Op *u : updates) {
      const Op *marg = statementOf(*u);
      if (!marg || marg->kind != OpKind::Marginal || marg->result()->dims.size() != ctx.levels.size())
        continue;
      int pi = posteriorOfQ_.at(marg->result());
      if (!seen.insert(pi).second)
        continue;
      const Posterior &post = p_.posteriors[size_t(pi)];
      std::vector<Op *> loops = ir::enclosingLoops(*marg);
      Env env;
      if (!bindContext(*marg, loops, ctx, env))
        return;
      Tracked t;
      t.eta = post.eta;
      t.width = post.width;
      t.prev = addBuffer(marg->result()->name + ".prev", false, post.width);
      elementTemporaries_.push_back(t.prev);
      t.row = p_.mul(flatIndex(marg->result()->dims, indicesOf(loops), env, marg->loc), p_.intConst(post.width));
      tracked.push_back(t);
    }
  }
  const rt::RuntimeSymbol *change = rt::findRuntimeKernel("ppc_mean_abs_change");
  auto changeCall = [&](const Tracked &t) {
    Stmt c;
    c.kind = Stmt::Kind::Call;
    c.kernel = change;
    c.args = {intArg(t.width), ptrArg(t.eta, t.row), ptrArg(t.prev, p_.intConst(0))};
    return c;
  };
  for (const Tracked &t : tracked) {
    Stmt c = changeCall(t);
    c.note = "remember " + p_.buffers[size_t(t.eta)].name;
    out.push_back(std::move(c));
  }
  Stmt sweeps;
  sweeps.kind = Stmt::Kind::Loop;
  sweeps.var = newVar();
  sweeps.bound = p_.intConst(local.iterations);
  sweeps.note = "local sweeps";
  emitSchedule(*local.regions[0], sweeps.body, ctx);
  if (!tracked.empty()) {
    int32_t slot = addBuffer("local.change", false, 1);
    elementTemporaries_.push_back(slot);
    Stmt z;
    z.kind = Stmt::Kind::Zero;
    z.buffer = slot;
    z.index = p_.intConst(0);
    z.count = 1;
    sweeps.body.push_back(z);
    for (const Tracked &t : tracked) {
      Stmt c = changeCall(t);
      c.result = Stmt::Result::Slot;
      c.buffer = slot;
      c.index = p_.intConst(0);
      c.scale = p_.doubleConst(1.0 / double(tracked.size()));
      c.note = "mean change of " + p_.buffers[size_t(t.eta)].name;
      sweeps.body.push_back(std::move(c));
    }
    Stmt exit;
    exit.kind = Stmt::Kind::ExitBelow;
    exit.buffer = slot;
    exit.index = p_.intConst(0);
    exit.threshold = local.tolerance;
    exit.note = "converged";
    sweeps.body.push_back(std::move(exit));
  }
  out.push_back(std::move(sweeps));
}

/// `local ... restart`: the locals a sweep reads before computing them
/// (LDA's theta) go back to what their messages from outside the sweep say
/// (the prior). Their messages computed from the element's locals (theta's
/// counts of z) are reset; those computed from the globals alone are
/// computed again from the current globals (a prior whose parameter is a
/// global: school.F from mu0 in `Gaussian(mu0, 0.5)`; reset, they left the
/// posterior no message at all, a NaN); those the iteration does not update
/// (LDA's theta.F from a constant alpha) stay as they are.
void PlanBuilder::emitRestart(const Op &local, std::vector<Stmt> &out, Context &ctx) {
  std::set<const Op *> iterated;
  std::vector<const Op *> updates;
  std::set<const Op *> unused;
  collectUpdates(*m_.iterationSchedule, updates, false, unused);
  for (const Op *u : updates)
    iterated.insert(statementOf(*u));
  std::vector<const Op *> sweep;
  collectUpdates(*local.regions[0], sweep, false, unused);
  std::set<const Op *> inSweep, computed, restart;
  for (const Op *u : sweep)
    if (statementOf(*u)->kind == OpKind::Marginal)
      inSweep.insert(statementOf(*u));
  for (const Op *u : sweep) {
    const Op *stmt = statementOf(*u);
    if (stmt->kind == OpKind::Marginal) {
      computed.insert(stmt);
      continue;
    }
    ir::anyMessageInput(*stmt, [&](const Operand &o) {
      if (o.isValue() && o.value->def && inSweep.count(o.value->def) && !computed.count(o.value->def))
        restart.insert(o.value->def);
      return false; // visit them all
    });
  }
  for (const Op *marg : restart) {
    for (size_t i = 1; i < marg->operands.size(); ++i) {
      const Op *msg = marg->operands[i].value->def;
      if (!iterated.count(msg))
        continue;
      std::vector<Op *> loops = ir::enclosingLoops(*msg);
      Env env;
      if (!bindContext(*msg, loops, ctx, env))
        return;
      bool fromSweep = ir::anyMessageInput(
          *msg, [&](const Operand &o) { return o.isValue() && o.value->def && inSweep.count(o.value->def); });
      if (fromSweep)
        emitZeroTargets(*msg, loops, ctx.levels.size(), env, out);
      else
        emitMessage(*msg, loops, env, out, ctx.levels.size(), false);
    }
    std::vector<Op *> loops = ir::enclosingLoops(*marg);
    Env env;
    if (!bindContext(*marg, loops, ctx, env))
      return;
    emitMarginal(*marg, loops, env, out, ctx.levels.size());
  }
}

} // namespace ppc::codegen::lowering
