// The end-to-end fixture of the inference tests: a model's text and CSV
// files -> compiled plan -> JIT (or interpreter) -> VMP run, with the
// posteriors and the ELBO trace to check (InferenceTest.cpp,
// ExactPosteriorTest.cpp). Temporary files live in one directory per test
// process, removed at its exit.
#pragma once

#include "codegen/exec/Executor.h"
#include "codegen/llvm/Jit.h"
#include "codegen/llvm/LLVMCodegen.h"
#include "codegen/plan/Plan.h"
#include "codegen/transforms/PlanPassManager.h"
#include "ir/Diagnostics.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "passes/PassManager.h"
#include "runtime/Binding.h"
#include "tools/Driver.h"

#include <Eigen/Dense>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>
#include <numeric>
#include <set>
#include <sstream>
#include <unistd.h>

namespace ppc::testing {

inline std::string examplePath(const std::string &rel) { return std::string(PPC_SOURCE_DIR) + "/examples/" + rel; }

inline std::string readAll(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A fresh temporary directory for this test process, removed at its exit
/// (the suite leaves nothing behind).
struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ppc-inference-test-XXXXXX").string();
    const char *d = ::mkdtemp(tmpl.data());
    if (!d)
      ADD_FAILURE() << "cannot make a temporary directory from " << tmpl;
    path = d ? d : tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// A file with `text` in this process's temporary directory.
inline std::string tempFile(const std::string &name, const std::string &text) {
  static TempDir dir;
  std::string path = dir.path + "/" + name;
  std::ofstream(path) << text;
  return path;
}

inline codegen::JitSession &session() {
  static std::unique_ptr<codegen::JitSession> s = [] {
    std::string error;
    auto j = codegen::JitSession::create(error);
    EXPECT_TRUE(j) << error;
    return j;
  }();
  return *s;
}

struct Fit {
  std::string source;
  std::unique_ptr<DiagnosticEngine> diags;
  std::unique_ptr<ir::Module> module;
  std::optional<ir::Evaluation> eval;
  std::optional<rt::BoundData> data;
  std::unique_ptr<codegen::Plan> plan;
  std::unique_ptr<codegen::Engine> engine;
  std::unique_ptr<codegen::Inference> inference;
  rt::RunSummary summary;
  std::string error;
  bool ok = false;

  const codegen::Posterior &posterior(const std::string &name) const {
    for (const codegen::Posterior &p : plan->posteriors)
      if (p.variable->name == name)
        return p;
    ADD_FAILURE() << "no posterior " << name;
    return plan->posteriors.front();
  }
  const double *stats(const std::string &name, int64_t element = 0) const {
    const codegen::Posterior &p = posterior(name);
    return inference->buffer(p.stats).data() + element * p.width;
  }
  const double *eta(const std::string &name, int64_t element = 0) const {
    const codegen::Posterior &p = posterior(name);
    return inference->buffer(p.eta).data() + element * p.width;
  }
  double elbo() const { return summary.elbo.empty() ? NAN : summary.elbo.back(); }
};

struct FitOptions {
  std::map<std::string, std::string> params, map;
  std::optional<std::string> weight;
  std::string engine = "jit";
  codegen::RunOptions run;
  std::string pipeline; ///< empty: the default
  int64_t localIterations = 1;
  bool localRestart = false;
  passes::PassContext::LocalSchedule localSchedule = passes::PassContext::LocalSchedule::Plain;
  double localTolerance = 0;
  /// Plan transformations and lowering choices turned off (--disable-plan-opt names).
  std::vector<std::string> disabled;
  int threads = 1;
};

inline std::unique_ptr<Fit> fit(const std::string &model, const std::vector<std::string> &files, const FitOptions &o) {
  auto f = std::make_unique<Fit>();
  f->source = model;
  f->diags = std::make_unique<DiagnosticEngine>("model.ppl", f->source, llvm::errs());
  f->module = compileModel(f->source, *f->diags);
  if (!f->module)
    return f;
  f->eval = ir::evaluate(*f->module, o.params, true, *f->diags);
  if (!f->eval)
    return f;
  rt::BindingOptions b;
  b.files = files;
  b.map = o.map;
  b.weight = o.weight;
  std::vector<std::string> errors;
  f->data = rt::bindData(*f->module, *f->eval, b, errors);
  for (auto &e : errors)
    ADD_FAILURE() << e;
  if (!f->data)
    return f;
  passes::PassManager pm;
  std::string error;
  EXPECT_TRUE(pm.addPipeline(o.pipeline.empty() ? passes::defaultPipeline() : o.pipeline, error)) << error;
  passes::PassContext ctx{*f->diags, &llvm::nulls(), {}, {}};
  ctx.randomInitConditions = true;
  ctx.localIterations = o.localIterations;
  ctx.localRestart = o.localRestart;
  ctx.localSchedule = o.localSchedule;
  ctx.localTolerance = o.localTolerance;
  if (!pm.run(*f->module, ctx, llvm::nulls(), llvm::nulls()))
    return f;
  codegen::PlanOptions planOptions;
  for (const std::string &name : o.disabled)
    EXPECT_TRUE(planOptions.disable(name)) << name;
  planOptions.lowering.l2CacheBytes = 2 << 20; // the same plans on every machine
  passes::PassManagerOptions checks;
  checks.verifyEach = true; // every plan of every test passes the plan verifier
  f->plan = codegen::buildPlan(*f->module, *f->eval, *f->data, true, *f->diags, planOptions, checks);
  if (!f->plan)
    return f;
  if (o.engine == "jit")
    f->engine = codegen::createJitEngine(*f->plan, session(), nullptr, f->error);
  else
    f->engine = codegen::createInterpreter(*f->plan);
  if (!f->engine)
    return f;
  f->engine->setThreads(o.threads);
  f->inference = std::make_unique<codegen::Inference>(*f->plan);
  f->inference->initialize(*f->engine, o.run.seed);
  f->ok = f->inference->run(*f->engine, o.run, f->summary, nullptr, f->error);
  return f;
}

/// A one-column CSV.
template <typename T> std::string column(const std::string &name, const std::vector<T> &values) {
  std::string csv = name + "\n";
  for (T v : values)
    csv += std::to_string(v) + "\n";
  return csv;
}

inline FitOptions tight() {
  FitOptions o;
  o.run.maxIterations = 1000;
  o.run.tolerance = 1e-15;
  return o;
}

inline double lbeta(double a, double b) { return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b); }

} // namespace ppc::testing
