//===- passes/GlobalLocal.cpp - global/local analysis, nested schedules ----===//
//
// DESIGN.md step 9. The outermost data plate is the top-level `?` plate over
// which the most latent variables range (LDA: the documents). Latent
// variables over it are local (a document's topic mix and its words'
// assignments); latent variables over no data plate are global (topics).
// Locals must touch only globals and their own element of the plate: every
// use of a variable over that plate indexes it by the factor's own element.
//
// The nested schedule (PassContext::localSchedule; ppc's default when the
// locals form a cycle, as LDA's theta and z do) turns the iteration into:
//
//   update ...                     the globals, from the messages the
//   local %P iters N [tol T] [restart] {   elements sent last iteration;
//     update ...                   per element of %P: at most N sweeps of the
//   } then {                       locals (each starting with the locals that
//     update ...                   read the globals; ended early below T; the
//   }                              locals restarted from their priors with
//                                  `restart`), then the element's messages
//                                  to the globals, after one more update of
//                                  the locals they read if the sweep left
//                                  those stale (refreshStaleLocals)
//
//===----------------------------------------------------------------------===//
#include "passes/GlobalLocal.h"
#include "passes/Passes.h"

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/DependencyAnalysis.h"
#include "passes/Scheduler.h"

#include <algorithm>
#include <functional>
#include <llvm/Support/raw_ostream.h>
#include <map>
#include <optional>
#include <set>

namespace ppc::passes {

const char GlobalLocalAnalysis::ID = 0;

namespace {

bool isDataPlate(const ir::Value *p) {
  return p->def && p->def->kind == ir::OpKind::Plate && p->def->plateKind == ir::Op::PlateKind::Data;
}

// Every operand over `plate` used by `op` indexes it with `elem` (the
// element `op` belongs to); true if so.
bool usesOnlyItsElement(const ir::Op &op, const ir::Value *plate, const ir::Value *elem) {
  std::function<bool(const ir::Operand &)> ok = [&](const ir::Operand &o) {
    if (!o.isValue())
      return true;
    if (!o.value->dims.empty() && o.value->dims[0] == plate && !o.value->isLoopIndex()) {
      if (o.indices.empty() || !o.indices[0].isValue() || o.indices[0].value != elem)
        return false;
    }
    for (const ir::Operand &i : o.indices)
      if (!ok(i))
        return false;
    return true;
  };
  for (const ir::Operand &o : op.operands)
    if (!ok(o))
      return false;
  return true;
}

} // namespace

std::unique_ptr<GlobalLocalInfo> GlobalLocalAnalysis::run(ir::Module &m, DiagnosticEngine &) {
  auto info = std::make_unique<GlobalLocalInfo>();
  std::map<const ir::Value *, unsigned> count;
  std::vector<const ir::Value *> order;
  // A deterministic factor's value is neither: it is a function of its
  // arguments, recomputed wherever they change (the scheduler's triggers).
  auto variable = [](const ir::Op &op) { return op.isRandom() && !op.observed && !isDeterministicFamily(op.family); };
  ir::walk(m.body, [&](ir::Op &op) {
    if (!variable(op))
      return;
    const ir::Value *v = op.result();
    if (!v->dims.empty() && isDataPlate(v->dims[0]) && v->dims[0]->dims.empty()) {
      if (!count.count(v->dims[0]))
        order.push_back(v->dims[0]);
      ++count[v->dims[0]];
    }
  });
  for (const ir::Value *p : order)
    if (!info->plate || count[p] > count[info->plate])
      info->plate = p;
  ir::walk(m.body, [&](ir::Op &op) {
    if (!variable(op))
      return;
    const ir::Value *v = op.result();
    bool overData = false;
    for (const ir::Value *d : v->dims)
      overData = overData || isDataPlate(d);
    if (info->plate && !v->dims.empty() && v->dims[0] == info->plate)
      info->locals.insert(v);
    else if (!overData)
      info->globals.insert(v);
  });
  if (!info->plate)
    return info;
  // A chain along the plate itself (one sequence, ?.chain(...)): its
  // elements are one structured posterior, not independent locals.
  ir::walk(m.body, [&](ir::Op &op) {
    if (info->plate && op.isRandom() && isChainFamily(op.family) && !op.result()->dims.empty() &&
        op.result()->dims.back() == info->plate) {
      info->whyNot = "a chain runs along plate %" + info->plate->name + " (its elements are one posterior)";
      info->plate = nullptr;
    }
  });
  if (!info->plate) {
    info->locals.clear();
    return info;
  }
  // Locals touch only globals and their own element.
  ir::walk(m.body, [&](ir::Op &op) {
    if (info->plate == nullptr || (!op.isRandom() && !op.isGate()))
      return;
    std::vector<ir::Op *> loops = ir::enclosingLoops(op);
    const ir::Value *elem = nullptr;
    for (ir::Op *l : loops)
      if (l->operands[0].value == info->plate) {
        elem = l->index;
        break;
      }
    bool touchesLocal = false;
    for (const ir::Operand &o : op.operands)
      touchesLocal = touchesLocal || (o.isValue() && info->locals.count(o.value));
    if (!elem && touchesLocal) {
      info->whyNot = "a factor outside plate %" + info->plate->name + " uses its variables";
      info->plate = nullptr;
      return;
    }
    if (elem && !usesOnlyItsElement(op, info->plate, elem)) {
      info->whyNot = "a factor uses another element of plate %" + info->plate->name;
      info->plate = nullptr;
    }
  });
  if (!info->plate)
    info->locals.clear();
  return info;
}

void initializeMessagesToGlobals(ir::Module &m) {
  if (!m.initSchedule || !m.iterationSchedule)
    return;
  const ir::Op *local = nullptr;
  for (const auto &op : m.iterationSchedule->ops)
    if (op->kind == ir::OpKind::Local)
      local = op.get();
  if (!local)
    return;
  std::set<const ir::Value *> initialized;
  ir::walk(*m.initSchedule, [&](const ir::Op &op) {
    if (op.kind == ir::OpKind::Update)
      initialized.insert(op.operands[0].value);
  });
  // The marginals the element updates; a message to any other is to a global.
  std::set<const ir::Value *> elementMarginals;
  for (const auto &region : local->regions)
    ir::walk(*region, [&](const ir::Op &op) {
      if (op.kind == ir::OpKind::Update && op.operands[0].value->def->kind == ir::OpKind::Marginal)
        elementMarginals.insert(op.operands[0].value);
    });
  bool missing = false;
  ir::walk(*local->regions[1], [&](const ir::Op &op) {
    if (op.kind != ir::OpKind::Update || initialized.count(op.operands[0].value))
      return;
    const ir::Op &stmt = *op.operands[0].value->def;
    missing = missing || (stmt.kind == ir::OpKind::Msg && stmt.target && !elementMarginals.count(stmt.target->value));
  });
  if (!missing)
    return;
  auto append = [&](const ir::Op &op) {
    auto copy = std::make_unique<ir::Op>();
    copy->kind = ir::OpKind::Update;
    copy->loc = op.loc;
    copy->operands = op.operands;
    copy->parentRegion = m.initSchedule.get();
    m.initSchedule->ops.push_back(std::move(copy));
  };
  // The globals those statements read start from their priors where the
  // initialization left them unset (not where it draws them at random:
  // Bayesian PCA's W breaks the symmetry).
  std::set<const ir::Value *> read;
  for (const auto &region : local->regions)
    ir::walk(*region, [&](const ir::Op &op) {
      if (op.kind == ir::OpKind::Update)
        ir::anyMessageInput(*op.operands[0].value->def, [&](const ir::Operand &o) {
          if (o.isValue() && o.value->def && o.value->def->kind == ir::OpKind::Marginal &&
              !elementMarginals.count(o.value))
            read.insert(o.value);
          return false;
        });
    });
  const auto breakers = ir::productSymmetryBreakers(m.body);
  for (const auto &op : m.iterationSchedule->ops)
    if (op->kind == ir::OpKind::Update && read.count(op->operands[0].value) &&
        !initialized.count(op->operands[0].value) && !breakers.count(op->operands[0].value->def->operands[0].value)) {
      append(*op);
      initialized.insert(op->operands[0].value);
    }
  for (const auto &region : local->regions)
    ir::walk(*region, [&](const ir::Op &op) {
      if (op.kind == ir::OpKind::Update)
        append(op);
    });
}

namespace {

const ir::Value *statementVariable(const ir::Op &stmt) {
  if (stmt.kind == ir::OpKind::Marginal)
    return stmt.operands[0].value;
  const ir::Value *q = stmt.target->value;
  return q->def && q->def->kind == ir::OpKind::Marginal ? q->def->operands[0].value : nullptr;
}

bool loopsOver(const ir::Op &stmt, const ir::Value *plate) {
  for (ir::Op *l : ir::enclosingLoops(stmt))
    if (l->operands[0].value == plate)
      return true;
  return false;
}

class LocalSchedulePass : public Pass {
public:
  std::string_view name() const override { return "local-schedule"; }
  bool preserves(const void *id) const override {
    return id == &DependencyAnalysis::ID || id == &GlobalLocalAnalysis::ID;
  }

  bool run(ir::Module &m, PassContext &ctx) override {
    using LS = PassContext::LocalSchedule;
    if (ctx.localSchedule == LS::Plain && ctx.localIterations <= 1 && !ctx.localRestart)
      return true; // the plain schedule
    bool requested = ctx.localSchedule == LS::Nested || ctx.localSchedule == LS::NestedWhereLocal ||
                     ctx.localIterations > 1 || ctx.localRestart;
    if (ctx.localSchedule == LS::Auto)
      requested = false;
    if (!m.iterationSchedule) {
      ctx.diags.error("local-schedule needs a schedule (run 'schedule' first)");
      return false;
    }
    if (!isFlatSchedule(*m.iterationSchedule)) {
      ctx.diags.error("local-schedule runs on the schedule pass's flat schedule: run it once, before 'fuse'");
      return false;
    }
    GlobalLocalInfo *info = ctx.analyses.get<GlobalLocalAnalysis>(m, ctx.diags);
    if (!info)
      return false;
    // Flags the user gave for sweeps the schedule does not have are said to
    // have no effect (no flag accepted and ignored).
    auto flagsIgnored = [&](const std::string &why) {
      std::string flags;
      for (const std::string &f : ctx.localFlags)
        flags += (flags.empty() ? "" : ", ") + f;
      if (!flags.empty())
        ctx.diags.warning(m.loc, flags + " ignored: " + why);
    };
    const ir::Value *plate = info->plate;
    if (!plate) {
      const std::string why = "the model has no local variables" +
                              (info->whyNot.empty() ? std::string() : " (" + info->whyNot + ")");
      if (requested && ctx.localSchedule != LS::NestedWhereLocal) {
        std::string flags;
        for (const std::string &f : ctx.localFlags)
          flags += ", " + f;
        ctx.diags.warning(m.loc, "--schedule nested" + flags + " ignored: " + why + "; the plain schedule runs");
      } else {
        flagsIgnored(why);
      }
      return true;
    }
    auto &ops = m.iterationSchedule->ops;
    // The sweep as groups, each ending with a marginal update.
    size_t groups = 0;
    for (auto &u : ops) {
      const ir::Op &stmt = *u->operands[0].value->def;
      const ir::Value *var = statementVariable(stmt);
      if (var && info->locals.count(var) && stmt.kind == ir::OpKind::Marginal)
        ++groups;
    }
    bool cycle = groups > 1;
    if (!cycle)
      flagsIgnored("each element's local variables are computed from the global ones alone, so one sweep of "
                   "them is exact");
    if (!cycle && !requested)
      return true; // locals computed from the globals alone: one sweep is exact, the plain schedule is nested
    // A deterministic value over the plate (Bayesian PCA's W(d).dot(z(i)))
    // is a function of the element's locals: its forward and backward
    // marginals are updated in the sweep with theirs.
    auto localValue = [&](const ir::Value *var) {
      return info->locals.count(var) ||
             (var->def && isDeterministicFamily(var->def->family) && !var->dims.empty() &&
              var->dims[0] == plate);
    };
    std::vector<std::unique_ptr<ir::Op>> sweep, once, rest;
    for (auto &u : ops) {
      const ir::Op &stmt = *u->operands[0].value->def;
      const ir::Value *var = statementVariable(stmt);
      if (var && localValue(var))
        sweep.push_back(std::move(u));
      else if (loopsOver(stmt, plate))
        once.push_back(std::move(u)); // a local element's message to a global
      else
        rest.push_back(std::move(u));
    }
    // The sweep starts with the first group that reads a global, so that
    // every sweep starts from the current globals (the locals it reads
    // first are restarted or kept from the previous iteration).
    std::vector<size_t> groupStart{0};
    for (size_t i = 0; i + 1 < sweep.size(); ++i)
      if (sweep[i]->operands[0].value->def->kind == ir::OpKind::Marginal)
        groupStart.push_back(i + 1);
    // Best a group that reads nothing else the sweep updates (Bayesian
    // PCA's message from an observation, before the locals it reaches):
    // then no statement of the sweep reads a value of the last one.
    std::set<const ir::Value *> updated;
    for (const auto &u : sweep)
      if (u->operands[0].value->def->kind == ir::OpKind::Marginal)
        updated.insert(u->operands[0].value->def->result());
    std::optional<size_t> rotation, fallback;
    for (size_t g = 0; g < groupStart.size() && !rotation; ++g) {
      size_t end = g + 1 < groupStart.size() ? groupStart[g + 1] : sweep.size();
      bool global = false, readsOthers = false;
      for (size_t i = groupStart[g]; i < end; ++i) {
        const ir::Op &stmt = *sweep[i]->operands[0].value->def;
        global = global || readsGlobal(stmt, *info);
        readsOthers = readsOthers || ir::anyMessageInput(stmt, [&](const ir::Operand &o) {
                        if (!o.isValue() || !updated.count(o.value))
                          return false;
                        for (size_t j = groupStart[g]; j < end; ++j)
                          if (sweep[j]->operands[0].value->def->result() == o.value)
                            return false;
                        return true;
                      });
      }
      if (global && !readsOthers)
        rotation = groupStart[g];
      else if (global && !fallback)
        fallback = groupStart[g];
    }
    std::rotate(sweep.begin(), sweep.begin() + long(rotation.value_or(fallback.value_or(0))), sweep.end());
    if (cycle)
      refreshStaleLocals(sweep, once);
    ops.clear();
    auto local = std::make_unique<ir::Op>();
    local->kind = ir::OpKind::Local;
    local->loc = m.loc;
    local->iterations = cycle ? std::max<int64_t>(1, ctx.localIterations) : 1;
    local->tolerance = cycle ? ctx.localTolerance : 0;
    local->restart = ctx.localRestart;
    local->operands.push_back(ir::Operand::ofValue(const_cast<ir::Value *>(plate)));
    local->parentRegion = m.iterationSchedule.get();
    for (auto *list : {&sweep, &once}) {
      local->regions.push_back(std::make_unique<ir::Region>());
      ir::Region *r = local->regions.back().get();
      r->parent = local.get();
      for (auto &u : *list) {
        u->parentRegion = r;
        r->ops.push_back(std::move(u));
      }
    }
    // The globals update first, from the messages the elements sent in the
    // previous iteration (or the initialization), then the elements run:
    // an iteration ends with the locals consistent with the globals, the
    // state whose ELBO the iteration reports.
    for (auto &u : rest)
      ops.push_back(std::move(u));
    ops.push_back(std::move(local));
    return true;
  }

private:
  /// The element's messages to the globals read locals (LDA: its words'
  /// topic indicators). When the sweep updates such a local before another
  /// local its own messages read (the indicators, then theta), the sweep
  /// ends with it stale: its group (its messages, then its marginal) runs
  /// once more before the messages to the globals. The globals then learn
  /// from locals consistent with each other, and the local is at its
  /// optimum given its neighbours when the ELBO is evaluated, which lets the
  /// code generator take a categorical's ELBO terms from its normalizer.
  static void refreshStaleLocals(const std::vector<std::unique_ptr<ir::Op>> &sweep,
                                 std::vector<std::unique_ptr<ir::Op>> &once) {
    auto stmtOf = [](const ir::Op &u) -> const ir::Op & { return *u.operands[0].value->def; };
    auto reads = [](const ir::Op &stmt, const ir::Value *q) {
      return ir::anyMessageInput(stmt, [&](const ir::Operand &o) { return o.isValue() && o.value == q; });
    };
    std::vector<std::unique_ptr<ir::Op>> refresh;
    size_t groupBegin = 0;
    for (size_t i = 0; i < sweep.size(); ++i) {
      const ir::Op &marg = stmtOf(*sweep[i]);
      if (marg.kind != ir::OpKind::Marginal)
        continue;
      size_t begin = groupBegin;
      groupBegin = i + 1;
      const ir::Value *q = marg.result();
      bool readByOnce = false;
      for (const auto &u : once)
        readByOnce = readByOnce || reads(stmtOf(*u), q);
      bool stale = false;
      for (size_t j = i + 1; j < sweep.size() && !stale; ++j) {
        const ir::Op &later = stmtOf(*sweep[j]);
        if (later.kind != ir::OpKind::Marginal)
          continue;
        for (size_t k = begin; k < i && !stale; ++k)
          stale = reads(stmtOf(*sweep[k]), later.result());
      }
      if (!readByOnce || !stale)
        continue;
      for (size_t k = begin; k <= i; ++k) {
        auto copy = std::make_unique<ir::Op>();
        copy->kind = ir::OpKind::Update;
        copy->loc = sweep[k]->loc;
        copy->operands = sweep[k]->operands;
        refresh.push_back(std::move(copy));
      }
    }
    for (auto &u : once)
      refresh.push_back(std::move(u));
    once = std::move(refresh);
  }

  /// The statement reads a posterior of a global variable.
  static bool readsGlobal(const ir::Op &stmt, const GlobalLocalInfo &info) {
    auto isGlobalQ = [&](const ir::Operand &o) {
      if (!o.isValue() || !o.value->def || o.value->def->kind != ir::OpKind::Marginal)
        return false;
      return info.globals.count(o.value->def->operands[0].value) > 0;
    };
    return stmt.kind == ir::OpKind::Msg && ir::anyMessageInput(stmt, isGlobalQ);
  }
};

class PrintGlobalLocalPass : public Pass {
public:
  std::string_view name() const override { return "print-global-local"; }
  bool preservesAnalyses() const override { return true; }
  bool run(ir::Module &m, PassContext &ctx) override {
    GlobalLocalInfo *info = ctx.analyses.get<GlobalLocalAnalysis>(m, ctx.diags);
    if (!info)
      return false;
    llvm::raw_ostream &os = *ctx.out;
    os << "outermost data plate: " << (info->plate ? "%" + info->plate->name : std::string("none"));
    if (!info->whyNot.empty())
      os << " (no local structure: " << info->whyNot << ")";
    os << "\n";
    for (auto [label, set] : {std::pair{"local:", &info->locals}, std::pair{"global:", &info->globals}}) {
      os << label;
      std::vector<std::string> names;
      for (const ir::Value *v : *set)
        names.push_back("%" + v->name);
      std::sort(names.begin(), names.end());
      for (const std::string &n : names)
        os << " " << n;
      os << "\n";
    }
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createLocalSchedulePass() { return std::make_unique<LocalSchedulePass>(); }
std::unique_ptr<Pass> createPrintGlobalLocalPass() { return std::make_unique<PrintGlobalLocalPass>(); }

} // namespace ppc::passes
