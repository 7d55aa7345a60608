//===- passes/GateTransform.cpp - conditionals to gates (seed 001) ---------===//
//
// Removes `if`, `match` and indexing by a random variable (a switch), leaving
// the gate form of Infer.NET's GateTransform:
//
//   * the condition becomes one indicator per case: %c.cases = gate.cases(%c);
//   * every statement of case k is wrapped in `when %c.cases case k { }`; a
//     loop is not wrapped, its body is (as if the loop were unrolled);
//   * a random variable defined outside and used inside a case is cloned:
//     gate.enter (a clone for every case), gate.enter_partial (for the cases
//     that use it) or gate.enter_one (the one element a case selects, when
//     the variable is indexed by the condition itself); a clone is declared
//     in the containers its indices need, re-entering them if they are not
//     nested (seed: "re-enter non-nested container");
//   * a variable defined in every case and used after the conditional (an
//     `if`/`match` result, or the variable a switched factor defines) is
//     merged by gate.exit.
//
// A switch `x = F(phi[z])` is the conditional "for each k: case z == k:
// x = F(phi[k])", written as a loop over the cases (seed: switch statement).
// A `case _` over a constant number of cases is unrolled; over a symbolic
// number it is a loop over the remaining cases (the listed ones must be
// 0..m-1).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/Printer.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace ppc::passes {
namespace {

using ir::Dim;
using ir::Op;
using ir::OpKind;
using ir::Operand;
using ir::Region;
using ir::Type;
using ir::TypeKind;
using ir::Value;

std::string sanitize(std::string s) {
  for (char &c : s)
    if (c == '.')
      c = '_';
  return s;
}

bool sameOperand(const Operand &a, const Operand &b) { return ir::toString(a) == ir::toString(b); }

/// One case of a conditional: a constant case value, or a loop over the
/// remaining cases `first until N` (a switch).
struct CaseSel {
  std::optional<int64_t> value;
  Value *loopPlate = nullptr; ///< for the loop form
};

class GateTransform {
public:
  GateTransform(ir::Module &m, DiagnosticEngine &diags) : m_(m), b_(m), diags_(diags) {}

  bool run() {
    rewriteRegion(m_.body, /*top=*/true);
    return ok_;
  }

private:
  // ---- region rewriting ----
  void rewriteRegion(Region &r, bool top = false) {
    std::vector<std::unique_ptr<Op>> old = std::move(r.ops);
    r.ops.clear();
    for (auto &op : old) {
      std::vector<std::unique_ptr<Op>> before = std::move(hoisted_);
      hoisted_.clear();
      size_t mark = r.ops.size();
      rewriteOp(std::move(op), r);
      if (top && !hoisted_.empty()) {
        // Plates created for switches go before the top-level op that needs them.
        for (auto &h : hoisted_)
          h->parentRegion = &r;
        r.ops.insert(r.ops.begin() + mark, std::make_move_iterator(hoisted_.begin()),
                     std::make_move_iterator(hoisted_.end()));
        hoisted_.clear();
      }
      for (auto &h : before)
        hoisted_.push_back(std::move(h));
    }
  }

  void append(Region &r, std::unique_ptr<Op> op) {
    op->parentRegion = &r;
    r.ops.push_back(std::move(op));
  }

  void rewriteOp(std::unique_ptr<Op> op, Region &out) {
    switch (op->kind) {
    case OpKind::For:
      rewriteRegion(*op->regions[0]);
      append(out, std::move(op));
      return;
    case OpKind::If:
    case OpKind::Match:
      expandConditional(std::move(op), out);
      return;
    case OpKind::Random:
      if (switchIndex(*op)) {
        expandSwitch(std::move(op), out);
        return;
      }
      append(out, std::move(op));
      return;
    default:
      append(out, std::move(op));
      return;
    }
  }

  // ---- helpers ----
  /// The first index of an operand of `op` that is a random variable whose
  /// value is not already known (inside a case of a conditional on it, the
  /// condition is known: that use becomes gate.enter_one there).
  const Operand *findSwitch(const Operand &o) const {
    for (const Operand &idx : o.indices) {
      if (idx.isValue() && idx.value->type.isRandom() &&
          (idx.value->type.kind == TypeKind::Cat || idx.value->type.kind == TypeKind::Bool)) {
        bool known = false;
        for (const Operand &k : knownConditions_)
          known = known || sameOperand(k, idx);
        if (!known)
          return &idx;
      }
      if (const Operand *inner = findSwitch(idx))
        return inner;
    }
    return nullptr;
  }
  const Operand *switchIndex(const Op &op) const {
    for (const Operand &o : op.operands)
      if (const Operand *s = findSwitch(o))
        return s;
    return nullptr;
  }

  static Dim caseCount(const Value *cond) {
    return cond->type.kind == TypeKind::Bool ? Dim::of(2) : cond->type.dim;
  }

  std::vector<Operand> loopIndices(const Region &r) {
    std::vector<Operand> idx;
    for (Op *l : ir::enclosingLoopsOfRegion(r))
      idx.push_back(Operand::ofValue(l->index));
    return idx;
  }

  /// A top-level plate `lo until hi`, found or created.
  Value *plateRange(Operand lo, Dim hi) {
    Operand hiOp = hi.value ? Operand::ofValue(hi.value) : Operand::ofInt(hi.constant);
    for (auto &op : m_.body.ops)
      if (op->kind == OpKind::Plate && op->plateKind == Op::PlateKind::Until &&
          sameOperand(op->operands[0], lo) && sameOperand(op->operands[1], hiOp))
        return op->result();
    for (auto &op : hoisted_)
      if (sameOperand(op->operands[0], lo) && sameOperand(op->operands[1], hiOp))
        return op->result();
    auto op = std::make_unique<Op>();
    op->kind = OpKind::Plate;
    op->plateKind = Op::PlateKind::Until;
    op->operands = {lo, hiOp};
    op->parentRegion = &m_.body;
    std::string hint = "P." + (hi.value ? hi.value->name : std::to_string(hi.constant));
    if (!(lo.kind == Operand::Kind::Int && lo.intValue == 0))
      hint = "P." + ir::toString(lo) + "_" + hint.substr(2);
    Value *v = b_.addResult(op.get(), hint, Type::of(TypeKind::Plate));
    hoisted_.push_back(std::move(op));
    return v;
  }

  /// Creates an op at the end of `r`.
  Op *create(Region &r, OpKind kind, SourceRange loc) { return b_.createIn(&r, kind, loc); }

  /// `for %idx in plate { }` at the end of `r`, with the row indices a ragged
  /// plate needs taken from the loops around `r`.
  Op *createLoop(Region &r, Value *plate, SourceRange loc, std::string_view hint) {
    Operand plateOperand = Operand::ofValue(plate);
    std::vector<Operand> outer = loopIndices(r);
    for (size_t i = 0; i < plate->dims.size() && i < outer.size(); ++i)
      plateOperand.indices.push_back(outer[i]);
    ir::Region *saved = b_.insertionRegion();
    b_.setInsertionRegion(&r);
    Op *loop = b_.createFor(plateOperand, hint, loc);
    b_.setInsertionRegion(saved);
    return loop;
  }

  Value *casesFor(const Operand &cond, Region &out, SourceRange loc) {
    // Out of loops the condition does not depend on (z[i] inside a loop over
    // pixels d): one gate.cases per element of the condition. The loops
    // around `out` are being rebuilt, so what is appended to an outer loop's
    // region lands just before the loop.
    std::set<const Value *> needed;
    std::function<void(const Operand &)> collect = [&](const Operand &o) {
      if (o.isValue() && o.value->isLoopIndex())
        needed.insert(o.value);
      for (const Operand &i : o.indices)
        collect(i);
    };
    collect(cond);
    Region *home = &out;
    while (home->parent && home->parent->kind == OpKind::For && !needed.count(home->parent->index) &&
           home->parent->parentRegion)
      home = home->parent->parentRegion;
    // One gate.cases per condition element and container.
    for (auto &op : home->ops)
      if (op->kind == OpKind::GateCases && sameOperand(op->operands[0], cond))
        return op->result();
    Op *cases = create(*home, OpKind::GateCases, loc);
    cases->operands.push_back(cond);
    return b_.addResult(cases, cond.value->name + ".cases", Type::withDim(TypeKind::Cases, caseCount(cond.value)));
  }

  // ---- conditionals ----
  struct Branch {
    CaseSel sel;
    Region *body;
  };

  void expandConditional(std::unique_ptr<Op> op, Region &out) {
    const Operand cond = op->operands[0];
    Dim n = caseCount(cond.value);
    std::vector<Branch> branches;
    if (op->kind == OpKind::If) {
      // Case k is the condition's value k, as when a Bool indexes an array:
      // `then` is case 1 (true), `else` case 0.
      branches.push_back({{1, nullptr}, op->regions[0].get()});
      branches.push_back({{0, nullptr}, op->regions[1].get()});
    } else {
      std::set<int64_t> listed;
      for (auto &r : op->regions)
        if (r->caseValue)
          listed.insert(*r->caseValue);
      // Cloning adds regions to `op`: walk a snapshot of the original ones.
      std::vector<Region *> regions;
      for (auto &r : op->regions)
        regions.push_back(r.get());
      for (Region *r : regions) {
        if (r->caseValue) {
          branches.push_back({{r->caseValue, nullptr}, r});
          continue;
        }
        // case _: unrolled over a constant number of cases, else a loop over
        // the cases after the listed prefix.
        if (n.isConstant()) {
          std::vector<int64_t> rest;
          for (int64_t k = 0; k < n.constant; ++k)
            if (!listed.count(k))
              rest.push_back(k);
          for (size_t i = 0; i < rest.size(); ++i) {
            Region *copy = i + 1 == rest.size() ? r : cloneRegion(*r, *op);
            branches.push_back({{rest[i], nullptr}, copy});
          }
        } else {
          int64_t m = 0;
          while (listed.count(m))
            ++m;
          if (int64_t(listed.size()) != m) {
            std::string got;
            for (int64_t k : listed)
              got += (got.empty() ? "" : ", ") + std::to_string(k);
            diags_.error(op->loc, "with a symbolic number of cases, the cases listed before 'case _' must be "
                                  "consecutive from 0 (0, 1, ...); got " + got);
            ok_ = false;
            return;
          }
          // The loop's index runs over `m until n`, not over the plates the
          // condition indexes: the body may not index by the condition.
          bool indexesByCondition = false;
          ir::walk(*r, [&](Op &inner) {
            std::function<void(const Operand &)> look = [&](const Operand &o) {
              for (const Operand &i : o.indices) {
                indexesByCondition = indexesByCondition || sameOperand(i, cond);
                look(i);
              }
            };
            for (const Operand &o : inner.operands)
              look(o);
          });
          if (indexesByCondition && m > 0) {
            diags_.error(op->loc, "with a symbolic number of cases and cases listed before it, 'case _' cannot "
                                  "index by the condition itself; list every case, or use only 'case _'");
            ok_ = false;
            return;
          }
          branches.push_back({{std::nullopt, plateRange(Operand::ofInt(m), n)}, r});
        }
      }
    }
    Value *cases = casesFor(cond, out, op->loc);
    // Nested conditionals and switches first: their clones are uses too.
    for (const Branch &br : branches) {
      knownConditions_.push_back(cond);
      rewriteRegion(*br.body);
      knownConditions_.pop_back();
    }

    // Uses of outer random variables, per case (decides enter vs enter_partial).
    std::map<std::string, std::set<int64_t>> usedIn;
    std::set<std::string> usedInLoop;
    std::set<const Value *> local;
    for (const Branch &br : branches)
      ir::walk(*br.body, [&](Op &o) {
        for (Value *v : o.results)
          local.insert(v);
      });
    for (size_t i = 0; i < branches.size(); ++i)
      ir::walk(*branches[i].body, [&](Op &o) {
        for (const Operand &x : o.operands)
          forEachOuterUse(x, local, [&](const Operand &use) {
            if (branches[i].sel.value)
              usedIn[useKey(use)].insert(*branches[i].sel.value);
            else
              usedInLoop.insert(useKey(use));
          });
      });

    Conditional cd{cond, cases, n, std::move(local), {}, {}};
    for (auto &[key, set] : usedIn) {
      bool all = !usedInLoop.count(key) && n.isConstant() && int64_t(set.size()) == n.constant;
      cd.partial[key] = all ? std::vector<int64_t>{} : std::vector<int64_t>(set.begin(), set.end());
      cd.full[key] = all || usedInLoop.count(key);
    }
    for (const std::string &key : usedInLoop)
      cd.full[key] = true;

    std::vector<std::vector<Operand>> yields(branches.size());
    std::vector<Op *> switchLoops(branches.size(), nullptr);
    for (size_t i = 0; i < branches.size(); ++i) {
      Region *target = &out;
      CaseSel sel = branches[i].sel;
      Operand which = sel.value ? Operand::ofInt(*sel.value) : Operand();
      if (!sel.value) {
        Op *loop = createLoop(out, sel.loopPlate, op->loc, "k." + sanitize(cond.value->name));
        switchLoops[i] = loop;
        target = loop->regions[0].get();
        which = Operand::ofValue(loop->index);
      }
      wrapOps(*branches[i].body, *target, cd, which, yields[i]);
      if (switchLoops[i])
        addCaseDimension(*switchLoops[i]);
    }

    // Results leave through gate.exit, in loops over their extra dims.
    for (size_t r = 0; r < op->results.size(); ++r) {
      Value *res = op->results[r];
      std::vector<Operand> parts;
      for (auto &y : yields)
        if (r < y.size())
          parts.push_back(y[r]);
      exitValue(res, cases, parts, out, op->loc);
    }
  }

  struct Conditional {
    Operand cond;
    Value *cases;
    Dim count;
    std::set<const Value *> local;                   ///< defined inside the branches
    std::map<std::string, std::vector<int64_t>> partial; ///< key -> cases using it ({} = all)
    std::map<std::string, bool> full;                ///< key -> clone for every case
  };

  // A random variable defined outside the conditional and used inside it.
  template <typename Fn>
  void forEachOuterUse(const Operand &o, const std::set<const Value *> &local, Fn &&fn) const {
    if (!o.isValue())
      return;
    for (const Operand &k : knownConditions_)
      if (sameOperand(o, k))
        return;
    const Value *v = o.value;
    bool random = v->type.isRandom() && v->def &&
                  !(v->def->observed) && !local.count(v);
    if (random)
      fn(o);
    for (const Operand &i : o.indices)
      forEachOuterUse(i, local, fn);
  }

  /// A use's identity for cloning: loop indices stand for their plates, so
  /// that `array[i]` under two different loops over the same plate shares one
  /// clone array.
  static std::string useKey(const Operand &o) {
    std::string s = "%" + o.value->name;
    for (const Operand &i : o.indices) {
      if (i.isValue() && i.value->isLoopIndex())
        s += "[<" + i.value->loop->operands[0].value->name + ">]";
      else
        s += "[" + ir::toString(i) + "]";
    }
    return s;
  }

  /// Moves the ops of `branch` into `target`: loops are rebuilt around their
  /// wrapped bodies, other ops are wrapped in `when cases case which`.
  void wrapOps(Region &branch, Region &target, Conditional &cd, const Operand &which,
               std::vector<Operand> &yieldOut) {
    std::vector<std::unique_ptr<Op>> ops = std::move(branch.ops);
    branch.ops.clear();
    for (auto &op : ops) {
      if (op->kind == OpKind::Yield) {
        for (const Operand &y : op->operands)
          yieldOut.push_back(y);
        continue;
      }
      if (op->kind == OpKind::For) {
        Region &body = *op->regions[0];
        std::unique_ptr<Op> loop = std::move(op);
        Region tmp;
        for (auto &inner : body.ops)
          tmp.ops.push_back(std::move(inner));
        body.ops.clear();
        Op *raw = loop.get();
        append(target, std::move(loop));
        std::vector<Operand> innerYields;
        wrapOps(tmp, *raw->regions[0], cd, which, innerYields);
        for (const Operand &y : innerYields)
          yieldOut.push_back(y);
        continue;
      }
      if (op->kind == OpKind::Plate || op->isDeterministic()) {
        append(target, std::move(op)); // structure and constants belong to no case
        continue;
      }
      // Clone the outer random variables this op uses, then wrap it.
      Op *when = create(target, OpKind::When, op->loc);
      when->operands = {Operand::ofValue(cd.cases, loopIndicesOf(cd.cases, target)), which};
      Region *whenBody = b_.addRegion(when);
      replaceOuterUsesDeep(*op, cd, which, target, *whenBody);
      append(*whenBody, std::move(op));
    }
    mergeAdjacentWhens(target);
  }

  /// Indices that select the element of `v` for code in region `r`.
  std::vector<Operand> loopIndicesOf(const Value *v, const Region &r) {
    std::vector<Operand> all = loopIndices(r);
    all.resize(std::min(all.size(), v->dims.size()));
    return all;
  }

  // The uses of `op` and of everything nested in it (inner gates' blocks).
  void replaceOuterUsesDeep(Op &op, Conditional &cd, const Operand &which, Region &container, Region &whenBody) {
    for (Operand &o : op.operands)
      replaceOuterUses(o, cd, which, container, whenBody, op);
    for (auto &r : op.regions)
      for (auto &inner : r->ops)
        replaceOuterUsesDeep(*inner, cd, which, container, whenBody);
  }

  void replaceOuterUses(Operand &o, Conditional &cd, const Operand &which, Region &container, Region &whenBody,
                        const Op &user) {
    if (!o.isValue() || sameOperand(o, cd.cond))
      return; // the condition itself is known inside a case
    for (const Operand &k : knownConditions_)
      if (sameOperand(o, k))
        return; // so is the condition of an enclosing case (its gate clones it)
    const Value *v = o.value;
    bool outerRandom = v->type.isRandom() && v->def && !v->def->observed && !cd.local.count(v);
    // Indexed by the condition itself: the case selects one element.
    for (size_t j = 0; outerRandom && j < o.indices.size(); ++j)
      if (sameOperand(o.indices[j], cd.cond)) {
        Operand element = o;
        element.indices[j] = which;
        for (Operand &i : element.indices)
          replaceOuterUses(i, cd, which, container, whenBody, user);
        Op *enter = create(whenBody, OpKind::GateEnterOne, user.loc);
        enter->operands = {Operand::ofValue(cd.cases, loopIndicesOf(cd.cases, whenBody)), element, which};
        Value *clone = b_.addResult(enter, v->name + "_cond_" + sanitize(cd.cond.value->name), v->type);
        o = Operand::ofValue(clone, loopIndices(whenBody));
        return;
      }
    for (Operand &i : o.indices)
      replaceOuterUses(i, cd, which, container, whenBody, user);
    if (!outerRandom)
      return;
    std::string key = useKey(o);
    Value *clones = cloneArray(o, key, cd, container, user.loc);
    // Index the clone array: the loops it was declared in, then the case.
    std::vector<Operand> idx;
    std::vector<Operand> here = loopIndices(container);
    for (size_t d = 0; d + 1 < clones->dims.size(); ++d) {
      Value *plate = clones->dims[d];
      const Operand *pick = nullptr;
      for (const Operand &h : here)
        if (h.value->loop->operands[0].value == plate)
          pick = &h;
      idx.push_back(pick ? *pick : Operand::ofInt(0));
    }
    if (!cd.full[key]) {
      const std::vector<int64_t> &list = cd.partial[key];
      int64_t pos = which.kind == Operand::Kind::Int
                        ? std::find(list.begin(), list.end(), which.intValue) - list.begin()
                        : 0;
      idx.push_back(Operand::ofInt(pos));
    } else {
      idx.push_back(which);
    }
    o = Operand::ofValue(clones, idx);
  }

  /// The clone array for a use, declared once per conditional in the loops
  /// its indices need.
  Value *cloneArray(const Operand &use, const std::string &key, Conditional &cd, Region &container,
                    SourceRange loc) {
    auto found = cloneArrays_.find({cd.cases, key});
    if (found != cloneArrays_.end())
      return found->second;
    // The loops (inside the conditional) whose indices the use needs.
    std::set<const Value *> needed;
    for (const Operand &i : use.indices)
      if (i.isValue() && i.value->isLoopIndex())
        needed.insert(i.value);
    std::vector<Op *> nest = ir::enclosingLoopsOfRegion(container);
    std::vector<Op *> outer = ir::enclosingLoopsOfRegion(*casesRegion(cd.cases));
    std::vector<Op *> inner(nest.begin() + std::min(nest.size(), outer.size()), nest.end());
    std::vector<Op *> required;
    for (Op *l : inner)
      if (needed.count(l->index))
        required.push_back(l);
    Region *home;
    std::map<const Value *, Value *> remap; // loop index in the use -> index in home
    bool prefix = required.size() <= inner.size() &&
                  std::equal(required.begin(), required.end(), inner.begin());
    if (prefix) {
      home = required.empty() ? casesRegion(cd.cases) : required.back()->regions[0].get();
    } else {
      // Re-enter: a fresh nest over just the loops the clone needs, before the
      // outermost loop of this case.
      Region *at = casesRegion(cd.cases);
      home = at;
      for (Op *l : required) {
        Op *loop = createLoop(*home, l->operands[0].value, loc, l->index->name);
        remap[l->index] = loop->index;
        home = loop->regions[0].get();
      }
      // The new nest must come before the loop it serves: move it up.
      Op *first = home == at ? nullptr : home->parent;
      while (first && first->parentRegion != at)
        first = first->parentOp();
      Op *anchor = inner.empty() ? nullptr : inner.front();
      if (first && anchor) {
        auto &ops = at->ops;
        auto from = std::find_if(ops.begin(), ops.end(), [&](auto &p) { return p.get() == first; });
        auto to = std::find_if(ops.begin(), ops.end(), [&](auto &p) { return p.get() == anchor; });
        if (from != ops.end() && to != ops.end() && from > to) {
          std::unique_ptr<Op> moved = std::move(*from);
          ops.erase(from);
          ops.insert(to, std::move(moved));
        }
      }
    }
    Operand element = use;
    for (Operand &i : element.indices)
      if (i.isValue() && remap.count(i.value))
        i = Operand::ofValue(remap[i.value]);
    bool full = cd.full[key];
    Op *enter = b_.createIn(home, full ? OpKind::GateEnter : OpKind::GateEnterPartial, loc);
    // Declarations go first in their container, before any case uses them.
    {
      auto &ops = home->ops;
      std::unique_ptr<Op> moved = std::move(ops.back());
      ops.pop_back();
      auto pos = ops.begin();
      while (pos != ops.end() && ((*pos)->kind == OpKind::GateCases || (*pos)->kind == OpKind::GateEnter ||
                                  (*pos)->kind == OpKind::GateEnterPartial || (*pos)->kind == OpKind::For))
        ++pos;
      if (home == casesRegion(cd.cases)) {
        // After the gate.cases it depends on.
        pos = std::find_if(ops.begin(), ops.end(), [&](auto &p) { return p->result() == cd.cases; });
        if (pos != ops.end())
          ++pos;
      } else {
        pos = ops.begin();
      }
      // Never before the definition of the value it enters, when that is in
      // the same container (a per-element condition declared in the loop
      // around a global condition's branch).
      auto def = std::find_if(ops.begin(), ops.end(), [&](auto &p) { return p.get() == use.value->def; });
      if (def != ops.end() && def >= pos)
        pos = def + 1;
      ops.insert(pos, std::move(moved));
    }
    enter->operands = {Operand::ofValue(cd.cases, loopIndicesOf(cd.cases, *home)), element};
    if (!full)
      for (int64_t k : cd.partial[key])
        enter->operands.push_back(Operand::ofInt(k));
    Value *clones = b_.addResult(enter, use.value->name + "_cond_" + sanitize(cd.cond.value->name), use.value->type);
    clones->dims.push_back(cd.cases);
    cloneArrays_[{cd.cases, key}] = clones;
    return clones;
  }

  Region *casesRegion(const Value *cases) { return cases->def->parentRegion; }

  /// Joins `when c case k {A} when c case k {B}` into one block.
  void mergeAdjacentWhens(Region &r) {
    std::vector<std::unique_ptr<Op>> ops = std::move(r.ops);
    r.ops.clear();
    for (auto &op : ops) {
      Op *prev = r.ops.empty() ? nullptr : r.ops.back().get();
      if (prev && prev->kind == OpKind::When && op->kind == OpKind::When &&
          sameOperand(prev->operands[0], op->operands[0]) && sameOperand(prev->operands[1], op->operands[1])) {
        for (auto &inner : op->regions[0]->ops) {
          inner->parentRegion = prev->regions[0].get();
          prev->regions[0]->ops.push_back(std::move(inner));
        }
        continue;
      }
      r.ops.push_back(std::move(op));
    }
  }

  /// `res = gate.exit(cases, parts...)`, inside loops over the dims the
  /// parts have beyond the conditional's container.
  void exitValue(Value *res, Value *cases, const std::vector<Operand> &parts, Region &out, SourceRange loc) {
    Region *home = &out;
    std::vector<Operand> idx = loopIndices(out);
    size_t outerDims = idx.size();
    const Value *first = parts.empty() ? nullptr : parts.front().value;
    if (first)
      for (size_t d = outerDims; d < first->dims.size(); ++d) {
        Value *plate = first->dims[d];
        if (plate->type.kind != TypeKind::Plate)
          break;
        // A switch loop's clones are merged whole (the last dim is the cases).
        bool switchDim = parts.size() == 1 && d + 1 == first->dims.size();
        if (switchDim)
          break;
        Op *loop = createLoop(*home, plate, loc, "i." + res->name);
        home = loop->regions[0].get();
        idx.push_back(Operand::ofValue(loop->index));
      }
    Op *exit = create(*home, OpKind::GateExit, loc);
    exit->operands.push_back(Operand::ofValue(cases, loopIndicesOf(cases, *home)));
    bool observed = true;
    for (const Operand &p : parts) {
      std::vector<Operand> pi(idx.begin(), idx.begin() + std::min(idx.size(), p.value->dims.size()));
      exit->operands.push_back(Operand::ofValue(p.value, pi));
      observed = observed && p.value->def && p.value->def->observed;
    }
    exit->observed = observed && !parts.empty();
    res->def = exit;
    res->dims = ir::enclosingPlates(home);
    exit->results.push_back(res);
  }

  // ---- switches ----
  void expandSwitch(std::unique_ptr<Op> op, Region &out) {
    Operand cond = *switchIndex(*op);
    // One random index per factor: with a second one (mu(z), tau(u)) the
    // clones of one gate would have to be placed inside the other's loops.
    knownConditions_.push_back(cond);
    const Operand *second = switchIndex(*op);
    knownConditions_.pop_back();
    if (second) {
      diags_.error(op->loc, "a factor indexed by two random variables ('" + cond.value->name + "' and '" +
                                second->value->name + "') is not supported yet; index by one of them, or write "
                                "the factor inside a match on the other");
      ok_ = false;
      return;
    }
    Dim n = caseCount(cond.value);
    Value *cases = casesFor(cond, out, op->loc);
    Value *plate = plateRange(Operand::ofInt(0), n);
    Op *loop = createLoop(out, plate, op->loc, "k." + sanitize(cond.value->name));
    Region &body = *loop->regions[0];
    Operand which = Operand::ofValue(loop->index);

    Conditional cd{cond, cases, n, {}, {}, {}};
    // Every outer random operand not indexed by the condition is used in all cases.
    for (const Operand &o : op->operands)
      forEachOuterUse(o, cd.local, [&](const Operand &use) {
        bool selected = false;
        for (const Operand &i : use.indices)
          selected = selected || sameOperand(i, cond);
        if (!selected && !sameOperand(use, cond))
          cd.full[useKey(use)] = true;
      });

    // The factor, per case: x_cond_z = F(...) in `when z.cases case k`.
    Value *result = op->result();
    bool observed = op->observed;
    auto perCase = std::make_unique<Op>();
    perCase->kind = op->kind;
    perCase->family = op->family;
    perCase->observed = observed;
    perCase->loc = op->loc;
    perCase->operands = op->operands;
    perCase->operandLocs = op->operandLocs;
    Op *when = create(body, OpKind::When, op->loc);
    when->operands = {Operand::ofValue(cases, loopIndicesOf(cases, body)), which};
    Region *whenBody = b_.addRegion(when);
    for (Operand &o : perCase->operands)
      if (!sameOperand(o, cond))
        replaceOuterUses(o, cd, which, body, *whenBody, *perCase);
    perCase->parentRegion = whenBody;
    Value *clone = b_.addResult(perCase.get(), result->name + "_cond_" + sanitize(cond.value->name), result->type);
    std::unique_ptr<Op> raw = std::move(perCase);
    whenBody->ops.push_back(std::move(raw));

    exitValue(result, cases, {Operand::ofValue(clone)}, out, op->loc);
  }

  /// The ops of a `case _` moved into a loop over the cases define one value
  /// per case: give each value the loop's plate as a dimension and index its
  /// uses with the loop's index.
  void addCaseDimension(Op &loop) {
    // The new dim sits where the loop over the cases is in the loop nest.
    size_t p = ir::enclosingLoops(loop).size();
    std::set<const Value *> added;
    ir::walk(*loop.regions[0], [&](Op &op) {
      for (Value *v : op.results) {
        std::vector<Value *> dims = ir::enclosingPlates(op.parentRegion);
        if (op.kind == OpKind::GateEnter || op.kind == OpKind::GateEnterPartial)
          dims.push_back(v->dims.back());
        if (dims.size() != v->dims.size() + 1)
          continue;
        added.insert(v);
        v->dims = dims;
      }
    });
    std::function<void(Operand &)> fix = [&](Operand &o) {
      for (Operand &i : o.indices)
        fix(i);
      if (o.isValue() && added.count(o.value) && o.indices.size() >= p && o.indices.size() < o.value->dims.size())
        o.indices.insert(o.indices.begin() + p, Operand::ofValue(loop.index));
    };
    ir::walk(*loop.regions[0], [&](Op &op) {
      for (Operand &o : op.operands)
        fix(o);
    });
  }

  /// Deep copy of a region (for unrolling `case _`), with fresh values.
  Region *cloneRegion(const Region &r, Op &owner) {
    owner.regions.push_back(std::make_unique<Region>());
    Region *copy = owner.regions.back().get();
    copy->parent = &owner;
    std::map<const Value *, Value *> map;
    for (const auto &op : r.ops)
      copy->ops.push_back(cloneOp(*op, copy, map));
    return copy;
  }

  std::unique_ptr<Op> cloneOp(const Op &op, Region *parent, std::map<const Value *, Value *> &map) {
    auto c = std::make_unique<Op>();
    c->kind = op.kind;
    c->loc = op.loc;
    c->parentRegion = parent;
    c->family = op.family;
    c->observed = op.observed;
    c->plateKind = op.plateKind;
    c->operandLocs = op.operandLocs;
    std::function<Operand(const Operand &)> remap = [&](const Operand &o) {
      Operand out = o;
      if (o.isValue() && map.count(o.value))
        out.value = map[o.value];
      for (Operand &i : out.indices)
        i = remap(i);
      return out;
    };
    for (const Operand &o : op.operands)
      c->operands.push_back(remap(o));
    if (op.index) {
      c->index = m_.newValue(op.index->name, op.index->type);
      c->index->loop = c.get();
      map[op.index] = c->index;
    }
    for (const auto &sub : op.regions) {
      c->regions.push_back(std::make_unique<Region>());
      Region *cr = c->regions.back().get();
      cr->parent = c.get();
      cr->caseValue = sub->caseValue;
      for (const auto &inner : sub->ops)
        cr->ops.push_back(cloneOp(*inner, cr, map));
    }
    for (const Value *v : op.results) {
      Value *nv = m_.newValue(v->name, v->type);
      nv->def = c.get();
      nv->dims = v->dims;
      for (Value *&d : nv->dims)
        if (map.count(d))
          d = map[d];
      map[v] = nv;
      c->results.push_back(nv);
    }
    return c;
  }

  ir::Module &m_;
  ir::Builder b_;
  DiagnosticEngine &diags_;
  std::vector<std::unique_ptr<Op>> hoisted_;
  std::vector<Operand> knownConditions_; ///< conditions of the cases being rewritten
  std::map<std::pair<const Value *, std::string>, Value *> cloneArrays_;
  bool ok_ = true;
};

class GatePass : public Pass {
public:
  std::string_view name() const override { return "gate"; }
  bool run(ir::Module &m, PassContext &ctx) override { return GateTransform(m, ctx.diags).run(); }
};

} // namespace

std::unique_ptr<Pass> createGatePass() { return std::make_unique<GatePass>(); }

} // namespace ppc::passes
