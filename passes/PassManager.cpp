#include "passes/PassManager.h"

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <chrono>
#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

namespace ppc::passes {

bool PassManager::addPipeline(std::string_view pipeline, std::string &error) {
  size_t pos = 0;
  while (pos <= pipeline.size() && !pipeline.empty()) {
    size_t comma = pipeline.find(',', pos);
    std::string_view name = pipeline.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (name.empty()) {
      error = "empty pass name in pipeline '" + std::string(pipeline) + "'";
      return false;
    }
    const PassInfo *info = nullptr;
    for (const PassInfo &p : registeredPasses())
      if (p.name == name)
        info = &p;
    if (!info) {
      error = "unknown pass '" + std::string(name) + "'; available passes:";
      for (const PassInfo &p : registeredPasses())
        error += " " + std::string(p.name);
      return false;
    }
    passes_.push_back(info->create());
    if (comma == std::string_view::npos)
      break;
    pos = comma + 1;
  }
  for (const std::string &n : options_.printAfter) {
    bool known = false;
    for (const PassInfo &p : registeredPasses())
      known = known || p.name == n;
    if (!known) {
      error = "--print-after=" + n + ": unknown pass";
      return false;
    }
  }
  return true;
}

bool PassManager::run(ir::Module &m, PassContext &ctx, llvm::raw_ostream &dumpOS, llvm::raw_ostream &timeOS) {
  std::vector<std::pair<std::string, double>> times;
  bool ok = true;
  for (auto &pass : passes_) {
    auto start = std::chrono::steady_clock::now();
    ok = pass->run(m, ctx);
    ctx.analyses.invalidateUnless([&](const void *id) { return pass->preserves(id); });
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    times.emplace_back(std::string(pass->name()), secs);
    if (!ok)
      break;
    if (options_.verifyEach && !ir::verify(m, ctx.diags)) {
      ctx.diags.error("the IR is invalid after pass '" + std::string(pass->name()) + "'");
      ok = false;
      break;
    }
    if (options_.printAfterAll || options_.printAfter.count(std::string(pass->name()))) {
      dumpOS << "// *** IR Dump After " << pass->name() << " ***\n";
      ir::print(m, dumpOS);
    }
  }
  if (options_.timePasses) {
    double total = 0;
    for (auto &[n, s] : times)
      total += s;
    timeOS << "===" << std::string(70, '-') << "===\n";
    timeOS << "                      ... Pass execution timing report ...\n";
    timeOS << "===" << std::string(70, '-') << "===\n";
    timeOS << llvm::format("  Total Execution Time: %.6f seconds\n\n", total);
    timeOS << "   --Wall Time--  --- Name ---\n";
    for (auto &[n, s] : times)
      timeOS << llvm::format("   %.6f (%5.1f%%)  ", s, total > 0 ? 100 * s / total : 0.0) << n << "\n";
    timeOS << llvm::format("   %.6f (100.0%%)  Total\n", total);
    timeOS.flush();
  }
  return ok;
}

} // namespace ppc::passes
