//===- tools/Svg.h - a small SVG writer for the run report ------------------===//
//
// Plots as inline SVG (tools/Report.cpp): a canvas of shapes in pixel
// coordinates, and axes that map data to it with "nice" ticks, labels and
// an optional log scale. Written by hand rather than taken from a plotting
// library: Debian packages none for C++ that writes self-contained SVG
// without a runtime (gnuplot and matplotlib need their programs), and a
// report needs only lines, points, bars, error bars and ellipses.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ppc::svg {

/// Text for SVG or HTML: & < > " escaped.
std::string escape(const std::string &text);
/// A number for a tick or a label: at most `digits` significant digits.
std::string number(double v, int digits = 4);

/// Shapes in pixel coordinates (y down), emitted in order.
class Canvas {
public:
  Canvas(double width, double height) : width_(width), height_(height) {}
  void line(double x1, double y1, double x2, double y2, const std::string &stroke, double widthPx = 1);
  void polyline(const std::vector<std::pair<double, double>> &points, const std::string &stroke, double widthPx = 1.5);
  void rect(double x, double y, double w, double h, const std::string &fill, const std::string &title = "");
  void circle(double x, double y, double r, const std::string &fill, double opacity = 1);
  /// An ellipse with radii rx, ry rotated by `degrees` around its centre.
  void ellipse(double cx, double cy, double rx, double ry, double degrees, const std::string &stroke,
               const std::string &cls = "");
  /// anchor: start, middle or end; `rotate`: -90 for a vertical label.
  void text(double x, double y, const std::string &s, const std::string &anchor = "start", double sizePx = 11,
            double rotate = 0, const std::string &fill = "#222");
  std::string str(const std::string &label) const; ///< the <svg> element (`label`: its accessible name)
  double width() const { return width_; }
  double height() const { return height_; }

private:
  double width_, height_;
  std::string body_;
};

/// A linear or logarithmic axis from data to pixels.
struct Axis {
  double lo = 0, hi = 1;  ///< data range
  double from = 0, to = 1; ///< pixel range
  bool log = false;
  bool integer = false; ///< ticks at integers only (categories)
  double operator()(double v) const;
  /// Round ticks inside [lo, hi] (powers of ten on a log axis).
  std::vector<double> ticks(int about = 5) const;
  /// Widens [lo, hi] to include v (and keeps a log axis positive).
  void include(double v);
};

/// A plot frame: x and y axes with ticks, labels and a title, on a canvas.
class Plot {
public:
  Plot(double width, double height, double left = 64, double right = 16, double top = 26, double bottom = 44);
  Axis x, y;
  /// Draws the frame, ticks, grid and labels (after setting x and y).
  void frame(const std::string &title, const std::string &xLabel, const std::string &yLabel);
  Canvas canvas;
  double left, right, top, bottom;
  double innerLeft() const { return left; }
  double innerRight() const { return canvas.width() - right; }
  double innerTop() const { return top; }
  double innerBottom() const { return canvas.height() - bottom; }
};

/// Colours for categories (components, topics), repeating after ten.
const std::string &colour(size_t i);

} // namespace ppc::svg
