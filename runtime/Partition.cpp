//===- runtime/Partition.cpp - the plate a data-parallel run splits -------===//
//
// A data-parallel run (docs/distributed.md) splits the model's one
// data-sized plate at the top level between processes; each binds its part
// of the file (runtime/Binding.cpp). A Markov chain over that plate would be
// cut between processes, so it is refused: sequences nested in an outer
// plate are split whole.
//
//===----------------------------------------------------------------------===//
#include "runtime/Binding.h"

#include "ir/IR.h"

namespace ppc::rt {

const ir::Value *partitionPlate(const ir::Module &m, std::string &error, bool stochastic) {
  const std::string run = stochastic ? "a stochastic run (--svi)" : "a data-parallel run";
  const std::string cuts = stochastic ? " reads in batches" : " splits";
  std::vector<const ir::Value *> top;
  for (const auto &op : m.body.ops)
    if (op->kind == ir::OpKind::Plate && op->plateKind == ir::Op::PlateKind::Data && op->result()->dims.empty())
      top.push_back(op->result());
  if (top.size() == 1) {
    // A chain's elements depend on each other in order: a process holds whole chains.
    bool chainPlate = false;
    ir::walk(m.body, [&](const ir::Op &op) {
      chainPlate = chainPlate || (op.kind == ir::OpKind::Random && isChainFamily(op.family) &&
                                  op.result()->dims.size() == 1 && op.result()->dims[0] == top.front());
    });
    if (!chainPlate)
      return top.front();
    error = run + (stochastic ? " would cut" : " would split") + " the Markov chain over %" + top.front()->name +
            (stochastic ? " into batches" : " between processes") +
            "; give each " + (stochastic ? "batch" : "process") + " whole sequences (?.map(_ => ?.chain(...)(...)), a chain per "
            "element of the outer plate)" + (stochastic ? "" : ", or run one process");
    return nullptr;
  }
  if (top.empty())
    error = run + cuts + " the model's data-sized plate (?.map) at the top level, and this model has none";
  else
    error = run + cuts + " one data-sized plate at the top level, and this model has " + std::to_string(top.size()) +
            " (%" + top[0]->name + ", %" + top[1]->name + ")";
  return nullptr;
}

} // namespace ppc::rt
