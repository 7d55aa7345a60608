//===- tools/UserPosteriors.cpp - --init, --given and held-out evaluation --===//
#include "tools/UserPosteriors.h"

#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>
#include <cmath>

#include "codegen/exec/Executor.h"
#include "codegen/llvm/Jit.h"
#include "codegen/llvm/LLVMCodegen.h"
#include "ir/Aliasing.h"
#include "ir/Diagnostics.h"
#include "passes/PassManager.h"
#include "tools/Driver.h"

#include <chrono>
#include <llvm/Support/raw_ostream.h>
#include "codegen/plan/Plan.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "runtime/Binding.h"
#include "runtime/PosteriorFile.h"

#include <algorithm>
#include <set>

namespace ppc {

bool parsePosteriorSource(const std::string &text, bool given, PosteriorSource &out, std::string &error) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    error = std::string(given ? "--given" : "--init") + " expects VAR=FILE (a latent variable and the CSV --out "
            "wrote for it); got '" + text + "'";
    return false;
  }
  out.variable = text.substr(0, eq);
  out.file = text.substr(eq + 1);
  out.given = given;
  return true;
}

bool applyPosteriorSources(ir::Module &m, const std::vector<PosteriorSource> &sources,
                           std::vector<std::string> &initialized, std::string &error) {
  std::set<std::string> seen;
  for (const PosteriorSource &s : sources) {
    ir::Value *v = m.lookup(s.variable);
    ir::Op *def = v ? v->def : nullptr;
    if (!def || !def->isRandom()) {
      error = s.flag() + ": the model has no random variable '" + s.variable + "'";
      return false;
    }
    if (def->observed) {
      error = s.flag() + ": '" + s.variable + "' is observed (its values come from the data); " +
              (s.given ? "--given" : "--init") + " takes a latent variable";
      return false;
    }
    if (isChainFamily(def->family)) {
      error = s.flag() + ": '" + s.variable + "' is a chain: its saved marginals do not determine its posterior (the " +
              "pairs of neighbouring elements), so it cannot be read back; give the chain's parameters instead " +
              "(its initial and transition probabilities, or a chain of Gaussians' coefficient or transition matrix and precisions)";
      return false;
    }
    if (isDeterministicFamily(def->family)) {
      error = s.flag() + ": '" + s.variable + "' is computed from other variables (" +
              std::string(familySpec(def->family).irName) + "); give its operands instead";
      return false;
    }
    if (!seen.insert(s.variable).second) {
      error = s.flag() + ": '" + s.variable + "' is named by --init or --given twice";
      return false;
    }
    if (s.given)
      def->given = true;
    else
      initialized.push_back(s.variable);
  }
  return true;
}

namespace {
const codegen::Posterior *posteriorOf(const codegen::Plan &plan, const std::string &variable) {
  for (const codegen::Posterior &p : plan.posteriors)
    if (p.variable->name == variable)
      return &p;
  return nullptr;
}
} // namespace

bool readPosteriorSources(const codegen::Plan &plan, const std::vector<PosteriorSource> &sources,
                          std::map<std::string, std::vector<double>> &start, std::string &error) {
  for (const PosteriorSource &s : sources) {
    const codegen::Posterior *post = posteriorOf(plan, s.variable);
    if (!post) {
      error = s.flag() + ": '" + s.variable + "' has no posterior in this run (nothing reads it?)";
      return false;
    }
    if (post->scratch) {
      error = s.flag() + ": the nested schedule keeps '" + s.variable +
              "' for one element at a time, so it is not an output and cannot be read back (--schedule plain keeps "
              "it whole)";
      return false;
    }
    if (post->partitioned) {
      error = s.flag() + ": '" + s.variable +
              "' is split between the processes of this run (mpirun); read it in a run of one process";
      return false;
    }
    rt::PosteriorShape shape;
    shape.variable = s.variable;
    shape.family = post->family;
    shape.dimension = post->dimension;
    shape.rows = post->elements;
    for (const codegen::Posterior::RowDim &d : post->rowDims)
      shape.indexColumns.push_back(d.name);
    shape.indices = codegen::rowIndices(plan, *post);
    std::string why;
    if (!rt::readPosteriorFile(s.file, shape, start[s.variable], why)) {
      error = s.flag() + ": " + why;
      return false;
    }
  }
  return true;
}

std::map<std::string, std::vector<double>> givenFromTrained(const codegen::Inference &trained,
                                                            const codegen::Plan &heldout) {
  std::map<std::string, std::vector<double>> out;
  for (const codegen::Posterior &h : heldout.posteriors) {
    if (!h.given)
      continue;
    const codegen::Posterior *t = posteriorOf(trained.plan(), h.variable->name);
    if (t && !t->scratch && t->elements == h.elements && t->width == h.width)
      out[h.variable->name] = trained.buffer(t->eta);
  }
  return out;
}

std::vector<std::string> giveGlobals(ir::Module &m) {
  // As passes/GlobalLocal.h classifies them: over no data-sized plate.
  auto isDataPlate = [](const ir::Value *p) {
    return p->def && p->def->kind == ir::OpKind::Plate && p->def->plateKind == ir::Op::PlateKind::Data;
  };
  std::vector<std::string> names;
  ir::walk(m.body, [&](ir::Op &op) {
    if (!op.isRandom() || op.observed || isDeterministicFamily(op.family))
      return;
    bool overData = false;
    for (const ir::Value *d : op.result()->dims)
      overData = overData || isDataPlate(d);
    if (!overData) {
      op.given = true;
      names.push_back(op.result()->name);
    }
  });
  return names;
}

double countObservations(const ir::Module &m, const ir::Evaluation &eval, const rt::BoundData &data) {
  (void)m;
  double total = 0;
  for (const auto &[v, bv] : data.variables) {
    if (ir::isKnownInput(v))
      continue; // known inputs (Data) are not observations; observed variables are (through if/match too)
    double width = 1;
    if (v->type.kind == ir::TypeKind::Vector) {
      const ir::Dim &d = v->type.dim;
      if (d.isConstant())
        width = double(d.constant);
      else if (auto n = eval.valueOf(d.value))
        width = *n;
    }
    // An element is a scalar or a vector's row; missing values (scalars)
    // are not observations; a weight is per row, which in wide format
    // holds several scalar elements.
    const size_t elements = size_t(double(bv.values.size()) / std::max(width, 1.0));
    std::vector<bool> missing(elements, false);
    for (int64_t e : bv.missing)
      if (size_t(e) < elements)
        missing[size_t(e)] = true;
    const size_t perRow = bv.weights.empty() ? 1 : std::max<size_t>(1, elements / bv.weights.size());
    for (size_t e = 0; e < elements; ++e)
      if (!missing[e])
        total += bv.weights.empty() ? 1.0 : bv.weights[e / perRow];
  }
  return total;
}

/// --heldout: the model compiled again for the held-out files, its globals
/// given at the trained posteriors (exactly: the trained natural
/// parameters, not a round trip through a CSV), run to convergence with the
/// training's options; its ELBO is the held-out bound.
namespace {
/// The held-out model (its globals given) and its data, bound; null module
/// or data after an error, which went to stderr.
struct BoundHeldout {
  std::unique_ptr<ir::Module> module;
  std::optional<ir::Evaluation> evaluation;
  std::optional<rt::BoundData> data;
};

BoundHeldout bindHeldout(const HeldoutOptions &h, DiagnosticEngine &diags, bool warn) {
  BoundHeldout b;
  b.module = compileModel(h.source, diags);
  if (!b.module)
    return b;
  b.evaluation = ir::evaluate(*b.module, h.params, /*requireAll=*/true, diags);
  if (!b.evaluation)
    return b;
  giveGlobals(*b.module);
  std::vector<std::string> errors;
  b.data = rt::bindData(*b.module, *b.evaluation, h.binding, errors);
  for (const std::string &e : errors)
    llvm::errs() << "ppc: error: --heldout: " << e << "\n";
  if (b.data && warn)
    for (const std::string &w : b.data->warnings)
      llvm::errs() << "ppc: warning: --heldout: " << w << "\n";
  return b;
}
} // namespace

bool checkHeldout(const HeldoutOptions &h) {
  DiagnosticEngine diags(h.modelPath, h.source, llvm::errs());
  return bindHeldout(h, diags, /*warn=*/true).data.has_value();
}

bool evaluateHeldout(const HeldoutOptions &h, const codegen::Inference &trained, rt::RunSummary::Heldout &out) {
  const rt::BindingOptions &binding = h.binding;
  std::string error;
  const auto started = std::chrono::steady_clock::now();
  DiagnosticEngine diags(h.modelPath, h.source, llvm::errs());
  auto [module, evaluation, data] = bindHeldout(h, diags, /*warn=*/!h.warned);
  if (!data)
    return false;
  out.file = binding.files.front();
  for (size_t i = 1; i < binding.files.size(); ++i)
    out.file += "," + binding.files[i];
  out.observations = countObservations(*module, *evaluation, *data);
  passes::PassContext ctx{diags, nullptr, {}, {}};
  h.schedule.apply(ctx);
  passes::PassManager pm(passes::PassManagerOptions{});
  if (!pm.addPipeline(pipelineForEmit(""), error) || !pm.run(*module, ctx, llvm::outs(), llvm::errs())) {
    if (!error.empty())
      llvm::errs() << "ppc: error: --heldout: " << error << "\n";
    return false;
  }
  codegen::PlanOptions planOptions = h.plan;
  planOptions.lowering.userInitialized.clear();
  std::unique_ptr<codegen::Plan> plan = codegen::buildPlan(*module, *evaluation, *data, true, diags, planOptions,
                                                           passes::PassManagerOptions{}, nullptr, &llvm::errs());
  data.reset();
  if (!plan)
    return false;
  if (std::string problem = codegen::planMemoryProblem(*plan); !problem.empty()) {
    llvm::errs() << "ppc: error: --heldout: " << problem << "\n";
    return false;
  }
  std::unique_ptr<codegen::JitSession> session;
  std::unique_ptr<codegen::Engine> engine;
  if (h.engine == "jit") {
    session = codegen::JitSession::create(error);
    if (session)
      engine = codegen::createJitEngine(*plan, *session, nullptr, error);
  } else {
    engine = codegen::createInterpreter(*plan);
  }
  if (!engine) {
    llvm::errs() << "ppc: error: --heldout: " << error << "\n";
    return false;
  }
  engine->setThreads(h.threads);
  codegen::Inference inference(*plan);
  if (!inference.initialize(*engine, h.run.seed, givenFromTrained(trained, *plan), error)) {
    llvm::errs() << "ppc: error: --heldout: " << error << "\n";
    return false;
  }
  codegen::RunOptions options = h.run;
  options.afterIteration = nullptr;
  options.discreteObservations = rt::discreteObservations(*module);
  options.coupledElements = ir::coupledElements(*module);
  rt::RunSummary summary;
  if (!inference.run(*engine, options, summary, nullptr, error)) {
    llvm::errs() << "ppc: error: --heldout: " << error << "\n";
    return false;
  }
  out.elbo = summary.elbo.empty() ? 0.0 : summary.elbo.back();
  out.iterations = summary.iterations;
  out.converged = summary.converged;
  out.perObservation = out.observations > 0 ? out.elbo / out.observations : 0.0;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return true;
}

void printHeldout(const rt::RunSummary::Heldout &h, llvm::raw_ostream &os, bool iterations) {
  os << "held-out " << h.file << ": ELBO " << llvm::format("%.10g", h.elbo) << " over "
     << llvm::format("%.10g", h.observations) << " observations: " << llvm::format("%.6f", h.perObservation)
     << " nats per observation, perplexity " << llvm::format("%.4f", std::exp(-h.perObservation));
  if (iterations)
    os << " (" << (h.converged ? "converged" : "stopped") << " after " << h.iterations
       << (h.iterations == 1 ? " iteration" : " iterations") << ")";
  os << "\n";
}

} // namespace ppc
