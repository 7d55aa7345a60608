//===- runtime/PosteriorFile.cpp - reading a posterior --out wrote --------===//
#include "runtime/PosteriorFile.h"

#include "ir/Printer.h"
#include "runtime/Csv.h"
#include "runtime/Output.h"
#include "runtime/Symbols.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace ppc::rt {
namespace {

std::string listColumns(const std::vector<std::string> &cols) {
  if (cols.size() <= 4) {
    std::string s;
    for (const std::string &c : cols)
      s += (s.empty() ? "" : ",") + c;
    return s;
  }
  return cols.front() + "," + cols[1] + ",...," + cols.back() + " (" + std::to_string(cols.size()) + " columns)";
}

std::string describe(const PosteriorShape &s) {
  std::string d = "a " + std::string(familySpec(s.family).spelling) + " posterior";
  if (s.family == Family::Dirichlet || s.family == Family::Categorical)
    d += " over " + std::to_string(s.dimension) + " categories";
  else if (s.family == Family::MvGaussian || s.family == Family::Wishart)
    d += " of dimension " + std::to_string(s.dimension);
  return d;
}

} // namespace

/// A summary as written agrees with the one the parameters give: --out
/// writes both to 17 digits, and a hand edit changes more than rounding.
static bool sameSummary(double got, double want) {
  if (!std::isfinite(got) || !std::isfinite(want))
    return got == want || (std::isnan(got) && std::isnan(want));
  return std::abs(got - want) <= 1e-9 * std::max(std::abs(got), std::abs(want)) + 1e-300;
}

bool readPosteriorFile(const std::string &path, const PosteriorShape &shape, std::vector<double> &eta,
                       std::string &error) {
  const FactorEntry &entry = factorEntry(shape.family);
  if (!entry.naturalParameters) {
    error = path + ": '" + shape.variable + "' is computed from other variables; it has no posterior of its own to read";
    return false;
  }
  CsvError csvError;
  std::optional<std::vector<std::string>> header = readCsvHeader(path, csvError);
  if (!header) {
    error = csvError.message;
    return false;
  }
  const std::vector<std::string> params = posteriorColumns(shape.family, shape.dimension);
  const std::vector<std::string> summaries = entry.summaryColumns(shape.dimension);
  const std::string what = "'" + shape.variable + "' has " + describe(shape) + ", written as " + listColumns(params);
  for (const std::string &p : params)
    if (std::find(header->begin(), header->end(), p) == header->end()) {
      error = path + ":1: no column '" + p + "': " + what;
      return false;
    }
  // Index columns are checked when present (the labelled layout); the
  // summaries are the parameters again: read only to check that they agree
  // with them (a mean edited by hand would otherwise change nothing).
  std::vector<std::string> wanted;
  std::set<std::string> known(params.begin(), params.end());
  known.insert(summaries.begin(), summaries.end());
  std::vector<size_t> presentIndex;
  for (size_t c = 0; c < header->size(); ++c) {
    const std::string &name = (*header)[c];
    auto idx = std::find(shape.indexColumns.begin(), shape.indexColumns.end(), name);
    if (idx != shape.indexColumns.end()) {
      presentIndex.push_back(size_t(idx - shape.indexColumns.begin()));
      wanted.push_back(name);
    } else if (!known.count(name)) {
      std::string expected = shape.indexColumns.empty() ? std::string("no index column")
                                                          : "index column(s) " + listColumns(shape.indexColumns);
      error = path + ":1: column '" + name + "' (" + std::to_string(c + 1) + ") is not one of '" + shape.variable +
              "': " + what + ", after " + expected;
      return false;
    }
  }
  wanted.insert(wanted.end(), params.begin(), params.end());
  std::vector<size_t> presentSummary; // positions in `summaries`
  for (size_t j = 0; j < summaries.size(); ++j)
    if (std::find(header->begin(), header->end(), summaries[j]) != header->end()) {
      presentSummary.push_back(j);
      wanted.push_back(summaries[j]);
    }
  std::optional<CsvTable> t = readCsv(path, wanted, csvError);
  if (!t) {
    error = csvError.message;
    return false;
  }
  if (int64_t(t->rows()) != shape.rows) {
    error = path + ": " + std::to_string(t->rows()) + " row" + (t->rows() == 1 ? "" : "s") + ", but '" +
            shape.variable + "' has " + std::to_string(shape.rows) + " element" + (shape.rows == 1 ? "" : "s") +
            " here (a posterior from a model with other plate sizes or data?)";
    return false;
  }
  auto columnOf = [&](const std::string &name) {
    return size_t(std::find(header->begin(), header->end(), name) - header->begin()) + 1;
  };
  const size_t nIndex = shape.indexColumns.size();
  for (size_t k = 0; k < presentIndex.size(); ++k) {
    const size_t j = presentIndex[k];
    const std::vector<double> &ids = t->values[k];
    for (int64_t r = 0; r < shape.rows; ++r) {
      const int64_t want = shape.indices[size_t(r) * nIndex + j];
      if (ids[size_t(r)] != double(want)) {
        const double id = ids[size_t(r)];
        const bool integral = id == std::floor(id) && std::abs(id) < 9.0e15;
        error = path + ":" + std::to_string(t->line(size_t(r))) + ": column '" + shape.indexColumns[j] + "' (" +
                std::to_string(columnOf(shape.indexColumns[j])) + "): " +
                (integral ? std::to_string(int64_t(id)) : ir::formatDouble(id)) +
                ", but row " + std::to_string(r + 1) + " of '" + shape.variable + "' is element " +
                std::to_string(want) + " (rows in the order --out writes them)";
        return false;
      }
    }
  }
  const int64_t width = entry.width(shape.dimension);
  eta.assign(size_t(shape.rows * width), 0.0);
  std::vector<double> row(params.size()), stats(static_cast<size_t>(width)), expected;
  // Valid parameters can still be past what the family's statistics can be
  // computed from (a shape of 1e-320): checked here, where the line is known.
  const RuntimeSymbol *statsKernel = findRuntimeKernel(entry.statsKernel);
  for (int64_t r = 0; r < shape.rows; ++r) {
    for (size_t c = 0; c < params.size(); ++c)
      row[c] = t->values[presentIndex.size() + c][size_t(r)];
    std::string why;
    const int64_t bad = entry.naturalParameters(shape.dimension, row.data(), eta.data() + r * width, why);
    if (bad >= 0) {
      error = path + ":" + std::to_string(t->line(size_t(r))) + ": column '" + params[size_t(bad)] + "' (" +
              std::to_string(columnOf(params[size_t(bad)])) + "): must be " + why + "; got " +
              ir::formatDouble(row[size_t(bad)]);
      return false;
    }
    if (statsKernel) {
      std::vector<KernelValue> args;
      KernelValue v;
      v.i = 1;
      args.push_back(v);
      if (entry.statsTakesDimension) {
        v.i = shape.dimension;
        args.push_back(v);
      }
      v.p = eta.data() + r * width;
      args.push_back(v);
      v.p = stats.data();
      args.push_back(v);
      statsKernel->call(args.data());
      for (double s : stats)
        if (!std::isfinite(s)) {
          error = path + ":" + std::to_string(t->line(size_t(r))) + ": these parameters are too close to 0 or too "
                  "large for the posterior's expected statistics to be computed (they are not finite)";
          return false;
        }
    }
    // After the statistics, so that unusable parameters are named first.
    if (!presentSummary.empty() && entry.summaries) {
      expected.clear(); // (summaries appends)
      entry.summaries(shape.dimension, row.data(), expected);
      for (size_t k = 0; k < presentSummary.size(); ++k) {
        const size_t j = presentSummary[k];
        const double got = t->values[presentIndex.size() + params.size() + k][size_t(r)], want = expected[j];
        if (!sameSummary(got, want)) {
          error = path + ":" + std::to_string(t->line(size_t(r))) + ": column '" + summaries[j] + "' (" +
                  std::to_string(columnOf(summaries[j])) + "): " + ir::formatDouble(got) + ", but the parameters (" +
                  listColumns(params) + ") give " + ir::formatDouble(want) +
                  "; the posterior is read from the parameters, so edit those (or drop the summary columns)";
          return false;
        }
      }
    }
  }
  return true;
}

} // namespace ppc::rt
