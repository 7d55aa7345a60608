//===- passes/Fusion.cpp - loop fusion, materialization, parallel substeps -===//
//
// DESIGN.md step 10 and seed 003's substeps.
//
// * Materialization. A message is consumed only by the marginal it adds to.
//   Each message update is moved to just before the next update of its
//   marginal (it reads only posteriors, so computing it later is fresher VMP,
//   not another algorithm), and a message computed fewer times than its
//   marginal is updated is recomputed before the later updates. Then a
//   message consumed by its marginal in the same fused loop, or summed into a
//   posterior outside the message's plate (a reduction, computed once between
//   the posterior's updates), is never stored for its whole plate: the update
//   is `streamed` (for LDA: no tokens x topics buffer). Any other message is
//   materialized.
// * Fusion. Consecutive updates whose loops start with the same plate become
//   one loop, `fuse %P { ... }`, when each reads what the others compute only
//   at its own element; inside a `local` block the next loop level fuses.
// * Parallel. A fused loop reads across elements only values no element
//   writes, so its elements are independent substeps (seed 003): `parallel`
//   (messages into global posteriors are per-element sums, reduced by the
//   code generator). A `local` block's elements are independent by the
//   global/local analysis.
//
//===----------------------------------------------------------------------===//
#include "passes/GlobalLocal.h"
#include "passes/Passes.h"

#include "ir/IR.h"
#include "passes/DependencyAnalysis.h"
#include "passes/Scheduler.h"

#include <algorithm>
#include <map>

namespace ppc::passes {
namespace {

using ir::Op;
using ir::OpKind;
using ir::Region;

const Op &stmtOf(const Op &update) { return *update.operands[0].value->def; }

/// The marginal a message adds to.
const Op *targetMarginal(const Op &msg) {
  if (msg.kind != OpKind::Msg || !msg.target || !msg.target->value->def)
    return nullptr;
  const Op *q = msg.target->value->def;
  return q->kind == OpKind::Marginal ? q : nullptr;
}


class FusionPass : public Pass {
public:
  std::string_view name() const override { return "fuse"; }
  bool preserves(const void *id) const override { return id == &DependencyAnalysis::ID; }

  bool run(ir::Module &m, PassContext &ctx) override {
    if (!m.iterationSchedule)
      return true;
    DependencyGraph *g = ctx.analyses.get<DependencyAnalysis>(m, ctx.diags);
    if (!g)
      return false;
    processRegion(*m.iterationSchedule, 0, /*cyclic=*/true);
    // Moving messages changes which posteriors the last iteration leaves stale,
    // and what the first iteration reads before computing it: redo both.
    computeFinalSchedule(m, *g);
    reinitialize(m, *g, ctx);
    initializeMessagesToGlobals(m);
    if (m.initSchedule) {
      // Initialization runs once: its messages are kept for the iterations.
      ir::walk(*m.initSchedule, [](Op &op) {
        if (op.kind == OpKind::Update && targetMarginal(stmtOf(op)))
          op.streamed = false;
      });
      fuseRegion(*m.initSchedule, 0);
    }
    fuseRegion(*m.finalSchedule, 0);
    return true;
  }

private:
  void reinitialize(ir::Module &m, const DependencyGraph &g, PassContext &ctx) {
    std::map<const ir::Value *, unsigned> index;
    for (unsigned s = 0; s < g.values.size(); ++s)
      index[g.values[s]] = s;
    std::vector<unsigned> order;
    ir::walk(*m.iterationSchedule, [&](Op &op) {
      if (op.kind == OpKind::Update)
        order.push_back(index.at(op.operands[0].value));
    });
    std::unique_ptr<Scheduler> scheduler = makeScheduler(g, ctx);
    scheduler->setIteration(std::move(order));
    scheduler->initialization();
    scheduler->diagnoseInitializations(); // on the order the run will have
    scheduler->emitInitialization(m);
  }

  // A region of updates: rematerialize, mark streamed, fuse; recurse into local blocks.
  void processRegion(Region &r, unsigned level, bool cyclic) {
    for (auto &op : r.ops)
      if (op->kind == OpKind::Local) {
        op->parallel = true;
        processRegion(*op->regions[0], level + 1, true);
        fuseRegion(*op->regions[1], level + 1);
        markStreamed(*op->regions[1], level + 1);
      }
    sinkMessages(r, cyclic);
    groupRunsByPlate(r, level);
    rematerialize(r);
    fuseRegion(r, level);
    markStreamed(r, level);
  }

  // Moves each message update to just before the next update of its marginal.
  void sinkMessages(Region &r, bool cyclic) {
    auto &ops = r.ops;
    // Sweeps until none moves anything; within a sweep, the op that takes a
    // moved one's place is looked at next (restarting from the first op
    // after every move made a chain of 400 scalar variables take 7 s).
    size_t budget = 4 * ops.size() * ops.size() + 4;
    for (bool movedInSweep = true; movedInSweep && budget > 0;) {
      movedInSweep = false;
      const size_t n = ops.size();
      for (size_t i = 0; i < n && budget > 0; ++i) {
        if (ops[i]->kind != OpKind::Update)
          continue;
        const Op *q = targetMarginal(stmtOf(*ops[i]));
        if (!q)
          continue;
        size_t limit = cyclic ? n : n - i;
        size_t j = 0;
        for (size_t d = 1; d < limit; ++d) {
          const Op &next = *ops[(i + d) % n];
          if (next.kind == OpKind::Update && &stmtOf(next) == q) {
            j = d;
            break;
          }
        }
        if (j <= 1)
          continue; // already just before it, or the marginal is updated elsewhere
        // Also in place: before the marginal's update in this pass (not
        // after it, around a cyclic region: a local block of one sweep would
        // read the message stale), with only other messages to the same
        // marginal between (moving past them, two such messages would swap
        // places without end: a chain of scalar variables made millions of
        // moves).
        bool inPlace = i + j < n;
        for (size_t d = 1; d < j && inPlace; ++d) {
          const Op &between = *ops[(i + d) % n];
          inPlace = between.kind == OpKind::Update && targetMarginal(stmtOf(between)) == q;
        }
        if (inPlace)
          continue;
        // Do not cross another update of the same message.
        bool blocked = false;
        for (size_t d = 1; d < j; ++d)
          if (ops[(i + d) % n]->kind == OpKind::Update && &stmtOf(*ops[(i + d) % n]) == &stmtOf(*ops[i]))
            blocked = true;
        if (blocked)
          continue;
        size_t target = (i + j) % n;
        std::unique_ptr<Op> u = std::move(ops[i]);
        ops.erase(ops.begin() + i);
        if (target > i)
          --target;
        ops.insert(ops.begin() + target, std::move(u));
        movedInSweep = true;
        --budget;
        if (target > i)
          --i; // another op is at i now
      }
    }
  }

  // The messages sunk before one marginal's update run in any order (each
  // reads posteriors, not the others): those over the same plate at this
  // level are made adjacent, in the order their plates first appear, so
  // that fuseRegion can fuse them.
  void groupRunsByPlate(Region &r, unsigned level) {
    auto &ops = r.ops;
    for (size_t i = 0; i < ops.size();) {
      const Op *q = ops[i]->kind == OpKind::Update ? targetMarginal(stmtOf(*ops[i])) : nullptr;
      size_t j = i + 1;
      while (q && j < ops.size() && ops[j]->kind == OpKind::Update && targetMarginal(stmtOf(*ops[j])) == q)
        ++j;
      if (j - i >= 3) {
        std::vector<const ir::Value *> plates; // in order of first appearance
        for (size_t k = i; k < j; ++k) {
          const ir::Value *p = plateAt(stmtOf(*ops[k]), level);
          if (std::find(plates.begin(), plates.end(), p) == plates.end())
            plates.push_back(p);
        }
        std::stable_sort(ops.begin() + long(i), ops.begin() + long(j), [&](const auto &a, const auto &b) {
          auto rank = [&](const std::unique_ptr<Op> &u) {
            return std::find(plates.begin(), plates.end(), plateAt(stmtOf(*u), level)) - plates.begin();
          };
          return rank(a) < rank(b);
        });
      }
      i = j;
    }
  }

  void rematerialize(Region &r) {
    auto &ops = r.ops;
    // Messages of this region, by the marginal they feed: computed once (an
    // insertion below adds an update of a message already here), where a
    // scan of the region for each marginal made the pass quadratic (20,000
    // variables: 8 s).
    std::map<const Op *, std::vector<const Op *>> feedersOf;
    for (auto &u : ops)
      if (u->kind == OpKind::Update)
        if (const Op *q = targetMarginal(stmtOf(*u))) {
          auto &feeders = feedersOf[q];
          if (std::find(feeders.begin(), feeders.end(), &stmtOf(*u)) == feeders.end())
            feeders.push_back(&stmtOf(*u));
        }
    // One sweep: an insertion adds a message's update, which can only
    // satisfy the checks of the marginals before it, never undo them (a
    // restart after each insertion made the pass cubic).
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i]->kind != OpKind::Update || stmtOf(*ops[i]).kind != OpKind::Marginal)
        continue;
      const Op &q = stmtOf(*ops[i]);
      auto it = feedersOf.find(&q);
      if (it == feedersOf.end())
        continue;
      // Since the previous update of q (cyclically), each of q's messages
      // computed in this region must have been computed again.
      for (const Op *msg : it->second) {
        const size_t n = ops.size();
        bool seen = false;
        for (size_t d = 1; d <= n; ++d) {
          const Op &prev = *ops[(i + n - d) % n];
          if (prev.kind != OpKind::Update)
            continue;
          if (&stmtOf(prev) == msg) {
            seen = true;
            break;
          }
          if (&stmtOf(prev) == &q)
            break;
        }
        if (!seen) {
          ops.insert(ops.begin() + long(i), makeUpdate(*msg, &r));
          ++i; // q is one further on now
        }
      }
    }
  }

  void markStreamed(Region &r, unsigned level) {
    // The group (fused loop, or the region itself) of every statement update.
    std::map<const Op *, std::vector<const Op *>> groupsOfMarginal; // marginal -> groups updating it
    std::vector<std::pair<Op *, const Op *>> updates;               // (update, its group)
    for (auto &op : r.ops) {
      if (op->kind == OpKind::Fuse)
        for (auto &u : op->regions[0]->ops)
          updates.emplace_back(u.get(), op.get());
      else if (op->kind == OpKind::Update)
        updates.emplace_back(op.get(), nullptr);
    }
    for (size_t i = 0; i < updates.size(); ++i) {
      Op &u = *updates[i].first;
      const Op &msg = stmtOf(u);
      const Op *q = targetMarginal(msg);
      if (!q)
        continue; // marginals are the posteriors: always stored
      // The next update of the marginal, in order (wrapping around).
      const Op *consumerGroup = nullptr;
      bool found = false;
      for (size_t d = 1; d <= updates.size() && !found; ++d) {
        auto &[next, group] = updates[(i + d) % updates.size()];
        if (&stmtOf(*next) == q) {
          consumerGroup = group;
          found = true;
        }
      }
      const ir::Value *plate = plateAt(msg, level);
      bool sameLoop = found && consumerGroup && consumerGroup == updates[i].second;
      bool scalar = plate == nullptr;
      // A reduction: the posterior is not over the message's plate.
      const ir::Value *var = q->operands[0].value;
      bool reduction = plate && (var->dims.size() <= level || var->dims[level] != plate);
      u.streamed = sameLoop || scalar || reduction || !found;
    }
  }

  /// The plate of a statement's loop at `level`, and its index there.
  static const ir::Value *plateAt(const Op &stmt, unsigned level, const ir::Value **index = nullptr) {
    std::vector<Op *> loops = ir::enclosingLoops(stmt);
    if (level >= loops.size())
      return nullptr;
    if (index)
      *index = loops[level]->index;
    return loops[level]->operands[0].value;
  }

  // `reader` reads what `writer` computes only at its own element (level).
  static bool sameElementRead(const Op &reader, const Op &writer, unsigned level) {
    const ir::Value *readerIdx = nullptr, *writerIdx = nullptr;
    plateAt(reader, level, &readerIdx);
    plateAt(writer, level, &writerIdx);
    if (reader.kind == OpKind::Marginal) {
      // A marginal over the plate sums the messages of its own element.
      return writer.kind == OpKind::Msg && writer.target->indices.size() > level &&
             writer.target->indices[level].isValue() && writer.target->indices[level].value == writerIdx &&
             reader.operands[0].indices.size() > level && reader.operands[0].indices[level].isValue() &&
             reader.operands[0].indices[level].value == readerIdx;
    }
    bool ok = true;
    for (const ir::Operand &o : reader.operands)
      if (o.isValue() && o.value == writer.result())
        ok = ok && o.indices.size() > level && o.indices[level].isValue() && o.indices[level].value == readerIdx;
    for (const auto &[cond, which] : reader.gates)
      if (cond.value == writer.result())
        ok = ok && cond.indices.size() > level && cond.indices[level].isValue() &&
             cond.indices[level].value == readerIdx;
    return ok;
  }

  static bool reads(const Op &reader, const Op &writer) {
    for (const ir::Operand &o : reader.operands)
      if (o.isValue() && o.value == writer.result())
        return true;
    for (const auto &[cond, which] : reader.gates)
      if (cond.value == writer.result())
        return true;
    return false;
  }

  void fuseRegion(Region &r, unsigned level) {
    std::vector<std::unique_ptr<Op>> ops = std::move(r.ops);
    r.ops.clear();
    size_t i = 0;
    while (i < ops.size()) {
      const ir::Value *plate =
          ops[i]->kind == OpKind::Update ? plateAt(stmtOf(*ops[i]), level) : nullptr;
      size_t j = i + 1;
      if (plate) {
        while (j < ops.size() && ops[j]->kind == OpKind::Update && plateAt(stmtOf(*ops[j]), level) == plate) {
          const Op &b = stmtOf(*ops[j]);
          bool legal = true;
          for (size_t k = i; k < j && legal; ++k) {
            const Op &a = stmtOf(*ops[k]);
            if (reads(b, a) && !sameElementRead(b, a, level))
              legal = false;
            if (reads(a, b) && !sameElementRead(a, b, level))
              legal = false;
          }
          if (!legal)
            break;
          ++j;
        }
      }
      if (j - i >= 2) {
        auto fuse = std::make_unique<Op>();
        fuse->kind = OpKind::Fuse;
        fuse->loc = ops[i]->loc;
        fuse->parallel = true;
        fuse->parentRegion = &r;
        fuse->operands.push_back(ir::Operand::ofValue(const_cast<ir::Value *>(plate)));
        fuse->regions.push_back(std::make_unique<Region>());
        Region *body = fuse->regions.back().get();
        body->parent = fuse.get();
        for (size_t k = i; k < j; ++k) {
          ops[k]->parentRegion = body;
          body->ops.push_back(std::move(ops[k]));
        }
        r.ops.push_back(std::move(fuse));
      } else {
        for (size_t k = i; k < j; ++k) {
          ops[k]->parentRegion = &r;
          r.ops.push_back(std::move(ops[k]));
        }
      }
      i = j;
    }
  }
};

} // namespace

std::unique_ptr<Pass> createFusionPass() { return std::make_unique<FusionPass>(); }

} // namespace ppc::passes
