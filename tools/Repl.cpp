//===- tools/Repl.cpp - `ppc repl`: interactive sessions on one live JIT ---===//
//
// A session holds a model's text, its parameters and data bindings, and,
// once there is data, the compiled plan, its JIT code and the variational
// state. Commands (`:infer`, `:show`, ...) act on that state; model lines
// typed directly extend the model, which is recompiled: the old code is
// released and the state of the variables the change left alone is kept
// (docs/repl.md). Errors are printed and the session goes on. The lines
// come from tools/ReplMain.cpp (a terminal or a script).
//
//===----------------------------------------------------------------------===//
#include "tools/Repl.h"
#include "tools/ReplSession.h"
#include "tools/Report.h"
#include "tools/UserPosteriors.h"

#include "codegen/exec/Executor.h"
#include "codegen/llvm/Jit.h"
#include "codegen/llvm/LLVMCodegen.h"
#include "codegen/plan/Plan.h"
#include "codegen/transforms/PlanPassManager.h"
#include "frontend/AST.h"
#include "ir/Aliasing.h"
#include "ir/Diagnostics.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "passes/PassManager.h"
#include "runtime/Binding.h"
#include "runtime/Output.h"
#include "tools/Driver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <llvm/Support/Format.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/raw_ostream.h>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

namespace ppc {
namespace {

/// Splits a command line at blanks ('...' and "..." group).
std::vector<std::string> words(const std::string &line) {
  std::vector<std::string> out;
  std::string cur;
  bool any = false;
  char quote = 0;
  for (char c : line) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      any = true;
    } else if (c == ' ' || c == '\t') {
      if (any || !cur.empty())
        out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty())
    out.push_back(cur);
  return out;
}

class Session : public ReplSession {
public:
  Session(llvm::raw_ostream &out, int threads) : out_(out), threads_(threads) {}

  bool execute(const std::string &line) override {
    std::string trimmed = line;
    trimmed.erase(0, trimmed.find_first_not_of(" \t"));
    trimmed.erase(trimmed.find_last_not_of(" \t\r") + 1);
    if (trimmed.empty() || trimmed.rfind("//", 0) == 0)
      return true;
    if (trimmed[0] != ':') {
      extendModel(trimmed);
      return true;
    }
    std::vector<std::string> w = words(trimmed);
    const std::string &cmd = w[0];
    std::vector<std::string> args(w.begin() + 1, w.end());
    if (cmd == ":quit" || cmd == ":q" || cmd == ":exit")
      return false;
    if (cmd == ":help" || cmd == ":h" || cmd == ":?")
      out_ << replHelp();
    else if (cmd == ":load")
      load(args);
    else if (cmd == ":param")
      param(args);
    else if (cmd == ":data")
      data(args);
    else if (cmd == ":vocab")
      vocabulary(args);
    else if (cmd == ":infer")
      infer(args);
    else if (cmd == ":reset")
      reset();
    else if (cmd == ":show")
      show(args, false);
    else if (cmd == ":top")
      show(args, true);
    else if (cmd == ":elbo")
      elbo(args);
    else if (cmd == ":emit")
      emit(args);
    else if (cmd == ":report")
      report(args);
    else if (cmd == ":save")
      save(args);
    else if (cmd == ":time")
      time();
    else if (cmd == ":threads")
      setThreads(args);
    else if (cmd == ":given" || cmd == ":init")
      posteriorSource(args, cmd == ":given");
    else if (cmd == ":heldout")
      heldout(args);
    else
      error("unknown command '" + cmd + "'; :help lists the commands");
    out_.flush();
    return true;
  }

  bool failed() const override { return failures_ > 0; }
  void setInputLine(std::string where) override { where_ = std::move(where); }

  std::vector<std::string> names() const override {
    std::set<std::string> out;
    if (module_)
      ir::walk(module_->body, [&](const ir::Op &op) {
        for (const ir::Value *v : op.results) // the names the user wrote (no P.theta, x.1, ...)
          if (!v->name.empty() && v->name.find('.') == std::string::npos)
            out.insert(v->name);
      });
    if (evaluation_)
      for (const auto &[param, value] : evaluation_->values)
        out.insert(param->name);
    return {out.begin(), out.end()};
  }

private:
  void error(const std::string &msg) {
    llvm::errs() << where_ << (where_.empty() ? "" : ": ") << "error: " << msg << "\n";
    ++failures_;
  }

  // ---- the model ----

  void load(const std::vector<std::string> &args) {
    if (args.size() != 1)
      return error(":load takes one file: :load MODEL.ppl");
    std::string why;
    std::optional<std::string> text = readFile(args[0], why);
    if (!text)
      return error(why);
    // A new session: parameters, data and state start afresh.
    Compiled next;
    std::map<std::string, std::string> noParams;
    rt::BindingOptions noData;
    if (!compile(args[0], *text, noParams, noData, {}, next))
      return;
    if (!install(std::move(next), /*keepState=*/false))
      return;
    modelPath_ = args[0];
    modelText_ = *text;
    params_.clear();
    sources_.clear();
    binding_ = noData;
    out_ << "loaded " << modelPath_ << ": " << describe() << "\n";
  }

  void extendModel(const std::string &line) {
    if (modelText_.empty())
      return error("no model yet: :load MODEL.ppl first (or :help)");
    size_t close = modelText_.rfind('}');
    if (close == std::string::npos)
      return error("the model has no closing brace to add the line before");
    std::string text = modelText_.substr(0, close) + "  " + line + "\n" + modelText_.substr(close);
    Compiled next;
    if (!compile(modelPath_, text, params_, binding_, next))
      return; // the model stays as it was
    if (!install(std::move(next), /*keepState=*/true))
      return;
    modelText_ = text;
    out_ << "model extended: " << describe() << "\n";
  }

  void param(const std::vector<std::string> &args) {
    if (modelText_.empty())
      return error("no model yet: :load MODEL.ppl first");
    std::map<std::string, std::string> params = params_;
    std::set<std::string> given; // in this command: a later command's value replaces an earlier one's
    for (const std::string &a : args) {
      size_t eq = a.find('=');
      if (eq == std::string::npos || eq == 0)
        return error(":param expects NAME=VALUE; got '" + a + "'");
      if (!given.insert(a.substr(0, eq)).second)
        return error("parameter '" + a.substr(0, eq) + "' is given twice");
      params[a.substr(0, eq)] = a.substr(eq + 1);
    }
    if (args.empty())
      return error(":param expects NAME=VALUE");
    Compiled next;
    if (!compile(modelPath_, modelText_, params, binding_, next))
      return;
    if (!install(std::move(next), /*keepState=*/true))
      return;
    params_ = params;
    out_ << "parameters set: " << describe() << "\n";
  }

  void data(const std::vector<std::string> &args) {
    if (modelText_.empty())
      return error("no model yet: :load MODEL.ppl first");
    rt::BindingOptions binding;
    std::map<std::string, std::string> params = params_;
    std::set<std::string> givenParams, mapped; // in this command, as on ppc's command line
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string &a = args[i];
      auto value = [&](std::string &out) {
        if (i + 1 >= args.size())
          return false;
        out = args[++i];
        return true;
      };
      std::string v;
      if (a == "--map") {
        size_t eq;
        if (!value(v) || (eq = v.find('=')) == std::string::npos || eq == 0 || eq + 1 == v.size())
          return error("--map expects NAME=COLUMN");
        if (!mapped.insert(v.substr(0, eq)).second)
          return error("--map " + v.substr(0, eq) + " is given twice");
        binding.map[v.substr(0, eq)] = v.substr(eq + 1);
      } else if (a == "--weight") {
        if (!value(v))
          return error("--weight expects a column");
        binding.weight = v;
      } else if (a == "-p" || a == "--param") {
        size_t eq;
        if (!value(v) || (eq = v.find('=')) == std::string::npos || eq == 0)
          return error("-p expects NAME=VALUE");
        if (!givenParams.insert(v.substr(0, eq)).second)
          return error("parameter '" + v.substr(0, eq) + "' is given twice");
        params[v.substr(0, eq)] = v.substr(eq + 1);
      } else if (a == "--vocab") {
        if (!value(v))
          return error("--vocab expects a file");
        vocabulary({v});
      } else if (!a.empty() && a[0] == '-') {
        return error("unknown :data option '" + a + "' (--map, --weight, -p, --vocab)");
      } else {
        binding.files.push_back(a);
      }
    }
    if (binding.files.empty())
      return error(":data needs a CSV file: :data FILE [--map NAME=COLUMN]... [--weight COLUMN]");
    Compiled next;
    if (!compile(modelPath_, modelText_, params, binding, next))
      return;
    if (!install(std::move(next), /*keepState=*/true))
      return;
    params_ = params;
    binding_ = binding;
    out_ << "data bound: " << describe() << "\n";
  }

  void vocabulary(const std::vector<std::string> &args) {
    if (args.size() != 1)
      return error(":vocab takes one file (a word per line)");
    std::string why;
    std::vector<std::string> words = readVocabulary(args[0], why);
    if (!why.empty())
      return error(why);
    vocab_ = std::move(words);
    out_ << "vocabulary: " << vocab_.size() << " words\n";
  }

  /// What compiling produced: the scheduled module and, with data, the
  /// plan, its JIT code and a fresh state.
  struct Compiled {
    std::unique_ptr<ir::Module> module;
    std::unique_ptr<codegen::Plan> plan;
    std::unique_ptr<codegen::JitSession> jit;
    std::unique_ptr<codegen::Engine> engine;
    std::unique_ptr<codegen::Inference> inference;
    /// The posteriors the user gives (:init, :given), read from their files.
    std::map<std::string, std::vector<double>> start;
    double seconds = 0;
  };

  bool compile(const std::string &name, const std::string &text, const std::map<std::string, std::string> &params,
               const rt::BindingOptions &binding, Compiled &out) {
    return compile(name, text, params, binding, sources_, out);
  }

  bool compile(const std::string &name, const std::string &text, const std::map<std::string, std::string> &params,
               const rt::BindingOptions &binding, const std::vector<PosteriorSource> &sources, Compiled &out) {
    auto start = std::chrono::steady_clock::now();
    int code = runTool([&]() -> int {
      DiagnosticEngine diags(name, text, llvm::errs());
      std::unique_ptr<ir::Module> module = compileModel(text, diags);
      if (!module)
        return 1;
      std::optional<ir::Evaluation> evaluation = ir::evaluate(*module, params, !binding.files.empty(), diags);
      if (!evaluation)
        return 1;
      std::optional<rt::BoundData> data;
      if (!binding.files.empty()) {
        std::vector<std::string> errors;
        data = rt::bindData(*module, *evaluation, binding, errors);
        for (const std::string &e : errors)
          error(e);
        if (!data)
          return 1;
        for (const std::string &w : data->warnings)
          llvm::errs() << "warning: " << w << "\n";
      }
      passes::PassManager pm;
      std::string why;
      if (!pm.addPipeline(passes::defaultPipeline(), why)) {
        error(why);
        return 1;
      }
      passes::PassContext ctx{diags, &llvm::outs(), {}, {}};
      ScheduleOptions().apply(ctx); // ppc's defaults
      if (!applyPosteriorSources(*module, sources, ctx.userInitializations, why)) {
        error(why);
        return 1;
      }
      if (!pm.run(*module, ctx, llvm::outs(), llvm::errs()))
        return 1;
      if (data) {
        codegen::PlanOptions planOptions;
        planOptions.lowering.userInitialized.insert(ctx.userInitializations.begin(), ctx.userInitializations.end());
        out.plan = codegen::buildPlan(*module, *evaluation, *data, true, diags, planOptions);
        if (!out.plan)
          return 1;
        if (std::string problem = codegen::planMemoryProblem(*out.plan); !problem.empty()) {
          error(problem);
          return 1;
        }
        out.jit = codegen::JitSession::create(why);
        if (out.jit)
          out.engine = codegen::createJitEngine(*out.plan, *out.jit, nullptr, why);
        if (!out.engine) {
          error(why);
          return 1;
        }
        if (!readPosteriorSources(*out.plan, sources, out.start, why)) {
          error(why);
          return 1;
        }
        out.inference = std::make_unique<codegen::Inference>(*out.plan);
      }
      out.module = std::move(module);
      evaluation_ = std::move(*evaluation);
      return 0;
    });
    if (code != 0)
      ++failures_; // the compiler said why
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return code == 0;
  }

  /// Makes `next` current; the old JIT code is released. With `keepState`,
  /// state buffers of the old plan with the same name and size (the
  /// posteriors and messages of variables the change left alone) carry over.
  bool install(Compiled next, bool keepState) {
    if (next.inference) {
      next.engine->setThreads(threads_);
      std::string why;
      if (!next.inference->initialize(*next.engine, seed_, next.start, why)) {
        error(why); // the session stays as it was
        return false;
      }
      if (keepState && inference_) {
        std::vector<std::string> kept = next.inference->adoptMatchingState(*inference_);
        if (!kept.empty()) {
          out_ << "kept the posteriors of";
          for (const std::string &v : kept)
            out_ << " " << v;
          out_ << "\n";
        }
      }
    }
    // The old engine's code goes with its JIT session; the state after it.
    inference_.reset();
    engine_.reset();
    jit_.reset();
    plan_.reset();
    module_ = std::move(next.module);
    plan_ = std::move(next.plan);
    jit_ = std::move(next.jit);
    engine_ = std::move(next.engine);
    inference_ = std::move(next.inference);
    start_ = std::move(next.start);
    compileSeconds_ = next.seconds;
    summary_ = rt::RunSummary{}; // a new model: a new ELBO trace
    return true;
  }

  std::string describe() const {
    std::string s;
    size_t latent = 0;
    if (plan_) {
      for (const codegen::Posterior &p : plan_->posteriors)
        if (!p.scratch)
          s += (latent++ ? ", " : "") + p.variable->name;
      return std::to_string(latent) + " latent variables (" + s + "), ready to :infer (" +
             llvm::formatv("{0:F3}", compileSeconds_).str() + " s to compile)";
    }
    return "compiled; bind data with :data FILE to infer";
  }

  // ---- inference ----

  bool needInference() {
    if (modelText_.empty()) {
      error("no model yet: :load MODEL.ppl first");
      return false;
    }
    if (!inference_) {
      error("no data bound yet: :data FILE [--map NAME=COLUMN]...");
      return false;
    }
    return true;
  }

  void infer(const std::vector<std::string> &args) {
    int64_t n = 10;
    if (args.size() > 1 || (args.size() == 1 && !parseReplCount(args[0], n)))
      return error(":infer takes a number of iterations (at least 1): :infer 20");
    if (!needInference())
      return;
    codegen::RunOptions opts;
    opts.maxIterations = summary_.iterations + n;
    opts.tolerance = 0; // exactly N more iterations, as Infer.NET's NumberOfIterations
    opts.seed = seed_;
    opts.discreteObservations = rt::discreteObservations(*module_);
    opts.coupledElements = ir::coupledElements(*module_);
    gReplInterrupted = false;
    opts.interrupt = &gReplInterrupted;
    struct sigaction sa {}, old {};
    sa.sa_handler = onReplInterrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    int64_t before = summary_.iterations;
    bool tty = ::isatty(2) != 0;
    std::string why;
    auto start = std::chrono::steady_clock::now();
    bool ok = inference_->run(
        *engine_, opts, summary_,
        [&](const codegen::IterationReport &r) {
          if (tty)
            std::fprintf(stderr, "\riteration %4lld  ELBO %.10g\033[K", (long long)r.iteration, r.elbo);
        },
        why);
    if (tty)
      std::fprintf(stderr, "\r\033[K");
    sigaction(SIGINT, &old, nullptr);
    inferenceSeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!ok)
      return error(why);
    int64_t done = summary_.iterations - before;
    if (gReplInterrupted)
      out_ << "interrupted after " << done << (done == 1 ? " iteration" : " iterations") << "; ";
    if (summary_.elbo.empty())
      return;
    double change = summary_.elbo.size() > 1 ? (summary_.elbo.back() - summary_.elbo[summary_.elbo.size() - 2]) /
                                                   std::abs(summary_.elbo.back())
                                             : 0;
    out_ << "iteration " << summary_.iterations << ": ELBO " << llvm::format("%.10g", summary_.elbo.back())
         << "  change " << llvm::format("%.3e", change) << "\n";
    if (done > 0 && summary_.heldout) {
      // The score was of earlier posteriors: :save and :report would show it
      // beside these.
      summary_.heldout.reset();
      out_ << "(the held-out score was of the posteriors before these iterations; :heldout scores these)\n";
    }
  }

  void reset() {
    if (!needInference())
      return;
    std::string why;
    if (!inference_->initialize(*engine_, seed_, start_, why))
      return error(why);
    summary_ = rt::RunSummary{};
    out_ << "posteriors reset to their initial values\n";
  }

  /// Before the first iteration some posteriors are not computed yet (the
  /// schedule's first iteration computes the means a mixture's random
  /// start does not set): their parameters are not finite.
  bool computed(const rt::PosteriorTable &t) {
    for (double v : t.values)
      if (!std::isfinite(v)) {
        error("'" + t.variable + "' has no posterior yet: the first iteration computes it (:infer 1)");
        return false;
      }
    return true;
  }

  const rt::PosteriorTable *table(const std::string &name, std::vector<rt::PosteriorTable> &tables) {
    tables = inference_->posteriors();
    for (const rt::PosteriorTable &t : tables)
      if (t.variable == name)
        return computed(t) ? &t : nullptr;
    std::string known;
    for (const rt::PosteriorTable &t : tables)
      known += (known.empty() ? "" : ", ") + t.variable;
    error("no posterior '" + name + "'; the latent variables are: " + known);
    return nullptr;
  }

  void show(const std::vector<std::string> &args, bool top) {
    const char *usage = top ? ":top VAR [N]" : ":show VAR [ROWS]";
    int64_t n = top ? 10 : 5;
    if (args.empty() || args.size() > 2 || (args.size() == 2 && !parseReplCount(args[1], n)))
      return error(std::string("usage: ") + usage);
    if (!needInference())
      return;
    std::vector<rt::PosteriorTable> tables;
    const rt::PosteriorTable *t = table(args[0], tables);
    if (!t)
      return;
    if (top) {
      out_ << t->variable << ": top " << n << " of each row\n";
      printTop(*t, vocab_, size_t(n), 20, out_);
    } else {
      printPosterior(*t, vocab_, size_t(n), out_);
    }
  }

  void elbo(const std::vector<std::string> &args) {
    if (args.size() > 1 || (args.size() == 1 && args[0] != "all"))
      return error("usage: :elbo [all]");
    if (!needInference())
      return;
    if (summary_.elbo.empty())
      return void(out_ << "no iterations yet: :infer N\n");
    // A long trace: its start and its end (all of it with `:elbo all`).
    size_t n = summary_.elbo.size(), head = n, tail = 0;
    if (n > 20 && args.empty())
      head = 5, tail = 10;
    auto line = [&](size_t i) {
      out_ << "iteration " << i + 1 << ": ELBO " << llvm::format("%.10g", summary_.elbo[i]) << "\n";
    };
    for (size_t i = 0; i < head; ++i)
      line(i);
    if (tail) {
      out_ << "... (" << n - head - tail << " more; :elbo all)\n";
      for (size_t i = n - tail; i < n; ++i)
        line(i);
    }
  }

  void emit(const std::vector<std::string> &args) {
    static const std::set<std::string> stages = {"ast",      "ir",       "plates", "gated", "messages",
                                                 "deps",     "deps-dot", "schedule", "plan", "llvm"};
    if (args.size() != 1 || !stages.count(args[0]))
      return error(":emit takes one of ast, ir, plates, gated, messages, deps, deps-dot, schedule, plan, llvm");
    if (modelText_.empty())
      return error("no model yet: :load MODEL.ppl first");
    const std::string &stage = args[0];
    if (stage == "plan" || stage == "llvm") {
      if (!plan_)
        return error(":emit " + stage + " needs data: :data FILE first");
      if (stage == "plan")
        return void(out_ << codegen::printPlan(*plan_));
      std::string why, optimized;
      auto jit = codegen::JitSession::create(why);
      auto engine = jit ? codegen::createJitEngine(*plan_, *jit, &optimized, why) : nullptr;
      if (!engine)
        return error(why);
      out_ << optimized;
      return;
    }
    const int code = runTool([&]() -> int {
      DiagnosticEngine diags(modelPath_, modelText_, llvm::errs());
      std::unique_ptr<ast::Model> ast;
      std::unique_ptr<ir::Module> module = compileModel(modelText_, diags, &ast, stage == "ast");
      if (stage == "ast") {
        if (ast)
          ast::print(*ast, out_);
        return 0;
      }
      if (!module)
        return 1;
      std::optional<ir::Evaluation> evaluation = ir::evaluate(*module, params_, false, diags);
      if (!evaluation)
        return 1;
      passes::PassManager pm;
      std::string why;
      if (!pm.addPipeline(pipelineForEmit(stage), why))
        return error(why), 1;
      passes::PassContext ctx{diags, &out_, {}, {}};
      ScheduleOptions().apply(ctx);
      if (!pm.run(*module, ctx, out_, llvm::errs()))
        return 1;
      if (stage == "plates")
        ir::printPlateTree(*module, &*evaluation, out_);
      else if (stage != "deps" && stage != "deps-dot")
        ir::print(*module, out_);
      return 0;
    });
    if (code != 0)
      ++failures_;
  }

  /// The session's run as --out and --report describe one.
  rt::RunSummary sessionSummary() const {
    rt::RunSummary s = summary_;
    s.compileSeconds = compileSeconds_;
    s.inferenceSeconds = inferenceSeconds_;
    s.options["command"] = "ppc repl";
    for (const auto &[k, v] : params_)
      s.options["param " + k] = v;
    return s;
  }

  void save(const std::vector<std::string> &args) {
    if (args.size() != 1)
      return error(":save takes one directory");
    if (!needInference())
      return;
    rt::RunSummary s = sessionSummary();
    std::string why;
    std::vector<rt::PosteriorTable> tables = inference_->posteriors();
    for (const rt::PosteriorTable &t : tables)
      if (!computed(t))
        return;
    for (rt::PosteriorTable &p : inference_->predictions(*engine_)) // missing values' predictive
      tables.push_back(std::move(p));
    if (!rt::writeOutputs(args[0], s, tables, why))
      return error(why);
    out_ << "wrote " << args[0] << "\n";
  }

  /// :report FILE: the run so far as ppc --report draws it (no data points:
  /// the session keeps only the plan's copy of the data).
  void report(const std::vector<std::string> &args) {
    if (args.size() != 1)
      return error(":report takes one file: :report FILE.html");
    if (!needInference())
      return;
    rt::RunSummary s = sessionSummary();
    std::vector<rt::PosteriorTable> tables = inference_->posteriors();
    ReportInput in = reportOfRun(s, tables, modelPath_, modelText_, vocab_, module_.get());
    std::string why;
    if (!writeReport(args[0], in, why))
      return error(why);
    out_ << "wrote " << args[0] << "\n";
  }

  /// :init VAR FILE, :given VAR FILE, :given VAR off, :given (list).
  void posteriorSource(const std::vector<std::string> &args, bool given) {
    const std::string usage =
        given ? ":given VAR FILE (or :given VAR off, or :given to list)" : ":init VAR FILE (or :init VAR off)";
    if (given && args.empty()) {
      bool any = false;
      for (const PosteriorSource &s : sources_)
        if (s.given) {
          out_ << s.variable << " given from " << s.file << "\n";
          any = true;
        }
      if (!any)
        out_ << "no variable is given\n";
      return;
    }
    if (args.size() != 2)
      return error(usage);
    if (modelText_.empty())
      return error("no model yet: :load MODEL.ppl first");
    const bool off = args[1] == "off";
    if (off && std::none_of(sources_.begin(), sources_.end(), [&](const PosteriorSource &s) {
          return s.variable == args[0] && s.given == given;
        }))
      return error("'" + args[0] + "' is not " + (given ? "given (:given lists those that are)" : "started from a file"));
    std::vector<PosteriorSource> sources;
    for (const PosteriorSource &s : sources_)
      if (s.variable != args[0])
        sources.push_back(s);
    if (!off)
      sources.push_back(PosteriorSource{args[0], args[1], given});
    Compiled next;
    if (!compile(modelPath_, modelText_, params_, binding_, sources, next))
      return; // the session stays as it was
    // A given variable's buffers come from its file; the rest of the state
    // carries over. :init starts the posteriors afresh from the file.
    if (!install(std::move(next), /*keepState=*/given))
      return;
    sources_ = sources;
    out_ << (off ? args[0] + (given ? " is inferred again" : " starts from its usual initialization again")
                 : args[0] + (given ? " given from " : " starts from ") + args[1])
         << ": " << describe() << "\n";
  }

  /// :heldout FILE... [--map NAME=COLUMN]... [--weight COLUMN]
  void heldout(const std::vector<std::string> &args) {
    if (!needInference())
      return;
    for (const rt::PosteriorTable &t : inference_->posteriors())
      if (!computed(t))
        return;
    HeldoutOptions h;
    h.binding.map = binding_.map;
    h.binding.weight = binding_.weight;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "--map" || args[i] == "--weight") {
        if (i + 1 >= args.size())
          return error(args[i] + " expects a value");
        const std::string &v = args[++i];
        size_t eq = v.find('=');
        if (args[i - 1] == "--weight")
          h.binding.weight = v;
        else if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
          return error("--map expects NAME=COLUMN");
        else
          h.binding.map[v.substr(0, eq)] = v.substr(eq + 1);
      } else if (!args[i].empty() && args[i][0] == '-') {
        return error("unknown :heldout option '" + args[i] + "' (--map, --weight)");
      } else {
        h.binding.files.push_back(args[i]);
      }
    }
    if (h.binding.files.empty())
      return error(":heldout needs a CSV file: :heldout FILE [--map NAME=COLUMN]... [--weight COLUMN]");
    h.binding.filesFlag = ":heldout";
    h.modelPath = modelPath_;
    h.source = modelText_;
    h.params = params_;
    h.run.seed = seed_;
    h.threads = threads_;
    rt::RunSummary::Heldout result;
    bool ok = false;
    runTool([&]() -> int {
      ok = evaluateHeldout(h, *inference_, result);
      return ok ? 0 : 1;
    });
    if (!ok) {
      ++failures_; // evaluateHeldout said why
      return;
    }
    printHeldout(result, out_, /*iterations=*/false);
    summary_.heldout = result;
  }

  void setThreads(const std::vector<std::string> &args) {
    int64_t n = 0;
    if (args.size() != 1 || !parseReplCount(args[0], n) || n > 1024)
      return error(":threads takes a number from 1 to 1024");
    threads_ = int(n);
    if (engine_)
      engine_->setThreads(threads_);
    out_ << "threads: " << threads_ << "\n";
  }

  void time() {
    out_ << "last compile: " << llvm::format("%.3f", compileSeconds_) << " s; inference: "
         << llvm::format("%.3f", inferenceSeconds_) << " s for " << summary_.iterations
         << (summary_.iterations == 1 ? " iteration" : " iterations") << " of this model\n";
  }

  llvm::raw_ostream &out_;
  std::string modelPath_ = "<repl>", modelText_;
  std::map<std::string, std::string> params_;
  rt::BindingOptions binding_;
  std::vector<PosteriorSource> sources_;
  std::map<std::string, std::vector<double>> start_;
  std::vector<std::string> vocab_;
  std::optional<ir::Evaluation> evaluation_;
  std::unique_ptr<ir::Module> module_;
  std::unique_ptr<codegen::Plan> plan_;
  std::unique_ptr<codegen::JitSession> jit_;
  std::unique_ptr<codegen::Engine> engine_;
  std::unique_ptr<codegen::Inference> inference_;
  rt::RunSummary summary_;
  double compileSeconds_ = 0, inferenceSeconds_ = 0;
  uint64_t seed_ = 0;
  int threads_ = 1;
  int failures_ = 0; ///< commands that failed: a piped session's exit status
  std::string where_; ///< the input line being run, in a script's errors
};

} // namespace

std::atomic<bool> gReplInterrupted{false};

const char *replHelp() {
  static const char *help = R"(Commands:
  :load FILE            load a model (.ppl); starts a new session
  :param NAME=VALUE     set a model parameter (recompiles)
  :data FILE [FILE...] [--map NAME=COLUMN]... [--weight COLUMN] [-p NAME=VALUE]... [--vocab FILE]
                        bind data, as on the command line (compiles the inference)
  :vocab FILE           words for :top and :show (one per line)
  :infer [N]            N more iterations (default 10) from the current state
                        (no tolerance stop); Ctrl-C stops after the current one
  :reset                start the posteriors afresh (random initialization)
  :show VAR [ROWS]      the posterior of VAR (default 5 rows)
  :top VAR [N]          the N largest entries of each row of VAR (default 10)
  :elbo [all]           the ELBO of the iterations so far (a long trace: its ends)
  :emit STAGE           ast, ir, plates, gated, messages, deps, deps-dot, schedule, plan or llvm
  :save DIR             write the posteriors and summary.json (as ppc --out)
  :report FILE          write the HTML report of the run so far (as ppc --report)
  :init VAR FILE        start VAR from the posterior in FILE (a CSV :save or ppc --out
                        wrote); the posteriors start afresh from it; :init VAR off undoes it
  :given VAR FILE       hold VAR at the posterior in FILE (not updated, no entropy
                        term); :given VAR off infers it again; :given lists them
  :heldout FILE [FILE...] [--map NAME=COLUMN]... [--weight COLUMN]
                        the held-out bound of FILE with the current globals given
                        (as ppc --heldout; --map and --weight default to :data's)
  :time                 compile and inference times
  :threads N            run the data plate's elements on N threads (default: as given
                        by ppc repl --threads, else 1)
  :help                 this text
  :quit                 end the session (or Ctrl-D)
Any other line extends the model, e.g. `val y = ...`: it is added before the
class's closing brace and the model is recompiled.
)";
  return help;
}

bool parseReplCount(const std::string &s, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end || errno || v < 1)
    return false;
  out = v;
  return true;
}

extern "C" void onReplInterrupt(int) { gReplInterrupted = true; }

const std::vector<std::string> &replCommands() {
  static const std::vector<std::string> commands = {
      ":load", ":param",  ":data", ":vocab",   ":infer", ":reset", ":show",    ":top",  ":elbo", ":emit",
      ":save", ":report", ":time", ":threads", ":given", ":init",  ":heldout", ":help", ":quit"};
  return commands;
}

std::unique_ptr<ReplSession> makeReplSession(llvm::raw_ostream &out, int threads) {
  return std::make_unique<Session>(out, threads);
}

} // namespace ppc
