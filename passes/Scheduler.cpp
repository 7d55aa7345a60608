//===- passes/Scheduler.cpp - iteration and initialization schedules -------===//
//
// Seed 000, step by step. The statements of `messages` are the nodes of the
// dependency graph (passes/DependencyAnalysis.h).
//
// Iteration schedule: greedy. Every node starts valid and stale; the waiting
// list holds every node that can reach an output (a marginal). The waiting
// node with the best score is scheduled next; a node that would read an
// invalid node scores worst. Scheduling a node first schedules its stale
// Fresh sources, then marks it valid and fresh, marks its targets stale, and
// marks every node it (transitively) triggers invalid and waiting.
// Score: sources already fresh in this iteration count for a node, valid
// nodes it would invalidate count against it, and so does recomputing or
// invalidating an initialized gate condition (random, or the user's --init
// in its place) while that initialization is unused. A user's start of any
// other variable changes where a run starts, not the iteration schedule: a
// run started from another's posteriors continues it.
//
// Loop-invariant statements (priors: no path from any marginal) run once,
// before the iterations.
//
// Initialization schedule: the nodes the iteration schedule reads through a
// Required edge before it first computes them, scheduled by the same greedy
// method with "executed" marks (requiring an unexecuted node scores worst);
// when it updates a node that invalidates one the iteration uses before
// updating it, that one is updated too (the invalidation rule).
//
// Posteriors left stale by the last iteration are refreshed once after it.
//
//===----------------------------------------------------------------------===//
#include "passes/Scheduler.h"

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "passes/CyclicOrder.h"
#include "passes/Passes.h"
#include "runtime/Catalogue.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

namespace ppc::passes {

using ir::Op;
using ir::OpKind;
using ir::Operand;
using ir::Region;

Scheduler::Scheduler(const DependencyGraph &g, std::vector<bool> userInitialized, DiagnosticEngine &diags)
    : g_(g), userInitialized_(std::move(userInitialized)), diags_(diags) {
  userInitialized_.resize(g_.stmts.size(), false);
  scheduled_ = userInitialized_;
  closures();
}

bool Scheduler::run() {
  if (!iteration())
    return false;
  initialization();
  finalization();
  return true;
}

// What each statement transitively triggers.
void Scheduler::closures() {
  size_t n = g_.stmts.size();
  triggers_.assign(n, {});
  for (unsigned s = 0; s < n; ++s) {
    std::vector<unsigned> work{s};
    std::set<unsigned> seen;
    while (!work.empty()) {
      unsigned v = work.back();
      work.pop_back();
      for (unsigned e : g_.targets[v])
        if (g_.edges[e].kind == DepKind::Trigger && seen.insert(g_.edges[e].to).second)
          work.push_back(g_.edges[e].to);
    }
    triggers_[s].assign(seen.begin(), seen.end());
  }
}


long Scheduler::iterationScore(unsigned v) const {
  for (unsigned e : g_.sources[v])
    if (!valid_[g_.edges[e].from] && g_.edges[e].kind != DepKind::Trigger)
      return kWorst; // would read an invalid value
  long score = 0;
  for (unsigned e : g_.sources[v])
    if (fresh_[g_.edges[e].from])
      score += 10;
  for (unsigned w : triggers_[v])
    if (valid_[w])
      score -= 1 + (scheduled_[w] && !initUsed_[w] ? 100 : 0);
  if (scheduled_[v] && valid_[v] && !initUsed_[v])
    score -= 100; // recomputing a user's initialization before it is used
  return score;
}

// Brings `u` up to date: its Fresh sources first, depth first, so that a
// chain (a deterministic value read through another) is refreshed in
// dependency order: refreshing one source can make a later one stale.
void Scheduler::refresh(unsigned u) {
  for (unsigned e : g_.sources[u])
    if (g_.edges[e].kind == DepKind::Fresh)
      refresh(g_.edges[e].from);
  if (!fresh_[u])
    scheduleIteration(u);
}

void Scheduler::scheduleIteration(unsigned v) {
  for (unsigned e : g_.sources[v])
    if (g_.edges[e].kind == DepKind::Fresh)
      refresh(g_.edges[e].from);
  // An initialization is used once every statement that reads it has run
  // (a mixture's random responsibilities must reach all the components'
  // parameters, not only the weights, before they are recomputed).
  for (unsigned e : g_.sources[v]) {
    unsigned u = g_.edges[e].from;
    if (g_.edges[e].kind == DepKind::Trigger)
      continue;
    unreadBy_[u].erase(v);
    initUsed_[u] = unreadBy_[u].empty();
    touched_.push_back(u);
  }
  iter_.push_back(v);
  valid_[v] = true;
  fresh_[v] = true;
  waiting_.erase(v);
  touched_.push_back(v);
  for (unsigned e : g_.targets[v]) {
    fresh_[g_.edges[e].to] = false;
    touched_.push_back(g_.edges[e].to);
  }
  fresh_[v] = true;
  for (unsigned w : triggers_[v]) {
    valid_[w] = false;
    if (!g_.invariant[w])
      waiting_.insert(w);
    touched_.push_back(w);
  }
}

// The waiting nodes by score, best first and then by index (the order in
// which a scan of `waiting_` picks them), kept up to date: a node's score
// reads only its own, its sources' and the nodes it triggers' marks, so a
// step rescores the nodes around those whose marks it changed, not every
// waiting node (a scan per step made the pass quadratic: 20,000 independent
// variables took 7 s).
void Scheduler::rescoreTouched() {
  std::vector<unsigned> touched;
  touched.swap(touched_);
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  std::vector<unsigned> affected;
  for (unsigned x : touched) {
    affected.push_back(x);
    for (unsigned e : g_.targets[x])
      affected.push_back(g_.edges[e].to);
    affected.insert(affected.end(), triggeredBy_[x].begin(), triggeredBy_[x].end());
  }
  std::sort(affected.begin(), affected.end());
  affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
  for (unsigned v : affected) {
    if (ranked_[v])
      ranking_.erase({score_[v], v});
    ranked_[v] = waiting_.count(v) != 0;
    if (!ranked_[v])
      continue;
    score_[v] = iterationScore(v);
    ranking_.insert({score_[v], v});
  }
}

bool Scheduler::iteration() {
  size_t n = g_.stmts.size();
  valid_.assign(n, true);
  fresh_.assign(n, false);
  initUsed_.assign(n, false);
  unreadBy_.assign(n, {});
  for (const DepEdge &e : g_.edges)
    if (e.kind != DepKind::Trigger && !g_.invariant[e.to])
      unreadBy_[e.from].insert(e.to);
  // Every non-invariant node reaches its marginal, an output.
  for (unsigned s = 0; s < n; ++s)
    if (!g_.invariant[s])
      waiting_.insert(s);
  triggeredBy_.assign(n, {});
  for (unsigned v = 0; v < n; ++v)
    for (unsigned w : triggers_[v])
      triggeredBy_[w].push_back(v);
  score_.assign(n, 0);
  ranked_.assign(n, false);
  ranking_.clear();
  touched_.assign(waiting_.begin(), waiting_.end());
  rescoreTouched();
  while (!waiting_.empty()) {
    // The best score, the first such node: what a scan of every waiting
    // node would pick.
    const long best = ranking_.empty() ? kWorst : ranking_.begin()->first;
    const unsigned pick = ranking_.empty() ? 0 : ranking_.begin()->second;
    if (best == kWorst) {
      std::string names;
      for (unsigned v : waiting_)
        names += " " + g_.name(v);
      diags_.error("cannot schedule:" + names + " (each reads an invalid value)");
      return false;
    }
    scheduleIteration(pick);
    rescoreTouched();
  }
  // The ELBO after the iteration reads the values of deterministic factors
  // (their forward statistics, `fresh` marginals): the iteration ends with
  // them up to date.
  for (unsigned s = 0; s < n; ++s) {
    const ir::Op &op = *g_.stmts[s];
    if (op.kind != ir::OpKind::Marginal || op.backward || g_.invariant[s])
      continue;
    bool computed = false;
    for (unsigned e : g_.sources[s])
      computed = computed || g_.edges[e].kind == DepKind::Fresh;
    if (computed)
      refresh(s);
  }
  touched_.clear(); // the refreshes' marks: the greedy choice is over
  dropRepeatedUpdates();
  return true;
}

// An update none of whose sources changed since the same statement's
// previous update (in cyclic order: the iteration repeats) recomputes the
// same value. The greedy order leaves such repeats when a statement is
// refreshed for a Fresh reader (a deterministic chain, whose values are read
// Fresh) after its first place in the order; once fused, each would cost a
// pass over the data. Only graphs with Fresh edges are touched: elsewhere
// the seed's order stands (its dead-code step removes what is unread).
void Scheduler::dropRepeatedUpdates() {
  bool fresh = false;
  for (const DepEdge &e : g_.edges)
    fresh = fresh || e.kind == DepKind::Fresh;
  if (!fresh)
    return;
  // Each removal takes the first update (in order) that repeats its
  // previous one; which updates repeat is kept as the removals go: an
  // update's previous one and its sources' latest updates are each one
  // lookup among live positions, where a scan back from every update, again
  // after each removal, made the pass quadratic or worse (40,000 variables:
  // 1.7 s).
  const size_t len = iter_.size();
  const size_t n = g_.stmts.size();
  std::vector<std::set<size_t>> updates(n), sourceUpdates(n); // live positions
  for (size_t p = 0; p < len; ++p) {
    updates[iter_[p]].insert(p);
    for (unsigned e : g_.targets[iter_[p]])
      sourceUpdates[g_.edges[e].to].insert(p);
  }
  // The previous update of v, with no update of its sources since: a repeat
  // (an update of v that is its own source still counts as the previous one).
  auto repeats = [&](size_t p) {
    const size_t previous = cyclicDistanceBefore(updates[iter_[p]], p, len);
    return previous < len && previous <= cyclicDistanceBefore(sourceUpdates[iter_[p]], p, len);
  };
  std::set<size_t> repeated;
  for (size_t p = 0; p < len; ++p)
    if (repeats(p))
      repeated.insert(p);
  std::vector<bool> live(len, true);
  while (!repeated.empty()) {
    const size_t p = *repeated.begin();
    const unsigned v = iter_[p];
    live[p] = false;
    repeated.erase(p);
    updates[v].erase(p);
    std::vector<unsigned> changedNodes{v};
    for (unsigned e : g_.targets[v]) {
      sourceUpdates[g_.edges[e].to].erase(p);
      changedNodes.push_back(g_.edges[e].to);
    }
    for (unsigned w : changedNodes)
      for (size_t q : updates[w]) {
        if (repeats(q))
          repeated.insert(q);
        else
          repeated.erase(q);
      }
  }
  size_t kept = 0;
  for (size_t p = 0; p < len; ++p)
    if (live[p])
      iter_[kept++] = iter_[p];
  iter_.resize(kept);
}

// Required and Fresh sources must have a value before their reader first runs.
static bool readsBeforeUse(DepKind k) { return k == DepKind::Required || k == DepKind::Fresh; }

void Scheduler::initialization() {
  size_t n = g_.stmts.size();
  // What the iteration uses before it updates it, and what it reads through
  // Required edges before computing it (the set S of seed 000).
  std::vector<bool> usedBeforeUpdate(n, false), updated(n, false);
  std::set<unsigned> pending;
  for (unsigned v : iter_) {
    for (unsigned e : g_.sources[v]) {
      unsigned u = g_.edges[e].from;
      if (!updated[u]) {
        usedBeforeUpdate[u] = true;
        if (readsBeforeUse(g_.edges[e].kind) && !g_.invariant[u])
          pending.insert(u);
      }
    }
    updated[v] = true;
  }
  // A random initialization the iteration recomputes before some of its
  // readers run would never reach them (a nested schedule recomputes a
  // mixture's indicators before the components read them): those readers
  // run here, from the random values, to break the symmetry.
  {
    std::vector<bool> done(n, false);
    for (unsigned v : iter_) {
      for (unsigned e : g_.sources[v]) {
        unsigned u = g_.edges[e].from;
        if (g_.edges[e].kind != DepKind::Trigger && done[u] && scheduled_[u] && !g_.invariant[v])
          pending.insert(v);
      }
      done[v] = true;
    }
  }
  // What a statement needs before it runs here: its Required and Fresh
  // sources, and for a posterior its prior, the message from the factor that
  // defines the variable (a hierarchical prior is not loop-invariant: from
  // no messages at all the posterior would be improper).
  auto needs = [&](unsigned e) {
    const DepEdge &edge = g_.edges[e];
    if (readsBeforeUse(edge.kind))
      return true;
    const ir::Op &to = *g_.stmts[edge.to], &from = *g_.stmts[edge.from];
    // A message weighted by a condition a warm start computes (not drawn):
    // the weights must be the computed ones.
    if (warmConditions_.count(edge.from) || warmConditions_.count(edge.to))
      return true; // and computed from all of its messages
    if (to.kind != ir::OpKind::Marginal || to.backward || from.kind != ir::OpKind::Msg || from.evidence)
      return false;
    auto family = ir::familyOf(to.operands[0].value);
    return family && !from.kernel.empty() && from.kernel == factorOperators(*family).toArgument[0].kernel;
  };
  // A user's posterior the iteration recomputes before all of its messages
  // (a nested schedule's globals, updated first from the messages the
  // elements sent last iteration) would be recomputed from messages never
  // sent: they are sent here, from the initial values.
  {
    std::vector<bool> done(n, false);
    for (unsigned v : iter_) {
      // (a condition's start, random or the user's, is read before it is
      // recomputed: the iteration is shaped around it)
      if (userInitialized_[v] && !scheduled_[v] && g_.isMarginal(v) && !g_.stmts[v]->backward)
        for (unsigned e : g_.sources[v]) {
          const unsigned u = g_.edges[e].from;
          if (g_.edges[e].kind == DepKind::Trigger && !done[u] && !g_.invariant[u])
            pending.insert(u);
        }
      done[v] = true;
    }
  }
  // The user's initializations and given posteriors are values already:
  // never computed here.
  std::vector<bool> executed = userInitialized_;
  for (unsigned s = 0; s < n; ++s) {
    if (g_.stmts[s]->kind == ir::OpKind::Marginal && g_.stmts[s]->given)
      executed[s] = true;
    if (executed[s])
      pending.erase(s);
  }
  // The invalidation rule: updating a node during initialization means
  // updating what it invalidates, if the iteration uses that before
  // updating it.
  auto execute = [&](unsigned v) {
    executed[v] = true;
    init_.push_back(v);
    pending.erase(v);
    for (unsigned w : triggers_[v])
      if (usedBeforeUpdate[w] && !g_.invariant[w] && !userInitialized_[w])
        pending.insert(w);
  };
  // Loop invariants first, in dependency order.
  for (bool progress = true; progress;) {
    progress = false;
    for (unsigned s = 0; s < n; ++s) {
      if (!g_.invariant[s] || executed[s])
        continue;
      bool ready = true;
      for (unsigned e : g_.sources[s])
        ready = ready && executed[g_.edges[e].from];
      if (ready) {
        execute(s);
        progress = true;
      }
    }
  }
  // Greedy, with executed marks: requiring an unexecuted node scores worst.
  while (!pending.empty()) {
    long best = kWorst;
    unsigned pick = 0;
    for (unsigned v : pending) {
      long sc = 0;
      for (unsigned e : g_.sources[v]) {
        unsigned u = g_.edges[e].from;
        if (needs(e) && !executed[u]) {
          sc = kWorst;
          break;
        }
        if (executed[u])
          sc += 10;
      }
      if (sc > best) {
        best = sc;
        pick = v;
      }
    }
    if (best == kWorst) {
      // Required sources not yet executed join the initialization.
      bool added = false;
      std::vector<unsigned> more;
      for (unsigned v : pending)
        for (unsigned e : g_.sources[v])
          if (needs(e) && !executed[g_.edges[e].from] &&
              !pending.count(g_.edges[e].from))
            more.push_back(g_.edges[e].from);
      for (unsigned u : more)
        added = pending.insert(u).second || added;
      if (!added) {
        diags_.error("cannot build an initialization schedule (a cycle of Required dependencies)");
        return;
      }
      continue;
    }
    execute(pick);
  }
}

// Marginals whose last update in the iteration precedes a message that
// triggers them are stale when the loop ends.
void Scheduler::finalization() {
  size_t n = g_.stmts.size();
  std::vector<bool> valid(n, true);
  for (unsigned v : iter_) {
    valid[v] = true;
    for (unsigned w : triggers_[v])
      valid[w] = false;
  }
  for (unsigned s = 0; s < n; ++s)
    if (g_.isMarginal(s) && !valid[s])
      final_.push_back(s);
}

void Scheduler::diagnoseInitializations() {
  warnClobberedInitializations();
  noteFreshStarts();
}

void Scheduler::warnClobberedInitializations() {
  for (unsigned s = 0; s < g_.stmts.size(); ++s) {
    if (!userInitialized_[s] || (s < automatic_.size() && automatic_[s]))
      continue;
    bool readAtInit = false; // a warm start's initialization reads it
    for (unsigned v : init_)
      for (unsigned e : g_.sources[v])
        readAtInit = readAtInit || g_.edges[e].from == s;
    if (readAtInit)
      continue;
    for (unsigned v : iter_) {
      bool reads = false;
      for (unsigned e : g_.sources[v])
        reads = reads || g_.edges[e].from == s;
      if (reads)
        break;
      if (v == s) {
        diags_.warning(g_.stmts[s]->loc, "the initialization of " + g_.name(s) +
                                             " is recomputed before it is used; it has no effect");
        break;
      }
    }
  }
}

// With a user's start (--init), the posteriors the iteration reads before it
// recomputes them that start as in a fresh run, from their priors (the init
// block computes them from nothing the user gave): a saved run continues
// exactly only with those given too.
void Scheduler::noteFreshStarts() {
  const size_t n = g_.stmts.size();
  std::vector<bool> fromUser(n, false);
  bool any = false;
  for (unsigned s = 0; s < n; ++s) {
    fromUser[s] = userInitialized_[s] && !(s < automatic_.size() && automatic_[s]);
    any = any || (fromUser[s] && g_.isMarginal(s));
  }
  if (!any)
    return;
  for (unsigned v : init_) // a warm start: computed from the user's values
    for (unsigned e : g_.sources[v])
      fromUser[v] = fromUser[v] || fromUser[g_.edges[e].from];
  std::vector<bool> updated(n, false), listed(n, false);
  std::vector<unsigned> fresh;
  for (unsigned v : iter_) {
    for (unsigned e : g_.sources[v]) {
      const unsigned u = g_.edges[e].from;
      if (!g_.isMarginal(u) || updated[u] || listed[u] || fromUser[u] || userInitialized_[u] || g_.invariant[u] ||
          g_.stmts[u]->given)
        continue;
      listed[u] = true;
      fresh.push_back(u);
    }
    updated[v] = true;
  }
  if (fresh.empty())
    return;
  std::string names;
  for (size_t i = 0; i < fresh.size(); ++i)
    names += (i == 0 ? "" : i + 1 == fresh.size() ? " and " : ", ") + g_.name(fresh[i]);
  diags_.note(g_.stmts[fresh.front()]->loc, "the iteration reads " + names + " before it recomputes " +
                                                (fresh.size() == 1 ? "it" : "them") + ", and without --init " +
                                                (fresh.size() == 1 ? "it starts" : "they start") +
                                                " as in a fresh run: to continue a saved run exactly, --init " +
                                                (fresh.size() == 1 ? "it" : "them") + " too");
}

void Scheduler::emitInitialization(ir::Module &m) const { m.initSchedule = makeUpdates(g_, init_); }

void Scheduler::emit(ir::Module &m) const {
  m.initSchedule = makeUpdates(g_, init_);
  m.iterationSchedule = makeUpdates(g_, iter_);
  m.finalSchedule = makeUpdates(g_, final_);
}

std::vector<bool> initializedStatements(const DependencyGraph &g, const PassContext &ctx,
                                        std::vector<bool> *automatic, std::set<unsigned> *warm) {
  std::vector<bool> init(g.stmts.size(), false);
  if (automatic)
    automatic->assign(g.stmts.size(), false);
  std::set<const ir::Value *> conditions;
  if (ctx.randomInitConditions) {
    std::optional<std::unordered_set<const ir::Value *>> breakers; // of the model, once
    for (const ir::Op *s : g.stmts) {
      if (s->kind == ir::OpKind::Msg && s->evidence && s->target)
        conditions.insert(s->target->value);
      const ir::Value *var = s->kind == ir::OpKind::Marginal && !s->backward ? s->operands[0].value : nullptr;
      if (!var || !var->def)
        continue;
      if (!breakers) { // the model's body, from the variable's definition
        const ir::Op *top = var->def;
        while (top->parentOp())
          top = top->parentOp();
        breakers = ir::productSymmetryBreakers(*top->parentRegion);
      }
      if (breakers->count(var))
        conditions.insert(s->result()); // a product's random start (codegen/plan/LowerInit.cpp)
    }
  }
  auto isUser = [&](unsigned s) {
    for (const std::string &v : ctx.userInitializations)
      if (g.values[s]->name == v + ".q")
        return true;
    return false;
  };
  // A warm start: a condition whose evidence (each case's likelihood)
  // reads only the user's posteriors and loop invariants is computed from
  // them at initialization, not drawn at random: LDA's token topics from
  // the user's topics (drawn at random, they would send the topics messages
  // that undo the user's start). Its other messages may also read
  // posteriors that start from their priors (LDA's topic mixes when only
  // the topics are given); the evidence alone breaks the symmetry.
  auto fromUser = [&](unsigned s) {
    bool any = false;
    for (unsigned e : g.sources[s]) {
      if (g.edges[e].kind != DepKind::Trigger)
        continue;
      const unsigned m = g.edges[e].from;
      any = true;
      for (unsigned f : g.sources[m]) {
        const unsigned u = g.edges[f].from;
        if (g.edges[f].kind == DepKind::Trigger || u == s || g.invariant[u] || isUser(u))
          continue;
        if (g.stmts[m]->evidence || !g.isMarginal(u) || conditions.count(g.values[u]))
          return false;
      }
    }
    return any;
  };
  for (unsigned s = 0; s < g.stmts.size(); ++s) {
    init[s] = conditions.count(g.values[s]) != 0;
    const bool user = isUser(s);
    if (init[s] && !user && !ctx.userInitializations.empty() && fromUser(s)) {
      init[s] = false;
      if (warm)
        warm->insert(s);
    }
    if (automatic)
      (*automatic)[s] = init[s] && !user;
    init[s] = init[s] || user;
  }
  return init;
}

bool isFlatSchedule(const ir::Region &schedule) {
  for (const auto &op : schedule.ops)
    if (op->kind != ir::OpKind::Update || op->streamed)
      return false;
  return true;
}

std::unique_ptr<Scheduler> makeScheduler(const DependencyGraph &g, const PassContext &ctx) {
  std::vector<bool> automatic;
  std::set<unsigned> warm;
  auto scheduler = std::make_unique<Scheduler>(g, initializedStatements(g, ctx, &automatic, &warm), ctx.diags);
  scheduler->setAutomaticInitializations(std::move(automatic));
  scheduler->setWarmConditions(std::move(warm));
  // The iteration is shaped around the conditions' starts only (random or
  // the user's), as if no other variable were initialized.
  PassContext conditionsOnly{ctx.diags, ctx.out, {}, {}};
  conditionsOnly.randomInitConditions = true;
  std::vector<bool> scheduled = initializedStatements(g, conditionsOnly);
  if (!ctx.randomInitConditions) // no random starts: the user's are all there is
    scheduled = initializedStatements(g, ctx);
  scheduler->setScheduledInitializations(std::move(scheduled));
  return scheduler;
}

namespace {
class SchedulePass : public Pass {
public:
  std::string_view name() const override { return "schedule"; }
  bool preserves(const void *id) const override { return id == &DependencyAnalysis::ID; }
  bool run(ir::Module &m, PassContext &ctx) override {
    DependencyGraph *g = ctx.analyses.get<DependencyAnalysis>(m, ctx.diags);
    if (!g)
      return false;
    std::unique_ptr<Scheduler> scheduler = makeScheduler(*g, ctx);
    if (!scheduler->run() || ctx.diags.hasErrors())
      return false;
    if (!ctx.fusionLater)
      scheduler->diagnoseInitializations();
    scheduler->emit(m);
    return true;
  }
};

} // namespace

std::unique_ptr<Pass> createSchedulePass() { return std::make_unique<SchedulePass>(); }

} // namespace ppc::passes
