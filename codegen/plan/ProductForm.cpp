//===- codegen/plan/ProductForm.cpp - categorical posteriors as products ----===//
//
// The lowering choice `product-form` (LoweringOptions::productForm,
// --disable-plan-opt=product-form): q(z) = normalize(prod_j exp(m_j)). Where
// every message to a categorical marginal is a row of a Dirichlet parent's
// E log statistics (the parent of z) or one entry of such a row picked by
// data (an observed child that z selects the row of), the exponentials come
// from tables refreshed with the parents and the marginal costs K products
// instead of K exponentials. Decided per top-level schedule statement,
// before any code is emitted: the marginal and all its messages must be
// updated in that statement, and a parent read through a column table must
// not be (its table is refreshed when the statement starts).
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanBuilder.h"

#include "runtime/Symbols.h"

#include <algorithm>

namespace ppc::codegen::lowering {

PlanBuilder::Linear PlanBuilder::linearForm(const Op &msg) {
  if (!msg.gates.empty())
    return Linear::None;
  auto dirichletParent = [&](const Operand &o) {
    auto it = o.isValue() ? posteriorOfQ_.find(o.value) : posteriorOfQ_.end();
    return it != posteriorOfQ_.end() && p_.posteriors[size_t(it->second)].family == Family::Dirichlet;
  };
  // One factor per row of the target: a sum over a loop the target does
  // not depend on (a document's words into its cluster) would be a product
  // of many factors, which can underflow; those stay in the log domain.
  auto oneFactorPerRow = [&](size_t skipInner) {
    std::vector<Op *> loops = ir::enclosingLoops(msg);
    for (size_t j = 0; j + skipInner < loops.size(); ++j)
      if (!usesIndex(*msg.target, loops[j]->index))
        return false;
    return true;
  };
  if (!msg.evidence && msg.kernel == "ppc_categorical_sample_avglog" && msg.operands.size() == 1 &&
      dirichletParent(msg.operands[0]) && oneFactorPerRow(0))
    return Linear::Row;
  if (entryEvidence(msg))
    return oneFactorPerRow(1) ? Linear::Entry : Linear::None;
  return Linear::None;
}

/// An observed categorical's evidence to the case of its gate, the case
/// loop innermost and picking the Dirichlet parent's row and nothing else
/// (LDA's and the mixture of unigrams' tokens): for all cases at once,
/// one datum's row of the parent's datum-major table.
bool PlanBuilder::entryEvidence(const Op &msg) const {
  if (!msg.gates.empty() || !msg.evidence || msg.kernel != "ppc_categorical_avglogfactor_obs_n" ||
      msg.operands.size() != 2 || !msg.operands[1].isValue() || msg.operands[1].value->dims.size() != 1)
    return false;
  auto parentQ = posteriorOfQ_.find(msg.operands[1].value);
  if (parentQ == posteriorOfQ_.end() || p_.posteriors[size_t(parentQ->second)].family != Family::Dirichlet)
    return false;
  std::vector<Op *> loops = ir::enclosingLoops(msg);
  const Operand &parent = msg.operands[1];
  return !loops.empty() && msg.targetCase && msg.targetCase->isValue() &&
         msg.targetCase->value == loops.back()->index && plateLowerBound(loops.back()->operands[0].value) == 0 &&
         parent.indices.size() == 1 &&
         parent.indices[0].isValue() && parent.indices[0].value == loops.back()->index &&
         !usesIndex(msg.operands[0], loops.back()->index) && !usesIndex(*msg.target, loops.back()->index);
}

/// A message to a Dirichlet row picked by the case of a gate, from an
/// observed categorical (LDA: a token's count to topic k's word x), for
/// every case: the accumulator is kept transposed (datum-major), so that
/// one token adds its weighted case probabilities to one contiguous row.
bool PlanBuilder::scatterForm(const Op &msg) {
  if (msg.evidence || msg.kernel != "ppc_categorical_probs_avglog_obs_n" || msg.operands.size() != 1 ||
      msg.gates.size() != 1 || !msg.target)
    return false;
  std::vector<Op *> loops = ir::enclosingLoops(msg);
  if (loops.empty())
    return false;
  const Value *k = loops.back()->index;
  const Operand &target = *msg.target;
  const auto &[cond, kase] = msg.gates[0];
  auto it = posteriorOfQ_.find(target.value);
  auto ct = cond.isValue() ? posteriorOfQ_.find(cond.value) : posteriorOfQ_.end();
  return it != posteriorOfQ_.end() && ct != posteriorOfQ_.end() && target.value->dims.size() == 1 &&
         target.indices.size() == 1 && target.indices[0].isValue() && target.indices[0].value == k &&
         kase.isValue() && kase.value == k && !usesIndex(cond, k) && !usesIndex(msg.operands[0], k) &&
         p_.posteriors[size_t(ct->second)].family == Family::Categorical &&
         p_.posteriors[size_t(ct->second)].width == p_.posteriors[size_t(it->second)].elements;
}

/// Entry evidence that stays in the log domain (not one factor per row:
/// a document's words into its cluster) still takes all cases at once:
/// w * (the parent's datum-major statistics at the datum), one axpy per
/// datum instead of a strided read per case, from a copy refreshed before
/// each top-level statement that reads it (which must not also update
/// the parent).
void PlanBuilder::planLogEntries() {
  const Region *schedules[] = {m_.initSchedule.get(), m_.iterationSchedule.get(), m_.finalSchedule.get()};
  std::set<const Op *> refused;
  std::map<const Op *, std::vector<std::pair<const Op *, int>>> readersOf; // top -> (message, parent)
  for (const Region *r : schedules) {
    if (!r)
      continue;
    for (const auto &top : r->ops) {
      std::vector<const Op *> updates;
      std::set<const Op *> unused;
      if (top->kind == OpKind::Update)
        updates.push_back(top.get());
      else
        for (const auto &region : top->regions)
          collectUpdates(*region, updates, false, unused);
      std::set<int> written;
      std::vector<const Op *> messages;
      for (const Op *u : updates) {
        const Op *st = statementOf(*u);
        if (st->kind == OpKind::Marginal)
          written.insert(posteriorOfQ_.at(st->result()));
        else if (st->kind == OpKind::Msg && entryEvidence(*st) && !productForm_.count(st))
          messages.push_back(st);
      }
      for (const Op *msg : messages) {
        int parent = posteriorOfQ_.at(msg->operands[1].value);
        auto target = msg->target && msg->target->isValue() ? posteriorOfQ_.find(msg->target->value)
                                                             : posteriorOfQ_.end();
        if (written.count(parent) || target == posteriorOfQ_.end() ||
            p_.posteriors[size_t(target->second)].width != p_.posteriors[size_t(parent)].elements)
          refused.insert(msg);
        else
          readersOf[top.get()].emplace_back(msg, parent);
      }
    }
  }
  for (const auto &[top, readers] : readersOf)
    for (const auto &[msg, parent] : readers) {
      if (refused.count(msg))
        continue;
      logEntry_.insert(msg);
      Posterior &pp = p_.posteriors[size_t(parent)];
      if (pp.statsT < 0)
        pp.statsT = addBuffer(pp.variable->name + ".q.stats.bydatum", false, pp.elements * pp.width);
      auto &list = statsTReaders_[top];
      if (std::find(list.begin(), list.end(), parent) == list.end())
        list.push_back(parent);
    }
}

void PlanBuilder::planProductForms() {
  ir::walk(*m_.messages, [&](const Op &msg) {
    if (msg.kind == OpKind::Msg && scatterForm(msg))
      transposed_.insert(&msg);
  });
  const Region *schedules[] = {m_.initSchedule.get(), m_.iterationSchedule.get(), m_.finalSchedule.get()};
  for (const Region *r : schedules) {
    if (!r)
      continue;
    for (const auto &top : r->ops) {
      std::vector<const Op *> updates;
      std::set<const Op *> unused;
      if (top->kind == OpKind::Update)
        updates.push_back(top.get());
      else
        for (const auto &region : top->regions)
          collectUpdates(*region, updates, false, unused);
      std::set<const Op *> stmts;
      std::set<int> written;
      for (const Op *u : updates) {
        const Op *st = statementOf(*u);
        stmts.insert(st);
        if (st->kind == OpKind::Marginal)
          written.insert(posteriorOfQ_.at(st->result()));
      }
      for (const Op *st : stmts) {
        if (st->kind != OpKind::Marginal)
          continue;
        const Posterior &post = p_.posteriors[size_t(posteriorOfQ_.at(st->result()))];
        if (post.family != Family::Categorical || st->operands.size() < 2)
          continue;
        bool ok = true;
        for (size_t i = 1; i < st->operands.size() && ok; ++i) {
          const Op *msg = st->operands[i].value->def;
          Linear form = linearForm(*msg);
          ok = stmts.count(msg) && form != Linear::None;
          if (ok && form == Linear::Entry)
            ok = !written.count(posteriorOfQ_.at(msg->operands[1].value));
        }
        if (!ok)
          continue;
        productForm_.insert(st);
        shareProductAccumulator(*st, updates);
        for (size_t i = 1; i < st->operands.size(); ++i) {
          const Op *msg = st->operands[i].value->def;
          productForm_.insert(msg);
          if (linearForm(*msg) == Linear::Row) {
            int src = posteriorOfQ_.at(msg->operands[0].value);
            Posterior &pp = p_.posteriors[size_t(src)];
            if (pp.expRows < 0) {
              pp.expRows = addBuffer(msg->operands[0].value->name + ".exp", false, pp.elements * pp.width);
              pp.expRowShifts = addBuffer(msg->operands[0].value->name + ".exp.shift", false, pp.elements);
            }
          } else {
            int src = posteriorOfQ_.at(msg->operands[1].value);
            Posterior &pp = p_.posteriors[size_t(src)];
            if (pp.expColumns < 0) {
              pp.expColumns =
                  addBuffer(msg->operands[1].value->name + ".expcols", false, pp.elements * pp.width);
              pp.expColumnShifts = addBuffer(msg->operands[1].value->name + ".expcols.shift", false, pp.width);
            }
            auto &readers = columnReaders_[top.get()];
            if (std::find(readers.begin(), readers.end(), src) == readers.end())
              readers.push_back(src);
          }
        }
      }
    }
  }
}

/// A categorical z (rows of one element of the nested plate) updated in
/// product form in the nested local loop's `then` region (the refresh
/// after the local sweeps, passes/GlobalLocal.cpp) is at its optimum given
/// its neighbours when the element's ELBO terms are evaluated. Then z's
/// entropy plus the expected log factors z is in equal z's log normalizer:
/// each such factor is linear in z's indicator and its message to z is
/// the table row just multiplied in. The ELBO takes that one number per z
/// (and the tables' shifts) instead of K logarithms and three passes over
/// K. z qualifies when the factors it is in are its own and observed ones
/// under its cases (`when z case k`).
void PlanBuilder::planCollapsedElbo() {
  if (!nestedLocal_ || nestedLocal_->regions.size() < 2)
    return;
  std::vector<const Op *> updates;
  std::set<const Op *> unused;
  collectUpdates(*nestedLocal_->regions[1], updates, false, unused);
  std::map<const Op *, int> count;
  for (const Op *u : updates)
    if (statementOf(*u)->kind == OpKind::Marginal)
      ++count[statementOf(*u)];
  for (const auto &[marg, n] : count) {
    int pi = posteriorOfQ_.at(marg->result());
    const Posterior &post = p_.posteriors[size_t(pi)];
    if (n == 1 && post.family == Family::Categorical && post.scratch && productForm_.count(marg) &&
        onlyLinearFactors(post.variable))
      collapsed_.insert(pi);
  }
}

/// Every factor that uses z is z's own or an observed one under z's cases.
bool PlanBuilder::onlyLinearFactors(const Value *z) const {
  bool ok = true;
  ir::walk(m_.body, [&](const Op &op) {
    if (!op.isRandom() || op.result() == z)
      return;
    bool underCases = false;
    for (const Op *p = op.parentOp(); p && !underCases; p = p->parentOp())
      underCases = p->kind == OpKind::When && p->operands[0].isValue() && p->operands[0].value->def &&
                   p->operands[0].value->def->operands[0].value == z;
    if (underCases) {
      ok = ok && op.observed;
      return;
    }
    for (const Operand &o : op.operands)
      ok = ok && !usesIndex(o, z);
  });
  return ok;
}

/// When each message of a product-form marginal is updated once before
/// each update of the marginal (in the same order each time), the
/// messages multiply into one accumulator (the first updated's): one
/// reset and no products of accumulators per token.
void PlanBuilder::shareProductAccumulator(const Op &marginal, const std::vector<const Op *> &updates) {
  std::set<const Op *> messages;
  for (size_t i = 1; i < marginal.operands.size(); ++i)
    messages.insert(marginal.operands[i].value->def);
  std::vector<const Op *> order, since;
  bool ok = true, seen = false;
  for (const Op *u : updates) {
    const Op *st = statementOf(*u);
    if (st == &marginal) {
      std::set<const Op *> distinct(since.begin(), since.end());
      ok = ok && since.size() == messages.size() && distinct.size() == since.size() && (!seen || since == order);
      order = since;
      since.clear();
      seen = true;
    } else if (messages.count(st)) {
      since.push_back(st);
    }
  }
  if (!ok || !seen || !since.empty() || order.empty())
    return;
  int32_t lead = accOf_.at(order[0]->result());
  for (size_t i = 1; i < order.size(); ++i)
    sharedAcc_[order[i]] = lead;
  sharedAcc_[&marginal] = lead;
}

/// The datum-major exponential table, in blocks of columns that a
/// parallel loop shares among the threads (LDA: 10473 words).
void PlanBuilder::emitColumnRefresh(int pi, std::vector<Stmt> &out) {
  constexpr int64_t kColumns = 512;
  const Posterior &post = p_.posteriors[size_t(pi)];
  const int64_t blocks = (post.width + kColumns - 1) / kColumns;
  Stmt loop;
  loop.kind = Stmt::Kind::Loop;
  loop.var = newVar();
  loop.bound = p_.intConst(blocks);
  loop.parallel = blocks > 1;
  ExprId begin = p_.mul(p_.loopVar(loop.var), p_.intConst(kColumns));
  Stmt call = kernelCall("ppc_exp_shifted_transposed",
                         {intArg(post.elements), intArg(post.width), exprArg(Arg::Kind::Int, begin),
                          intArg(blocks > 1 ? kColumns : post.width), ptrArg(post.stats, p_.intConst(0)),
                          ptrArg(post.expColumns, p_.intConst(0)), ptrArg(post.expColumnShifts, p_.intConst(0))},
                         "exp of " + post.variable->name + "'s statistics, by datum");
  if (blocks <= 1) {
    call.args[2] = intArg(0);
    out.push_back(std::move(call));
    return;
  }
  loop.body.push_back(std::move(call));
  out.push_back(std::move(loop));
}

/// A product-form message: its accumulator row times the parent's row
/// table (Row), or its case slot times the table entry at the datum
/// (Entry: the usual kernel reads the table instead of the statistics).
void PlanBuilder::emitProductMessage(const Op &msg, Env &env, std::vector<Stmt> &out) {
  int target = posteriorOfQ_.at(msg.target->value);
  const Posterior &post = p_.posteriors[size_t(target)];
  ExprId row = p_.mul(flatIndex(msg.target->value->dims, msg.target->indices, env, msg.loc, post.scratch),
                      p_.intConst(post.width));
  auto shared = sharedAcc_.find(&msg);
  int32_t acc = shared != sharedAcc_.end() ? shared->second : accOf_.at(msg.result());
  if (linearForm(msg) == Linear::Row) {
    Source parent = resolveMessageOperand(msg.operands[0], env, msg.loc);
    const Posterior &pp = p_.posteriors[size_t(parent.posterior)];
    noteRead(parent.posterior, msg.loc);
    out.push_back(kernelCall("ppc_mul_n",
                             {intArg(post.width), ptrArg(pp.expRows, p_.mul(parent.element, p_.intConst(pp.width))),
                              ptrArg(acc, row)},
                             msg.result()->name + " (product form)"));
    addProductShift(msg.target->value, p_.loadDouble(pp.expRowShifts, parent.element));
    return;
  }
  // Entry: the accumulator row times the datum's row of the transposed table.
  Source datum = resolveMessageOperand(msg.operands[0], env, msg.loc);
  const Posterior &pp = p_.posteriors[size_t(posteriorOfQ_.at(msg.operands[1].value))];
  noteRead(posteriorOfQ_.at(msg.operands[1].value), msg.loc);
  if (datum.kind != Source::Data || pp.elements != post.width) {
    fail(msg.loc, "internal: a product-form evidence message without a datum");
    return;
  }
  ExprId x = p_.loadInt(dataBuffer(datum.data, Data::Int), datum.element);
  out.push_back(kernelCall("ppc_mul_n",
                           {intArg(post.width), ptrArg(pp.expColumns, p_.mul(x, p_.intConst(pp.elements))),
                            ptrArg(acc, row)},
                           msg.result()->name + " (product form)"));
  addProductShift(msg.target->value, p_.loadDouble(pp.expColumnShifts, x));
}

/// The shifts of the tables the product of q's messages reads, summed
/// until the marginal that normalizes the product takes them.
void PlanBuilder::addProductShift(const Value *q, ExprId shift) {
  auto [it, fresh] = productShift_.emplace(q, shift);
  if (!fresh)
    it->second = p_.addDouble(it->second, shift);
}

/// acc[x][k] += w q(z = k) for all cases k at once (scatterForm).
void PlanBuilder::emitTransposedScatter(const Op &msg, Env &env, std::vector<Stmt> &out) {
  const Posterior &post = p_.posteriors[size_t(posteriorOfQ_.at(msg.target->value))];
  Source datum = resolveMessageOperand(msg.operands[0], env, msg.loc);
  Source cond = resolveMessageOperand(msg.gates[0].first, env, msg.loc);
  if (!ok_ || datum.kind != Source::Data || cond.kind != Source::Latent) {
    fail(msg.loc, "internal: a datum-major message without a datum or a condition");
    return;
  }
  noteRead(cond.posterior, msg.loc);
  const Posterior &z = p_.posteriors[size_t(cond.posterior)];
  ExprId w = times(replication(ir::enclosingLoops(msg), env, &*msg.target, msg.loc),
                   missingMask(msg.operands, env, msg.loc));
  ExprId x = p_.loadInt(dataBuffer(datum.data, Data::Int), datum.element);
  Stmt c = kernelCall("ppc_axpy",
                      {intArg(post.elements), exprArg(Arg::Kind::Double, w == kNoExpr ? p_.doubleConst(1) : w),
                       ptrArg(z.stats, p_.mul(cond.element, p_.intConst(z.width))),
                       ptrArg(accOf_.at(msg.result()), p_.mul(x, p_.intConst(post.elements)))});
  c.note = msg.result()->name + " (datum-major)";
  out.push_back(std::move(c));
}

/// acc[row][k] += w E log parent[k][x] for all cases k (planLogEntries).
void PlanBuilder::emitLogEntryMessage(const Op &msg, Env &env, std::vector<Stmt> &out) {
  const Posterior &post = p_.posteriors[size_t(posteriorOfQ_.at(msg.target->value))];
  ExprId row = p_.mul(flatIndex(msg.target->value->dims, msg.target->indices, env, msg.loc, post.scratch),
                      p_.intConst(post.width));
  Source datum = resolveMessageOperand(msg.operands[0], env, msg.loc);
  int parent = posteriorOfQ_.at(msg.operands[1].value);
  const Posterior &pp = p_.posteriors[size_t(parent)];
  if (!ok_ || datum.kind != Source::Data) {
    fail(msg.loc, "internal: a datum-major evidence message without a datum");
    return;
  }
  noteRead(parent, msg.loc);
  ExprId w = times(replication(ir::enclosingLoops(msg), env, &*msg.target, msg.loc),
                   missingMask(msg.operands, env, msg.loc));
  ExprId x = p_.loadInt(dataBuffer(datum.data, Data::Int), datum.element);
  Stmt c = kernelCall("ppc_axpy",
                      {intArg(post.width), exprArg(Arg::Kind::Double, w == kNoExpr ? p_.doubleConst(1) : w),
                       ptrArg(pp.statsT, p_.mul(x, p_.intConst(pp.elements))), ptrArg(accOf_.at(msg.result()), row)});
  c.note = msg.result()->name + " (all cases, datum-major)";
  out.push_back(std::move(c));
}

} // namespace ppc::codegen::lowering
