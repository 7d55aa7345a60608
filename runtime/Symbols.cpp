//===- runtime/Symbols.cpp - the runtime's kernels by name -----------------===//
//
// The JIT resolves calls from generated code through this table, and the
// interpreter calls kernels through it. It is gathered once from the lists
// the catalogue's files keep beside their kernels (runtime/Catalogue.cpp);
// a test checks that every kernel the headers declare is in it.
//
//===----------------------------------------------------------------------===//
#include "runtime/Symbols.h"

#include "runtime/Catalogue.h"
#include "runtime/VectorIsa.h"

#include <algorithm>
#include <vector>

namespace ppc::rt {
namespace {

struct Table {
  std::vector<RuntimeSymbol> symbols;         ///< families' kernels, then the groups'
  std::vector<const RuntimeSymbol *> byName;  ///< sorted by name
  Table() {
    for (const FamilySpec &f : allFamilies())
      for (const RuntimeSymbol &s : factorEntry(f.family).symbols)
        symbols.push_back(s);
    for (const KernelGroup *g : kernelGroups())
      for (const RuntimeSymbol &s : g->symbols)
        symbols.push_back(s);
    // A choice made before the table existed (ppc --cpu).
    if (vectorIsaOverridden())
      for (RuntimeSymbol &s : symbols)
        if (s.clones[int(vectorIsa())])
          s.address = s.clones[int(vectorIsa())];
    for (const RuntimeSymbol &s : symbols)
      byName.push_back(&s);
    std::sort(byName.begin(), byName.end(),
              [](const RuntimeSymbol *a, const RuntimeSymbol *b) { return a->name < b->name; });
  }
};

Table &table() {
  static Table t;
  return t;
}

} // namespace

std::span<const RuntimeSymbol> runtimeSymbols() { return table().symbols; }

void *findRuntimeSymbol(std::string_view name) {
  const RuntimeSymbol *s = findRuntimeKernel(name);
  return s ? s->address : nullptr;
}

void selectKernelClones(VectorIsa isa) {
  for (RuntimeSymbol &s : table().symbols)
    if (s.clones[int(isa)])
      s.address = s.clones[int(isa)];
}

const RuntimeSymbol *findRuntimeKernel(std::string_view name) {
  const std::vector<const RuntimeSymbol *> &byName = table().byName;
  auto it = std::lower_bound(byName.begin(), byName.end(), name,
                             [](const RuntimeSymbol *s, std::string_view n) { return s->name < n; });
  return it != byName.end() && (*it)->name == name ? *it : nullptr;
}

} // namespace ppc::rt
