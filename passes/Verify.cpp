//===- passes/Verify.cpp - the verifier as a pass --------------------------===//
#include "passes/Passes.h"

#include "ir/Verifier.h"

namespace ppc::passes {
namespace {
class VerifyPass : public Pass {
public:
  std::string_view name() const override { return "verify"; }
  bool preservesAnalyses() const override { return true; }
  bool run(ir::Module &m, PassContext &ctx) override { return ir::verify(m, ctx.diags); }
};
} // namespace

std::unique_ptr<Pass> createVerifyPass() { return std::make_unique<VerifyPass>(); }
} // namespace ppc::passes
