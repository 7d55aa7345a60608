//===- tools/UserPosteriors.h - --init, --given and held-out evaluation ----===//
//
// Train, save, apply (docs/inference.md, "Train, save, apply"): a run can
// start a latent variable from a saved posterior (--init VAR=FILE), hold one
// at a saved posterior (--given VAR=FILE: its statistics are constants, no
// message goes to it, it has no entropy term), and, after training, score
// held-out data with the trained globals given (--heldout FILE). ppc and
// the REPL share these steps.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/exec/Executor.h"
#include "codegen/transforms/PlanPassManager.h"
#include "runtime/Binding.h"
#include "runtime/Output.h"
#include "tools/Driver.h"

#include <map>
#include <string>
#include <vector>

namespace llvm { class raw_ostream; }

namespace ppc {
namespace ir { class Module; struct Evaluation; }

/// One --init or --given flag.
struct PosteriorSource {
  std::string variable, file;
  bool given = false;
  std::string flag() const { return (given ? "--given " : "--init ") + variable + "=" + file; }
};

/// Parses `VAR=FILE` (the flag's text after --init / --given).
bool parsePosteriorSource(const std::string &text, bool given, PosteriorSource &out, std::string &error);

/// Checks that each source names a latent variable of `m` with a posterior
/// of its own (not observed, not computed from others, named once), then
/// marks the given ones in the IR (ir::Op::given) and returns the names
/// --init starts from in `initialized` (the scheduler's and the lowering's
/// user initializations).
bool applyPosteriorSources(ir::Module &m, const std::vector<PosteriorSource> &sources,
                           std::vector<std::string> &initialized, std::string &error);

/// Reads each source's file for its posterior in `plan` as natural
/// parameters, by variable (Inference::initialize's `start`).
bool readPosteriorSources(const codegen::Plan &plan, const std::vector<PosteriorSource> &sources,
                          std::map<std::string, std::vector<double>> &start, std::string &error);

/// The natural parameters of every posterior of `trained` that `heldout`
/// holds given, by variable: a trained run's globals for its held-out run.
std::map<std::string, std::vector<double>> givenFromTrained(const codegen::Inference &trained,
                                                            const codegen::Plan &heldout);

/// The latent variables over no data plate (the globals of
/// passes/GlobalLocal.h), which a held-out run holds at their trained
/// posteriors: given in `m`. Returns their names.
std::vector<std::string> giveGlobals(ir::Module &m);

/// The observations in `data`: each observed variable's elements (a vector
/// observation counts once), weighted (--weight): a bound per observation
/// divides by it (nats per token for LDA).
double countObservations(const ir::Module &m, const ir::Evaluation &eval, const rt::BoundData &data);

/// What a held-out evaluation compiles and runs: the trained run's model,
/// parameters and options, the held-out files bound as --infer's.
struct HeldoutOptions {
  std::string modelPath, source;
  std::map<std::string, std::string> params;
  rt::BindingOptions binding;
  ScheduleOptions schedule;
  codegen::PlanOptions plan;
  codegen::RunOptions run;
  std::string engine = "jit";
  int threads = 1;
  bool warned = false; ///< checkHeldout gave the binding's warnings already
};

/// --heldout: the model compiled again for the held-out files, its globals
/// given at `trained`'s posteriors (exactly: the trained natural
/// parameters, not a round trip through a CSV), run to convergence with the
/// training's options; its ELBO is the held-out bound. Errors go to stderr.
bool evaluateHeldout(const HeldoutOptions &options, const codegen::Inference &trained, rt::RunSummary::Heldout &out);

/// The first step of evaluateHeldout, on its own: whether the held-out
/// files bind to the model (columns, values, sizes), so that a run finds a
/// bad --heldout before training, not after it. Errors go to stderr.
bool checkHeldout(const HeldoutOptions &options);

/// "held-out FILE: ELBO ... nats per observation, perplexity ..." (and how
/// its run ended, with `iterations`).
void printHeldout(const rt::RunSummary::Heldout &h, llvm::raw_ostream &os, bool iterations);

} // namespace ppc
