#include "tools/Driver.h"

#include "codegen/plan/Plan.h"
#include "frontend/AST.h"
#include "frontend/Lowering.h"
#include "frontend/Parser.h"
#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "ir/StackGuard.h"
#include "ir/Verifier.h"
#include "passes/PassManager.h"
#include "runtime/Binding.h"
#include "runtime/Output.h"

#include <algorithm>
#include <llvm/Support/Format.h>
#include <llvm/Support/Regex.h>
#include <llvm/Support/raw_ostream.h>
#include <numeric>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <sys/stat.h>

namespace ppc {

std::optional<std::string> readFile(const std::string &path, std::string &error) {
  if (path == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    error = "cannot read '" + path + "': it is a directory";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return std::nullopt;
  }
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool parseParamFlags(const std::vector<std::string> &flags, std::map<std::string, std::string> &out,
                     std::string &error) {
  for (const std::string &f : flags) {
    size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "-p expects NAME=VALUE; got '" + f + "'";
      return false;
    }
    std::string name = f.substr(0, eq);
    if (out.count(name)) {
      error = "parameter '" + name + "' is given twice (-p " + name + "=" + out[name] + " and -p " + f + ")";
      return false;
    }
    out[name] = f.substr(eq + 1);
  }
  return true;
}

std::unique_ptr<ir::Module> compileModel(const std::string &source, DiagnosticEngine &diags,
                                         std::unique_ptr<ast::Model> *astOut, bool stopAfterAST) {
  std::unique_ptr<ir::Module> module;
  std::unique_ptr<ast::Model> model = parseModel(source, diags);
  if (!model)
    return nullptr;
  if (!stopAfterAST) {
    module = lowerModel(*model, diags);
    if (module && !ir::verify(*module, diags)) {
      diags.error("internal compiler error: the front end produced invalid IR (please report this model)");
      module.reset();
    }
  }
  if (astOut)
    *astOut = std::move(model);
  return module;
}

std::vector<std::string> readRunVocabulary(const std::string &path, const codegen::Plan &plan, std::string &error) {
  std::vector<std::string> vocab = readVocabulary(path, error);
  if (!error.empty())
    return vocab;
  std::string sizes;
  bool fits = false;
  for (const codegen::Posterior &p : plan.posteriors)
    if (p.family == Family::Dirichlet || p.family == Family::Categorical) {
      fits = fits || p.dimension == int64_t(vocab.size());
      sizes += (sizes.empty() ? "" : ", ") + p.variable->name + ": " + std::to_string(p.dimension);
    }
  if (!fits)
    error = "--vocab " + path + " has " + std::to_string(vocab.size()) + " word" + (vocab.size() == 1 ? "" : "s") +
            ", but no variable has that many categories (" +
            (sizes.empty() ? std::string("none has categories") : sizes) + ")";
  return vocab;
}

std::vector<std::string> readVocabulary(const std::string &path, std::string &error) {
  std::vector<std::string> words;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) { // an ifstream opens one, and reads nothing
    error = "the vocabulary file '" + path + "' is a directory";
    return words;
  }
  std::ifstream in(path);
  if (!in) {
    error = "cannot read the vocabulary file '" + path + "'";
    return words;
  }
  for (std::string w; std::getline(in, w);) {
    if (!w.empty() && w.back() == '\r')
      w.pop_back();
    words.push_back(w);
  }
  return words;
}

void printPosterior(const rt::PosteriorTable &t, const std::vector<std::string> &vocab, size_t maxRows,
                    llvm::raw_ostream &os) {
  if (!t.columns.empty()) { // a missing observation's posterior predictive
    const size_t rows = t.values.size() / t.columns.size(), n = t.indexColumns.size();
    os << t.variable << ": the posterior predictive of " << rows << " missing value" << (rows == 1 ? "" : "s") << "\n";
    for (size_t r = 0; r < std::min(rows, maxRows); ++r) {
      os << "  [";
      for (size_t j = 0; j < n; ++j)
        os << (j ? "," : "") << t.indices[r * n + j];
      os << "]";
      for (size_t c = 0; c < t.columns.size(); ++c)
        os << " " << t.columns[c] << "=" << llvm::format("%.6g", t.values[r * t.columns.size() + c]);
      os << "\n";
    }
    if (rows > maxRows)
      os << "  ... (" << rows - maxRows << " more)\n";
    return;
  }
  {
    std::vector<std::string> cols = rt::posteriorColumns(t.family, t.dimension);
    size_t rows = cols.empty() ? 0 : t.values.size() / cols.size();
    // A chain or a computed value has no spelling of its own: "MvGaussian chain (chain)".
    const std::string_view spelling = familySpec(t.family).spelling;
    os << t.variable << ": " << (spelling.empty() ? displayName(t.family) : std::string(spelling));
    if (t.family == Family::Dirichlet || t.family == Family::Categorical || t.family == Family::MvGaussian ||
        t.family == Family::Wishart)
      os << "<" << t.dimension << ">";
    os << " posterior, " << rows << (rows == 1 ? " element" : " elements") << "\n";
    bool topWords = t.family == Family::Dirichlet && !vocab.empty() && int64_t(vocab.size()) == t.dimension;
    size_t shown = std::min<size_t>(rows, maxRows);
    for (size_t r = 0; r < shown; ++r) {
      const double *v = t.values.data() + r * cols.size();
      os << "  [" << r << "]";
      if (topWords) {
        std::vector<size_t> order(cols.size());
        std::iota(order.begin(), order.end(), 0);
        size_t top = std::min<size_t>(10, order.size());
        std::partial_sort(order.begin(), order.begin() + long(top), order.end(),
                          [&](size_t a, size_t b) { return v[a] > v[b]; });
        for (size_t i = 0; i < top; ++i)
          os << " " << vocab[order[i]];
        os << "\n";
        continue;
      }
      if (t.family == Family::Dirichlet || t.family == Family::Beta) {
        // The posterior mean.
        double sum = 0;
        for (size_t c = 0; c < cols.size(); ++c)
          sum += v[c];
        os << " mean";
        for (size_t c = 0; c < std::min<size_t>(cols.size(), 8); ++c)
          os << " " << llvm::format("%.4g", v[c] / sum);
        if (cols.size() > 8)
          os << " ...";
        os << "\n";
        continue;
      }
      for (size_t c = 0; c < std::min<size_t>(cols.size(), 8); ++c)
        os << " " << cols[c] << "=" << llvm::format("%.6g", v[c]);
      if (cols.size() > 8)
        os << " ...";
      os << "\n";
    }
    if (shown < rows)
      os << "  ... (" << rows - shown << " more)\n";
  }
}

void printSummary(const std::vector<rt::PosteriorTable> &tables, const std::vector<std::string> &vocab,
                  llvm::raw_ostream &os) {
  for (const rt::PosteriorTable &t : tables) {
    bool topWords = t.family == Family::Dirichlet && !vocab.empty() && int64_t(vocab.size()) == t.dimension;
    printPosterior(t, vocab, topWords ? SIZE_MAX : 5, os);
  }
}

void printTop(const rt::PosteriorTable &t, const std::vector<std::string> &vocab, size_t n, size_t maxRows,
              llvm::raw_ostream &os) {
  std::vector<std::string> cols = rt::posteriorColumns(t.family, t.dimension);
  size_t width = cols.size(), rows = width ? t.values.size() / width : 0;
  bool useVocab = !vocab.empty() && vocab.size() == width;
  for (size_t r = 0; r < std::min(rows, maxRows); ++r) {
    const double *v = t.values.data() + r * width;
    // Dirichlet and Beta rows: the mean; other families: the parameters.
    double sum = 0;
    bool mean = t.family == Family::Dirichlet || t.family == Family::Beta;
    for (size_t c = 0; c < width; ++c)
      sum += v[c];
    std::vector<size_t> order(width);
    std::iota(order.begin(), order.end(), 0);
    size_t top = std::min(n, width);
    std::partial_sort(order.begin(), order.begin() + long(top), order.end(),
                      [&](size_t a, size_t b) { return v[a] > v[b]; });
    // Means are named as the outputs' summary columns name them (mean_k;
    // a Beta's E[p] and 1 - E[p]), not after the parameters they divide.
    auto label = [&](size_t c) -> std::string {
      if (useVocab)
        return vocab[c];
      if (t.family == Family::Beta)
        return c == 0 ? "mean" : "1-mean";
      return t.family == Family::Dirichlet ? "mean_" + std::to_string(c) : cols[c];
    };
    os << "  [" << r << "]";
    for (size_t i = 0; i < top; ++i)
      os << " " << label(order[i]) << "=" << llvm::format("%.4g", mean ? v[order[i]] / sum : v[order[i]]);
    os << "\n";
  }
  if (rows > maxRows)
    os << "  ... (" << rows - maxRows << " more)\n";
}

void ScheduleOptions::apply(passes::PassContext &ctx) const {
  ctx.randomInitConditions = true;
  ctx.localSchedule = schedule == "auto" && stochastic ? passes::PassContext::LocalSchedule::NestedWhereLocal
                      : schedule == "auto"               ? passes::PassContext::LocalSchedule::Auto
                      : schedule == "nested" ? passes::PassContext::LocalSchedule::Nested
                                             : passes::PassContext::LocalSchedule::Plain;
  ctx.localIterations = schedule == "plain" ? 1 : localIterations;
  ctx.localTolerance = localTolerance;
  ctx.localRestart = schedule != "plain" && localRestart;
  ctx.localFlags = localFlags;
}

std::string pipelineForEmit(const std::string &emit) {
  if (emit == "gated")
    return "gate,verify";
  if (emit == "messages")
    return "gate,match,messages,verify";
  if (emit == "deps")
    return "gate,match,messages,verify,print-deps";
  if (emit == "deps-dot")
    return "gate,match,messages,verify,print-deps-dot";
  if (emit == "schedule")
    return "gate,match,messages,schedule,dce,local-schedule,fuse,verify";
  if (emit == "ir" || emit == "plates" || emit == "ast")
    return "";
  return std::string(passes::defaultPipeline());
}

int runTool(const std::function<int()> &body) {
  int code = 1;
  runWithLargeStack(kToolStackBytes, [&] { code = body(); });
  return code;
}

int finishStandardOutput(const char *tool, int code) {
  // Unchecked, LLVM's stream would end the process with "LLVM ERROR: IO
  // failure on output stream" at exit.
  llvm::outs().flush();
  if (!llvm::outs().has_error())
    return code;
  llvm::errs() << tool << ": error: cannot write to standard output: " << llvm::outs().error().message() << "\n";
  llvm::outs().clear_error();
  return code == 0 ? 1 : code;
}

void printBoundData(const ir::Module &m, const rt::BoundData &d, llvm::raw_ostream &os) {
  for (const auto &[plate, bp] : d.plates) {
    os << "plate %" << plate->name << ": ";
    if (bp.sizes.size() == 1) {
      os << bp.sizes[0] << (bp.sizes[0] == 1 ? " element" : " elements");
    } else {
      int64_t lo = *std::min_element(bp.sizes.begin(), bp.sizes.end());
      int64_t hi = *std::max_element(bp.sizes.begin(), bp.sizes.end());
      os << bp.flattened() << " elements in " << bp.sizes.size() << " groups (" << lo << " to " << hi << " per group)";
    }
    os << "\n";
  }
  for (const auto &[v, bv] : d.variables) {
    // The range of the values given: a missing one's placeholder is not data.
    double lo = 0, hi = 0, total = 0;
    std::vector<bool> isMissing(bv.values.size(), false);
    for (int64_t e : bv.missing) // missing values are scalars: element e is entry e
      isMissing[size_t(e)] = true;
    bool any = false;
    for (size_t i = 0; i < bv.values.size(); ++i)
      if (!isMissing[i]) {
        lo = any ? std::min(lo, bv.values[i]) : bv.values[i];
        hi = any ? std::max(hi, bv.values[i]) : bv.values[i];
        any = true;
      }
    for (double w : bv.weights)
      total += w;
    os << "%" << v->name << " from " << bv.file << ": " << bv.values.size() << " values in [" << ir::formatDouble(lo)
       << ", " << ir::formatDouble(hi) << "]";
    if (!bv.weights.empty())
      os << ", total weight " << ir::formatDouble(total);
    if (!bv.missing.empty())
      os << ", " << bv.missing.size() << " missing";
    os << "\n";
  }
  (void)m;
}

std::string foreignCheckpointFile(const std::string &dir) {
  std::error_code ec;
  if (dir.empty() || !std::filesystem::is_directory(dir, ec))
    return "";
  if (std::filesystem::exists(std::filesystem::path(dir) / "summary.json", ec)) // --out's, named first
    return "summary.json";
  // A manifest or a state file, perhaps as an interrupted write's NAME.tmp.
  static const llvm::Regex kCheckpointFile("^(svi-)?(checkpoint\\.json|state-[0-9]+-[0-9]+\\.bin)(\\.tmp)?$");
  for (const std::filesystem::directory_entry &e : std::filesystem::directory_iterator(dir, ec))
    if (std::string name = e.path().filename().string(); !kCheckpointFile.match(name))
      return name;
  return "";
}

} // namespace ppc
