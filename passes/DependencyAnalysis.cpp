//===- passes/DependencyAnalysis.cpp - statement dependencies (seed 000) ---===//
#include "passes/DependencyAnalysis.h"

#include "ir/Diagnostics.h"
#include "ir/IR.h"

#include <functional>
#include <llvm/Support/raw_ostream.h>
#include <map>

namespace ppc::passes {

std::string DependencyGraph::name(unsigned s) const { return "%" + values[s]->name; }

bool DependencyGraph::isMarginal(unsigned s) const { return stmts[s]->kind == ir::OpKind::Marginal; }

namespace {

// Reports the first cycle among edges of `kind`, if any.
bool findCycle(const DependencyGraph &g, DepKind kind, DiagnosticEngine &diags) {
  size_t n = g.stmts.size();
  std::vector<int> state(n, 0); // 0 new, 1 on stack, 2 done
  std::vector<unsigned> stack;
  std::function<bool(unsigned)> dfs = [&](unsigned v) {
    state[v] = 1;
    stack.push_back(v);
    for (unsigned e : g.targets[v]) {
      if (g.edges[e].kind != kind)
        continue;
      unsigned w = g.edges[e].to;
      if (state[w] == 1) {
        std::string cycle;
        auto it = std::find(stack.begin(), stack.end(), w);
        for (; it != stack.end(); ++it)
          cycle += g.name(*it) + " -> ";
        cycle += g.name(w);
        diags.error(g.stmts[w]->loc, "prohibited cycle of " + std::string(depKindName(kind)) +
                                         " dependencies: " + cycle);
        return true;
      }
      if (state[w] == 0 && dfs(w))
        return true;
    }
    stack.pop_back();
    state[v] = 2;
    return false;
  };
  for (unsigned v = 0; v < n; ++v)
    if (state[v] == 0 && dfs(v))
      return true;
  return false;
}

} // namespace

const char DependencyAnalysis::ID = 0;

std::unique_ptr<DependencyGraph> DependencyAnalysis::run(ir::Module &m, DiagnosticEngine &diags) {
  auto g = std::make_unique<DependencyGraph>();
  if (!analyzeDependencies(m, *g, diags))
    return nullptr;
  return g;
}

bool analyzeDependencies(const ir::Module &m, DependencyGraph &g, DiagnosticEngine &diags) {
  g = DependencyGraph();
  if (!m.messages) {
    diags.error("dependency analysis needs message statements (run the 'messages' pass first)");
    return false;
  }
  std::map<const ir::Value *, unsigned> definedBy;
  ir::walk(*m.messages, [&](ir::Op &op) {
    if (op.kind != ir::OpKind::Msg && op.kind != ir::OpKind::Marginal)
      return;
    definedBy[op.result()] = g.stmts.size();
    g.stmts.push_back(&op);
    g.values.push_back(op.result());
  });
  size_t n = g.stmts.size();
  g.sources.assign(n, {});
  g.targets.assign(n, {});
  auto addEdge = [&](unsigned from, unsigned to, DepKind kind) {
    for (unsigned e : g.sources[to])
      if (g.edges[e].from == from) {
        // One edge per pair: the strongest annotation wins.
        if (kind != DepKind::Plain)
          g.edges[e].kind = kind;
        return;
      }
    g.sources[to].push_back(g.edges.size());
    g.targets[from].push_back(g.edges.size());
    g.edges.push_back({from, to, kind});
  };
  for (unsigned b = 0; b < n; ++b) {
    const ir::Op &op = *g.stmts[b];
    size_t first = op.kind == ir::OpKind::Marginal ? 1 : 0;
    for (size_t i = first; i < op.operands.size(); ++i) {
      const ir::Operand &o = op.operands[i];
      if (!o.isValue())
        continue;
      auto it = definedBy.find(o.value);
      if (it != definedBy.end())
        addEdge(it->second, b, i < op.deps.size() ? op.deps[i] : DepKind::Plain);
    }
    for (const auto &[cond, which] : op.gates) {
      auto it = definedBy.find(cond.value);
      if (it != definedBy.end())
        addEdge(it->second, b, DepKind::Plain);
    }
  }
  // Loop-invariant statements: no path from any marginal. A given marginal
  // (--given) never changes, so it is invariant itself (never updated), but
  // what reads it is not: a message over the tokens of a nested schedule's
  // element must be recomputed with the element, whose rows are the only
  // ones kept (codegen/plan/Layout.cpp's scratch posteriors).
  g.invariant.assign(n, true);
  std::vector<unsigned> work;
  for (unsigned s = 0; s < n; ++s)
    if (g.isMarginal(s)) {
      g.invariant[s] = g.stmts[s]->given;
      work.push_back(s);
    }
  while (!work.empty()) {
    unsigned v = work.back();
    work.pop_back();
    for (unsigned e : g.targets[v])
      if (g.invariant[g.edges[e].to]) {
        g.invariant[g.edges[e].to] = false;
        work.push_back(g.edges[e].to);
      }
  }
  bool cyclic = false;
  for (DepKind k : {DepKind::Required, DepKind::Trigger, DepKind::Fresh})
    cyclic = findCycle(g, k, diags) || cyclic;
  return !cyclic;
}

std::unique_ptr<ir::Op> makeUpdate(const ir::Op &stmt, ir::Region *parent) {
  auto u = std::make_unique<ir::Op>();
  u->kind = ir::OpKind::Update;
  u->loc = stmt.loc;
  u->parentRegion = parent;
  u->operands.push_back(ir::Operand::ofValue(stmt.result()));
  return u;
}

std::unique_ptr<ir::Region> makeUpdates(const DependencyGraph &g, const std::vector<unsigned> &list) {
  auto r = std::make_unique<ir::Region>();
  for (unsigned v : list)
    r->ops.push_back(makeUpdate(*g.stmts[v], r.get()));
  return r;
}

void computeFinalSchedule(ir::Module &m, const DependencyGraph &g) {
  std::map<const ir::Value *, unsigned> index;
  for (unsigned s = 0; s < g.values.size(); ++s)
    index[g.values[s]] = s;
  std::vector<bool> valid(g.stmts.size(), true);
  // Nested blocks run in order; a local sweep's statements count once.
  ir::walk(*m.iterationSchedule, [&](ir::Op &op) {
    if (op.kind != ir::OpKind::Update)
      return;
    unsigned v = index.at(op.operands[0].value);
    valid[v] = true;
    for (unsigned e : g.targets[v])
      if (g.edges[e].kind == DepKind::Trigger)
        valid[g.edges[e].to] = false;
  });
  std::vector<unsigned> stale;
  for (unsigned s = 0; s < g.stmts.size(); ++s)
    if (g.isMarginal(s) && !valid[s])
      stale.push_back(s);
  m.finalSchedule = makeUpdates(g, stale);
}

void printDependencies(const DependencyGraph &g, llvm::raw_ostream &os) {
  for (unsigned s = 0; s < g.stmts.size(); ++s) {
    const ir::Op &op = *g.stmts[s];
    os << g.name(s) << " = ";
    if (op.kind == ir::OpKind::Marginal)
      os << "marginal";
    else
      os << (op.evidence ? "evidence " : "msg ") << op.kernel;
    if (g.invariant[s])
      os << " (loop-invariant)";
    os << "\n";
    for (DepKind k : {DepKind::Plain, DepKind::Required, DepKind::Trigger, DepKind::Fresh}) {
      std::string line;
      for (unsigned e : g.sources[s])
        if (g.edges[e].kind == k)
          line += " " + g.name(g.edges[e].from);
      if (line.empty())
        continue;
      const char *label = k == DepKind::Plain      ? "declaration:"
                          : k == DepKind::Required ? "required:"
                          : k == DepKind::Trigger  ? "trigger:"
                                                   : "fresh:";
      os << "  " << label << line << "\n";
    }
  }
}

void printDependenciesDot(const DependencyGraph &g, llvm::raw_ostream &os) {
  os << "digraph dependencies {\n";
  os << "  node [shape=box, fontname=\"monospace\"];\n";
  for (unsigned s = 0; s < g.stmts.size(); ++s)
    os << "  s" << s << " [label=\"" << g.name(s) << "\""
       << (g.isMarginal(s) ? ", style=bold" : "") << (g.invariant[s] ? ", color=gray" : "") << "];\n";
  for (const DepEdge &e : g.edges) {
    os << "  s" << e.from << " -> s" << e.to;
    switch (e.kind) {
    case DepKind::Plain: os << " [style=dashed]"; break;
    case DepKind::Required: os << " [label=\"required\", color=blue]"; break;
    case DepKind::Trigger: os << " [label=\"trigger\", color=red]"; break;
    case DepKind::Fresh: os << " [label=\"fresh\", color=darkgreen]"; break;
    }
    os << ";\n";
  }
  os << "}\n";
}

} // namespace ppc::passes
