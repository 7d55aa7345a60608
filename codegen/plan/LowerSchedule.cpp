//===- codegen/plan/LowerSchedule.cpp - update statements -------------------===//
//
// The schedule's `update` statements: each names a marginal (a posterior
// is the sum of its messages, then its statistics) or a message (a kernel
// call into the message's accumulator) in the `messages` region, lowered
// with its loop nest minus the loops an enclosing fuse or local binds. A
// message whose target does not depend on a loop is that loop's reduction.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanBuilder.h"

#include "runtime/Symbols.h"

#include <algorithm>

namespace ppc::codegen::lowering {

/// Binds the statement's outer loops to the context's loop variables.
bool PlanBuilder::bindContext(const Op &stmt, const std::vector<Op *> &loops, const Context &ctx, Env &env) {
  if (loops.size() < ctx.levels.size()) {
    fail(stmt.loc, "internal: a statement inside a fused loop over %" + ctx.levels.back().plate->name +
                       " does not iterate it");
    return false;
  }
  for (size_t j = 0; j < ctx.levels.size(); ++j) {
    if (loops[j]->operands[0].value != ctx.levels[j].plate) {
      fail(stmt.loc, "internal: statement loop over %" + loops[j]->operands[0].value->name +
                         " where the fused loop iterates %" + ctx.levels[j].plate->name);
      return false;
    }
    env[loops[j]->index] = p_.loopVar(ctx.levels[j].var);
  }
  return true;
}

/// Emits `loops[from..]` around `inner`, appending to `out`.
void PlanBuilder::emitNest(const std::vector<Op *> &loops, size_t from, Env &env, std::vector<Stmt> &out,
              const std::function<void(Env &, std::vector<Stmt> &)> &inner) {
  if (from == loops.size()) {
    inner(env, out);
    return;
  }
  Stmt loop;
  loop.kind = Stmt::Kind::Loop;
  loop.var = newVar();
  loop.bound = loopBound(*loops[from], env);
  loop.plate = loops[from]->operands[0].value;
  env[loops[from]->index] = p_.loopVar(loop.var);
  emitNest(loops, from + 1, env, loop.body, inner);
  out.push_back(std::move(loop));
}

bool PlanBuilder::scatters(const Operand &target) {
  for (const Operand &i : target.indices)
    if (i.isValue() && ir::isKnownInput(i.value))
      return true;
  return false;
}

bool PlanBuilder::targetUsesIndex(const Operand &target, const Value *index) {
  if (target.isValue() && target.value == index)
    return true;
  for (const Operand &i : target.indices)
    if (!(i.isValue() && ir::isKnownInput(i.value)) && usesIndex(i, index))
      return true;
  return false;
}

bool PlanBuilder::usesIndex(const Operand &o, const Value *index) {
  if (o.isValue() && o.value == index)
    return true;
  for (const Operand &i : o.indices)
    if (usesIndex(i, index))
      return true;
  return false;
}

/// Zeroes the accumulator rows a message statement writes, iterating the
/// statement's loops from `from` on that its target depends on.
void PlanBuilder::emitZeroTargets(const Op &msg, const std::vector<Op *> &loops, size_t from, Env env, std::vector<Stmt> &out) {
  std::vector<Op *> used;
  for (size_t j = from; j < loops.size(); ++j) {
    bool uses = targetUsesIndex(*msg.target, loops[j]->index);
    if (uses) {
      used.push_back(loops[j]);
    }
  }
  // A loop the target depends on must not have a range that depends on a skipped loop.
  std::set<const Value *> skipped;
  for (size_t j = from; j < loops.size(); ++j)
    if (std::find(used.begin(), used.end(), loops[j]) == used.end())
      skipped.insert(loops[j]->index);
  for (Op *l : used)
    for (const Operand &i : l->operands[0].indices)
      for (const Value *s : skipped)
        if (usesIndex(i, s)) {
          fail(msg.loc, "internal: cannot reset the accumulator of %" + msg.result()->name);
          return;
        }
  if (sharedAcc_.count(&msg))
    return; // multiplies into the first message's accumulator, reset there
  int32_t acc = accOf_.at(msg.result());
  const Posterior &post = p_.posteriors[posteriorOfQ_.at(msg.target->value)];
  // The whole accumulator reset at once (rows chosen by the data; a
  // datum-major layout).
  auto resetWhole = [&](const char *why) {
    Stmt z;
    z.kind = Stmt::Kind::Zero;
    z.buffer = acc;
    z.index = p_.intConst(0);
    z.count = post.elements * post.width;
    z.note = "reset " + msg.result()->name + " (" + why + ")";
    out.push_back(std::move(z));
  };
  if (scatters(*msg.target)) {
    // Rows chosen by ids from the data: any element may receive a sum (the
    // target has no other index).
    if (!used.empty() || msg.target->indices.size() != 1) {
      fail(msg.loc, "an id read from the data can index a message's target only as its one index (u(user(i)) "
                    "with u over one plate)");
      return;
    }
    resetWhole("rows chosen by the data");
    return;
  }
  if (transposed_.count(&msg)) {
    if (used.size() != 1 || used[0] != loops.back()) {
      fail(msg.loc, "internal: a partial reset of the transposed accumulator of %" + msg.result()->name);
      return;
    }
    resetWhole("datum-major");
    return;
  }
  // A target read whole over its last plate (a chain's transition rows, a
  // softmax's values): all the rows of that plate at once.
  int64_t rows = 1;
  if (msg.target->indices.size() < msg.target->value->dims.size()) {
    const PlateInfo *pl = plate(msg.target->value->dims.back(), msg.loc);
    if (!pl || pl->ragged) {
      fail(msg.loc, "internal: a target read whole over a plate of unknown size");
      return;
    }
    rows = pl->size;
  }
  bool product = productForm_.count(&msg) > 0;
  emitNest(used, 0, env, out, [&](Env &e, std::vector<Stmt> &body) {
    ExprId at = p_.mul(flatIndex(msg.target->value->dims, msg.target->indices, e, msg.loc, post.scratch),
                       p_.intConst(post.width));
    if (product) { // the product's identity
      body.push_back(kernelCall("ppc_fill", {intArg(post.width), doubleArg(1.0), ptrArg(acc, at)},
                                "reset " + msg.result()->name + " (product form)"));
      return;
    }
    Stmt z;
    z.kind = Stmt::Kind::Zero;
    z.buffer = acc;
    z.index = at;
    z.count = post.width * rows;
    z.note = "reset " + msg.result()->name;
    body.push_back(std::move(z));
  });
}

void PlanBuilder::emitSchedule(const Region &r, std::vector<Stmt> &out, Context &ctx) {
  for (const auto &op : r.ops) {
    if (!ok_)
      return;
    if (ctx.levels.empty()) {
      for (int pi : columnReaders_[op.get()])
        emitColumnRefresh(pi, out);
      for (int pi : statsTReaders_[op.get()]) {
        const Posterior &post = p_.posteriors[size_t(pi)];
        out.push_back(kernelCall("ppc_transpose",
                                 {intArg(post.elements), intArg(post.width), ptrArg(post.stats, p_.intConst(0)),
                                  ptrArg(post.statsT, p_.intConst(0))},
                                 post.variable->name + "'s statistics, datum-major"));
      }
    }
    switch (op->kind) {
    case OpKind::Update: emitUpdate(*op, out, ctx); break;
    case OpKind::Fuse:
    case OpKind::Local: emitFused(*op, out, ctx); break;
    default: fail(op->loc, "internal: unexpected op in a schedule");
    }
  }
}

void PlanBuilder::emitUpdate(const Op &update, std::vector<Stmt> &out, Context &ctx) {
  const Op *stmt = statementOf(update);
  if (!stmt) {
    fail(update.loc, "internal: update of a value without a statement");
    return;
  }
  if (block_ == Plan::Final && touchesScratch(*stmt)) {
    skippedFinal_.insert(stmt); // per-element rows, not outputs: nothing to refresh
    return;
  }
  auto red = ctx.reductionAt.find(stmt);
  if (red != ctx.reductionAt.end() && red->second != &update)
    return; // computed once, at its last update in the fused loop
  std::vector<Op *> loops = ir::enclosingLoops(*stmt);
  Env env;
  if (!bindContext(*stmt, loops, ctx, env))
    return;
  if (stmt->kind == OpKind::Marginal)
    emitMarginal(*stmt, loops, env, out, ctx.levels.size());
  else if (stmt->kind == OpKind::Msg)
    emitMessage(*stmt, loops, env, out, ctx.levels.size(), red != ctx.reductionAt.end());
  else
    fail(stmt->loc, "internal: update of something that is not a statement");
}

/// The statement reads or writes a scratch posterior (or, for a marginal,
/// sums a message the final block skipped).
bool PlanBuilder::touchesScratch(const Op &stmt) {
  auto scratchQ = [&](const Operand &o) {
    if (!o.isValue())
      return false;
    auto it = posteriorOfQ_.find(o.value);
    return it != posteriorOfQ_.end() && p_.posteriors[size_t(it->second)].scratch;
  };
  if (stmt.kind == OpKind::Marginal) {
    for (size_t i = 1; i < stmt.operands.size(); ++i)
      if (skippedFinal_.count(stmt.operands[i].value->def))
        return true;
    return scratchQ(Operand::ofValue(stmt.result()));
  }
  return (stmt.target && scratchQ(*stmt.target)) || ir::anyMessageInput(stmt, scratchQ);
}

void PlanBuilder::emitMarginal(const Op &marg, const std::vector<Op *> &loops, Env &env, std::vector<Stmt> &out,
                  size_t from) {
  int pi = posteriorOfQ_.at(marg.result());
  const Posterior post = p_.posteriors[pi];
  if (isChainFamily(post.family) && !marg.backward) {
    emitChainMarginal(marg, loops, env, out, from);
    return;
  }
  // Reported at the end, if something reads the posterior after all (a
  // condition nothing reads, like a model-selection switch, needs no
  // symmetry breaking).
  if (post.randomInit && checkReads_ && !initRead_.count(pi))
    recomputedUnread_.insert(pi);
  std::vector<int32_t> accs;
  std::set<int32_t> transposedAccs;
  // A deterministic factor's value: its statistics are the forward kernel's
  // (computed from its arguments), its natural parameters (`marginal.back`)
  // the sum of its children's messages, which the factor passes back.
  const bool forward = isDeterministicFamily(post.family) && !marg.backward;
  for (size_t i = 1; i < marg.operands.size(); ++i) {
    accs.push_back(accOf_.at(marg.operands[i].value));
    if (transposed_.count(marg.operands[i].value->def))
      transposedAccs.insert(accs.back());
  }
  const rt::RuntimeSymbol *axpy = rt::findRuntimeKernel("ppc_axpy");
  const FactorEntry &entry = factorEntry(post.family);
  const rt::RuntimeSymbol *stats = rt::findRuntimeKernel(entry.statsKernel);
  bool product = productForm_.count(&marg) > 0;
  emitNest(loops, from, env, out, [&](Env &e, std::vector<Stmt> &body) {
    ExprId row = p_.mul(flatIndex(marg.result()->dims, indicesOf(loops), e, marg.loc, post.scratch),
                        p_.intConst(post.width));
    if (product) {
      if (sharedAcc_.count(&marg))
        accs.assign(1, sharedAcc_.at(&marg));
      for (size_t i = 1; i < accs.size(); ++i)
        body.push_back(kernelCall("ppc_mul_n", {intArg(post.width), ptrArg(accs[i], row), ptrArg(accs[0], row)}));
      Arg eta;
      eta.kind = Arg::Kind::Null; // scratch rows: nothing reads their natural parameters
      auto shift = productShift_.find(marg.result());
      ExprId shiftSum = shift != productShift_.end() ? shift->second : p_.doubleConst(0.0);
      if (shift != productShift_.end())
        productShift_.erase(shift);
      // The last update of a collapsed z this iteration: its ELBO terms are its log normalizer.
      bool lognorm = refreshing_ && collapsed_.count(pi);
      std::vector<Arg> args = {intArg(post.width), ptrArg(accs[0], row)};
      if (lognorm)
        args.push_back(exprArg(Arg::Kind::Double, shiftSum));
      args.insert(args.end(), {post.scratch ? eta : ptrArg(post.eta, row), ptrArg(post.stats, row)});
      Stmt c = kernelCall(lognorm ? "ppc_categorical_stats_from_product_lognorm" : "ppc_categorical_stats_from_product",
                          std::move(args),
                          "statistics of " + marg.result()->name + " (product form)" +
                              (lognorm ? "; its ELBO terms: log normalizer" : ""));
      if (lognorm) {
        c.result = Stmt::Result::Elbo;
        c.scale = replication(loops, e, nullptr, marg.loc);
      }
      body.push_back(std::move(c));
      return;
    }
    if (forward) {
      if (accs.empty()) {
        fail(marg.loc, "internal: " + marg.result()->name + " has no forward statistics");
        return;
      }
      body.push_back(kernelCall("ppc_copy", {intArg(post.width), ptrArg(accs[0], row), ptrArg(post.stats, row)},
                                "statistics of " + marg.result()->name + " (forward)"));
      // Stacked values: each operand's forward fills its own elements (the others' rows are 0).
      for (size_t i = 1; i < accs.size(); ++i)
        body.push_back(kernelCall("ppc_axpy", {intArg(post.width), doubleArg(1.0), ptrArg(accs[i], row),
                                               ptrArg(post.stats, row)}));
      return;
    }
    Stmt z;
    z.kind = Stmt::Kind::Zero;
    z.buffer = post.eta;
    z.index = row;
    z.count = post.width;
    z.note = marg.result()->name + " = sum of its messages";
    body.push_back(std::move(z));
    for (int32_t acc : accs) {
      Stmt c;
      c.kind = Stmt::Kind::Call;
      if (transposedAccs.count(acc)) { // column `element` of the datum-major sums
        c.kernel = rt::findRuntimeKernel("ppc_axpy_strided");
        ExprId element = flatIndex(marg.result()->dims, indicesOf(loops), e, marg.loc, post.scratch);
        c.args = {intArg(post.width), intArg(post.elements), doubleArg(1.0), ptrArg(acc, element),
                  ptrArg(post.eta, row)};
      } else {
        c.kernel = axpy;
        c.args = {intArg(post.width), doubleArg(1.0), ptrArg(acc, row), ptrArg(post.eta, row)};
      }
      body.push_back(std::move(c));
    }
    if (marg.backward)
      return;
    Stmt s;
    s.kind = Stmt::Kind::Call;
    s.kernel = stats;
    s.args.push_back(intArg(1));
    if (entry.statsTakesDimension)
      s.args.push_back(intArg(post.dimension));
    s.args.push_back(ptrArg(post.eta, row));
    s.args.push_back(ptrArg(post.stats, row));
    s.note = "statistics of " + marg.result()->name;
    body.push_back(std::move(s));
    if (post.expRows >= 0) {
      Stmt t;
      t.kind = Stmt::Kind::Call;
      t.kernel = rt::findRuntimeKernel("ppc_exp_shifted_n");
      t.args = {intArg(post.width), ptrArg(post.stats, row), ptrArg(post.expRows, row),
                ptrArg(post.expRowShifts, flatIndex(marg.result()->dims, indicesOf(loops), e, marg.loc, post.scratch))};
      t.note = "exp of " + marg.result()->name + "'s statistics";
      body.push_back(std::move(t));
    }
  });
  // A whole array's update (the topics): its rows are independent.
  if (from == 0 && !loops.empty() && !out.empty() && out.back().kind == Stmt::Kind::Loop)
    out.back().parallel = true;
  computed_.insert(pi);
}

/// A Markov chain's posterior: the sum of each element's messages, then the
/// forward-backward recursion over the chain's elements (one chain per
/// iteration of the marginal's loops; runtime/factors/MarkovChain.cpp).
void PlanBuilder::emitChainMarginal(const Op &marg, const std::vector<Op *> &loops, Env &env, std::vector<Stmt> &out,
                                    size_t from) {
  int pi = posteriorOfQ_.at(marg.result());
  const Posterior post = p_.posteriors[pi];
  std::vector<int32_t> accs;
  for (size_t i = 1; i < marg.operands.size(); ++i)
    accs.push_back(accOf_.at(marg.operands[i].value));
  const Value *chainPlate = marg.result()->dims.back();
  const PlateInfo *pl = plate(chainPlate, marg.loc);
  if (!pl)
    return;
  emitNest(loops, from, env, out, [&](Env &e, std::vector<Stmt> &body) {
    std::vector<Operand> outer = indicesOf(loops);
    // The chain's first element (scratch rows: the element's own) and its length.
    ExprId first = post.scratch ? p_.intConst(0) : flatIndex(marg.result()->dims, outer, e, marg.loc);
    ExprId length = pl->ragged ? p_.loadInt(pl->sizes, flatIndex(chainPlate->dims, outer, e, marg.loc))
                               : p_.intConst(pl->size);
    Stmt loop;
    loop.kind = Stmt::Kind::Loop;
    loop.var = newVar();
    loop.bound = length;
    loop.note = marg.result()->name + " = sum of its messages, element by element";
    ExprId row = p_.mul(p_.add(first, p_.loopVar(loop.var)), p_.intConst(post.width));
    // eta = the sum of the messages, in one pass over the row where there
    // are one or two (the same numbers as zero, then add each in turn).
    if (accs.empty()) {
      Stmt z;
      z.kind = Stmt::Kind::Zero;
      z.buffer = post.eta;
      z.index = row;
      z.count = post.width;
      loop.body.push_back(std::move(z));
    } else if (accs.size() == 1) {
      loop.body.push_back(kernelCall("ppc_copy", {intArg(post.width), ptrArg(accs[0], row), ptrArg(post.eta, row)}));
    } else {
      loop.body.push_back(kernelCall("ppc_add", {intArg(post.width), ptrArg(accs[0], row), ptrArg(accs[1], row),
                                                  ptrArg(post.eta, row)}));
    }
    for (size_t i = 2; i < accs.size(); ++i)
      loop.body.push_back(
          kernelCall("ppc_axpy", {intArg(post.width), doubleArg(1.0), ptrArg(accs[i], row), ptrArg(post.eta, row)}));
    body.push_back(std::move(loop));
    ExprId at = p_.mul(first, p_.intConst(post.width));
    const FactorEntry &entry = factorEntry(post.family);
    std::vector<Arg> args = {exprArg(Arg::Kind::Int, length)};
    if (entry.statsTakesDimension)
      args.push_back(intArg(post.dimension));
    args.insert(args.end(), {ptrArg(post.eta, at), ptrArg(post.stats, at)});
    body.push_back(kernelCall(entry.statsKernel, std::move(args),
                              "statistics of " + marg.result()->name +
                                  (post.family == Family::MarkovChain ? " (forward-backward over the chain)"
                                                                      : " (smoother over the chain)")));
  });
  if (from == 0 && !loops.empty() && !out.empty() && out.back().kind == Stmt::Kind::Loop)
    out.back().parallel = true; // the chains are independent
  computed_.insert(pi);
}

std::vector<Operand> PlanBuilder::indicesOf(const std::vector<Op *> &loops) {
  std::vector<Operand> idx;
  for (Op *l : loops)
    idx.push_back(Operand::ofValue(l->index));
  return idx;
}

void PlanBuilder::emitMessage(const Op &msg, const std::vector<Op *> &loops, Env &env, std::vector<Stmt> &out, size_t from,
                 bool reducedOutside) {
  if (!reducedOutside)
    emitZeroTargets(msg, loops, from, env, out);
  if (!ok_)
    return;
  if (transposed_.count(&msg)) {
    std::vector<Op *> outer(loops.begin(), loops.end() - 1);
    emitNest(outer, from, env, out, [&](Env &e, std::vector<Stmt> &body) { emitTransposedScatter(msg, e, body); });
    markSum(msg, loops, from, out);
    return;
  }
  bool product = productForm_.count(&msg) > 0;
  if (product && linearForm(msg) == Linear::Entry) {
    // One statement per datum for all the cases: no loop over the cases.
    std::vector<Op *> outer(loops.begin(), loops.end() - 1);
    emitNest(outer, from, env, out, [&](Env &e, std::vector<Stmt> &body) { emitProductMessage(msg, e, body); });
    return;
  }
  if (logEntry_.count(&msg)) {
    std::vector<Op *> outer(loops.begin(), loops.end() - 1);
    emitNest(outer, from, env, out, [&](Env &e, std::vector<Stmt> &body) { emitLogEntryMessage(msg, e, body); });
    markSum(msg, outer, from, out);
    return;
  }
  emitNest(loops, from, env, out, [&](Env &e, std::vector<Stmt> &body) {
    if (product)
      emitProductMessage(msg, e, body);
    else
      emitMessageCall(msg, e, body);
  });
  markSum(msg, loops, from, out);
}

/// A top-level message loop whose target does not depend on its element
/// (a global's sum over the data) adds into the accumulator: the sum is
/// the loop's reduction, and the loop may run in parallel.
void PlanBuilder::markSum(const Op &msg, const std::vector<Op *> &loops, size_t from, std::vector<Stmt> &out) {
  if (from != 0 || loops.empty() || out.empty() || out.back().kind != Stmt::Kind::Loop ||
      targetUsesIndex(*msg.target, loops[0]->index) || sharedAcc_.count(&msg) || productForm_.count(&msg))
    return;
  out.back().reductions.push_back(accOf_.at(msg.result()));
  out.back().parallel = block_ != Plan::Final;
}

void PlanBuilder::emitMessageCall(const Op &msg, Env &env, std::vector<Stmt> &out) {
  auto role = roleOf(msg.kernel);
  if (!role) {
    fail(msg.loc, "internal: unknown kernel " + msg.kernel);
    return;
  }
  const FamilySpec &fs = familySpec(role->family);
  size_t nargs = fs.params.size() + 1;
  std::vector<std::optional<Source>> args(nargs);
  size_t expected = role->kind == KernelRole::Message ? nargs - 1 : role->kind == KernelRole::Elbo ? nargs : 1;
  // A message that reads its target's posterior too (a local bound's) has every argument.
  const bool readsTarget = role->kind == KernelRole::Message && msg.operands.size() == nargs;
  if (readsTarget)
    expected = nargs;
  if (msg.operands.size() != expected) {
    fail(msg.loc, "internal: " + msg.kernel + " has " + std::to_string(msg.operands.size()) +
                      " operands; the code generator expects " + std::to_string(expected));
    return;
  }
  size_t next = 0;
  for (size_t i = 0; i < expected; ++i) {
    if (role->kind == KernelRole::Message && int(next) == role->target && !readsTarget)
      ++next;
    args[next++] = resolveMessageOperand(msg.operands[i], env, msg.loc);
  }
  std::vector<std::pair<Source, ExprId>> gates;
  for (const auto &[cond, k] : msg.gates)
    gates.emplace_back(resolveMessageOperand(cond, env, msg.loc), caseExpr(k, env, msg.loc));
  if (!ok_)
    return;
  ExprId w = gateWeight(gates);
  int target = posteriorOfQ_.at(msg.target->value);
  const Posterior &post = p_.posteriors[target];
  ExprId row = p_.mul(flatIndex(msg.target->value->dims, msg.target->indices, env, msg.loc, post.scratch),
                      p_.intConst(post.width));
  int32_t acc = accOf_.at(msg.result());
  targetDimension_ = post.dimension;
  {
    std::vector<Op *> own = ir::enclosingLoops(msg);
    position_ = own.empty() ? p_.intConst(0) : indexExpr(Operand::ofValue(own.back()->index), env, msg.loc);
  }
  ExprId repl = times(replication(ir::enclosingLoops(msg), env, &*msg.target, msg.loc),
                      missingMask(msg.operands, env, msg.loc));
  if (!msg.evidence) {
    auto call = marshal(msg.kernel, *role, args, w, repl, std::make_pair(acc, row), msg.loc);
    if (!call)
      return;
    call->note = msg.result()->name;
    out.push_back(std::move(*call));
    return;
  }
  // Evidence: the term's value goes to case k of the condition's natural
  // parameters (a Bernoulli's logit takes +value for case 1, -value for 0).
  bool replUsed = false;
  auto call = marshal(msg.kernel, *role, args, w, repl, std::nullopt, msg.loc, &replUsed);
  if (!call)
    return;
  ExprId k = caseExpr(*msg.targetCase, env, msg.loc);
  call->result = Stmt::Result::Slot;
  call->buffer = acc;
  ExprId scale = replUsed ? w : times(w, repl);
  if (post.family == Family::Bernoulli) {
    call->index = row;
    ExprId sign = p_.intToDouble(p_.add(p_.mul(k, p_.intConst(2)), p_.intConst(-1)));
    scale = scale == kNoExpr ? sign : p_.mulDouble(scale, sign);
  } else {
    call->index = p_.add(row, k);
  }
  call->scale = scale;
  call->note = msg.result()->name;
  out.push_back(std::move(*call));
}

void PlanBuilder::collectUpdates(const Region &r, std::vector<const Op *> &updates, bool repeated,
                    std::set<const Op *> &inRepeated) {
  for (const auto &op : r.ops) {
    if (op->kind == OpKind::Update) {
      updates.push_back(op.get());
      if (repeated)
        inRepeated.insert(op.get());
    }
    for (size_t i = 0; i < op->regions.size(); ++i) {
      bool rep = repeated || (op->kind == OpKind::Local && i == 0 && op->iterations > 1);
      collectUpdates(*op->regions[i], updates, rep, inRepeated);
    }
  }
}

} // namespace ppc::codegen::lowering
