//===- codegen/plan/Layout.cpp - buffers, plates, posteriors ----------------===//
//
// Where everything lives: a buffer per posterior (natural parameters and
// statistics, one row per plate element), per message accumulator, per data
// column and per constant; plates as sizes (constant) or CSR offsets
// (ragged); a plate element's flat index as an expression over loop
// variables. Scratch posteriors (one element of the nested plate at a time)
// have the rows of that element's largest instance.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanBuilder.h"

#include "ir/Evaluate.h"
#include "ir/Printer.h"
#include "runtime/Binding.h"
#include "runtime/MemoryLimits.h"

#include <algorithm>
#include <cctype>

namespace ppc::codegen::lowering {


int32_t PlanBuilder::addBuffer(std::string name, bool isInt, int64_t size) {
  Buffer b;
  b.name = std::move(name);
  b.isInt = isInt;
  b.size = size;
  p_.buffers.push_back(std::move(b));
  return static_cast<int32_t>(p_.buffers.size() - 1);
}

/// A constant buffer holding `values` (deduplicated).
int32_t PlanBuilder::constantBuffer(const std::vector<double> &values) {
  auto it = constants_.find(values);
  if (it != constants_.end())
    return it->second;
  int32_t b = addBuffer("const." + std::to_string(constants_.size()), false, int64_t(values.size()));
  p_.buffers[b].doubles = values;
  constants_[values] = b;
  return b;
}

const PlanBuilder::PlateInfo *PlanBuilder::plate(const Value *pl, SourceRange where) {
  auto it = plates_.find(pl);
  if (it != plates_.end())
    return &it->second;
  PlateInfo info;
  auto known = ev_.plateSizes.find(pl);
  auto bound = data_.plates.find(pl);
  if (known != ev_.plateSizes.end()) {
    info.size = known->second;
  } else if (bound != data_.plates.end() && pl->dims.empty()) {
    info.size = bound->second.sizes.empty() ? 0 : bound->second.sizes[0];
  } else if (bound != data_.plates.end()) {
    info.ragged = true;
    info.sizes = addBuffer("sizes." + pl->name, true, int64_t(bound->second.sizes.size()));
    p_.buffers[info.sizes].ints = bound->second.sizes;
    info.offsets = addBuffer("offsets." + pl->name, true, int64_t(bound->second.offsets.size()));
    p_.buffers[info.offsets].ints = bound->second.offsets;
    info.total = bound->second.flattened();
  } else if (std::optional<int64_t> lo = plateLowerBound(pl), hi = plateUpperBound(pl); lo && hi) {
    // A plate the passes made after the parameters were evaluated (the gate
    // pass's loop over the cases after those a `match` lists): its bounds
    // are parameters or constants.
    info.size = std::max<int64_t>(0, *hi - *lo + (pl->def->plateKind == Op::PlateKind::To ? 1 : 0));
  } else {
    fail(where, "plate %" + pl->name + " has no size: no data file gives its elements");
    return nullptr;
  }
  return &plates_.emplace(pl, info).first->second;
}

/// Elements of an array over `dims` (flattened); of a scratch posterior,
/// the rows of the largest element.
int64_t PlanBuilder::elementCount(const std::vector<Value *> &dims, SourceRange where, bool scratch) {
  if (scratch) {
    const PlateInfo *pi = plate(dims[1], where);
    if (!pi)
      return 0;
    if (!pi->ragged)
      return pi->size;
    const std::vector<int64_t> &sizes = p_.buffers[pi->sizes].ints;
    return sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
  }
  int64_t n = 1;
  for (const Value *d : dims) {
    const PlateInfo *pi = plate(d, where);
    if (!pi)
      return 0;
    n = pi->ragged ? pi->total : n * pi->size;
  }
  return n;
}

ExprId PlanBuilder::indexExpr(const Operand &o, const Env &env, SourceRange where) {
  if (o.kind == Operand::Kind::Int)
    return p_.intConst(o.intValue);
  if (o.isValue()) {
    auto it = env.find(o.value);
    if (it != env.end())
      return it->second;
    if (ir::isKnownInput(o.value)) // an id read from the data, checked against the plate when bound
      return p_.loadInt(dataBuffer(o.value, Data::Int), flatIndex(o.value->dims, o.indices, env, where));
  }
  fail(where, "cannot generate code for the index " + ir::toString(o));
  return p_.intConst(0);
}

/// Bound `which` (0: lo, 1: hi) of a known plate `lo until hi`, if known.
std::optional<int64_t> PlanBuilder::plateBound(const Value *plate, size_t which) const {
  const Op *def = plate->def;
  if (!def || def->kind != OpKind::Plate || def->plateKind == Op::PlateKind::Data || def->operands.size() != 2)
    return std::nullopt;
  const Operand &b = def->operands[which];
  if (b.isLiteral())
    return int64_t(b.literal());
  if (b.isValue() && b.indices.empty())
    if (std::optional<double> v = ev_.valueOf(b.value))
      return int64_t(*v);
  return std::nullopt;
}

ExprId PlanBuilder::caseExpr(const Operand &o, const Env &env, SourceRange where) {
  ExprId k = indexExpr(o, env, where);
  if (!o.isValue() || !o.value->isLoopIndex() || o.value->loop->operands.empty())
    return k;
  const std::optional<int64_t> lo = plateLowerBound(o.value->loop->operands[0].value);
  return lo && *lo != 0 ? p_.add(k, p_.intConst(*lo)) : k;
}

/// The flat element of `v[idx...]`; of a scratch posterior, the row
/// within the current element.
ExprId PlanBuilder::flatIndex(const std::vector<Value *> &dims, const std::vector<Operand> &idx, const Env &env,
                 SourceRange where, bool scratch) {
  if (scratch) {
    if (idx.size() != 2) {
      fail(where, "internal: a scratch posterior indexed with " + std::to_string(idx.size()) + " indices");
      return p_.intConst(0);
    }
    return indexExpr(idx[1], env, where);
  }
  ExprId f = p_.intConst(0);
  const bool whole = idx.size() + 1 == dims.size() && wholePlates_.count(dims.back());
  for (size_t j = 0; j < dims.size() && (j < idx.size() || whole); ++j) {
    const PlateInfo *pi = plate(dims[j], where);
    if (!pi)
      return f;
    ExprId i = j < idx.size() ? indexExpr(idx[j], env, where) : p_.intConst(0);
    if (pi->ragged) {
      if (dims[j]->dims.size() != j) {
        fail(where, "internal: plate %" + dims[j]->name + " is not nested in the plates before it");
        return f;
      }
      f = p_.add(p_.loadInt(pi->offsets, f), i);
    } else {
      f = p_.add(p_.mul(f, p_.intConst(pi->size)), i);
    }
  }
  if (idx.size() != dims.size() && !whole)
    fail(where, "internal: an array over " + std::to_string(dims.size()) + " plates used with " +
                    std::to_string(idx.size()) + " indices");
  return f;
}

/// The number of iterations of `for %i in %P[idx]`.
ExprId PlanBuilder::loopBound(const Op &loop, const Env &env) {
  const Operand &pl = loop.operands[0];
  const PlateInfo *pi = plate(pl.value, loop.loc);
  if (!pi)
    return p_.intConst(0);
  if (!pi->ragged)
    return p_.intConst(pi->size);
  return p_.loadInt(pi->sizes, flatIndex(pl.value->dims, pl.indices, env, loop.loc));
}

Stmt PlanBuilder::plateLoop(const Op &loop, const Env &env, Env &inner) {
  Stmt s;
  s.kind = Stmt::Kind::Loop;
  s.var = newVar();
  s.bound = loopBound(loop, env);
  s.plate = loop.operands[0].value;
  inner = env;
  inner[loop.index] = p_.loopVar(s.var);
  return s;
}

void PlanBuilder::collectGated(const Region &r) {
  ir::walk(r, [&](const Op &op) {
    if (op.kind == OpKind::GateExit)
      for (size_t i = 1; i < op.operands.size(); ++i)
        exitOf_[op.operands[i].value] = &op;
  });
}

void PlanBuilder::collectPosteriors() {
  const auto breakers = ir::productSymmetryBreakers(m_.body);
  ir::walk(*m_.messages, [&](const Op &op) {
    if (op.kind != OpKind::Marginal || op.backward || !ok_)
      return;
    const Value *var = op.operands[0].value;
    const Value *q = op.result();
    Posterior post;
    post.variable = var;
    auto fam = ir::familyOf(var);
    if (!fam) {
      fail(op.loc, "internal: %" + var->name + " has no family");
      return;
    }
    post.family = *fam;
    if (var->type.hasDim())
      post.dimension = dimValue(var->type.dim, op.loc);
    if (post.family == Family::Beta)
      post.dimension = 2;
    post.width = factorEntry(post.family).width(post.dimension);
    if (post.width == 0) {
      fail(op.loc, "the code generator does not support " + std::string(familySpec(post.family).spelling.empty()
                                                                              ? "this family"
                                                                              : familySpec(post.family).spelling) +
                       " posteriors yet");
      return;
    }
    post.scratch = scratchDims(var, q->dims);
    post.elements = elementCount(q->dims, op.loc, post.scratch);
    post.flatElements = post.scratch ? elementCount(q->dims, op.loc) : post.elements;
    post.partitioned = partitioned_ && !q->dims.empty() && q->dims.front() == partitioned_;
    post.userInit = userInitialized_.count(var->name) != 0;
    post.given = op.given;
    post.randomInit = randomInit_ && breakers.count(var) && !post.userInit && !post.given;
    if (post.width > (int64_t(1) << 20)) {
      // A posterior of over a million numbers an element (a huge -p): its
      // memory checked before its output's column names are built (a
      // Dirichlet of dimension 10^8 would take gigabytes for its names
      // alone). planMemoryProblem checks the whole plan afterwards.
      const std::string problem = rt::memoryProblem(
          rt::multiplyBytes(uint64_t(std::max<int64_t>(post.elements, 0)), uint64_t(post.width) * 16));
      if (!problem.empty()) {
        fail(op.loc, "the posterior of %" + var->name + " (" + std::to_string(post.elements) + " elements of " +
                         std::to_string(post.width) + " numbers) " + problem + "; choose smaller sizes or less data");
        return;
      }
    }
    if (!post.scratch) {
      std::vector<std::string> columns = factorEntry(post.family).outputColumns(post.dimension);
      for (std::string &c : factorEntry(post.family).summaryColumns(post.dimension))
        columns.push_back(std::move(c));
      post.rowDims = rowDims(q->dims, op.loc, columns);
    }
    if (post.userInit || post.given)
      computed_.insert(int(p_.posteriors.size()));
    post.eta = addBuffer(q->name + ".eta", false, post.elements * post.width);
    post.stats = addBuffer(q->name + ".stats", false, post.elements * post.width);
    posteriorOfQ_[q] = int(p_.posteriors.size());
    posteriorOfVar_[var] = int(p_.posteriors.size());
    p_.posteriors.push_back(post);
  });
  // A deterministic value's `marginal.back` writes the natural parameters of
  // the same posterior (its statistics are the forward marginal's).
  ir::walk(*m_.messages, [&](const Op &op) {
    if (op.kind != OpKind::Marginal || !op.backward)
      return;
    auto it = posteriorOfVar_.find(op.operands[0].value);
    if (it == posteriorOfVar_.end()) {
      fail(op.loc, "internal: a backward marginal without its forward marginal");
      return;
    }
    posteriorOfQ_[op.result()] = it->second;
  });
  // Accumulators: one per message statement, shaped like its target.
  ir::walk(*m_.messages, [&](const Op &op) {
    if (op.kind != OpKind::Msg || !op.target)
      return;
    auto it = posteriorOfQ_.find(op.target->value);
    if (it == posteriorOfQ_.end()) {
      fail(op.loc, "internal: message to a value without a posterior");
      return;
    }
    const Posterior &post = p_.posteriors[it->second];
    accOf_[op.result()] = addBuffer(op.result()->name, false, post.elements * post.width);
    if (op.evidence && randomInit_ && !p_.posteriors[it->second].userInit)
      p_.posteriors[it->second].randomInit = true;
  });
  // A condition the init schedule computes before anything reads it (a
  // warm start computes the token topics from the user's posteriors,
  // passes/Scheduler.cpp) is not drawn at random.
  if (m_.initSchedule) {
    std::set<const Value *> read;
    ir::walk(*m_.initSchedule, [&](const Op &u) {
      if (u.kind != OpKind::Update)
        return;
      const Op &stmt = *u.operands[0].value->def;
      if (stmt.kind == OpKind::Marginal && !read.count(stmt.result()))
        if (auto it = posteriorOfQ_.find(stmt.result()); it != posteriorOfQ_.end())
          p_.posteriors[size_t(it->second)].randomInit = false;
      if (stmt.kind == OpKind::Msg)
        ir::anyMessageInput(stmt, [&](const ir::Operand &o) {
          if (o.isValue())
            read.insert(o.value);
          return false;
        });
    });
  }
}

std::vector<Posterior::RowDim> PlanBuilder::rowDims(const std::vector<Value *> &dims, SourceRange where,
                                                    const std::vector<std::string> &reserved) {
  std::vector<Posterior::RowDim> out;
  std::set<std::string> taken(reserved.begin(), reserved.end());
  for (const Value *d : dims) {
    Posterior::RowDim rd;
    auto bound = data_.plates.find(d);
    if (bound != data_.plates.end() && !bound->second.column.empty()) {
      rd.name = bound->second.column;
    } else {
      // %P.theta -> theta; a plate named by a number (0 until 2) -> index
      rd.name = d->name.rfind("P.", 0) == 0 ? d->name.substr(2) : d->name;
      if (rd.name.empty() || !(std::isalpha(static_cast<unsigned char>(rd.name[0])) || rd.name[0] == '_'))
        rd.name = "index";
    }
    const std::string base = rd.name;
    for (int n = 2; taken.count(rd.name); ++n)
      rd.name = base + "_" + std::to_string(n);
    taken.insert(rd.name);
    const PlateInfo *pi = plate(d, where);
    if (!pi)
      return out;
    rd.size = pi->size;
    rd.sizes = pi->ragged ? pi->sizes : -1;
    out.push_back(std::move(rd));
  }
  return out;
}

int64_t PlanBuilder::dimValue(const ir::Dim &d, SourceRange where) {
  if (d.isConstant())
    return d.constant;
  if (auto v = ev_.valueOf(d.value))
    return int64_t(*v);
  fail(where, "the dimension %" + d.value->name + " has no value");
  return 1;
}

int32_t PlanBuilder::pointMassBuffer(const Value *v, Family parent, int64_t dimension, int64_t &width) {
  auto key = std::make_pair(v, parent);
  auto it = pointMassBuffers_.find(key);
  if (it != pointMassBuffers_.end()) {
    width = it->second.second;
    return it->second.first;
  }
  const rt::BoundVariable &bv = data_.variables.at(v);
  const FactorEntry &entry = factorEntry(parent);
  width = entry.width(dimension);
  int32_t b = addBuffer("data." + v->name + ".stats." + std::string(familySpec(parent).irName), false,
                        int64_t(bv.values.size()) * width);
  std::vector<double> &out = p_.buffers[b].doubles;
  if (v->type.kind == ir::TypeKind::Vector) { // `dimension` values per element
    const size_t elements = bv.values.size() / size_t(std::max<int64_t>(dimension, 1));
    p_.buffers[b].size = int64_t(elements) * width;
    out.reserve(size_t(p_.buffers[b].size));
    for (size_t e = 0; e < elements; ++e) {
      std::vector<double> row = vectorPointMass(parent, bv.values.data() + e * size_t(dimension), dimension);
      out.insert(out.end(), row.begin(), row.end());
    }
  } else {
    out.reserve(size_t(int64_t(bv.values.size()) * width));
    for (double x : bv.values) {
      std::vector<double> row = entry.pointMass(x, dimension);
      out.insert(out.end(), row.begin(), row.end());
    }
  }
  pointMassBuffers_[key] = {b, width};
  return b;
}

int32_t PlanBuilder::dataBuffer(const Value *v, Data kind) {
  auto key = std::make_pair(v, int(kind));
  auto it = dataBuffers_.find(key);
  if (it != dataBuffers_.end())
    return it->second;
  const rt::BoundVariable &bv = data_.variables.at(v);
  int32_t b = -1;
  switch (kind) {
  case Data::Double:
    b = addBuffer("data." + v->name, false, int64_t(bv.values.size()));
    p_.buffers[b].doubles = bv.values;
    break;
  case Data::Int:
    b = addBuffer("data." + v->name + ".int", true, int64_t(bv.values.size()));
    p_.buffers[b].ints.reserve(bv.values.size());
    for (double x : bv.values)
      p_.buffers[b].ints.push_back(static_cast<int64_t>(x));
    break;
  case Data::Weight:
    b = addBuffer("data." + v->name + ".weight", false, int64_t(bv.weights.size()));
    p_.buffers[b].doubles = bv.weights;
    break;
  case Data::Observed: // 1, or 0 where the value is missing
    b = addBuffer("data." + v->name + ".observed", false, int64_t(bv.values.size()));
    p_.buffers[b].doubles.assign(bv.values.size(), 1.0);
    for (int64_t e : bv.missing)
      p_.buffers[b].doubles[size_t(e)] = 0.0;
    break;
  }
  dataBuffers_[key] = b;
  return b;
}

} // namespace ppc::codegen::lowering
