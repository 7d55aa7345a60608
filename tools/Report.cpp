//===- tools/Report.cpp - --report FILE.html ------------------------------===//
#include "tools/Report.h"

#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "tools/Driver.h"
#include "tools/Svg.h"

#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <set>
#include <unistd.h>

namespace ppc {
namespace {

namespace fs = std::filesystem;
using svg::escape;
using svg::number;

/// Rows shown of a posterior with many (a document's topic mix): the rest
/// are in its CSV.
constexpr size_t kLocalRows = 12, kGlobalRows = 100, kTopEntries = 10;
/// How every report begins (the model's name follows): how --report knows
/// an earlier report it may replace.
constexpr std::string_view kReportHead =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ppc report: ";

/// A row's standard parameters and summaries by column name.
std::map<std::string, double> rowValues(const rt::PosteriorTable &t, size_t r, size_t width) {
  const FactorEntry &entry = factorEntry(t.family);
  std::vector<std::string> names = entry.outputColumns(t.dimension);
  std::map<std::string, double> out;
  const double *row = t.values.data() + r * width;
  for (size_t c = 0; c < names.size() && c < width; ++c)
    out[names[c]] = row[c];
  std::vector<double> summary;
  entry.summaries(t.dimension, row, summary);
  std::vector<std::string> more = entry.summaryColumns(t.dimension);
  for (size_t c = 0; c < more.size() && c < summary.size(); ++c)
    out[more[c]] = summary[c];
  return out;
}

std::string rowLabel(const rt::PosteriorTable &t, size_t r) {
  const size_t n = t.indexColumns.size();
  if (n == 0)
    return t.variable;
  std::string s = t.variable + "[";
  for (size_t i = 0; i < n; ++i)
    s += (i ? "][" : "") + std::to_string(t.indices[r * n + i]);
  return s + "]";
}

/// The ELBO trace, its relative change in an inset (log scale).
std::string elboPlot(const rt::RunSummary &s) {
  const bool stochastic = s.stochastic.has_value();
  svg::Plot p(680, 280, 84);
  const size_t n = s.elbo.size();
  // The iteration of each value (--elbo-every evaluates some only).
  auto at = [&](size_t i) { return s.elboIterations.size() == n ? double(s.elboIterations[i]) : double(i + 1); };
  // |relative change| per iteration since the previous value.
  auto change = [&](size_t i) {
    return std::abs(s.elbo[i] - s.elbo[i - 1]) / std::max(std::abs(s.elbo[i]), 1e-300) / (at(i) - at(i - 1));
  };
  p.x.lo = 1;
  p.x.hi = std::max<double>(2, n ? at(n - 1) : 0);
  p.y.lo = p.y.hi = n ? s.elbo[0] : 0;
  for (double e : s.elbo)
    p.y.include(e);
  if (p.y.hi == p.y.lo)
    p.y.hi = p.y.lo + 1;
  const bool everyIteration = n == 0 || at(n - 1) == double(n);
  p.frame(stochastic       ? "ELBO estimate of each step (whole data, from its batch)"
          : everyIteration ? "ELBO after each iteration"
                           : "ELBO at the iterations that evaluated it (--elbo-every)",
          stochastic ? "step" : "iteration", "ELBO (nats)");
  std::vector<std::pair<double, double>> line;
  for (size_t i = 0; i < n; ++i)
    line.emplace_back(p.x(at(i)), p.y(s.elbo[i]));
  p.canvas.polyline(line, "#1f77b4");
  std::string out = p.canvas.str(stochastic ? "ELBO estimates" : "ELBO trace");
  // The inset: |relative change| per iteration, log scale.
  svg::Plot inset(300, 180, 58, 10, 24, 36);
  inset.x = p.x;
  inset.x.from = inset.innerLeft();
  inset.x.to = inset.innerRight();
  inset.y.log = true;
  inset.y.lo = 1e300;
  inset.y.hi = 0;
  std::vector<std::pair<double, double>> changes;
  for (size_t i = 1; i < n; ++i) {
    double c = change(i);
    if (c > 0 && std::isfinite(c)) {
      inset.y.lo = std::min(inset.y.lo, c);
      inset.y.hi = std::max(inset.y.hi, c);
    }
  }
  if (inset.y.hi > 0) {
    inset.y.lo = std::pow(10.0, std::floor(std::log10(inset.y.lo)));
    inset.y.hi = std::pow(10.0, std::ceil(std::log10(inset.y.hi)));
    if (inset.y.hi <= inset.y.lo)
      inset.y.hi = inset.y.lo * 10;
    inset.y.from = inset.innerBottom();
    inset.y.to = inset.innerTop();
    inset.frame("relative change (log scale)", stochastic ? "step" : "iteration", "|change|");
    for (size_t i = 1; i < n; ++i) {
      double c = change(i);
      if (c > 0 && std::isfinite(c))
        changes.emplace_back(inset.x(at(i)), inset.y(c));
    }
    inset.canvas.polyline(changes, "#d62728");
    out += inset.canvas.str("relative ELBO change per iteration, log scale");
  }
  return "<div class=\"plots\">" + out + "</div>";
}

/// A stochastic run's held-out bounds against the seconds of steps.
std::string heldoutPlot(const rt::RunSummary &s) {
  if (!s.stochastic || s.stochastic->heldout.empty())
    return "";
  const auto &pts = s.stochastic->heldout;
  svg::Plot p(680, 240, 84);
  p.x.lo = 0;
  p.x.hi = std::max(1e-3, pts.back().seconds);
  p.y.lo = p.y.hi = pts[0].perObservation;
  for (const auto &q : pts)
    p.y.include(q.perObservation);
  if (p.y.hi == p.y.lo)
    p.y.hi = p.y.lo + 1e-3;
  p.frame("held-out bound during the run", "seconds of steps", "nats per observation");
  std::vector<std::pair<double, double>> line;
  for (const auto &q : pts) {
    line.emplace_back(p.x(q.seconds), p.y(q.perObservation));
    p.canvas.circle(line.back().first, line.back().second, 3, "#2ca02c");
  }
  p.canvas.polyline(line, "#2ca02c");
  return p.canvas.str("held-out bound trace");
}

/// Bars of one row's largest entries (probabilities), labelled by word.
std::string topBars(const std::string &title, const std::vector<double> &probs, const std::vector<std::string> &vocab) {
  std::vector<size_t> order(probs.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t shown = std::min(kTopEntries, probs.size());
  std::partial_sort(order.begin(), order.begin() + long(shown), order.end(),
                    [&](size_t a, size_t b) { return probs[a] > probs[b]; });
  const double rowH = 15, labelW = 96, barW = 120, top = 20;
  svg::Canvas c(labelW + barW + 52, top + rowH * double(shown) + 6);
  c.text(2, 13, title, "start", 11, 0, "#000");
  const double most = shown ? std::max(probs[order[0]], 1e-300) : 1;
  for (size_t i = 0; i < shown; ++i) {
    const size_t k = order[i];
    const double y = top + rowH * double(i);
    std::string label = vocab.size() == probs.size() ? vocab[k] : std::to_string(k);
    if (label.size() > 14)
      label = label.substr(0, 13) + "…";
    c.text(labelW - 4, y + 11, label, "end", 10);
    c.rect(labelW, y + 2, barW * probs[k] / most, rowH - 4, "#1f77b4", label + ": " + number(probs[k]));
    c.text(labelW + barW * probs[k] / most + 3, y + 11, number(probs[k], 3), "start", 9, 0, "#555");
  }
  return c.str(title + ": largest probabilities");
}

/// Means with ±2 sd intervals, one per row (or component).
std::string intervals(const std::string &title, const std::vector<std::string> &labels, const std::vector<double> &mean,
                      const std::vector<double> &sd, bool positive) {
  const size_t n = mean.size();
  svg::Plot p(680, std::min(60.0 + 16.0 * double(n), 900.0), 150, 24, 26, 40);
  p.x.lo = p.x.hi = n ? mean[0] : 0;
  for (size_t i = 0; i < n; ++i) {
    p.x.include(positive ? std::max(0.0, mean[i] - 2 * sd[i]) : mean[i] - 2 * sd[i]);
    p.x.include(mean[i] + 2 * sd[i]);
  }
  if (p.x.hi == p.x.lo)
    p.x.hi = p.x.lo + 1;
  const double pad = 0.04 * (p.x.hi - p.x.lo);
  p.x.lo -= pad;
  p.x.hi += pad;
  p.y.lo = -0.5;
  p.y.hi = double(n) - 0.5;
  p.y.from = p.innerTop();
  p.y.to = p.innerBottom();
  const double x0 = p.innerLeft(), x1 = p.innerRight(), yb = p.innerBottom();
  for (double v : p.x.ticks()) {
    p.canvas.line(p.x(v), p.innerTop(), p.x(v), yb, "#e4e4e4");
    p.canvas.text(p.x(v), yb + 16, number(v), "middle", 10);
  }
  p.canvas.line(x0, yb, x1, yb, "#555");
  p.canvas.text((x0 + x1) / 2, p.canvas.height() - 6, "posterior mean ± 2 sd", "middle", 11);
  p.canvas.text(x0, 16, title, "start", 12, 0, "#000");
  for (size_t i = 0; i < n; ++i) {
    const double y = p.y(double(i));
    const double lo = positive ? std::max(0.0, mean[i] - 2 * sd[i]) : mean[i] - 2 * sd[i];
    p.canvas.text(x0 - 6, y + 4, labels[i], "end", 10);
    p.canvas.line(p.x(lo), y, p.x(mean[i] + 2 * sd[i]), y, svg::colour(i));
    p.canvas.circle(p.x(mean[i]), y, 3.5, svg::colour(i));
  }
  return p.canvas.str(title + ": means with intervals");
}

/// A bar per category (a mixture indicator's expected cluster sizes).
std::string sizeBars(const std::string &title, const std::vector<double> &sizes) {
  svg::Plot p(std::clamp(120.0 + 40.0 * double(sizes.size()), 320.0, 680.0), 220, 64);
  p.x.integer = true;
  p.x.lo = -0.5;
  p.x.hi = double(sizes.size()) - 0.5;
  p.y.lo = 0;
  p.y.hi = std::max(1e-9, *std::max_element(sizes.begin(), sizes.end()));
  p.frame(title, "component", "expected elements");
  const double w = (p.innerRight() - p.innerLeft()) / double(std::max<size_t>(sizes.size(), 1)) * 0.7;
  for (size_t k = 0; k < sizes.size(); ++k)
    p.canvas.rect(p.x(double(k)) - w / 2, p.y(sizes[k]), w, p.y(0) - p.y(sizes[k]), svg::colour(k),
                  "component " + std::to_string(k) + ": " + number(sizes[k]));
  return p.canvas.str(title);
}

/// The summary of one posterior, by family.
std::string variableSection(const rt::PosteriorTable &t, const std::vector<std::string> &vocab) {
  const FactorEntry &entry = factorEntry(t.family);
  const size_t width = entry.outputColumns(t.dimension).size();
  const size_t rows = width ? t.values.size() / width : 0;
  const bool local = t.overData && rows > kLocalRows;
  const size_t shown = std::min(rows, local ? kLocalRows : kGlobalRows);
  std::string html = "<div class=\"variable\" id=\"var-" + escape(t.variable) + "\"><h3>" + escape(t.variable) + ": " +
                     (familySpec(t.family).spelling.empty() ? displayName(t.family)
                                                             : std::string(familySpec(t.family).spelling)) +
                     (t.dimension > 1 ? "&lt;" + std::to_string(t.dimension) + "&gt;" : "") + " posterior, " +
                     std::to_string(rows) + (rows == 1 ? " element" : " elements") + "</h3>";
  std::string cut = shown < rows ? "<p class=\"note\">" + std::to_string(shown) + " of " + std::to_string(rows) +
                                       " elements shown; all are in " + escape(t.variable) +
                                       ".csv (--out)</p>"
                                 : "";
  auto values = [&](size_t r) { return rowValues(t, r, width); };
  switch (t.family) {
  case Family::Dirichlet:
  case Family::Categorical: {
    if (t.family == Family::Categorical && rows > 1) {
      // A mixture indicator: the expected size of each component.
      std::vector<double> sizes(size_t(t.dimension), 0.0);
      for (size_t r = 0; r < rows; ++r) {
        auto v = values(r);
        for (int64_t k = 0; k < t.dimension; ++k)
          sizes[size_t(k)] += v["p_" + std::to_string(k)];
      }
      html += sizeBars(t.variable + ": expected cluster sizes", sizes);
      break;
    }
    html += "<div class=\"grid\">";
    for (size_t r = 0; r < shown; ++r) {
      auto v = values(r);
      std::vector<double> probs(size_t(t.dimension));
      for (int64_t k = 0; k < t.dimension; ++k)
        probs[size_t(k)] = v[(t.family == Family::Dirichlet ? "mean_" : "p_") + std::to_string(k)];
      html += topBars(rowLabel(t, r), probs, vocab);
    }
    html += "</div>" + cut;
    break;
  }
  case Family::Beta:
    if (t.indexColumns.size() == 2) {
      // A probability per (component, item) (a Bernoulli mixture's pixels):
      // each component's items with the largest probabilities.
      std::map<int64_t, std::vector<double>> groups;
      for (size_t r = 0; r < rows; ++r) {
        std::vector<double> &g = groups[t.indices[r * 2]];
        const size_t item = size_t(t.indices[r * 2 + 1]);
        if (g.size() <= item)
          g.resize(item + 1, 0.0);
        g[item] = values(r)["mean"];
      }
      html += "<div class=\"grid\">";
      size_t drawn = 0;
      for (const auto &[k, probs] : groups)
        if (drawn++ < kGlobalRows)
          html += topBars(t.variable + "[" + std::to_string(k) + "]", probs, vocab);
      html += "</div>";
      if (groups.size() > kGlobalRows)
        html += "<p class=\"note\">" + std::to_string(kGlobalRows) + " of " + std::to_string(groups.size()) +
                " components shown; all are in " + escape(t.variable) + ".csv (--out)</p>";
      break;
    }
    [[fallthrough]];
  case Family::Gaussian:
  case Family::Gamma: {
    std::vector<std::string> labels;
    std::vector<double> mean, sd;
    for (size_t r = 0; r < shown; ++r) {
      auto v = values(r);
      labels.push_back(rowLabel(t, r));
      mean.push_back(v["mean"]);
      sd.push_back(std::sqrt(std::max(0.0, v["variance"])));
    }
    html += intervals(t.variable, labels, mean, sd, t.family != Family::Gaussian) + cut;
    break;
  }
  case Family::MvGaussian: {
    for (size_t r = 0; r < shown && r < 8; ++r) {
      auto v = values(r);
      std::vector<std::string> labels;
      std::vector<double> mean, sd;
      for (int64_t i = 0; i < t.dimension && i < 40; ++i) {
        const std::string s = std::to_string(i);
        labels.push_back("component " + s);
        mean.push_back(v["mean_" + s]);
        sd.push_back(std::sqrt(std::max(0.0, v["cov_" + s + "_" + s])));
      }
      html += intervals(rowLabel(t, r), labels, mean, sd, false);
    }
    if (shown > 8 || rows > shown)
      html += "<p class=\"note\">" + std::to_string(std::min<size_t>(shown, 8)) + " of " + std::to_string(rows) +
              " elements shown; all are in " + escape(t.variable) + ".csv (--out)</p>";
    break;
  }
  default: {
    // A table of the first rows' parameters.
    std::vector<std::string> names = entry.outputColumns(t.dimension);
    html += "<table><tr><th>element</th>";
    for (size_t c = 0; c < names.size() && c < 12; ++c)
      html += "<th>" + escape(names[c]) + "</th>";
    html += "</tr>";
    for (size_t r = 0; r < std::min<size_t>(shown, 20); ++r) {
      html += "<tr><td>" + escape(rowLabel(t, r)) + "</td>";
      for (size_t c = 0; c < names.size() && c < 12; ++c)
        html += "<td>" + number(t.values[r * width + c]) + "</td>";
      html += "</tr>";
    }
    html += "</table>" + cut;
  }
  }
  return html + "</div>";
}

const rt::PosteriorTable *tableOf(const std::vector<rt::PosteriorTable> &tables, const std::string &name) {
  for (const rt::PosteriorTable &t : tables)
    if (t.variable == name && t.columns.empty())
      return &t;
  return nullptr;
}

/// A mixture over two data columns: the observed variables whose parents
/// are chosen by the same indicator (x = MvGaussian(mean(z), precision(z))
/// of dimension 2, or two Gaussian(m(z), tau(z)) over the same rows).
struct Scatter {
  std::string xName, yName;        ///< observed variables (one of dimension 2: both the same)
  std::string indicator;           ///< the mixture's indicator
  std::string meanX, meanY, precX, precY; ///< component posteriors (MvGaussian: meanX, precX only)
  bool multivariate = false;
};

const ir::Value *selector(const ir::Operand &o) {
  if (!o.isValue() || o.indices.size() != 1 || !o.indices[0].isValue())
    return nullptr;
  const ir::Value *z = o.indices[0].value;
  return z->def && z->def->kind == ir::OpKind::Random && z->def->family == Family::Categorical ? z : nullptr;
}

std::vector<Scatter> findScatters(const ir::Module &m) {
  std::vector<Scatter> out;
  std::vector<const ir::Op *> scalars;
  ir::walk(m.body, [&](const ir::Op &op) {
    if (op.kind != ir::OpKind::Random || !op.observed || op.operands.size() < 2)
      return;
    const ir::Value *z = selector(op.operands[0]);
    if (!z || selector(op.operands[1]) != z)
      return;
    if (op.family == Family::MvGaussian && op.result()->type.hasDim()) {
      Scatter s;
      s.multivariate = true;
      s.xName = s.yName = op.result()->name;
      s.indicator = z->name;
      s.meanX = op.operands[0].value->name;
      s.precX = op.operands[1].value->name;
      out.push_back(s);
    } else if (op.family == Family::Gaussian) {
      scalars.push_back(&op);
    }
  });
  for (size_t i = 0; i + 1 < scalars.size(); ++i) {
    const ir::Op &a = *scalars[i], &b = *scalars[i + 1];
    if (selector(a.operands[0]) != selector(b.operands[0]))
      continue;
    Scatter s;
    s.xName = a.result()->name;
    s.yName = b.result()->name;
    s.indicator = selector(a.operands[0])->name;
    s.meanX = a.operands[0].value->name;
    s.precX = a.operands[1].value->name;
    s.meanY = b.operands[0].value->name;
    s.precY = b.operands[1].value->name;
    out.push_back(s);
    break;
  }
  return out;
}

/// The data as points and each component's 2-sd ellipse.
std::string scatterPlot(const Scatter &s, const ReportInput &in) {
  const auto &tables = *in.tables;
  auto xs = in.observed.find(s.xName), ys = in.observed.find(s.yName);
  if (xs == in.observed.end() || ys == in.observed.end())
    return "";
  std::vector<std::pair<double, double>> pts;
  size_t notDrawn = 0; // rows missing a value (NaN): drawn on neither axis
  auto add = [&](double x, double y) {
    if (std::isfinite(x) && std::isfinite(y))
      pts.emplace_back(x, y);
    else
      ++notDrawn;
  };
  if (s.multivariate)
    for (size_t i = 0; i + 1 < xs->second.size(); i += 2)
      add(xs->second[i], xs->second[i + 1]);
  else
    for (size_t i = 0; i < xs->second.size() && i < ys->second.size(); ++i)
      add(xs->second[i], ys->second[i]);
  // Components: mean and covariance (E[precision]^-1, a plug-in).
  struct Component {
    double mx, my, sxx, sxy, syy;
  };
  std::vector<Component> comps;
  if (s.multivariate) {
    const rt::PosteriorTable *mean = tableOf(tables, s.meanX), *prec = tableOf(tables, s.precX);
    if (!mean || !prec || mean->dimension != 2 || prec->dimension != 2)
      return "";
    const size_t mw = factorEntry(mean->family).outputColumns(2).size(),
                 pw = factorEntry(prec->family).outputColumns(2).size();
    for (size_t k = 0; k * mw < mean->values.size() && k * pw < prec->values.size(); ++k) {
      auto m = rowValues(*mean, k, mw), p = rowValues(*prec, k, pw);
      const double a = p["mean_0_0"], b = p["mean_0_1"], d = p["mean_1_1"], det = a * d - b * b;
      if (!(det > 0))
        continue;
      comps.push_back({m["mean_0"], m["mean_1"], d / det, -b / det, a / det});
    }
  } else {
    const rt::PosteriorTable *mx = tableOf(tables, s.meanX), *my = tableOf(tables, s.meanY),
                             *px = tableOf(tables, s.precX), *py = tableOf(tables, s.precY);
    if (!mx || !my || !px || !py || mx->family != Family::Gaussian || px->family != Family::Gamma)
      return "";
    const size_t gw = 2, tw = factorEntry(Family::Gamma).outputColumns(1).size();
    for (size_t k = 0; k * gw < mx->values.size() && k * gw < my->values.size() && k * tw < px->values.size() &&
                       k * tw < py->values.size();
         ++k) {
      auto a = rowValues(*mx, k, gw), b = rowValues(*my, k, gw), c = rowValues(*px, k, tw), d = rowValues(*py, k, tw);
      comps.push_back({a["mean"], b["mean"], 1 / c["mean"], 0, 1 / d["mean"]});
    }
  }
  svg::Plot p(680, 440, 70);
  p.x.lo = p.x.hi = pts.empty() ? 0 : pts[0].first;
  p.y.lo = p.y.hi = pts.empty() ? 0 : pts[0].second;
  for (const auto &[x, y] : pts) {
    p.x.include(x);
    p.y.include(y);
  }
  for (const Component &c : comps) {
    p.x.include(c.mx - 2 * std::sqrt(c.sxx));
    p.x.include(c.mx + 2 * std::sqrt(c.sxx));
    p.y.include(c.my - 2 * std::sqrt(c.syy));
    p.y.include(c.my + 2 * std::sqrt(c.syy));
  }
  for (svg::Axis *a : {&p.x, &p.y}) {
    const double pad = 0.03 * (a->hi - a->lo);
    a->lo -= pad;
    a->hi += pad;
  }
  const std::string xl = s.multivariate ? s.xName + "[0]" : s.xName, yl = s.multivariate ? s.yName + "[1]" : s.yName;
  p.frame("the data and each component of " + s.indicator + " (mean, 2 sd ellipse)" +
              (notDrawn ? "; " + std::to_string(notDrawn) + (notDrawn == 1 ? " row" : " rows") +
                              " with a missing value not drawn"
                        : std::string()),
          xl, yl);
  const size_t stride = std::max<size_t>(1, pts.size() / 5000); // at most 5000 points drawn
  for (size_t i = 0; i < pts.size(); i += stride)
    p.canvas.circle(p.x(pts[i].first), p.y(pts[i].second), 2.2, "#555", 0.45);
  const double sx = (p.x.to - p.x.from) / (p.x.hi - p.x.lo), sy = (p.y.to - p.y.from) / (p.y.hi - p.y.lo);
  for (size_t k = 0; k < comps.size(); ++k) {
    const Component &c = comps[k];
    // The covariance in pixels (y flips), its eigen-decomposition.
    const double a = c.sxx * sx * sx, b = c.sxy * sx * sy, d = c.syy * sy * sy;
    const double tr = (a + d) / 2, disc = std::sqrt(std::max(0.0, (a - d) * (a - d) / 4 + b * b));
    const double l1 = tr + disc, l2 = std::max(0.0, tr - disc);
    const double angle = std::atan2(l1 - a, b == 0 ? 1e-300 : b) * 180 / M_PI;
    p.canvas.ellipse(p.x(c.mx), p.y(c.my), 2 * std::sqrt(l1), 2 * std::sqrt(l2), b == 0 ? (a >= d ? 0 : 90) : angle,
                     svg::colour(k), "component");
    p.canvas.circle(p.x(c.mx), p.y(c.my), 4, svg::colour(k));
  }
  return p.canvas.str("mixture components over " + xl + " and " + yl);
}

/// The model's factor graph in DOT: variables (observed ones filled),
/// a box per factor, each plate one cluster (nested plates nested).
std::string factorGraphDot(const ir::Module &m) {
  struct Cluster {
    std::string nodes;
    std::map<std::string, Cluster> inner;
  };
  Cluster top;
  int factor = 0;
  auto id = [](const ir::Value *v) { return "\"v_" + v->name + "\""; };
  std::function<void(const ir::Operand &, std::set<const ir::Value *> &)> refs = [&](const ir::Operand &o,
                                                                                      std::set<const ir::Value *> &s) {
    if (!o.isValue())
      return;
    if (o.value->def && (o.value->def->kind == ir::OpKind::Random || o.value->def->kind == ir::OpKind::Data))
      s.insert(o.value);
    for (const ir::Operand &i : o.indices)
      refs(i, s);
  };
  std::string edges;
  std::function<void(const ir::Region &, Cluster &)> region = [&](const ir::Region &r, Cluster &c) {
    for (const auto &op : r.ops) {
      if (op->kind == ir::OpKind::For) {
        Cluster &inner = c.inner["%" + op->operands[0].value->name];
        for (const auto &sub : op->regions)
          region(*sub, inner);
        continue;
      }
      if (op->kind == ir::OpKind::Data) {
        c.nodes += id(op->result()) + " [label=\"" + op->result()->name +
                   "\", shape=box, style=filled, fillcolor=\"#dddddd\"];\n";
        continue;
      }
      if (op->kind != ir::OpKind::Random)
        continue;
      const ir::Value *v = op->result();
      c.nodes += id(v) + " [label=\"" + v->name + "\", shape=" +
                 (isDeterministicFamily(op->family) ? "diamond" : "ellipse") +
                 (op->observed ? ", style=filled, fillcolor=\"#bbbbbb\"" : "") + "];\n";
      const std::string f = "\"f" + std::to_string(factor++) + "\"";
      c.nodes += f + " [label=\"" + std::string(familySpec(op->family).irName) +
                 "\", shape=box, style=filled, fillcolor=\"#222222\", fontcolor=white, fontsize=9, height=0.2];\n";
      std::set<const ir::Value *> parents;
      for (const ir::Operand &o : op->operands)
        refs(o, parents);
      for (const ir::Value *p : parents)
        edges += "  " + id(p) + " -> " + f + " [arrowhead=none];\n";
      edges += "  " + f + " -> " + id(v) + ";\n";
    }
  };
  region(m.body, top);
  int clusters = 0;
  std::function<std::string(const Cluster &)> emit = [&](const Cluster &c) {
    std::string out = c.nodes;
    for (const auto &[label, inner] : c.inner)
      out += "subgraph cluster_" + std::to_string(clusters++) + " {\nlabel=\"plate " + escape(label) +
             "\"; style=rounded; color=\"#888888\";\n" + emit(inner) + "}\n";
    return out;
  };
  return "digraph factors {\nrankdir=TB; node [fontname=\"DejaVu Sans\", fontsize=11];\n" + emit(top) + edges + "}\n";
}

/// The schedule in DOT: each block's updates in order; nested (local) and
/// fused loops as clusters.
std::string scheduleDot(const ir::Module &m) {
  std::string dot = "digraph schedule {\n  rankdir=TB; node [fontname=\"DejaVu Mono\", fontsize=10, shape=box];\n";
  int node = 0, cluster = 0;
  std::string last;
  std::function<void(const ir::Region &, int)> region = [&](const ir::Region &r, int depth) {
    std::string pad(size_t(2 + 2 * depth), ' ');
    for (const auto &op : r.ops) {
      if (op->kind == ir::OpKind::Update) {
        const std::string n = "s" + std::to_string(node++);
        dot += pad + n + " [label=\"update %" + escape(op->operands[0].value->name) + "\"];\n";
        if (!last.empty())
          dot += pad + last + " -> " + n + ";\n";
        last = n;
        continue;
      }
      if (op->kind == ir::OpKind::Fuse || op->kind == ir::OpKind::Local) {
        std::string label = op->kind == ir::OpKind::Fuse
                                ? "one loop over %" + op->operands[0].value->name
                                : "per element of %" + op->operands[0].value->name + ": up to " +
                                      std::to_string(op->iterations) + " sweep" + (op->iterations == 1 ? "" : "s") +
                                      (op->restart ? ", restarted" : "") + ", then its messages";
        dot += pad + "subgraph cluster_" + std::to_string(cluster++) + " {\n" + pad + "  label=\"" + escape(label) +
               "\"; style=rounded; color=\"#888888\";\n";
        for (const auto &sub : op->regions)
          region(*sub, depth + 1);
        dot += pad + "}\n";
      }
    }
  };
  const std::pair<const char *, const ir::Region *> blocks[] = {
      {"init (once)", m.initSchedule.get()}, {"iteration (repeated)", m.iterationSchedule.get()},
      {"final (after the last iteration)", m.finalSchedule.get()}};
  for (const auto &[name, r] : blocks) {
    if (!r || r->ops.empty())
      continue;
    dot += "  subgraph cluster_" + std::to_string(cluster++) + " {\n    label=\"" + std::string(name) +
           "\"; style=filled; fillcolor=\"#f6f6f6\"; color=\"#bbbbbb\";\n";
    region(*r, 1);
    dot += "  }\n";
  }
  return dot + "}\n";
}

/// Graphviz's drawing of `dot`, or the text with a note when `dot` is missing.
std::string drawGraph(const std::string &graph, const std::string &label) {
  std::error_code ec;
  std::string pattern = (fs::temp_directory_path(ec) / "ppc_report_XXXXXX").string();
  std::vector<char> in(pattern.begin(), pattern.end());
  in.push_back('\0');
  int fd = ::mkstemp(in.data());
  std::string svgText;
  if (fd >= 0) {
    (void)!::write(fd, graph.data(), graph.size());
    ::close(fd);
    const std::string cmd = "dot -Tsvg '" + std::string(in.data()) + "' 2>/dev/null";
    if (FILE *pipe = ::popen(cmd.c_str(), "r")) {
      char buf[65536];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0)
        svgText.append(buf, n);
      if (::pclose(pipe) != 0)
        svgText.clear();
    }
    ::unlink(in.data());
  }
  const size_t start = svgText.find("<svg");
  if (start == std::string::npos)
    return "<p class=\"note\">Graphviz's <code>dot</code> was not found or failed (apt-get install graphviz): "
           "the graph as text.</p><pre>" +
           escape(graph) + "</pre>";
  std::string out = svgText.substr(start);
  return "<div class=\"graph\" role=\"img\" aria-label=\"" + escape(label) + "\">" + out + "</div>";
}

const char *kStyle = R"(body{font-family:"DejaVu Sans",sans-serif;max-width:1100px;margin:24px auto;color:#222}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}h3{font-size:14px}
pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12px}table{border-collapse:collapse;font-size:12px}
td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}th{background:#f3f3f3}.note{color:#666;font-size:12px}
.grid{display:flex;flex-wrap:wrap;gap:6px}.plots{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}
.graph svg{max-width:100%;height:auto})";

} // namespace

std::string renderReport(const ReportInput &in) {
  const rt::RunSummary &s = *in.summary;
  DiagnosticEngine quiet("", in.modelSource, llvm::nulls());
  std::unique_ptr<ir::Module> model = compileModel(in.modelSource, quiet);
  const std::string name = model ? model->name : fs::path(in.modelPath).stem().string();
  std::string h = std::string(kReportHead) + escape(name) + "</title><style>" + kStyle + "</style></head><body>\n";
  h += "<h1>ppc report: " + escape(name) + "</h1>\n<section id=\"run\"><h2>Run</h2><pre class=\"command\">" +
       escape(in.command) + "</pre><table>";
  auto row = [&](const std::string &k, const std::string &v) {
    h += "<tr><th>" + escape(k) + "</th><td>" + escape(v) + "</td></tr>";
  };
  if (s.stochastic) {
    row("steps", std::to_string(s.stochastic->steps) + " (" + number(s.stochastic->epochs) + " epochs, " +
                     std::to_string(s.stochastic->batches) + " batches per epoch, data size " +
                     std::to_string(s.stochastic->dataSize) + ")");
  } else {
    row("iterations", std::to_string(s.iterations) + (s.converged ? " (converged)" : " (stopped)"));
  }
  row(s.stochastic ? "last ELBO estimate" : "ELBO", s.elbo.empty() ? "none" : number(s.elbo.back(), 10));
  row("inference", number(s.inferenceSeconds, 3) + " s");
  row("compiling", number(s.compileSeconds, 3) + " s");
  row("reading the data", number(s.dataSeconds, 3) + " s");
  if (auto it = s.options.find("vector_isa"); it != s.options.end())
    row("vector ISA", it->second);
  if (auto it = s.options.find("threads"); it != s.options.end())
    row("threads", it->second);
  h += "</table></section>\n<section id=\"elbo\"><h2>ELBO</h2>" + elboPlot(s) + heldoutPlot(s) + "</section>\n";
  if (s.heldout) {
    const auto &ho = *s.heldout;
    h += "<section id=\"heldout\"><h2>Held-out bound</h2><table>";
    row("file", ho.file);
    row("ELBO", number(ho.elbo, 10));
    row("observations", number(ho.observations, 10));
    row("nats per observation", number(ho.perObservation, 6));
    row("perplexity", number(std::exp(-ho.perObservation), 6));
    h += "</table></section>\n";
  }
  if (model)
    for (const Scatter &sc : findScatters(*model))
      if (std::string plot = scatterPlot(sc, in); !plot.empty())
        h += "<section id=\"mixture\"><h2>Mixture over the data</h2>" + plot + "</section>\n";
  h += "<section id=\"posteriors\"><h2>Posteriors</h2>\n";
  for (const rt::PosteriorTable &t : *in.tables)
    if (t.columns.empty())
      h += variableSection(t, in.vocab) + "\n";
  h += "</section>\n";
  if (model)
    h += "<section id=\"factor-graph\"><h2>Factor graph</h2>" + drawGraph(factorGraphDot(*model), "factor graph") +
         "</section>\n";
  if (in.scheduled)
    h += "<section id=\"schedule\"><h2>Schedule</h2>" + drawGraph(scheduleDot(*in.scheduled), "schedule") +
         "</section>\n";
  h += "<section id=\"model\"><h2>Model</h2><p class=\"note\">" + escape(in.modelPath) + "</p><pre>" +
       escape(in.modelSource) + "</pre></section>\n</body></html>\n";
  return h;
}

ReportInput reportOfRun(const rt::RunSummary &summary, const std::vector<rt::PosteriorTable> &tables,
                        const std::string &modelPath, const std::string &modelSource,
                        const std::vector<std::string> &vocab, const ir::Module *scheduled) {
  ReportInput in;
  auto command = summary.options.find("command");
  in.command = command == summary.options.end() ? "" : command->second;
  in.modelPath = modelPath;
  in.modelSource = modelSource;
  in.summary = &summary;
  in.tables = &tables;
  in.vocab = vocab;
  in.scheduled = scheduled;
  return in;
}

std::string checkReportPath(const std::string &path) {
  const fs::path p = fs::absolute(fs::path(path));
  std::error_code ec;
  if (p.filename().empty())
    return "--report: '" + path + "' names a directory; give a file, e.g. report.html";
  if (!fs::is_directory(p.parent_path(), ec))
    return "--report: cannot write '" + path + "': the directory '" + p.parent_path().string() + "' does not exist";
  if (fs::is_directory(p, ec))
    return "--report: '" + path + "' is a directory; give a file, e.g. report.html";
  // An existing file is replaced only if it is an earlier report (--report
  // data.csv or model.ppl would lose the input).
  if (fs::exists(p, ec)) {
    std::ifstream in(p, std::ios::binary);
    std::string head(kReportHead.size(), '\0');
    in.read(head.data(), std::streamsize(head.size()));
    if (head != kReportHead)
      return "--report: '" + path + "' exists and is not a report ppc wrote; give a new file, e.g. report.html";
  }
  if (std::string problem = rt::creationProblem(p.string()); !problem.empty())
    return "--report: cannot write '" + path + "': " + problem;
  return {};
}

bool writeReport(const std::string &path, const ReportInput &in, std::string &error) {
  if (std::string problem = checkReportPath(path); !problem.empty()) {
    error = problem;
    return false;
  }
  return rt::writeFileAtomically(path, renderReport(in), error);
}

} // namespace ppc
