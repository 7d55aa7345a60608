// Shared helpers of the runtime unit tests: long-double reference special
// functions, double-exponential quadrature, expectation node sets for the
// families, numerical gradients and exact linear fits.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <vector>

#include "runtime/Distributions.h"

namespace ppc::rt::test {

// ---------------------------------------------------------------------------
// Reference special functions in long double (64-bit mantissa, eps 1.1e-19).
// digamma/trigamma: recurrence up to x >= 40, then the asymptotic series,
// whose truncation error there is below 1e-25; lgamma: glibc's lgammal.

inline long double refDigamma(long double x) {
  long double acc = 0.0L;
  while (x < 40.0L) {
    acc -= 1.0L / x;
    x += 1.0L;
  }
  const long double z = 1.0L / (x * x);
  const long double series =
      z * (1.0L / 12 - z * (1.0L / 120 - z * (1.0L / 252 - z * (1.0L / 240 - z * (1.0L / 132 - z * (691.0L / 32760 - z * (1.0L / 12)))))));
  return acc + std::log(x) - 0.5L / x - series;
}

inline long double refTrigamma(long double x) {
  long double acc = 0.0L;
  while (x < 40.0L) {
    acc += 1.0L / (x * x);
    x += 1.0L;
  }
  const long double iy = 1.0L / x, z = iy * iy;
  const long double series =
      z * iy * (1.0L / 6 - z * (1.0L / 30 - z * (1.0L / 42 - z * (1.0L / 30 - z * (5.0L / 66 - z * (691.0L / 2730 - z * (7.0L / 6)))))));
  return acc + iy + 0.5L * z + series;
}

inline long double refLgamma(long double x) {
  int sign = 0;
  return ::lgammal_r(x, &sign);
}

/// Distance in units in the last place between two finite doubles.
inline double ulpDistance(double a, double b) {
  if (a == b) return 0.0;
  const double scale = std::max(std::abs(a), std::abs(b));
  int e = 0;
  std::frexp(scale, &e);
  const double ulp = std::ldexp(1.0, std::max(e - 53, -1074));
  return std::abs(a - b) / ulp;
}

/// Error of the double `got` against a long double reference, in ulps of the reference.
inline double ulpError(double got, long double ref) {
  const double r = static_cast<double>(ref);
  int e = 0;
  std::frexp(r, &e);
  const long double ulp = std::ldexp(1.0L, std::max(e - 53, -1074));
  return static_cast<double>(std::abs(static_cast<long double>(got) - ref) / ulp);
}

// ---------------------------------------------------------------------------
// Double-exponential quadrature nodes (fixed step h over t in [-tmax, tmax]).
// For analytic integrands with at most algebraic endpoint singularities the
// error decays like exp(-c/h); with h = 1/32 the node sets below integrate the
// test densities to ~1e-14 (checked by the normalisation tests).

struct Node {
  double x;   ///< abscissa
  double xc;  ///< 1 - x for the unit interval (accurate near 1), unused otherwise
  double w;   ///< weight
};

inline constexpr double kPi = std::numbers::pi;

/// tanh-sinh on (0, 1)
inline std::vector<Node> unitNodes(double h = 1.0 / 32, double tmax = 6.0) {
  std::vector<Node> nodes;
  const int n = static_cast<int>(tmax / h);
  for (int i = -n; i <= n; ++i) {
    const double t = i * h;
    const double u = 0.5 * kPi * std::sinh(t);
    const double x = 1.0 / (1.0 + std::exp(-2.0 * u));
    const double xc = 1.0 / (1.0 + std::exp(2.0 * u));
    const double w = h * kPi * std::cosh(t) * x * xc;
    if (x > 0.0 && xc > 0.0 && w > 0.0) nodes.push_back({x, xc, w});
  }
  return nodes;
}

/// exp-sinh on (0, inf), centred at `scale`
inline std::vector<Node> halfLineNodes(double scale, double h = 1.0 / 32, double tmax = 5.5) {
  std::vector<Node> nodes;
  const int n = static_cast<int>(tmax / h);
  for (int i = -n; i <= n; ++i) {
    const double t = i * h;
    const double x = scale * std::exp(0.5 * kPi * std::sinh(t));
    const double w = h * x * 0.5 * kPi * std::cosh(t);
    if (x > 0.0 && std::isfinite(x) && std::isfinite(w)) nodes.push_back({x, 0.0, w});
  }
  return nodes;
}

/// sinh-sinh on (-inf, inf), centred at `center` with width `scale`
inline std::vector<Node> lineNodes(double center, double scale, double h = 1.0 / 32, double tmax = 3.5) {
  std::vector<Node> nodes;
  const int n = static_cast<int>(tmax / h);
  for (int i = -n; i <= n; ++i) {
    const double t = i * h;
    const double v = 0.5 * kPi * std::sinh(t);
    const double x = center + scale * std::sinh(v);
    const double w = h * scale * std::cosh(v) * 0.5 * kPi * std::cosh(t);
    nodes.push_back({x, 0.0, w});
  }
  return nodes;
}

/// An expectation rule: E_q[f] ~= sum_i w_i f(x_i).
struct Rule {
  std::vector<double> x, xc, w;
  double total() const {
    double s = 0.0;
    for (double v : w) s += v;
    return s;
  }
  template <class F>
  double expect(F f) const {
    double s = 0.0;
    for (size_t i = 0; i < x.size(); ++i) s += w[i] * f(x[i]);
    return s;
  }
  /// E[f(x, 1 - x)] for unit-interval rules (1 - x accurate near x = 1).
  template <class F>
  double expect2(F f) const {
    double s = 0.0;
    for (size_t i = 0; i < x.size(); ++i) s += w[i] * f(x[i], xc[i]);
    return s;
  }
};

/// log Beta(p; a, b) from p and 1 - p given separately.
inline double betaLogPdf(double a, double b, double p, double pc) {
  return (a - 1.0) * std::log(p) + (b - 1.0) * std::log(pc) - (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b));
}

/// q = Beta(a, b) on (0, 1); xc = 1 - x is exact near 1.
inline Rule betaRule(double a, double b) {
  Rule r;
  const double logB = std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  for (const Node& n : unitNodes()) {
    const double lp = (a - 1.0) * std::log(n.x) + (b - 1.0) * std::log(n.xc) - logB;
    r.x.push_back(n.x);
    r.xc.push_back(n.xc);
    r.w.push_back(n.w * std::exp(lp));
  }
  return r;
}

/// q = Gamma(shape, rate)
inline Rule gammaRule(double shape, double rate) {
  Rule r;
  const double logZ = std::lgamma(shape) - shape * std::log(rate);
  for (const Node& n : halfLineNodes(shape / rate)) {
    const double lp = (shape - 1.0) * std::log(n.x) - rate * n.x - logZ;
    r.x.push_back(n.x);
    r.xc.push_back(0.0);
    r.w.push_back(n.w * std::exp(lp));
  }
  return r;
}

/// q = Gaussian(mean, precision)
inline Rule gaussianRule(double mean, double precision) {
  Rule r;
  const double sd = 1.0 / std::sqrt(precision);
  for (const Node& n : lineNodes(mean, sd)) {
    const double d = (n.x - mean) / sd;
    r.x.push_back(n.x);
    r.xc.push_back(0.0);
    r.w.push_back(n.w * std::exp(-0.5 * d * d) / (sd * std::sqrt(2.0 * kPi)));
  }
  return r;
}

/// Gauss-Hermite rule for N(0, 1) with 5 points (exact for polynomials of degree <= 9).
struct Hermite5 {
  static constexpr double z[5] = {-2.8569700138728056, -1.3556261799742659, 0.0, 1.3556261799742659,
                                  2.8569700138728056};
  static constexpr double w[5] = {0.011257411327720689, 0.22207592200561266, 0.5333333333333333,
                                  0.22207592200561266, 0.011257411327720689};
};

/// Exact-for-quadratics nodes of a D-dim Gaussian N(mean, cov): tensor Gauss-Hermite.
inline std::vector<std::pair<Eigen::VectorXd, double>> gaussHermiteNodes(const Eigen::VectorXd& mean,
                                                                         const Eigen::MatrixXd& cov) {
  const int D = static_cast<int>(mean.size());
  const Eigen::MatrixXd L = cov.llt().matrixL();
  std::vector<std::pair<Eigen::VectorXd, double>> out;
  int total = 1;
  for (int d = 0; d < D; ++d) total *= 5;
  for (int idx = 0; idx < total; ++idx) {
    Eigen::VectorXd z(D);
    double w = 1.0;
    int rem = idx;
    for (int d = 0; d < D; ++d) {
      z[d] = Hermite5::z[rem % 5];
      w *= Hermite5::w[rem % 5];
      rem /= 5;
    }
    out.emplace_back(mean + L * z, w);
  }
  return out;
}

// ---------------------------------------------------------------------------

/// Central-difference gradient of f at x with step h * max(1, |x_i|).
inline Eigen::VectorXd numericGradient(const std::function<double(const Eigen::VectorXd&)>& f,
                                       const Eigen::VectorXd& x, double h = 1e-5) {
  Eigen::VectorXd g(x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double step = h * std::max(1.0, std::abs(x[i]));
    Eigen::VectorXd xp = x, xm = x, xp2 = x, xm2 = x;
    xp[i] += step;
    xm[i] -= step;
    xp2[i] += 2 * step;
    xm2[i] -= 2 * step;
    // fourth-order central difference
    g[i] = (8.0 * (f(xp) - f(xm)) - (f(xp2) - f(xm2))) / (12.0 * step);
  }
  return g;
}

/// Solve the square system sum_j basis_j(point_i) c_j = value_i exactly (full-pivot LU).
inline Eigen::VectorXd exactFit(const Eigen::MatrixXd& design, const Eigen::VectorXd& values) {
  return design.fullPivLu().solve(values);
}

inline Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd r(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double x : v) r[i++] = x;
  return r;
}

}  // namespace ppc::rt::test
