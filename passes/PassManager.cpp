#include "passes/PassManager.h"

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <algorithm>
#include <chrono>
#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

namespace ppc::passes {

bool splitPipeline(std::string_view pipeline, const std::vector<std::string_view> &known, std::string_view what,
                   std::vector<std::string> &names, std::string &error) {
  size_t pos = 0;
  while (pos <= pipeline.size() && !pipeline.empty()) {
    size_t comma = pipeline.find(',', pos);
    std::string_view name = pipeline.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (name.empty()) {
      error = "empty " + std::string(what) + " name in pipeline '" + std::string(pipeline) + "'";
      return false;
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      const std::string plural = std::string(what) + (what.back() == 's' ? "es" : "s"); // passes, transformations
      error = "unknown " + std::string(what) + " '" + std::string(name) + "'; available " + plural + ":";
      for (std::string_view k : known)
        error += " " + std::string(k);
      return false;
    }
    names.emplace_back(name);
    if (comma == std::string_view::npos)
      break;
    pos = comma + 1;
  }
  return true;
}

bool checkPrintAfter(const PassManagerOptions &options, const std::vector<std::string_view> &known,
                     std::string &error) {
  for (const std::string &n : options.printAfter)
    if (std::find(known.begin(), known.end(), n) == known.end()) {
      error = "--print-after=" + n + ": unknown pass";
      return false;
    }
  return true;
}

void PassInstrumentation::addTime(std::string_view pass, double seconds, std::string note) {
  times_.push_back({std::string(pass), std::move(note), seconds});
}

void PassInstrumentation::printTimes(llvm::raw_ostream &os, std::string_view title) const {
  if (!options_.timePasses)
    return;
  double total = 0;
  for (const Entry &e : times_)
    total += e.seconds;
  os << "===" << std::string(70, '-') << "===\n";
  os << std::string(size_t(std::max<ptrdiff_t>(0, (80 - ptrdiff_t(title.size()) - 8) / 2)), ' ') << "... " << title
     << " ...\n";
  os << "===" << std::string(70, '-') << "===\n";
  os << llvm::format("  Total Execution Time: %.6f seconds\n\n", total);
  os << "   --Wall Time--  --- Name ---\n";
  for (const Entry &e : times_) {
    os << llvm::format("   %.6f (%5.1f%%)  ", e.seconds, total > 0 ? 100 * e.seconds / total : 0.0) << e.name;
    if (!e.note.empty())
      os << "  (" << e.note << ")";
    os << "\n";
  }
  os << llvm::format("   %.6f (100.0%%)  Total\n", total);
  os.flush();
}

bool PassManager::addPipeline(std::string_view pipeline, std::string &error) {
  std::vector<std::string_view> known;
  for (const PassInfo &p : registeredPasses())
    known.push_back(p.name);
  std::vector<std::string> names;
  if (!splitPipeline(pipeline, known, "pass", names, error))
    return false;
  for (const std::string &name : names)
    for (const PassInfo &p : registeredPasses())
      if (p.name == name)
        passes_.push_back(p.create());
  return true;
}

bool PassManager::run(ir::Module &m, PassContext &ctx, llvm::raw_ostream &dumpOS, llvm::raw_ostream &timeOS) {
  PassInstrumentation instrumentation(options_);
  bool ok = true;
  for (size_t i = 0; i < passes_.size(); ++i) {
    const std::unique_ptr<Pass> &pass = passes_[i];
    ctx.fusionLater = std::any_of(passes_.begin() + long(i) + 1, passes_.end(),
                                  [](const std::unique_ptr<Pass> &p) { return p->name() == "fuse"; });
    auto start = std::chrono::steady_clock::now();
    ok = pass->run(m, ctx);
    ctx.analyses.invalidateUnless([&](const void *id) { return pass->preserves(id); });
    instrumentation.addTime(pass->name(),
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!ok)
      break;
    if (options_.verifyEach && !ir::verify(m, ctx.diags)) {
      ctx.diags.error("the IR is invalid after pass '" + std::string(pass->name()) + "'");
      ok = false;
      break;
    }
    if (instrumentation.printsAfter(pass->name())) {
      dumpOS << "// *** IR Dump After " << pass->name() << " ***\n";
      ir::print(m, dumpOS);
    }
  }
  instrumentation.printTimes(timeOS, "Pass execution timing report");
  return ok;
}

} // namespace ppc::passes
