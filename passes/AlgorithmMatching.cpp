//===- passes/AlgorithmMatching.cpp - is the model in VMP's reach? ---------===//
//
// InferSpark's algorithm matching (seed 003): VMP applies when every factor
// argument that is a random variable comes from a conjugate family, i.e. the
// operator catalogue has a message operator for that edge in both
// directions, and when the model's conditionals have a VMP form. Otherwise a
// compile error names the factor, the argument and what would be accepted.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "runtime/Catalogue.h"
#include "ir/Printer.h"

namespace ppc::passes {
namespace {

/// Whether some kernel of `family`'s factor takes argument `arg` as one
/// constant (calling-pattern tokens C and A: runtime/Catalogue.h), which a
/// value per element cannot be.
bool readsAsCompileTimeConstant(Family family, size_t arg) {
  const FactorOperators &ops = factorOperators(family);
  std::vector<std::string_view> kernels{ops.elboKernel, ops.observedElboKernel};
  for (const MessageOperator &mo : ops.toArgument) {
    kernels.push_back(mo.kernel);
    kernels.push_back(mo.observedKernel);
  }
  for (std::string_view k : kernels) {
    if (k.empty())
      continue;
    std::string_view pattern = callingPattern(k);
    for (size_t i = 0; i + 1 < pattern.size(); ++i)
      if ((pattern[i] == 'C' || pattern[i] == 'A') && (i == 0 || pattern[i - 1] == ' ') &&
          size_t(pattern[i + 1] - '0') == arg)
        return true;
  }
  return false;
}

class MatchPass : public Pass {
public:
  std::string_view name() const override { return "match"; }
  bool preservesAnalyses() const override { return true; }

  bool run(ir::Module &m, PassContext &ctx) override {
    bool ok = true;
    auto fail = [&](SourceRange where, const std::string &msg) {
      ctx.diags.error(where, msg);
      ok = false;
    };
    ir::walk(m.body, [&](ir::Op &op) {
      if (op.kind == ir::OpKind::GateExit && !op.observed) {
        // Used after the conditional, a merged latent variable needs an Exit
        // operator that ppc's VMP does not have yet.
        auto merged = op.operands.size() > 1 && op.operands[1].isValue() ? ir::familyOf(op.operands[1].value)
                                                                         : std::nullopt;
        if (merged && isDeterministicFamily(*merged)) {
          fail(op.loc, "arithmetic on a variable chosen by a random switch (a Categorical or Bernoulli index, as in "
                       "a(z(i)) + b) is not supported by ppc's VMP yet: the " +
                           displayName(*merged) +
                           " would have to leave the switch's cases; accepted: arithmetic on variables indexed by "
                           "plate indices (a(k) inside k's map), by ids read from the data (g = n.map(_ => Data); "
                           "a(g(i)) + b) and on globals");
          return;
        }
        // Name the variable and its switch (%m = gate.exit(%z.cases, ...),
        // %z.cases = gate.cases(%z)) for the rewrite that is accepted.
        std::string var = op.result() ? op.result()->name : "it", sw = "z";
        if (!op.operands.empty() && op.operands[0].isValue() && op.operands[0].value->def) {
          const ir::Op &cases = *op.operands[0].value->def;
          if (!cases.operands.empty() && cases.operands[0].isValue())
            sw = cases.operands[0].value->name;
        }
        fail(op.loc, "'" + var + "' is latent and depends on which case of '" + sw +
                         "' holds (a parent indexed by it, such as a(" + sw +
                         "), or one per branch of an if), and it is used after the cases: ppc's VMP has no operator "
                         "for a latent variable leaving a switch (a gate exit); write it and what reads it inside a "
                         "match on the switch, " +
                         sw + " match { case _ => { val " + var + " = ...; ... } }, or observe it");
        return;
      }
      if (!op.isRandom())
        return;
      const FamilySpec &spec = familySpec(op.family);
      const std::string name = displayName(op.family);
      const FactorOperators &ops = factorOperators(op.family);
      if (!op.observed && !ops.toArgument[0].exists()) {
        fail(op.loc, "a " + std::string(spec.spelling) + " variable must be observed: the operator catalogue has no "
                         "posterior for a latent " + std::string(spec.spelling) +
                         " (define it in a data-sized plate, ?.map, with nothing depending on it, and bind it to a "
                         "column)");
        return;
      }
      if (op.family == Family::MvGaussianChain && op.operands.size() == spec.params.size()) {
        // The rows of a learnt transition matrix are updated together, from
        // one message each; with a full E Q those messages couple the rows,
        // and a joint step is not coordinate ascent (the ELBO may drop).
        const ir::Operand &A = op.operands[2], &Q = op.operands[3];
        auto learnt = [](const ir::Operand &o) {
          return o.isValue() && o.value->type.isRandom() && !ir::isKnownInput(o.value) && o.value->def &&
                 !o.value->def->given;
        };
        const bool rows = A.isValue() && !A.value->dims.empty(); // (vec(A) as one MvGaussian is updated jointly)
        if (learnt(A) && rows && Q.isValue() && Q.value->type.isRandom())
          fail(op.operandLoc(2), "a chain of vectors whose transition matrix '" + A.value->name +
                                     "' is learnt row by row needs a constant transition precision (c, the matrix c "
                                     "I): VMP updates the rows of '" + A.value->name + "' together, which the Wishart '" +
                                     Q.value->name + "' would couple; learn the matrix as one MvGaussian of dimension "
                                     "D * D (vec(A), row by row: MvGaussian(0.0, 1.0, D * D)), give the precision as a "
                                     "constant, the matrix as known rows ((0L until D).map(_ => Data(D))), or hold it "
                                     "with --given");
      }
      for (size_t i = 0; i < op.operands.size() && (i < spec.params.size() || spec.variadic); ++i) {
        const ir::Operand &o = op.operands[i];
        if (o.isValue() && ir::isKnownInput(o.value)) {
          if (readsAsCompileTimeConstant(op.family, i + 1))
            fail(op.operandLoc(i), "the operator catalogue reads " + name + "'s " +
                                       std::string(paramOf(spec, i).name) +
                                       " as one constant for every element, so it cannot be the Data input '" +
                                       o.value->name + "'; give a constant there");
          continue;
        }
        if (!o.isValue() || !o.value->type.isRandom())
          continue; // constants
        const ParamSpec &p = paramOf(spec, i);
        auto fam = ir::familyOf(o.value);
        bool conjugate = false;
        for (Family f : p.parents)
          conjugate = conjugate || (fam && *fam == f);
        std::string what = name + " " + std::string(p.name);
        if (!conjugate) {
          fail(op.operandLoc(i), what + " must be " + describeAccepted(p) + "; got " +
                                     (fam ? displayName(*fam) : ir::toString(o)) +
                                     " (no VMP operator for this edge)");
          continue;
        }
        const MessageOperator &toParam = ops.toArgument[std::min(i + 1, ops.toArgument.size() - 1)];
        bool latentParam = o.value->def && !o.value->def->observed;
        if (latentParam && !(op.observed ? !toParam.observedKernel.empty() || !toParam.kernel.empty()
                                         : !toParam.kernel.empty()))
          fail(op.operandLoc(i), "the operator catalogue has no message from " + name +
                                     " to its " + std::string(p.name));
      }
    });
    return ok;
  }
};

} // namespace

std::unique_ptr<Pass> createMatchPass() { return std::make_unique<MatchPass>(); }

} // namespace ppc::passes
