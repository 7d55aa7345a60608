//===- tools/Driver.h - what ppc, ppc-opt and the REPL share ---------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm { class raw_ostream; }

namespace ppc {
class DiagnosticEngine;
namespace rt {
struct PosteriorTable;
struct BoundData;
} // namespace rt
namespace passes { struct PassContext; }
namespace ast { struct Model; }
namespace ir { class Module; }
namespace codegen { struct Plan; }

/// Reads a whole file ("-" is standard input); on failure returns nullopt and
/// sets `error` to a sentence naming the file and the reason.
std::optional<std::string> readFile(const std::string &path, std::string &error);

/// Parses `-p NAME=VALUE` flags into a map; reports malformed or repeated
/// ones in `error`.
bool parseParamFlags(const std::vector<std::string> &flags, std::map<std::string, std::string> &out,
                     std::string &error);

/// The front end in one call: parse, build the AST, lower and verify.
/// `astOut` receives the AST if non-null (lowering is skipped with
/// `stopAfterAST`). Call it inside runTool so that no input can crash it.
std::unique_ptr<ir::Module> compileModel(const std::string &source, DiagnosticEngine &diags,
                                         std::unique_ptr<ast::Model> *astOut = nullptr,
                                         bool stopAfterAST = false);

/// ppc's schedule options (--schedule, --local-iters, --local-tol,
/// --[no-]local-restart) and their defaults, shared with the REPL.
struct ScheduleOptions {
  std::string schedule = "auto"; ///< auto, nested or plain
  int64_t localIterations = 10;
  double localTolerance = 1e-3;
  bool localRestart = true;
  std::vector<std::string> localFlags; ///< those of the three the user gave
  /// A stochastic run (--svi): `auto` is nested wherever there are locals,
  /// so that a batch's locals are updated before the globals read them.
  bool stochastic = false;
  /// Sets the pass context's schedule (and random initial gate conditions).
  void apply(passes::PassContext &ctx) const;
};

/// The passes that `--emit=LEVEL` runs (the default pipeline for the
/// levels after scheduling, and for a run).
std::string pipelineForEmit(const std::string &emit);

/// A vocabulary file: one word per line. Sets `error` if unreadable.
std::vector<std::string> readVocabulary(const std::string &path, std::string &error);

/// --vocab FILE for a run of `plan`: its words, which must be as many as
/// the categories of one of its Dirichlet or categorical posteriors (LDA's
/// words); one that fits none, which would be ignored without a word, sets
/// `error`, as an unreadable file does.
std::vector<std::string> readRunVocabulary(const std::string &path, const codegen::Plan &plan, std::string &error);

/// A short human summary of one posterior: at most `maxRows` rows, each
/// its mean (Dirichlet, Beta), top words (a Dirichlet over the vocabulary)
/// or parameters.
void printPosterior(const rt::PosteriorTable &t, const std::vector<std::string> &vocab, size_t maxRows,
                    llvm::raw_ostream &os);
/// printPosterior for each (5 rows; every topic when words are shown).
void printSummary(const std::vector<rt::PosteriorTable> &tables, const std::vector<std::string> &vocab,
                  llvm::raw_ostream &os);
/// The `n` largest entries of each row (means of Dirichlet rows), named by
/// the vocabulary when it has one word per entry.
void printTop(const rt::PosteriorTable &t, const std::vector<std::string> &vocab, size_t n, size_t maxRows,
              llvm::raw_ostream &os);

/// Stack size for the tools: nesting, not model size, is what uses it.
constexpr size_t kToolStackBytes = size_t(1) << 30;

/// Runs a tool's main on a large guarded stack (see ir/StackGuard.h) and
/// returns its exit code.
int runTool(const std::function<int()> &body);
/// The exit status after flushing standard output: an error saying why
/// where it could not be written (a full disk, a closed pipe), not LLVM's
/// fatal error at exit.
int finishStandardOutput(const char *tool, int code);

/// --emit=data: what each plate and observed variable got from the files.
void printBoundData(const ir::Module &m, const rt::BoundData &d, llvm::raw_ostream &os);

/// The first entry of `dir` that is none of the files a batch or --svi run
/// checkpoints (checkpoint.json, state-I-R.bin; svi-checkpoint.json,
/// svi-state-S-R.bin; each perhaps as an interrupted write's NAME.tmp), an
/// --out's summary.json first; empty when there is none or `dir` is not a
/// directory.
std::string foreignCheckpointFile(const std::string &dir);

} // namespace ppc
