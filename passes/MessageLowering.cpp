//===- passes/MessageLowering.cpp - VMP message statements -----------------===//
//
// Infer.NET's MessageTransform for VMP (seed 003's "message annotation"): for
// every factor of the gated model and every latent argument, one statement
// computes the message from the factor to that argument, with the operator
// the catalogue names and its dependency annotations; for every latent
// variable one statement sums its messages into its posterior (marginal).
//
//   %p.B.x = msg ppc_categorical_probs_avglog_obs(required %x[..]) to %p.q[..] : unit
//   %p.q = marginal %p[..] (trigger %p.F, trigger %p.B.x) : unit
//
// * A message reads the posteriors (%v.q) of the arguments the catalogue
//   lists, observed data and constants as they are.
// * Gates: a clone (gate.enter*) is the same variable as its source, so a
//   message to a clone goes to the source's posterior, counted with weight
//   q(condition = case) for each gate the factor is in and the source is not
//   (`when %z.q case %k`). Each factor inside a case also sends its expected
//   log density (the catalogue's ELBO term) as evidence to that case of the
//   condition (`msg evidence ... to %z.q case %k`), and so does the entropy of
//   each latent variable local to the case: the condition's posterior is
//   then exact Bayes over conjugate branches.
// * A marginal is triggered by each of its messages (seed 000: in VMP the
//   message from a variable to a factor must always reflect the latest
//   messages into the variable).
//
// The statements land in the module's `messages` region, each in its own
// loop nest over the factor's plates, unordered: scheduling orders them.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/Builder.h"
#include "ir/IR.h"
#include "runtime/Catalogue.h"
#include "ir/Printer.h"

#include <functional>
#include <map>
#include <optional>
#include <set>

namespace ppc::passes {
namespace {

using ir::Op;
using ir::OpKind;
using ir::Operand;
using ir::Region;
using ir::Type;
using ir::TypeKind;
using ir::Value;

using IndexMap = std::map<const Value *, Value *>;

Operand substitute(const Operand &o, const IndexMap &map) {
  Operand out = o;
  if (o.isValue()) {
    auto it = map.find(o.value);
    if (it != map.end())
      out.value = it->second;
  }
  for (Operand &i : out.indices)
    i = substitute(i, map);
  return out;
}

/// The `when` blocks around an op, outermost first.
std::vector<Op *> enclosingWhens(const Op &op) {
  std::vector<Op *> whens;
  for (Op *p = op.parentOp(); p; p = p->parentOp())
    if (p->kind == OpKind::When)
      whens.insert(whens.begin(), p);
  return whens;
}

class MessageLowering {
public:
  MessageLowering(ir::Module &m, DiagnosticEngine &diags) : m_(m), b_(m), diags_(diags) {}

  bool run() {
    if (m_.messages) {
      diags_.error("the model already has messages");
      return false;
    }
    m_.messages = std::make_unique<Region>();
    ir::walk(m_.body, [&](Op &op) {
      if (op.kind == OpKind::GateExit)
        for (size_t i = 1; i < op.operands.size(); ++i)
          exitOf_[op.operands[i].value] = &op;
    });
    // Posteriors first, so that messages can name them.
    ir::walk(m_.body, [&](Op &op) {
      if (op.isRandom() && !op.observed)
        posteriorOf(op.result());
    });
    ir::walk(m_.body, [&](Op &op) {
      if (op.isRandom())
        lowerFactor(op);
      else if (op.kind == OpKind::GateExit && !op.observed)
        unsupported(op, "a latent gate.exit (run algorithm matching, 'match', first)");
    });
    for (auto &[v, info] : posteriors_)
      finishMarginal(*info);
    return ok_;
  }

private:
  struct Posterior {
    Value *var;
    Value *q;      ///< the marginal's value
    Op *marginal;  ///< its statement
    IndexMap map;  ///< the variable's loop indices -> the marginal's loop indices
    std::vector<Value *> messages;
    /// A deterministic factor's value: its `marginal.back` (the sum of its
    /// children's messages), and those messages.
    Value *back = nullptr;
    Op *backMarginal = nullptr;
    std::vector<Value *> backMessages;
  };


  void unsupported(const Op &op, const std::string &what) {
    diags_.error(op.loc, "variational message passing in ppc does not support " + what);
    ok_ = false;
  }

  /// A loop nest in `messages` mirroring `loops`; returns its body and the
  /// index map.
  Region *mirrorLoops(const std::vector<Op *> &loops, IndexMap &map, std::string_view hint) {
    Region *r = m_.messages.get();
    for (Op *l : loops) {
      Operand plate = substitute(l->operands[0], map);
      b_.setInsertionRegion(r);
      Op *loop = b_.createFor(plate, std::string(hint.empty() ? l->index->name : std::string(hint)), l->loc);
      map[l->index] = loop->index;
      r = loop->regions[0].get();
    }
    return r;
  }

  Posterior *posteriorOf(Value *v) {
    auto it = posteriors_.find(v);
    if (it != posteriors_.end())
      return it->second.get();
    auto info = std::make_unique<Posterior>();
    info->var = v;
    // A Markov chain's posterior is one structured update per chain: its
    // marginal iterates the plates around the chain's own (the last loop)
    // and sums, then normalizes, the messages of all its elements.
    std::vector<Op *> loops = ir::enclosingLoops(*v->def);
    const bool chain = v->def->isRandom() && isChainFamily(v->def->family);
    if (chain && !loops.empty())
      loops.pop_back();
    Region *r = mirrorLoops(loops, info->map, "");
    Op *marginal = b_.createIn(r, OpKind::Marginal, v->def->loc);
    std::vector<Operand> idx;
    for (Op *l : loops)
      idx.push_back(Operand::ofValue(info->map[l->index]));
    marginal->operands.push_back(Operand::ofValue(v, idx));
    marginal->deps.push_back(DepKind::Plain);
    marginal->given = v->def->given; // held at the user's posterior: sums no messages
    info->q = b_.addResult(marginal, v->name + ".q", v->type);
    if (chain)
      info->q->dims = v->dims; // an array over every element of the chains
    info->marginal = marginal;
    if (isDeterministic(v)) {
      Op *back = b_.createIn(r, OpKind::Marginal, v->def->loc);
      back->backward = true;
      back->operands.push_back(Operand::ofValue(v, idx));
      back->deps.push_back(DepKind::Plain);
      info->back = b_.addResult(back, v->name + ".back", v->type);
      info->backMarginal = back;
    }
    Posterior *raw = info.get();
    posteriors_[v] = std::move(info);
    return raw;
  }

  // A marginal sums its messages; each message's `to` clause says which
  // element of the posterior it adds to, so the inputs are whole arrays.
  // A deterministic value's marginals read their messages Fresh: they are
  // recomputed when read, not whenever a message changes.
  void finishMarginal(Posterior &p) {
    DepKind kind = p.back ? DepKind::Fresh : DepKind::Trigger;
    for (Value *msg : p.messages) {
      p.marginal->operands.push_back(Operand::ofValue(msg));
      p.marginal->deps.push_back(kind);
    }
    for (Value *msg : p.backMessages) {
      p.backMarginal->operands.push_back(Operand::ofValue(msg));
      p.backMarginal->deps.push_back(kind);
    }
  }

  /// What a factor's argument refers to for message passing: the variable
  /// whose posterior it is (a clone's source), with indices valid at the use.
  struct Ref {
    Value *var = nullptr;       ///< latent variable (null if observed or constant)
    Operand operand;            ///< as the message reads it
    std::vector<Op *> gates;    ///< the `when` blocks around the variable's definition
    /// A deterministic value: its `marginal.back` element, where its
    /// children's messages go and what its factor reads to pass them back.
    std::optional<Operand> back;
  };

  static bool isDeterministic(const Value *v) {
    return v && v->def && v->def->isRandom() && isDeterministicFamily(v->def->family);
  }
  /// A read of a deterministic value must see it up to date: its statistics
  /// and its children's messages are functions of other posteriors that no
  /// trigger tracks (Fresh: recomputed on demand, seed 000).
  static DepKind readKind(const Ref &r, DepKind catalogue) {
    return isDeterministic(r.var) ? DepKind::Fresh : catalogue;
  }

  Ref resolve(const Operand &o) {
    Ref r;
    r.operand = o;
    if (!o.isValue() || !o.value->type.isRandom())
      return r;
    Value *v = o.value;
    Op *def = v->def;
    if (!def)
      return r;
    if (def->kind == OpKind::GateEnter || def->kind == OpKind::GateEnterPartial || def->kind == OpKind::GateEnterOne) {
      // The clone's element -> the source's element.
      IndexMap map;
      std::vector<Op *> loops = ir::enclosingLoops(*def);
      for (size_t j = 0; j < loops.size() && j < o.indices.size(); ++j)
        if (o.indices[j].isValue())
          map[loops[j]->index] = o.indices[j].value;
      return resolve(substitute(def->operands[1], map));
    }
    if (def->isRandom() && def->observed) {
      // Data: a per-case clone of an observed variable reads the variable.
      // Up the chain of gate.exit merges to the variable the data binds.
      Operand data = o;
      for (auto exit = exitOf_.find(data.value); exit != exitOf_.end(); exit = exitOf_.find(data.value)) {
        std::vector<Op *> loops = ir::enclosingLoops(*exit->second);
        std::vector<Operand> idx(data.indices.begin(),
                                 data.indices.begin() + std::min(data.indices.size(), loops.size()));
        data = Operand::ofValue(exit->second->result(), idx);
      }
      r.operand = data;
      return r;
    }
    if (def->kind == OpKind::GateExit) {
      r.operand = o;
      return r; // observed merge (latent ones are rejected)
    }
    if (def->isRandom()) {
      r.var = v;
      r.gates = enclosingWhens(*def);
      Posterior *p = posteriorOf(v);
      r.operand = Operand::ofValue(p->q, o.indices);
      if (p->back)
        r.back = Operand::ofValue(p->back, o.indices);
    }
    return r;
  }

  void lowerFactor(Op &f) {
    const FamilySpec &spec = familySpec(f.family);
    const FactorOperators &ops = factorOperators(f.family);
    std::vector<Op *> loops = ir::enclosingLoops(f);
    std::vector<Op *> whens = enclosingWhens(f);
    // Argument 0 is the sample, i > 0 the operands.
    std::vector<Ref> args;
    {
      std::vector<Operand> idx;
      for (Op *l : loops)
        idx.push_back(Operand::ofValue(l->index));
      args.push_back(resolve(Operand::ofValue(f.result(), idx)));
    }
    for (const Operand &o : f.operands)
      args.push_back(resolve(o));
    bool sampleObserved = f.observed;
    if (f.family == Family::Stack) {
      lowerStack(f, args);
      return;
    }

    for (size_t a = 0; a < args.size(); ++a) {
      if (!args[a].var || args[a].var->def->given)
        continue; // constants, data and given posteriors receive no messages
      const MessageOperator &mo = ops.toArgument[a];
      std::string kernel(sampleObserved && a != 0 && !mo.observedKernel.empty() ? mo.observedKernel : mo.kernel);
      if (kernel.empty()) {
        unsupported(f, "a message from " + std::string(spec.spelling) + " to its " +
                           (a == 0 ? std::string("sample") : std::string(spec.params[a - 1].name)));
        continue;
      }
      IndexMap map;
      Region *r = mirrorLoops(loops, map, "");
      Op *msg = b_.createIn(r, OpKind::Msg, f.loc);
      msg->kernel = kernel;
      // Every argument but the target, in argument order (the code generator
      // maps them to the kernel's parameters by position): constants and data
      // as they are, latent arguments as their posteriors, with the
      // catalogue's dependency kind where the kernel reads them.
      // A deterministic factor passes back to an argument what its value's
      // children sent (its `marginal.back`); its forward kernel (a == 0)
      // writes the value's statistics.
      // A local bound's message also reads its target's posterior (the
      // logistic link's xi^2 = E e^2): then every argument is an operand.
      bool readsTarget = false;
      for (const OperatorInput &in : mo.reads)
        readsTarget = readsTarget || in.arg == a;
      for (size_t i = 0; i < args.size(); ++i) {
        if (i == a && !readsTarget)
          continue;
        DepKind kind = DepKind::Plain;
        bool read = false;
        for (const OperatorInput &in : mo.reads)
          if (in.arg == i) {
            kind = in.kind;
            read = true;
          }
        if (args[i].var && !read)
          continue; // a latent argument the kernel does not read
        bool readsBack = spec.deterministic && i == 0;
        msg->operands.push_back(substitute(readsBack ? *args[i].back : args[i].operand, map));
        msg->deps.push_back(args[i].var ? (readsBack ? DepKind::Fresh : readKind(args[i], kind)) : DepKind::Plain);
      }
      bool toBack = args[a].back && !(spec.deterministic && a == 0);
      msg->target = substitute(toBack ? *args[a].back : args[a].operand, map);
      addGates(*msg, whens, args[a].gates, map);
      Posterior *p = posteriorOf(args[a].var);
      Value *res = b_.addResult(msg, args[a].var->name + (a == 0 ? std::string(".F") : ".B." + f.result()->name),
                                args[a].var->type);
      (toBack ? p->backMessages : p->messages).push_back(res);
    }

    // Evidence for the innermost condition: the factor's E[log f], and the
    // entropy of the latent variable it defines when that is local to the case.
    // A deterministic factor has neither: its children's terms read its value.
    if (!whens.empty() && !spec.deterministic)
      evidence(f, args, whens);
  }

  /// stack(v_0, ..., v_{K-1}) in a loop over K elements: operand k has its
  /// own statements on element k (a constant index into the plate), outside
  /// that loop: the forward copy of v_k's statistics, and the message of
  /// element k's natural parameters back to v_k (runtime/factors/Stack.cpp).
  void lowerStack(Op &f, const std::vector<Ref> &args) {
    const FactorOperators &ops = factorOperators(Family::Stack);
    std::vector<Op *> outer = ir::enclosingLoops(f);
    outer.pop_back(); // the stacked plate's loop (the verifier checks it is there)
    Posterior *m = posteriorOf(f.result());
    for (size_t k = 0; k + 1 < args.size(); ++k) {
      const Ref &v = args[k + 1];
      auto element = [&](Value *q, IndexMap &map) {
        std::vector<Operand> idx;
        for (Op *l : outer)
          idx.push_back(Operand::ofValue(map.at(l->index)));
        idx.push_back(Operand::ofInt(int64_t(k)));
        return Operand::ofValue(q, idx);
      };
      {
        IndexMap map;
        Region *r = mirrorLoops(outer, map, "");
        Op *msg = b_.createIn(r, OpKind::Msg, f.loc);
        msg->kernel = std::string(ops.toArgument[0].kernel);
        msg->operands.push_back(substitute(v.operand, map));
        msg->deps.push_back(v.var ? readKind(v, DepKind::Required) : DepKind::Plain);
        msg->target = element(m->q, map);
        m->messages.push_back(b_.addResult(msg, f.result()->name + ".F", f.result()->type));
      }
      if (!v.var || v.var->def->given)
        continue;
      IndexMap map;
      Region *r = mirrorLoops(outer, map, "");
      Op *msg = b_.createIn(r, OpKind::Msg, f.loc);
      msg->kernel = std::string(ops.toArgument[1].kernel);
      msg->operands.push_back(element(m->back, map));
      msg->deps.push_back(DepKind::Fresh);
      msg->target = substitute(v.back ? *v.back : v.operand, map);
      Posterior *p = posteriorOf(v.var);
      Value *res = b_.addResult(msg, v.var->name + ".B." + f.result()->name, v.var->type);
      (v.back ? p->backMessages : p->messages).push_back(res);
    }
  }

  /// Weights: the gates around the factor that are not around the target.
  void addGates(Op &msg, const std::vector<Op *> &factorWhens, const std::vector<Op *> &targetWhens,
                const IndexMap &map) {
    for (Op *w : factorWhens) {
      bool shared = false;
      for (Op *t : targetWhens)
        shared = shared || sameGate(*w, *t);
      if (shared)
        continue;
      msg.gates.emplace_back(conditionPosterior(*w, map), substitute(w->operands[1], map));
    }
  }

  /// Two `when` blocks select the same case of the same condition: the same
  /// gate.cases value and the same constant, or loops over the same plate.
  static bool sameGate(const Op &a, const Op &b) {
    if (a.operands[0].value != b.operands[0].value)
      return false;
    const Operand &x = a.operands[1], &y = b.operands[1];
    if (x.kind == Operand::Kind::Int || y.kind == Operand::Kind::Int)
      return x.kind == y.kind && x.intValue == y.intValue;
    return x.value->isLoopIndex() && y.value->isLoopIndex() &&
           x.value->loop->operands[0].value == y.value->loop->operands[0].value;
  }

  /// The posterior of the condition a `when` block tests, indexed for code
  /// under `map`.
  Operand conditionPosterior(const Op &when, const IndexMap &map) {
    const Value *cases = when.operands[0].value;
    const Op *casesOp = cases->def;
    Ref cond = resolve(casesOp->operands[0]);
    if (!cond.var) {
      unsupported(when, "a condition that is observed");
      return Operand::ofInt(0);
    }
    // The condition's indices are in terms of the gate.cases op's loops,
    // which enclose the `when`: the same loop indices, mapped.
    return substitute(cond.operand, map);
  }

  // Evidence goes to the condition of every gate around the factor: a
  // gate's case holds everything nested in it, so inner gates weight it by
  // their case probabilities (a mixture inside a branch contributes its
  // expected log likelihood to the branch).
  void evidence(Op &f, const std::vector<Ref> &args, const std::vector<Op *> &whens) {
    for (size_t j = 0; j < whens.size(); ++j)
      evidenceFor(f, args, whens, j);
  }

  void evidenceFor(Op &f, const std::vector<Ref> &args, const std::vector<Op *> &whens, size_t j) {
    Op *inner = whens[j];
    // A condition with a given posterior (--given) receives no messages: its
    // case probabilities stay as given.
    if (const Ref cond = resolve(inner->operands[0].value->def->operands[0]); cond.var && cond.var->def->given)
      return;
    const FactorOperators &ops = factorOperators(f.family);
    std::vector<Op *> loops = ir::enclosingLoops(f);
    auto emit = [&](const std::string &kernel, const std::vector<std::pair<Operand, DepKind>> &inputs,
                    const std::string &name, IndexMap &map, Region *r) {
      Op *msg = b_.createIn(r, OpKind::Msg, f.loc);
      msg->kernel = kernel;
      msg->evidence = true;
      for (auto &[o, k] : inputs) {
        msg->operands.push_back(substitute(o, map));
        msg->deps.push_back(k);
      }
      Operand cond = conditionPosterior(*inner, map);
      msg->target = cond;
      msg->targetCase = substitute(inner->operands[1], map);
      std::vector<Op *> others;
      for (size_t i = 0; i < whens.size(); ++i)
        if (i != j)
          others.push_back(whens[i]);
      Ref condRef = resolve(inner->operands[0].value->def->operands[0]);
      addGates(*msg, others, condRef.gates, map);
      if (condRef.var) {
        Posterior *p = posteriorOf(condRef.var);
        Value *res = b_.addResult(msg, condRef.var->name + ".E." + name, condRef.var->type);
        p->messages.push_back(res);
      }
    };
    {
      IndexMap map;
      Region *r = mirrorLoops(loops, map, "");
      // Every argument in order; the posteriors it reads must exist (Required).
      std::vector<std::pair<Operand, DepKind>> inputs;
      for (size_t i = 0; i < args.size(); ++i)
        inputs.emplace_back(args[i].operand, args[i].var ? readKind(args[i], DepKind::Required) : DepKind::Plain);
      std::string kernel(f.observed && !ops.observedElboKernel.empty() ? ops.observedElboKernel : ops.elboKernel);
      emit(kernel, inputs, f.result()->name, map, r);
    }
    if (!f.observed && args[0].var && !f.given) {
      IndexMap map;
      Region *r = mirrorLoops(loops, map, "");
      emit(std::string(entropyKernel(f.family)), {{args[0].operand, DepKind::Required}}, "H." + f.result()->name, map,
           r);
    }
  }

  ir::Module &m_;
  ir::Builder b_;
  DiagnosticEngine &diags_;
  std::map<const Value *, Op *> exitOf_;
  std::map<const Value *, std::unique_ptr<Posterior>> posteriors_;
  bool ok_ = true;
};

class MessagesPass : public Pass {
public:
  std::string_view name() const override { return "messages"; }
  bool run(ir::Module &m, PassContext &ctx) override { return MessageLowering(m, ctx.diags).run(); }
};

} // namespace

std::unique_ptr<Pass> createMessagesPass() { return std::make_unique<MessagesPass>(); }

} // namespace ppc::passes
