//===- tools/Report.h - --report FILE.html: a run a person can look at -----===//
//
// One self-contained HTML file (no network, no JavaScript): the command,
// the model and the timings; the ELBO trace (its relative change on a log
// scale in an inset; a stochastic run's estimates and held-out bounds); a
// summary per latent variable chosen by its family (bars of a Dirichlet
// row's largest probabilities, with words from --vocab; means with ±2 sd
// intervals; a mixture indicator's cluster sizes); a mixture over two data
// columns as the data's points with each component's ellipse; the held-out
// bound; the factor graph and the schedule drawn by Graphviz's `dot` (the
// text alone when `dot` is missing). Plots come from tools/Svg.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Output.h"

#include <map>
#include <string>
#include <vector>

namespace ppc {
namespace ir { class Module; }

struct ReportInput {
  std::string command, modelPath, modelSource;
  const rt::RunSummary *summary = nullptr;
  const std::vector<rt::PosteriorTable> *tables = nullptr;
  std::vector<std::string> vocab;
  /// Observed values by variable, in plate order (for a mixture's points).
  std::map<std::string, std::vector<double>> observed;
  /// The scheduled module (its schedule is drawn); null: none.
  const ir::Module *scheduled = nullptr;
};

/// A run's report input: its summary (the command from its options) and
/// posteriors, the model, --vocab's words and the scheduled module.
ReportInput reportOfRun(const rt::RunSummary &summary, const std::vector<rt::PosteriorTable> &tables,
                        const std::string &modelPath, const std::string &modelSource,
                        const std::vector<std::string> &vocab, const ir::Module *scheduled);

/// The report's HTML.
std::string renderReport(const ReportInput &in);
/// Writes it to `path` atomically; false with `error` set.
bool writeReport(const std::string &path, const ReportInput &in, std::string &error);
/// Empty when `path` can be written (its directory exists); else why not.
std::string checkReportPath(const std::string &path);

} // namespace ppc
