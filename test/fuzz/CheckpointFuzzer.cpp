//===- test/fuzz/CheckpointFuzzer.cpp - --resume's reader -----------------===//
//
// Any bytes as a checkpoint of a small Gaussian mixture's run. Odd first
// byte: the rest is one state (Inference::restoreState, past the checksums
// that guard it in a file). 2 mod 4: the rest is a stochastic run's state
// file, given the checksum it ends with (decodeStreamState past it).
// 0 mod 4: the rest up to the first NUL is the manifest and what follows
// its state file (Checkpointer::restore, checksums included). Each must end
// in a restored state or an error.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "codegen/exec/Checkpoint.h"
#include "codegen/exec/Executor.h"
#include "codegen/exec/StreamCheckpoint.h"
#include "codegen/plan/Plan.h"
#include "codegen/transforms/PlanPassManager.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "passes/PassManager.h"
#include "runtime/Binding.h"
#include "runtime/Output.h"

#include <cstring>

namespace {
struct Run {
  std::unique_ptr<ppc::ir::Module> module;
  std::optional<ppc::ir::Evaluation> eval;
  std::optional<ppc::rt::BoundData> data;
  std::unique_ptr<ppc::codegen::Plan> plan;
  std::unique_ptr<ppc::codegen::Engine> engine;
  std::unique_ptr<ppc::codegen::Inference> inference;
};

Run makeRun() {
  const std::string source = "@Model class G(K: Long = 2) {\n"
                             "  val w = Dirichlet(1.0, K)\n"
                             "  val mu = (0L until K).map(_ => Gaussian(0.0, 0.01))\n"
                             "  val tau = (0L until K).map(_ => Gamma(1.0, 1.0))\n"
                             "  val z = ?.map(_ => Categorical(w))\n"
                             "  val x = z.map(k => Gaussian(mu(k), tau(k)))\n}\n";
  Run r;
  r.module = ppc::fuzz::compileOnce(source);
  ppc::DiagnosticEngine diags("model.ppl", source, llvm::errs());
  r.eval = ppc::ir::evaluate(*r.module, {}, true, diags);
  const std::string csv = "x\n1.0\n1.2\n5.0\n5.3\n";
  ppc::rt::BindingOptions b;
  b.files = {ppc::fuzz::scratchFile("data.csv", reinterpret_cast<const uint8_t *>(csv.data()), csv.size())};
  std::vector<std::string> errors;
  r.data = ppc::rt::bindData(*r.module, *r.eval, b, errors);
  ppc::passes::PassManager pm;
  std::string error;
  ppc::passes::PassContext ctx{diags, &llvm::nulls(), {}, {}};
  ctx.randomInitConditions = true;
  if (!r.eval || !r.data || !pm.addPipeline(ppc::passes::defaultPipeline(), error) ||
      !pm.run(*r.module, ctx, llvm::nulls(), llvm::nulls()))
    abort();
  r.plan = ppc::codegen::buildPlan(*r.module, *r.eval, *r.data, true, diags);
  if (!r.plan)
    abort();
  r.engine = ppc::codegen::createInterpreter(*r.plan);
  r.inference = std::make_unique<ppc::codegen::Inference>(*r.plan);
  r.inference->initialize(*r.engine, 0);
  return r;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Run run = makeRun();
  if (size == 0)
    return 0;
  std::string error;
  if (data[0] & 1) {
    run.inference->restoreState(std::string(reinterpret_cast<const char *>(data + 1), size - 1), error);
    return 0;
  }
  if (data[0] % 4 == 2) {
    std::string file(reinterpret_cast<const char *>(data + 1), size - 1);
    const uint64_t sum = ppc::codegen::checkpointChecksum(file);
    file.append(reinterpret_cast<const char *>(&sum), sizeof sum);
    ppc::codegen::StreamState state;
    state.summary.stochastic = ppc::rt::RunSummary::Stochastic();
    ppc::codegen::NamedBuffers effective;
    try {
      ppc::codegen::decodeStreamState(file, "state.bin", "checkpoint", state, effective);
    } catch (const std::exception &) {
    }
    return 0;
  }
  const uint8_t *nul = static_cast<const uint8_t *>(std::memchr(data + 1, 0, size - 1));
  const size_t manifestSize = nul ? size_t(nul - data - 1) : size - 1;
  const std::string dir = ppc::fuzz::scratchDir() + "/checkpoint";
  mkdir(dir.c_str(), 0700);
  std::ofstream(dir + "/checkpoint.json", std::ios::binary)
      .write(reinterpret_cast<const char *>(data + 1), std::streamsize(manifestSize));
  // The state under the name a well-formed manifest of iteration 3 gives.
  const size_t stateStart = nul ? manifestSize + 2 : size;
  std::ofstream(dir + "/state-3-0.bin", std::ios::binary)
      .write(reinterpret_cast<const char *>(data + stateStart), std::streamsize(size - stateStart));
  ppc::codegen::Checkpointer checkpointer(dir, *run.inference, nullptr);
  ppc::rt::RunSummary summary;
  uint64_t seed = 0;
  bool found = false;
  checkpointer.restore(*run.inference, summary, seed, found, error);
  return 0;
}
