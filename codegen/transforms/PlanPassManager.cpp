#include "codegen/transforms/PlanPassManager.h"

#include "codegen/plan/Plan.h"
#include "ir/Diagnostics.h"

#include <algorithm>
#include <chrono>
#include <llvm/Support/raw_ostream.h>

namespace ppc::codegen {

namespace {
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
} // namespace

std::string defaultPlanPipeline() {
  std::string out;
  for (const PlanPassInfo &p : registeredPlanPasses())
    out += (out.empty() ? "" : ",") + std::string(p.name);
  return out;
}

std::vector<std::string_view> planPassNames() {
  std::vector<std::string_view> names = {kLoweringStep};
  for (const PlanPassInfo &p : registeredPlanPasses())
    names.push_back(p.name);
  return names;
}

bool PlanPassManager::addPipeline(std::string_view pipeline, std::string &error) {
  std::vector<std::string_view> known;
  for (const PlanPassInfo &p : registeredPlanPasses())
    known.push_back(p.name);
  std::vector<std::string> names;
  if (!passes::splitPipeline(pipeline, known, "plan transformation", names, error))
    return false;
  for (const std::string &name : names)
    for (const PlanPassInfo &p : registeredPlanPasses())
      if (p.name == name)
        addPass(p);
  return true;
}

bool PlanPassManager::afterStep(std::string_view name, Plan &p, llvm::raw_ostream &dumpOS, std::string &error) {
  if (instrumentation_.options().verifyEach && !verifyPlan(p, error)) {
    error = "the plan is invalid after '" + std::string(name) + "': " + error;
    return false;
  }
  if (instrumentation_.printsAfter(name)) {
    dumpOS << "// *** Plan Dump After " << name << " ***\n" << printPlan(p);
    dumpOS.flush();
  }
  return true;
}

bool PlanPassManager::run(Plan &p, llvm::raw_ostream &dumpOS, std::string &error) {
  for (const PlanPassInfo *pass : passes_) {
    auto start = std::chrono::steady_clock::now();
    const int changed = pass->run(p);
    instrumentation_.addTime(pass->name, secondsSince(start),
                             std::to_string(changed) + (changed == 1 ? " change" : " changes"));
    if (!afterStep(pass->name, p, dumpOS, error))
      return false;
  }
  return true;
}

bool PlanOptions::disable(const std::string &name) {
  if (name == "share-lgamma") // its name when it shared only a Dirichlet's lgammas
    return disable("share-entropy");
  if (name == "product-form") {
    lowering.productForm = false;
    return true;
  }
  for (const PlanPassInfo &p : registeredPlanPasses())
    if (p.name == name) {
      disabled.insert(name);
      return true;
    }
  return false;
}

std::string PlanOptions::names() {
  std::string out;
  for (const auto *list : {&loweringChoices(), &registeredPlanPasses()})
    for (const PlanPassInfo &p : *list)
      out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

std::unique_ptr<Plan> buildPlan(const ir::Module &m, const ir::Evaluation &eval, const rt::BoundData &data,
                                bool randomInitConditions, DiagnosticEngine &diags, const PlanOptions &options,
                                const passes::PassManagerOptions &passOptions, llvm::raw_ostream *dumpOS,
                                llvm::raw_ostream *timeOS) {
  // The default pipeline or the one given, less the disabled transformations.
  PlanPassManager chosen, pm(passOptions);
  std::string error;
  if (!chosen.addPipeline(options.pipeline ? *options.pipeline : defaultPlanPipeline(), error)) {
    diags.error(error);
    return nullptr;
  }
  for (const PlanPassInfo *p : chosen.passes())
    if (!options.disabled.count(std::string(p->name)))
      pm.addPass(*p);
  llvm::raw_ostream &dump = dumpOS ? *dumpOS : llvm::outs();
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Plan> plan = lowerSchedule(m, eval, data, randomInitConditions, diags, options.lowering);
  pm.instrumentation().addTime(kLoweringStep, secondsSince(start));
  bool ok = plan && pm.afterStep(kLoweringStep, *plan, dump, error) && pm.run(*plan, dump, error);
  pm.instrumentation().printTimes(timeOS ? *timeOS : llvm::errs(), "Plan pass execution timing report");
  if (!ok) {
    if (!error.empty())
      diags.error(error);
    return nullptr;
  }
  return plan;
}

} // namespace ppc::codegen
