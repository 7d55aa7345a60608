#include "runtime/Distributions.h"

#include <Eigen/Cholesky>
#include <cmath>
#include <numbers>
#include <sstream>

#include "runtime/Operators.h"
#include "runtime/Special.h"

namespace ppc::rt {

namespace {

constexpr double kLog2Pi = 1.8378770664093454836;
constexpr double kLog2 = std::numbers::ln2;

template <class... Args>
[[noreturn]] void fail(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw ParameterError(os.str());
}

void requirePositive(const char* family, const char* what, double v) {
  if (!(v > 0.0) || !std::isfinite(v)) fail(family, " ", what, " must be positive and finite; got ", v);
}

void requireFinite(const char* family, const char* what, double v) {
  if (!std::isfinite(v)) fail(family, " ", what, " must be finite; got ", v);
}

void requireSize(const char* family, const char* what, Eigen::Index got, Eigen::Index want) {
  if (got != want) fail(family, " ", what, " must have ", want, " entries; got ", got);
}

// Symmetric (up to a relative 1e-10) and positive definite; throws "<family> <what> is not ...".
Eigen::LLT<Mat> requireSpd(const char* family, const char* what, const Mat& m) {
  if (m.rows() != m.cols() || m.rows() == 0)
    fail(family, " ", what, " must be a non-empty square matrix; got ", m.rows(), "x", m.cols());
  if (!m.allFinite()) fail(family, " ", what, " has a non-finite entry");
  const double scale = m.cwiseAbs().maxCoeff();
  if ((m - m.transpose()).cwiseAbs().maxCoeff() > 1e-10 * scale) fail(family, " ", what, " is not symmetric");
  Eigen::LLT<Mat> llt(m);
  if (llt.info() != Eigen::Success) fail(family, " ", what, " is not positive definite");
  // LLT only looks at the lower triangle and does not detect all failures by
  // itself; check the factor's diagonal too.
  const Vec d = llt.matrixL().toDenseMatrix().diagonal();
  if (!(d.minCoeff() > 0.0) || !d.allFinite()) fail(family, " ", what, " is not positive definite");
  return llt;
}

double logdet(const Eigen::LLT<Mat>& llt) {
  return 2.0 * llt.matrixLLT().diagonal().array().log().sum();
}

Vec rowMajor(const Mat& m) {
  Vec v(m.size());
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) v[i * m.cols() + j] = m(i, j);
  return v;
}

Mat fromRowMajor(const double* p, int D) {
  Mat m(D, D);
  for (int i = 0; i < D; ++i)
    for (int j = 0; j < D; ++j) m(i, j) = p[i * D + j];
  return m;
}

// log of a Gamma(a, 1) variate, accurate also for a << 1 where the variate underflows.
double logGammaVariate(double a, Rng& rng) {
  if (a >= 1.0) return std::log(std::gamma_distribution<double>(a, 1.0)(rng));
  // G(a) = G(a + 1) * U^(1/a)
  const double g = std::gamma_distribution<double>(a + 1.0, 1.0)(rng);
  double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  while (u <= 0.0) u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  return std::log(g) + std::log(u) / a;
}

}  // namespace

// ============================== Dirichlet ==============================

Dirichlet::Dirichlet(Vec alpha) : alpha_(std::move(alpha)) {
  if (alpha_.size() < 2) fail("Dirichlet needs at least 2 components; got ", alpha_.size());
  for (Eigen::Index k = 0; k < alpha_.size(); ++k)
    if (!(alpha_[k] > 0.0) || !std::isfinite(alpha_[k]))
      fail("Dirichlet concentration must be positive; got ", alpha_[k], " at index ", k);
}

Dirichlet Dirichlet::fromNatural(const Vec& eta) { return Dirichlet(eta.array() + 1.0); }

Vec Dirichlet::natural() const { return alpha_.array() - 1.0; }

Vec Dirichlet::mean() const { return alpha_ / alpha_.sum(); }

Vec Dirichlet::variance() const {
  const double a0 = alpha_.sum();
  return (alpha_.array() * (a0 - alpha_.array())) / (a0 * a0 * (a0 + 1.0));
}

Vec Dirichlet::elog() const {
  const double d0 = digamma(alpha_.sum());
  Vec e(alpha_.size());
  for (Eigen::Index k = 0; k < e.size(); ++k) e[k] = digamma(alpha_[k]) - d0;
  return e;
}

double Dirichlet::logNormalizer(const Vec& eta) {
  double s = 0.0, lg = 0.0;
  for (Eigen::Index k = 0; k < eta.size(); ++k) {
    s += eta[k] + 1.0;
    lg += lgamma(eta[k] + 1.0);
  }
  return lg - lgamma(s);
}

double Dirichlet::logNormalizer() const { return logNormalizer(natural()); }

double Dirichlet::entropy() const {
  const double a0 = alpha_.sum();
  double h = logNormalizer() + (a0 - static_cast<double>(alpha_.size())) * digamma(a0);
  for (Eigen::Index k = 0; k < alpha_.size(); ++k) h -= (alpha_[k] - 1.0) * digamma(alpha_[k]);
  return h;
}

double Dirichlet::logDensity(const Vec& x) const {
  requireSize("Dirichlet", "point", x.size(), alpha_.size());
  if ((x.array() < 0.0).any() || std::abs(x.sum() - 1.0) > 1e-9) return -std::numeric_limits<double>::infinity();
  return ((alpha_.array() - 1.0) * x.array().log()).sum() - logNormalizer();
}

Vec Dirichlet::sample(Rng& rng) const {
  Vec lg(alpha_.size());
  for (Eigen::Index k = 0; k < lg.size(); ++k) lg[k] = logGammaVariate(alpha_[k], rng);
  const double m = lg.maxCoeff();
  Vec x = (lg.array() - m).exp();
  return x / x.sum();
}

// ============================== Beta ==============================

Beta::Beta(double a, double b) : a_(a), b_(b) {
  requirePositive("Beta", "parameter a", a);
  requirePositive("Beta", "parameter b", b);
}

Beta Beta::fromNatural(const Vec& eta) {
  requireSize("Beta", "natural parameter", eta.size(), 2);
  return Beta(eta[0] + 1.0, eta[1] + 1.0);
}

Vec Beta::natural() const { return Eigen::Vector2d(a_ - 1.0, b_ - 1.0); }

double Beta::variance() const {
  const double s = a_ + b_;
  return a_ * b_ / (s * s * (s + 1.0));
}

double Beta::elogP() const { return digamma(a_) - digamma(a_ + b_); }
double Beta::elog1mP() const { return digamma(b_) - digamma(a_ + b_); }
Vec Beta::expectedStats() const { return Eigen::Vector2d(elogP(), elog1mP()); }

double Beta::logNormalizer(const Vec& eta) { return Dirichlet::logNormalizer(eta); }
double Beta::logNormalizer() const { return lgamma(a_) + lgamma(b_) - lgamma(a_ + b_); }

double Beta::entropy() const {
  return logNormalizer() - (a_ - 1.0) * digamma(a_) - (b_ - 1.0) * digamma(b_) + (a_ + b_ - 2.0) * digamma(a_ + b_);
}

double Beta::logDensity(double p) const {
  if (!(p >= 0.0 && p <= 1.0)) return -std::numeric_limits<double>::infinity();
  return (a_ - 1.0) * std::log(p) + (b_ - 1.0) * std::log1p(-p) - logNormalizer();
}

double Beta::sample(Rng& rng) const {
  const double la = logGammaVariate(a_, rng), lb = logGammaVariate(b_, rng);
  // p = Ga / (Ga + Gb) = 1 / (1 + exp(lb - la))
  return 1.0 / (1.0 + std::exp(lb - la));
}

// ============================== Categorical ==============================

Categorical::Categorical(Vec probs) : p_(std::move(probs)) {
  if (p_.size() < 1) fail("Categorical needs at least 1 category; got 0");
  for (Eigen::Index k = 0; k < p_.size(); ++k)
    if (!(p_[k] >= 0.0) || !std::isfinite(p_[k]))
      fail("Categorical probability must be non-negative and finite; got ", p_[k], " at index ", k);
  const double s = p_.sum();
  if (std::abs(s - 1.0) > 1e-9) fail("Categorical probabilities must sum to 1; got sum ", s);
  p_ /= s;
}

Categorical Categorical::fromNatural(const Vec& eta) {
  if (eta.size() < 1) fail("Categorical needs at least 1 category; got 0");
  if (eta.hasNaN() || (eta.array() == std::numeric_limits<double>::infinity()).any())
    fail("Categorical natural parameter must not be NaN or +inf");
  const double m = eta.maxCoeff();
  if (!std::isfinite(m)) fail("Categorical natural parameter has no finite entry");
  Vec p = (eta.array() - m).exp();
  return Categorical(p / p.sum());
}

Vec Categorical::natural() const { return p_.array().log(); }

double Categorical::logNormalizer(const Vec& eta) {
  const double m = eta.maxCoeff();
  return m + std::log((eta.array() - m).exp().sum());
}

double Categorical::logNormalizer() const { return 0.0; }  // natural() = log p is normalized

double Categorical::entropy() const {
  double h = 0.0;
  for (Eigen::Index k = 0; k < p_.size(); ++k)
    if (p_[k] > 0.0) h -= p_[k] * std::log(p_[k]);
  return h;
}

double Categorical::logDensity(int64_t x) const {
  if (x < 0 || x >= p_.size()) return -std::numeric_limits<double>::infinity();
  return std::log(p_[x]);
}

int64_t Categorical::sample(Rng& rng) const {
  std::discrete_distribution<int64_t> d(p_.data(), p_.data() + p_.size());
  return d(rng);
}

// ============================== Bernoulli ==============================

Bernoulli::Bernoulli(double p) : p_(p) {
  if (!(p >= 0.0 && p <= 1.0)) fail("Bernoulli probability must be in [0, 1]; got ", p);
}

Bernoulli Bernoulli::fromNatural(const Vec& eta) {
  requireSize("Bernoulli", "natural parameter", eta.size(), 1);
  if (std::isnan(eta[0])) fail("Bernoulli natural parameter must not be NaN");
  return Bernoulli(1.0 / (1.0 + std::exp(-eta[0])));
}

Vec Bernoulli::natural() const { return Vec::Constant(1, std::log(p_) - std::log1p(-p_)); }
Vec Bernoulli::expectedStats() const { return Vec::Constant(1, p_); }

double Bernoulli::logNormalizer(const Vec& eta) {
  const double x = eta[0];
  return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
}

double Bernoulli::logNormalizer() const { return -std::log1p(-p_); }

double Bernoulli::entropy() const {
  double h = 0.0;
  if (p_ > 0.0) h -= p_ * std::log(p_);
  if (p_ < 1.0) h -= (1.0 - p_) * std::log1p(-p_);
  return h;
}

double Bernoulli::logDensity(int64_t x) const {
  if (x == 1) return std::log(p_);
  if (x == 0) return std::log1p(-p_);
  return -std::numeric_limits<double>::infinity();
}

int64_t Bernoulli::sample(Rng& rng) const { return std::bernoulli_distribution(p_)(rng) ? 1 : 0; }

// ============================== Gamma ==============================

Gamma::Gamma(double shape, double rate) : a_(shape), b_(rate) {
  requirePositive("Gamma", "shape", shape);
  requirePositive("Gamma", "rate", rate);
}

Gamma Gamma::fromNatural(const Vec& eta) {
  requireSize("Gamma", "natural parameter", eta.size(), 2);
  return Gamma(eta[1] + 1.0, -eta[0]);
}

Vec Gamma::natural() const { return Eigen::Vector2d(-b_, a_ - 1.0); }
double Gamma::elog() const { return digamma(a_) - std::log(b_); }
Vec Gamma::expectedStats() const { return Eigen::Vector2d(mean(), elog()); }

double Gamma::logNormalizer(const Vec& eta) {
  const double a = eta[1] + 1.0, b = -eta[0];
  return lgamma(a) - a * std::log(b);
}

double Gamma::logNormalizer() const { return lgamma(a_) - a_ * std::log(b_); }

double Gamma::entropy() const { return a_ - std::log(b_) + lgamma(a_) + (1.0 - a_) * digamma(a_); }

double Gamma::logDensity(double x) const {
  if (!(x > 0.0)) return -std::numeric_limits<double>::infinity();
  return (a_ - 1.0) * std::log(x) - b_ * x - logNormalizer();
}

double Gamma::sample(Rng& rng) const { return std::gamma_distribution<double>(a_, 1.0 / b_)(rng); }

// ============================== Poisson ==============================

Poisson::Poisson(double rate) : lambda_(rate) { requirePositive("Poisson", "rate", rate); }

Poisson Poisson::fromNatural(const Vec& eta) {
  requireSize("Poisson", "natural parameter", eta.size(), 1);
  return Poisson(std::exp(eta[0]));
}

Vec Poisson::natural() const { return Vec::Constant(1, std::log(lambda_)); }
Vec Poisson::expectedStats() const { return Vec::Constant(1, lambda_); }
double Poisson::elogFactorial() const { return ppc_poisson_elogfact(lambda_); }
double Poisson::logNormalizer(const Vec& eta) { return std::exp(eta[0]); }
double Poisson::logNormalizer() const { return lambda_; }
double Poisson::entropy() const {
  const double eta = std::log(lambda_);
  return ppc_poisson_entropy_n(1, &eta);
}

double Poisson::logDensity(int64_t x) const {
  if (x < 0) return -std::numeric_limits<double>::infinity();
  return static_cast<double>(x) * std::log(lambda_) - lambda_ - lgamma(static_cast<double>(x) + 1.0);
}

int64_t Poisson::sample(Rng& rng) const { return std::poisson_distribution<int64_t>(lambda_)(rng); }

// ============================== Gaussian ==============================

Gaussian::Gaussian(double mean, double precision) : mu_(mean), tau_(precision) {
  requireFinite("Gaussian", "mean", mean);
  requirePositive("Gaussian", "precision", precision);
}

Gaussian Gaussian::fromNatural(const Vec& eta) {
  requireSize("Gaussian", "natural parameter", eta.size(), 2);
  const double tau = -2.0 * eta[1];
  requirePositive("Gaussian", "precision", tau);
  return Gaussian(eta[0] / tau, tau);
}

Vec Gaussian::natural() const { return Eigen::Vector2d(tau_ * mu_, -0.5 * tau_); }
Vec Gaussian::expectedStats() const { return Eigen::Vector2d(mu_, mu_ * mu_ + 1.0 / tau_); }

double Gaussian::logNormalizer(const Vec& eta) {
  const double tau = -2.0 * eta[1];
  return 0.5 * eta[0] * eta[0] / tau - 0.5 * std::log(tau);
}

double Gaussian::logNormalizer() const { return 0.5 * tau_ * mu_ * mu_ - 0.5 * std::log(tau_); }
double Gaussian::entropy() const { return 0.5 * (1.0 + kLog2Pi - std::log(tau_)); }

double Gaussian::logDensity(double x) const {
  const double d = x - mu_;
  return 0.5 * (std::log(tau_) - kLog2Pi) - 0.5 * tau_ * d * d;
}

double Gaussian::sample(Rng& rng) const {
  return mu_ + std::normal_distribution<double>(0.0, 1.0)(rng) / std::sqrt(tau_);
}

// ============================== MvGaussian ==============================

MvGaussian::MvGaussian(Vec mean, Mat precision) : mu_(std::move(mean)), lambda_(std::move(precision)) {
  if (mu_.size() == 0) fail("MvGaussian mean must have at least 1 entry");
  if (lambda_.rows() != mu_.size() || lambda_.cols() != mu_.size())
    fail("MvGaussian mean has dimension ", mu_.size(), " but precision matrix is ", lambda_.rows(), "x",
         lambda_.cols());
  for (Eigen::Index i = 0; i < mu_.size(); ++i)
    if (!std::isfinite(mu_[i])) fail("MvGaussian mean must be finite; got ", mu_[i], " at index ", i);
  requireSpd("MvGaussian", "precision matrix", lambda_);
}

MvGaussian MvGaussian::fromNatural(const Vec& eta, int D) {
  requireSize("MvGaussian", "natural parameter", eta.size(), D + D * D);
  const Mat lambda = -2.0 * fromRowMajor(eta.data() + D, D);
  const auto llt = requireSpd("MvGaussian", "precision matrix", lambda);
  return MvGaussian(llt.solve(eta.head(D)), lambda);
}

Mat MvGaussian::covariance() const { return lambda_.llt().solve(Mat::Identity(dim(), dim())); }

Vec MvGaussian::natural() const {
  Vec eta(dim() + dim() * dim());
  eta.head(dim()) = lambda_ * mu_;
  eta.tail(dim() * dim()) = rowMajor(-0.5 * lambda_);
  return eta;
}

Vec MvGaussian::expectedStats() const {
  Vec s(dim() + dim() * dim());
  s.head(dim()) = mu_;
  s.tail(dim() * dim()) = rowMajor(covariance() + mu_ * mu_.transpose());
  return s;
}

double MvGaussian::logNormalizer(const Vec& eta, int D) {
  requireSize("MvGaussian", "natural parameter", eta.size(), D + D * D);
  const Mat lambda = -2.0 * fromRowMajor(eta.data() + D, D);
  const auto llt = requireSpd("MvGaussian", "precision matrix", lambda);
  const Vec h = eta.head(D);
  return 0.5 * h.dot(llt.solve(h)) - 0.5 * logdet(llt);
}

double MvGaussian::logNormalizer() const { return logNormalizer(natural(), dim()); }

double MvGaussian::entropy() const {
  return 0.5 * dim() * (1.0 + kLog2Pi) - 0.5 * logdet(lambda_.llt());
}

double MvGaussian::logDensity(const Vec& x) const {
  requireSize("MvGaussian", "point", x.size(), dim());
  const Vec d = x - mu_;
  return 0.5 * (logdet(lambda_.llt()) - dim() * kLog2Pi) - 0.5 * d.dot(lambda_ * d);
}

Vec MvGaussian::sample(Rng& rng) const {
  // Lambda = L L^T, x = mu + L^-T z has covariance L^-T L^-1 = Lambda^-1.
  std::normal_distribution<double> n01(0.0, 1.0);
  Vec z(dim());
  for (int i = 0; i < dim(); ++i) z[i] = n01(rng);
  const Mat L = lambda_.llt().matrixL();
  return mu_ + L.transpose().triangularView<Eigen::Upper>().solve(z);
}

// ============================== Wishart ==============================

Wishart::Wishart(double dof, Mat scale) : nu_(dof), scale_(std::move(scale)) {
  requireSpd("Wishart", "scale matrix", scale_);
  const int D = dim();
  if (!(dof > D - 1) || !std::isfinite(dof))
    fail("Wishart degrees of freedom must be greater than D - 1 = ", D - 1, "; got ", dof);
}

Wishart Wishart::fromNatural(const Vec& eta, int D) {
  requireSize("Wishart", "natural parameter", eta.size(), D * D + 1);
  const Mat sinv = -2.0 * fromRowMajor(eta.data(), D);
  const auto llt = requireSpd("Wishart", "inverse scale matrix", sinv);
  return Wishart(2.0 * eta[D * D] + D + 1, llt.solve(Mat::Identity(D, D)));
}

double Wishart::elogdet() const {
  return mvdigamma(dim(), 0.5 * nu_) + dim() * kLog2 + logdet(scale_.llt());
}

Vec Wishart::natural() const {
  const int D = dim();
  Vec eta(D * D + 1);
  eta.head(D * D) = rowMajor(-0.5 * scale_.llt().solve(Mat::Identity(D, D)));
  eta[D * D] = 0.5 * (nu_ - D - 1);
  return eta;
}

Vec Wishart::expectedStats() const {
  const int D = dim();
  Vec s(D * D + 1);
  s.head(D * D) = rowMajor(mean());
  s[D * D] = elogdet();
  return s;
}

double Wishart::logNormalizer(const Vec& eta, int D) {
  requireSize("Wishart", "natural parameter", eta.size(), D * D + 1);
  const Mat sinv = -2.0 * fromRowMajor(eta.data(), D);
  const auto llt = requireSpd("Wishart", "inverse scale matrix", sinv);
  const double nu = 2.0 * eta[D * D] + D + 1;
  if (!(nu > D - 1)) fail("Wishart degrees of freedom must be greater than D - 1 = ", D - 1, "; got ", nu);
  const double logdetS = -logdet(llt);
  return 0.5 * nu * logdetS + 0.5 * nu * D * kLog2 + lmvgamma(D, 0.5 * nu);
}

double Wishart::logNormalizer() const {
  const int D = dim();
  return 0.5 * nu_ * logdet(scale_.llt()) + 0.5 * nu_ * D * kLog2 + lmvgamma(D, 0.5 * nu_);
}

double Wishart::entropy() const {
  const int D = dim();
  return logNormalizer() + 0.5 * nu_ * D - 0.5 * (nu_ - D - 1) * elogdet();
}

double Wishart::logDensity(const Mat& lambda) const {
  const int D = dim();
  if (lambda.rows() != D || lambda.cols() != D)
    fail("Wishart point must be ", D, "x", D, "; got ", lambda.rows(), "x", lambda.cols());
  Eigen::LLT<Mat> llt(lambda);
  if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  const double tr = scale_.llt().solve(lambda).trace();
  return 0.5 * (nu_ - D - 1) * logdet(llt) - 0.5 * tr - logNormalizer();
}

Mat Wishart::sample(Rng& rng) const {
  // Bartlett: Lambda = L A A^T L^T, S = L L^T, A lower triangular with
  // A_ii = sqrt(chi^2_{nu - i}) (i = 0..D-1) and A_ij ~ N(0, 1) below the diagonal.
  const int D = dim();
  std::normal_distribution<double> n01(0.0, 1.0);
  Mat A = Mat::Zero(D, D);
  for (int i = 0; i < D; ++i) {
    A(i, i) = std::sqrt(std::chi_squared_distribution<double>(nu_ - i)(rng));
    for (int j = 0; j < i; ++j) A(i, j) = n01(rng);
  }
  const Mat L = scale_.llt().matrixL();
  const Mat LA = L * A;
  return LA * LA.transpose();
}

// ============================== KL ==============================

namespace {
template <class D>
double klNatural(const D& q, const D& p) {
  const Vec eq = q.natural(), ep = p.natural();
  return p.logNormalizer() - q.logNormalizer() - (ep - eq).dot(q.expectedStats());
}
void requireSameDim(const char* family, int a, int b) {
  if (a != b) fail(family, " KL divergence needs equal dimensions; got ", a, " and ", b);
}
}  // namespace

double kl(const Dirichlet& q, const Dirichlet& p) {
  requireSameDim("Dirichlet", q.dim(), p.dim());
  return klNatural(q, p);
}

double kl(const Beta& q, const Beta& p) { return klNatural(q, p); }

double kl(const Categorical& q, const Categorical& p) {
  requireSameDim("Categorical", q.dim(), p.dim());
  double s = 0.0;
  for (int k = 0; k < q.dim(); ++k)
    if (q.probs()[k] > 0.0) s += q.probs()[k] * (std::log(q.probs()[k]) - std::log(p.probs()[k]));
  return s;
}

double kl(const Bernoulli& q, const Bernoulli& p) {
  double s = 0.0;
  if (q.p() > 0.0) s += q.p() * (std::log(q.p()) - std::log(p.p()));
  if (q.p() < 1.0) s += (1.0 - q.p()) * (std::log1p(-q.p()) - std::log1p(-p.p()));
  return s;
}

double kl(const Gamma& q, const Gamma& p) { return klNatural(q, p); }

double kl(const Poisson& q, const Poisson& p) {
  const double lq = q.rate(), lp = p.rate();
  return lq * (std::log(lq) - std::log(lp)) - lq + lp;
}

double kl(const Gaussian& q, const Gaussian& p) {
  const double d = q.mean() - p.mean();
  return 0.5 * (std::log(q.precision() / p.precision()) + p.precision() / q.precision() +
                p.precision() * d * d - 1.0);
}

double kl(const MvGaussian& q, const MvGaussian& p) {
  requireSameDim("MvGaussian", q.dim(), p.dim());
  return klNatural(q, p);
}

double kl(const Wishart& q, const Wishart& p) {
  requireSameDim("Wishart", q.dim(), p.dim());
  return klNatural(q, p);
}

}  // namespace ppc::rt
