//===- tools/Stochastic.cpp - ppc --svi: streaming stochastic inference ---===//
//
// The step loop of a stochastic run (docs/svi.md). Each step:
//
//   1. binds the next batch of the stream (rt::planBatches cut the file in
//      one pass; only the batch's rows are read);
//   2. lowers the plan for it. Plans of batches with the same number of
//      elements differ only in their buffers' sizes and contents, which the
//      generated code reads through pointers: the code compiled for the
//      first batch of a shape runs every later one (the batch's buffers are
//      moved into that plan); a batch of another shape (the last, shorter
//      one) gets its own;
//   3. runs the init block (the batch's locals start as in a batch run),
//      puts back the globals carried from the last step, and runs one
//      iteration, whose loops over the batch end in the stochastic step
//      (codegen/exec/Stochastic.h).
//
// Checkpoints (--checkpoint DIR): every process writes its state (the
// globals, the data's part of their accumulators, its place in the stream,
// the traces) to svi-state-<step>-<rank>.bin, then process 0 commits
// svi-checkpoint.json; --resume continues after the committed step.
//
//===----------------------------------------------------------------------===//
#include "tools/Stochastic.h"

#include "codegen/exec/Distributed.h"
#include "codegen/exec/JsonFields.h"
#include "codegen/exec/StreamCheckpoint.h"
#include "codegen/exec/Stochastic.h"
#include "codegen/llvm/Jit.h"
#include "codegen/llvm/LLVMCodegen.h"
#include "codegen/plan/Lowering.h"
#include "ir/Diagnostics.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "runtime/FloatEnvironment.h"
#include "runtime/VectorIsa.h"
#include "tools/Driver.h"
#include "tools/Report.h"
#include "tools/UserPosteriors.h"

#include <nlohmann/json.hpp>
#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <list>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace ppc {
namespace {

namespace fs = std::filesystem;
using codegen::StochasticStep;

/// A plan compiled for one shape of batch: its statements and buffer
/// names. Sizes and contents are the batch's.
struct Compiled {
  std::string shape;
  std::unique_ptr<codegen::Plan> plan;
  std::unique_ptr<codegen::Engine> engine;
};

/// The plan's listing without its buffers' sizes.
std::string shapeOf(const codegen::Plan &p) {
  std::string text = codegen::printPlan(p), out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = std::min(text.find('\n', pos), text.size());
    std::string_view line(text.data() + pos, nl - pos);
    size_t open = line.find('['), close = line.find(']');
    if (line.substr(0, 7) == "buffer " && open != std::string_view::npos && close > open)
      (out += line.substr(0, open)) += line.substr(close + 1);
    else
      out += line;
    out += '\n';
    pos = nl + 1;
  }
  return out;
}

using codegen::StreamState;

/// The manifest's format: since 2, each state file ends with its checksum.
constexpr const char *kStreamCheckpointFormat = "ppc svi checkpoint 2";

class StochasticRunner {
public:
  StochasticRunner(const StochasticRun &r, const StochasticOptions &o) : r_(r), o_(o), comm_(r.comm) {}

  int run() {
    if (!planStream() || !restoreCheckpoint())
      return 1;
    rt::RunSummary &summary = state_.summary;
    rt::RunSummary::Stochastic &st = *summary.stochastic;
    const auto start = std::chrono::steady_clock::now();
    const double earlier = summary.time.empty() ? 0 : summary.time.back();
    const bool tty = ::isatty(2) != 0 && !r_.quiet && root();
    std::unique_ptr<codegen::Inference> state;
    Compiled *compiled = nullptr;
    for (int64_t s = state_.step + 1; s <= totalSteps_; ++s) {
      // Before the batch's init block, which steps the messages only it sums.
      // The first step starts the estimate from its batch (Mode::Start): a
      // step of 1, reported as such.
      step_.rho = s == 1 ? 1.0 : codegen::stepSize(o_.tau0, o_.kappa, s);
      step_.beginStep();
      if (!prepare(s, compiled, state))
        return 1;
      if (s == state_.step + 1 && !r_.vocab.empty()) {
        // Read and checked before the first step, not after the stream.
        std::string error;
        vocab_ = readRunVocabulary(r_.vocab, *compiled->plan, error);
        if (!error.empty())
          return fail(error);
      }
      step_.mode = StochasticStep::Mode::Blend;
      double elbo = state->iterate(*compiled->engine, [&] { step_.mode = StochasticStep::Mode::Keep; });
      step_.mode = StochasticStep::Mode::Keep;
      saveGlobals(*compiled->plan, *state);
      state_.step = s;
      // The held-out scores are not the run's time (nor are they in a batch run's).
      const double seconds = earlier +
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() -
                             evaluationSeconds - compileSeconds_;
      summary.elbo.push_back(elbo);
      summary.time.push_back(seconds);
      summary.iterations = s;
      st.rho.push_back(step_.rho);
      st.steps = s;
      st.epochs = double(s) / double(perEpoch_);
      if (!r_.quiet && root()) {
        char line[200];
        std::snprintf(line, sizeof line, "step %6lld  epoch %.3f  rho %.4f  batch %lld  ELBO estimate %.10g  %.3f s",
                      (long long)s, st.epochs, step_.rho, (long long)lastBatchElements_, elbo, seconds);
        std::fprintf(stderr, tty ? "\r%s\033[K" : "%s\n", line);
        std::fflush(stderr);
      }
      if (!std::isfinite(elbo)) {
        if (tty)
          std::fprintf(stderr, "\n");
        return fail("the ELBO estimate is not finite at step " + std::to_string(s) +
                    " (a posterior became improper: check priors, data, --tau0 and --kappa)");
      }
      if (r_.heldout && o_.heldoutEvery > 0 && s % o_.heldoutEvery == 0 && s < totalSteps_) {
        step_.mode = StochasticStep::Mode::Keep;
        state->finish(*compiled->engine);
        rt::RunSummary::Heldout h;
        if (tty)
          std::fprintf(stderr, "\n");
        const auto evaluation = std::chrono::steady_clock::now();
        if (!r_.heldout(*state, h))
          return 1;
        evaluationSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - evaluation).count();
        st.heldout.push_back({s, seconds, h.perObservation});
        if (!r_.quiet && root())
          std::fprintf(stderr, "held-out after step %lld: %.6f nats per observation, perplexity %.4f\n", (long long)s,
                       h.perObservation, std::exp(-h.perObservation));
      }
      if (!r_.checkpoint.empty() && (s % r_.checkpointEvery == 0 || s == totalSteps_) && !saveCheckpoint())
        return 1;
    }
    if (tty)
      std::fprintf(stderr, "\n");
    summary.inferenceSeconds = summary.time.empty() ? 0 : summary.time.back();
    if (!compiled && !prepare(totalSteps_, compiled, state, /*stepping=*/false)) // resumed after the last step
      return 1;
    step_.mode = StochasticStep::Mode::Keep;
    state->finish(*compiled->engine);
    return report(*compiled->plan, *state);
  }

private:
  bool root() const { return !comm_ || comm_->rank() == 0; }
  int fail(const std::string &msg) {
    if (root())
      llvm::errs() << "ppc: error: " << msg << "\n";
    return 1;
  }
  void localError(const std::string &msg) {
    llvm::errs() << "ppc: error: ";
    if (comm_ && comm_->size() > 1)
      llvm::errs() << "(process " << comm_->rank() << " of " << comm_->size() << ") ";
    llvm::errs() << msg << "\n";
  }
  bool everyoneOk(bool ok) { return comm_ ? comm_->allOk(ok) : ok; }
  /// Every process's `value`, in rank order.
  std::vector<double> everyones(double value) {
    if (!comm_)
      return {value};
    std::vector<double> all(size_t(comm_->size()), 0.0);
    all[size_t(comm_->rank())] = value;
    comm_->sumInRankOrder(all.data(), all.size());
    return all;
  }

  /// The model as compiled, which the data binds to, and the scheduled
  /// module's values by name, which the bound data is handed over to.
  bool compileForBinding() {
    DiagnosticEngine quiet("", r_.source, llvm::nulls());
    pristine_ = compileModel(r_.source, quiet);
    if (pristine_)
      pristineEval_ = ir::evaluate(*pristine_, r_.params, /*requireAll=*/true, quiet);
    if (!pristine_ || !pristineEval_)
      return fail("internal error: the model did not compile again for binding its batches"), false;
    auto add = [&](const ir::Value *v) { scheduled_.emplace(v->name, v); };
    ir::walk(r_.module->body, [&](const ir::Op &op) {
      for (const ir::Value *v : op.results)
        add(v);
    });
    return true;
  }

  /// Bound data of the compiled model, keyed by the scheduled module's values.
  std::optional<rt::BoundData> handOver(rt::BoundData &&data) {
    rt::BoundData out;
    out.warnings = std::move(data.warnings);
    for (auto &[v, bp] : data.plates)
      if (auto it = scheduled_.find(v->name); it != scheduled_.end())
        out.plates.emplace(it->second, std::move(bp));
    for (auto &[v, bv] : data.variables)
      if (auto it = scheduled_.find(v->name); it != scheduled_.end())
        out.variables.emplace(it->second, std::move(bv));
    return out;
  }

  /// Cuts the stream into batches; the data size and the steps.
  bool planStream() {
    std::string error;
    if (!compileForBinding())
      return false;
    plate_ = rt::partitionPlate(*pristine_, error, /*stochastic=*/true);
    if (!plate_)
      return fail(error), false;
    binding_ = r_.binding;
    binding_.partition = rt::Partition{plate_, comm_ ? comm_->rank() : 0, comm_ ? comm_->size() : 1, std::nullopt};
    const auto scanStart = std::chrono::steady_clock::now();
    std::vector<std::string> errors;
    stream_ = rt::planBatches(*pristine_, *pristineEval_, binding_, o_.batch, errors);
    for (const std::string &e : errors)
      localError(e);
    if (stream_ && stream_->batches.empty()) {
      localError(stream_->file + ": no data rows to read in batches");
      stream_.reset();
    }
    if (!everyoneOk(stream_.has_value()))
      return false;
    const double scanSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - scanStart).count();
    struct stat sb;
    const double bytes = ::stat(stream_->file.c_str(), &sb) == 0 ? double(sb.st_size) : 0;
    int64_t elements = 0;
    for (double e : everyones(double(stream_->elements)))
      elements += int64_t(e);
    for (double b : everyones(double(stream_->batches.size())))
      perEpoch_ = std::max(perEpoch_, int64_t(b));
    dataSize_ = o_.dataSize > 0 ? o_.dataSize : elements;
    // The data's digest, every process's part (as two exact 32-bit halves).
    uint64_t digest = 0;
    for (const rt::CsvBatch &b : stream_->batches)
      digest = (digest ^ b.digest) * 0x9E3779B97F4A7C15ull + 1;
    const std::vector<double> low = everyones(double(digest & 0xffffffffull)), high = everyones(double(digest >> 32));
    dataDigest_ = 0;
    for (size_t p = 0; p < low.size(); ++p)
      dataDigest_ = (dataDigest_ ^ (uint64_t(high[p]) << 32 | uint64_t(low[p]))) * 0x9E3779B97F4A7C15ull + 1;
    // Ids with gaps are elements without rows: they count in the data size,
    // which scales every batch (a file of ids 160..199 is 200 elements).
    int64_t mine = 0, withRows = 0;
    for (const rt::CsvBatch &b : stream_->batches)
      mine += b.withRows;
    for (double w : everyones(double(mine)))
      withRows += int64_t(w);
    if (withRows < elements && o_.dataSize <= 0 && root())
      llvm::errs() << "ppc: warning: " << stream_->file << ": " << (elements - withRows) << " of the " << elements
                   << " elements of plate %" << plate_->name << " have no rows (ids with gaps, in column '"
                   << stream_->key << "'); a stochastic run counts them in the data size, which scales each "
                      "batch: renumber the ids from 0 without gaps, or give --data-size\n";
    totalSteps_ = perEpoch_ * o_.epochs;
    rt::RunSummary::Stochastic st;
    st.batches = perEpoch_;
    st.dataSize = dataSize_;
    st.batchElements = o_.batch;
    st.scanSeconds = scanSeconds;
    st.scanBytes = bytes;
    state_.summary.stochastic = st;
    state_.summary.dataSeconds = scanSeconds;
    if (!r_.quiet && root())
      llvm::errs() << "stream " << stream_->file << ": " << elements << " elements of %" << plate_->name << " in "
                   << perEpoch_ << (perEpoch_ == 1 ? " batch" : " batches") << " of up to " << o_.batch
                   << (comm_ && comm_->size() > 1 ? " per process" : "") << " (scanned "
                   << llvm::format("%.1f", bytes / 1e6) << " MB at "
                   << llvm::format("%.0f", scanSeconds > 0 ? bytes / 1e6 / scanSeconds : 0.0) << " MB/s); "
                   << totalSteps_ << (totalSteps_ == 1 ? " step" : " steps") << ", data size " << dataSize_ << "\n";
    planOptions_ = r_.plan;
    planOptions_.lowering.partitionedPlate = scheduled_.at(plate_->name);
    int64_t &l2 = planOptions_.lowering.l2CacheBytes;
    if (l2 <= 0)
      l2 = codegen::hostL2CacheBytes();
    if (comm_) { // process 0's, so every process builds the same plans
      std::string text = std::to_string(l2);
      comm_->broadcastFromRoot(text);
      l2 = std::stoll(text);
    }
    if (r_.engine == "jit") {
      session_ = codegen::JitSession::create(error);
      if (!session_)
        return fail(error), false;
    }
    return true;
  }

  /// Binds batch `s`'s rows, finds or compiles its plan, and starts its
  /// state: the batch's locals from the init block, the globals from the
  /// last step. Not `stepping` (resumed after the last step): the globals
  /// of the checkpoint, the batch's sums all dropped.
  bool prepare(int64_t s, Compiled *&compiled, std::unique_ptr<codegen::Inference> &state, bool stepping = true) {
    state.reset(); // the last batch's state goes before this one's comes
    compiled = nullptr;
    const int64_t k = (s - 1) % perEpoch_;
    if (k == 0)
      state_.offsets.clear();
    const rt::CsvBatch &batch = stream_->batches[size_t(k) % stream_->batches.size()];
    rt::BindingOptions bo = binding_;
    bo.partition->batch = batch;
    std::vector<std::string> errors;
    std::optional<rt::BoundData> data = rt::bindData(*pristine_, *pristineEval_, bo, errors);
    for (const std::string &e : errors)
      localError(e);
    if (!everyoneOk(data.has_value()))
      return false;
    data = handOver(std::move(*data));
    codegen::PlanOptions options = planOptions_;
    for (const auto &[v, bv] : data->variables)
      if (!(comm_ ? comm_->allOk(bv.missing.empty()) : bv.missing.empty()))
        options.lowering.predicted.insert(v->name);
    std::unique_ptr<codegen::Plan> plan = codegen::buildPlan(*r_.module, *r_.evaluation, *data, true, *r_.diags,
                                                             options, r_.passOptions, nullptr, &llvm::errs());
    data.reset();
    if (!everyoneOk(plan != nullptr))
      return false;
    std::string shape = shapeOf(*plan);
    for (auto &c : cache_)
      if (c.shape == shape)
        compiled = &c;
    if (compiled) {
      // The same code runs it: the batch's buffers replace the last one's.
      compiled->plan->buffers = std::move(plan->buffers);
      compiled->plan->posteriors = std::move(plan->posteriors);
      compiled->plan->predicted = std::move(plan->predicted);
    }
    // (Processes whose batches differ in shape compile at different steps:
    // every process takes part in the agreement below, compiling or not.)
    std::string error = compiled ? std::string() : StochasticStep::unsupported(*plan);
    if (!error.empty())
      error = "--svi cannot run this schedule: " + error;
    else if (!compiled)
      error = codegen::planMemoryProblem(*plan);
    std::unique_ptr<codegen::Engine> engine;
    if (!compiled && error.empty()) {
      const auto compileStart = std::chrono::steady_clock::now();
      engine = session_ ? codegen::createJitEngine(*plan, *session_, nullptr, error) : codegen::createInterpreter(*plan);
      compileSeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - compileStart).count();
      if (!engine && error.empty())
        error = "internal error: no engine";
    }
    if (!error.empty())
      localError(error);
    if (!everyoneOk(error.empty()))
      return false;
    if (!compiled) {
      engine->setThreads(r_.threads);
      engine->parallel.comm = comm_;
      engine->parallel.stochastic = &step_;
      if (cache_.size() >= 4)
        cache_.pop_front();
      cache_.push_back(Compiled{std::move(shape), std::move(plan), std::move(engine)});
      compiled = &cache_.back();
    }
    codegen::Plan &p = *compiled->plan;
    if (p.elementOffsets >= 0) {
      // The random start of an element is keyed by its place in the epoch's
      // stream: the elements of the steps before, then of the processes
      // before in this step (one batch per process: as a data-parallel
      // batch run keys them).
      std::vector<int64_t> offsets(p.posteriors.size(), 0);
      for (size_t pi = 0; pi < p.posteriors.size(); ++pi)
        if (p.posteriors[pi].partitioned) {
          int64_t &before = state_.offsets[p.posteriors[pi].variable->name];
          std::vector<double> counts = everyones(double(p.posteriors[pi].flatElements));
          const size_t rank = comm_ ? size_t(comm_->rank()) : 0;
          offsets[pi] = before;
          for (size_t q = 0; q < counts.size(); ++q) {
            offsets[pi] += q < rank ? int64_t(counts[q]) : 0;
            before += int64_t(counts[q]);
          }
        }
      p.buffers[size_t(p.elementOffsets)].ints = std::move(offsets);
    }
    double n = 0;
    for (double e : everyones(double(batch.elements)))
      n += e;
    lastBatchElements_ = int64_t(n);
    step_.setPlan(p);
    step_.scale = double(dataSize_) / n;
    step_.mode = !stepping  ? StochasticStep::Mode::Keep
                 : s == 1   ? StochasticStep::Mode::Start
                            : StochasticStep::Mode::Discard;
    state = std::make_unique<codegen::Inference>(p);
    // The first batch's random locals start the globals; a later batch's
    // locals restart from their priors in the iteration (never read the draws).
    state->drawRandomLocals = s == 1 || p.localRestart < 0;
    state->initialize(*compiled->engine, r_.seed);
    // The globals carried over, but for the accumulators the init block has
    // just stepped (messages from the data alone, which no later loop sums).
    if (s > 1 || !stepping)
      for (int32_t b : p.globalState) {
        if (stepping && step_.steppedInInit().count(b))
          continue;
        auto it = state_.globals.find(p.buffers[size_t(b)].name);
        if (it != state_.globals.end() && int64_t(it->second.size()) == p.buffers[size_t(b)].size)
          std::memcpy(state->buffers()[b], it->second.data(), it->second.size() * sizeof(double));
      }
    return true;
  }

  void saveGlobals(const codegen::Plan &p, const codegen::Inference &state) {
    for (int32_t b : p.globalState) {
      const double *v = static_cast<const double *>(state.buffers()[b]);
      state_.globals[p.buffers[size_t(b)].name].assign(v, v + p.buffers[size_t(b)].size);
    }
  }

  /// Same model, parameters, binding, stream and step sizes: what a resumed
  /// run must share (the module prints its parameters' defaults, not their
  /// values under -p; --weight and --map change what the same rows mean).
  std::string fingerprint() const {
    std::string s;
    llvm::raw_string_ostream os(s);
    ir::print(*r_.module, os);
    std::map<std::string, std::string> values; // by name: pointers order differently in another process
    if (pristineEval_)
      for (const auto &[param, value] : pristineEval_->values)
        values[param->name] = ir::formatDouble(value);
    for (const auto &[name, value] : values)
      os << "\n" << name << " = " << value;
    for (const auto &[name, column] : r_.binding.map)
      os << "\n--map " << name << "=" << column;
    os << "\n--weight " << (r_.binding.weight ? *r_.binding.weight : std::string("(none)"));
    os << "\nbatch " << o_.batch << " tau0 " << ir::formatDouble(o_.tau0) << " kappa " << ir::formatDouble(o_.kappa)
       << " data " << dataSize_ << " digest " << dataDigest_ << " steps per epoch " << perEpoch_
       << " seed " << r_.seed << " processes " << (comm_ ? comm_->size() : 1) << " engine " << r_.engine
       << " threads " << r_.threads;
    return std::to_string(std::hash<std::string>{}(os.str()));
  }
  std::string statePath(const std::string &dir, int64_t step) const {
    return (fs::path(dir) / ("svi-state-" + std::to_string(step) + "-" + std::to_string(comm_ ? comm_->rank() : 0) +
                             ".bin"))
        .string();
  }

  bool saveCheckpoint() {
    std::string error;
    std::error_code ec;
    fs::create_directories(r_.checkpoint, ec);
    const std::string bytes = codegen::encodeStreamState(state_, step_.effective);
    bool ok = rt::writeFileAtomically(statePath(r_.checkpoint, state_.step), bytes, error);
    if (!ok)
      localError("--checkpoint: " + error);
    if (!everyoneOk(ok))
      return false;
    if (root()) {
      nlohmann::json manifest;
      manifest["format"] = kStreamCheckpointFormat;
      manifest["step"] = state_.step;
      manifest["processes"] = comm_ ? comm_->size() : 1;
      manifest["fingerprint"] = fingerprint();
      ok = rt::writeFileAtomically((fs::path(r_.checkpoint) / "svi-checkpoint.json").string(), manifest.dump(1) + "\n",
                                   error);
      if (!ok)
        localError("--checkpoint: " + error);
    }
    if (!everyoneOk(ok))
      return false;
    // The older states of this process are superseded.
    const std::string mine = "-" + std::to_string(comm_ ? comm_->rank() : 0) + ".bin";
    const std::string current = fs::path(statePath(r_.checkpoint, state_.step)).filename().string();
    for (const auto &entry : fs::directory_iterator(r_.checkpoint, ec)) {
      std::string name = entry.path().filename().string();
      if (name.rfind("svi-state-", 0) == 0 && name.size() > mine.size() &&
          name.compare(name.size() - mine.size(), mine.size(), mine) == 0 && name != current)
        fs::remove(entry.path(), ec);
    }
    return true;
  }

  bool restoreCheckpoint() {
    if (r_.resume.empty())
      return true;
    bool ok = true;
    std::string error;
    const fs::path manifestPath = fs::path(r_.resume) / "svi-checkpoint.json";
    std::ifstream manifestFile(manifestPath);
    if (!manifestFile) {
      if (root() && !r_.quiet)
        llvm::errs() << "no checkpoint in " << r_.resume << " yet: starting from the beginning\n";
      return true;
    }
    try {
      nlohmann::json manifest = nlohmann::json::parse(manifestFile);
      const std::string format =
          manifest.contains("format") && manifest["format"].is_string() ? manifest["format"].get<std::string>() : "";
      if (format != kStreamCheckpointFormat)
        throw std::runtime_error(
            "'" + manifestPath.string() + "' is a checkpoint of another format (" +
            (format.empty() ? std::string("an earlier one, without checksums") : "'" + format + "'") +
            ", this ppc writes '" + kStreamCheckpointFormat + "'); start the run again");
      if (manifest.at("fingerprint").get<std::string>() != fingerprint())
        throw std::runtime_error("it was written by a run of another model, parameter (-p), data, --map, --weight, "
                                 "--batch, --tau0, --kappa, seed, engine, thread or process count");
      const int64_t step = codegen::integerAt<int64_t>(manifest, "step");
      std::ifstream in(statePath(r_.resume, step), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof())
        throw std::runtime_error("cannot read " + statePath(r_.resume, step));
      codegen::decodeStreamState(bytes, statePath(r_.resume, step), r_.resume, state_, step_.effective);
      if (state_.step != step)
        throw std::runtime_error("'" + statePath(r_.resume, step) + "' is at step " + std::to_string(state_.step) +
                                 ", its manifest at " + std::to_string(step));
      state_.summary.stochastic->epochs = double(state_.step) / double(perEpoch_);
      if (state_.step > totalSteps_)
        throw std::runtime_error("it is at step " + std::to_string(state_.step) + ", past this run's " +
                                 std::to_string(totalSteps_) + " (--epochs)");
    } catch (const std::exception &e) {
      error = std::string("--resume ") + r_.resume + ": " + e.what();
      ok = false;
    }
    if (!ok)
      localError(error);
    if (!everyoneOk(ok))
      return false;
    if (root() && !r_.quiet)
      llvm::errs() << "resuming after step " << state_.step << " from " << r_.resume << "\n";
    return true;
  }

  /// The globals' posteriors, the held-out score, summary.json.
  int report(const codegen::Plan &p, codegen::Inference &state) {
    rt::RunSummary &summary = state_.summary;
    std::vector<rt::PosteriorTable> all = state.posteriors(), tables;
    size_t t = 0;
    for (const codegen::Posterior &post : p.posteriors) {
      if (post.scratch)
        continue;
      if (!post.partitioned)
        tables.push_back(std::move(all[t]));
      ++t;
    }
    if (r_.heldout) {
      rt::RunSummary::Heldout h;
      const auto evaluation = std::chrono::steady_clock::now();
      if (!r_.heldout(state, h))
        return 1;
      evaluationSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - evaluation).count();
      summary.heldout = h;
      summary.stochastic->heldout.push_back({state_.step, summary.inferenceSeconds, h.perObservation});
    }
    if (!root())
      return 0;
    if (vocab_.empty() && !r_.vocab.empty()) { // resumed after the last step: no step read it
      std::string error;
      vocab_ = readRunVocabulary(r_.vocab, p, error);
      if (!error.empty())
        return fail(error);
    }
    summary.options = r_.options;
    summary.options["svi"] = "true";
    summary.options["batch"] = std::to_string(o_.batch);
    summary.options["tau0"] = ir::formatDouble(o_.tau0);
    summary.options["kappa"] = ir::formatDouble(o_.kappa);
    summary.options["epochs"] = std::to_string(o_.epochs);
    summary.options["seed"] = std::to_string(r_.seed);
    summary.options["threads"] = std::to_string(r_.threads);
    summary.options["engine"] = r_.engine;
    summary.options["vector_isa"] = std::string(rt::describe(rt::vectorIsa()));
    summary.options["subnormals"] = std::string(rt::subnormalsName(rt::subnormals()));
    if (comm_)
      summary.options["processes"] = std::to_string(comm_->size());
    summary.compileSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - r_.started).count() -
        summary.inferenceSeconds - summary.dataSeconds - evaluationSeconds;
    if (!r_.quiet)
      llvm::errs() << "finished " << state_.step << (state_.step == 1 ? " step" : " steps") << " ("
                   << llvm::format("%.3f", summary.stochastic->epochs) << " epochs): last ELBO estimate "
                   << llvm::format("%.10g", summary.elbo.empty() ? 0.0 : summary.elbo.back()) << " ("
                   << llvm::format("%.3f", summary.inferenceSeconds) << " s)\n";
    printSummary(tables, vocab_, llvm::outs());
    if (summary.heldout)
      printHeldout(*summary.heldout, llvm::outs(), /*iterations=*/true);
    std::string error;
    if (!r_.out.empty() && !rt::writeOutputs(r_.out, summary, tables, error))
      return fail(error);
    if (!r_.report.empty()) {
      if (!writeReport(r_.report, reportOfRun(summary, tables, r_.modelPath, r_.source, vocab_, r_.module), error))
        return fail(error);
    }
    return 0;
  }

  const StochasticRun &r_;
  const StochasticOptions &o_;
  codegen::Communicator *comm_;
  std::unique_ptr<ir::Module> pristine_;
  std::optional<ir::Evaluation> pristineEval_;
  std::map<std::string, const ir::Value *> scheduled_;
  const ir::Value *plate_ = nullptr; ///< of the compiled model
  rt::BindingOptions binding_;
  std::optional<rt::BatchPlan> stream_;
  codegen::PlanOptions planOptions_;
  std::unique_ptr<codegen::JitSession> session_;
  std::list<Compiled> cache_;
  StochasticStep step_;
  StreamState state_;
  int64_t dataSize_ = 0, perEpoch_ = 0, totalSteps_ = 0, lastBatchElements_ = 0;
  uint64_t dataDigest_ = 0; ///< of the stream's rows (the checkpoint's fingerprint)
  std::vector<std::string> vocab_; ///< --vocab's words, read before the first step
  double evaluationSeconds = 0; ///< held-out scores during the run, and at its end
  /// JIT compiles of the batches' shapes during the run (the first step's,
  /// a shorter last batch's): compile time, not the steps'.
  double compileSeconds_ = 0;
};

} // namespace

int runStochastic(const StochasticRun &run, const StochasticOptions &options) {
  return StochasticRunner(run, options).run();
}

} // namespace ppc
