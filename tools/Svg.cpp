//===- tools/Svg.cpp - a small SVG writer for the run report ----------------===//
#include "tools/Svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ppc::svg {

std::string escape(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text)
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  return out;
}

std::string number(double v, int digits) {
  if (!std::isfinite(v))
    return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

namespace {
std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}
} // namespace

void Canvas::line(double x1, double y1, double x2, double y2, const std::string &stroke, double widthPx) {
  body_ += "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) +
           "\" stroke=\"" + stroke + "\" stroke-width=\"" + px(widthPx) + "\"/>";
}

void Canvas::polyline(const std::vector<std::pair<double, double>> &points, const std::string &stroke,
                      double widthPx) {
  if (points.empty())
    return;
  body_ += "<polyline fill=\"none\" stroke=\"" + stroke + "\" stroke-width=\"" + px(widthPx) + "\" points=\"";
  for (const auto &[x, y] : points)
    body_ += px(x) + "," + px(y) + " ";
  body_ += "\"/>";
}

void Canvas::rect(double x, double y, double w, double h, const std::string &fill, const std::string &title) {
  body_ += "<rect x=\"" + px(x) + "\" y=\"" + px(y) + "\" width=\"" + px(std::max(w, 0.0)) + "\" height=\"" +
           px(std::max(h, 0.0)) + "\" fill=\"" + fill + "\"";
  body_ += title.empty() ? "/>" : "><title>" + escape(title) + "</title></rect>";
}

void Canvas::circle(double x, double y, double r, const std::string &fill, double opacity) {
  body_ += "<circle cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"" + px(r) + "\" fill=\"" + fill + "\"" +
           (opacity < 1 ? " fill-opacity=\"" + number(opacity, 2) + "\"" : "") + "/>";
}

void Canvas::ellipse(double cx, double cy, double rx, double ry, double degrees, const std::string &stroke,
                     const std::string &cls) {
  body_ += "<ellipse" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + " cx=\"" + px(cx) + "\" cy=\"" + px(cy) + "\" rx=\"" + px(rx) + "\" ry=\"" + px(ry) +
           "\" transform=\"rotate(" + px(degrees) + " " + px(cx) + " " + px(cy) + ")\" fill=\"none\" stroke=\"" +
           stroke + "\" stroke-width=\"2\"/>";
}

void Canvas::text(double x, double y, const std::string &s, const std::string &anchor, double sizePx, double rotate,
                  const std::string &fill) {
  body_ += "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" font-size=\"" + px(sizePx) + "\" text-anchor=\"" + anchor +
           "\" fill=\"" + fill + "\"";
  if (rotate != 0)
    body_ += " transform=\"rotate(" + px(rotate) + " " + px(x) + " " + px(y) + ")\"";
  body_ += ">" + escape(s) + "</text>";
}

std::string Canvas::str(const std::string &label) const {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"" + escape(label) + "\" width=\"" +
         px(width_) + "\" height=\"" + px(height_) + "\" viewBox=\"0 0 " + px(width_) + " " + px(height_) +
         "\" font-family=\"DejaVu Sans, sans-serif\">" + body_ + "</svg>";
}

double Axis::operator()(double v) const {
  double a = lo, b = hi, t = v;
  if (log) {
    a = std::log10(lo);
    b = std::log10(hi);
    t = std::log10(std::max(v, lo));
  }
  const double span = b - a == 0 ? 1 : b - a;
  return from + (t - a) / span * (to - from);
}

std::vector<double> Axis::ticks(int about) const {
  std::vector<double> out;
  if (log) {
    for (double p = std::floor(std::log10(lo)); p <= std::ceil(std::log10(hi)); ++p) {
      double v = std::pow(10.0, p);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9))
        out.push_back(v);
    }
    return out;
  }
  const double span = hi - lo;
  if (!(span > 0))
    return {lo};
  const double raw = span / std::max(about, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  if (integer)
    step = std::max(1.0, std::round(step));
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

void Axis::include(double v) {
  if (!std::isfinite(v) || (log && v <= 0))
    return;
  lo = std::min(lo, v);
  hi = std::max(hi, v);
}

Plot::Plot(double width, double height, double l, double r, double t, double b)
    : canvas(width, height), left(l), right(r), top(t), bottom(b) {
  x.from = l;
  x.to = width - r;
  y.from = height - b;
  y.to = t;
}

void Plot::frame(const std::string &title, const std::string &xLabel, const std::string &yLabel) {
  const double x0 = innerLeft(), x1 = innerRight(), y0 = innerBottom(), y1 = innerTop();
  for (double v : y.ticks()) {
    const double py = y(v);
    canvas.line(x0, py, x1, py, "#e4e4e4");
    canvas.text(x0 - 4, py + 4, number(v), "end", 10);
  }
  for (double v : x.ticks()) {
    const double pxl = x(v);
    canvas.line(pxl, y0, pxl, y0 + 4, "#555");
    canvas.text(pxl, y0 + 16, number(v), "middle", 10);
  }
  canvas.line(x0, y0, x1, y0, "#555");
  canvas.line(x0, y0, x0, y1, "#555");
  canvas.text((x0 + x1) / 2, canvas.height() - 6, xLabel, "middle", 11);
  canvas.text(12, (y0 + y1) / 2, yLabel, "middle", 11, -90);
  canvas.text(x0, 16, title, "start", 12, 0, "#000");
}

const std::string &colour(size_t i) {
  static const std::string palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                        "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return palette[i % 10];
}

} // namespace ppc::svg
