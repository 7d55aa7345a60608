// Exponential-family distributions of the VMP runtime, in natural parameters.
//
// Every family is written p(x) = h(x) exp(<eta, T(x)> - A(eta)). The flat
// layouts below of eta (natural()) and of E[T(x)] (expectedStats()) are the
// ones used by the message and ELBO kernels of runtime/Operators.h: a message
// to a variable is an increment of its eta in exactly this layout.
//
//   family        eta (natural())                    T(x) (expectedStats())        h(x)
//   Dirichlet K   alpha - 1                    [K]   log x                   [K]   1 (simplex)
//   Beta          (a - 1, b - 1)               [2]   (log p, log(1-p))       [2]   1
//   Categorical K log p (any additive shift)   [K]   one-hot(x)              [K]   1
//   Bernoulli     logit p = log(p/(1-p))       [1]   x in {0,1}              [1]   1
//   Gamma         (-rate, shape - 1)           [2]   (x, log x)              [2]   1
//   Poisson       log lambda                   [1]   x                       [1]   1/x!
//   Gaussian      (tau mu, -tau/2)             [2]   (x, x^2)                [2]   (2 pi)^-1/2
//   MvGaussian D  (Lambda mu, -Lambda/2)   [D+D*D]   (x, x x^T)          [D+D*D]   (2 pi)^-D/2
//   Wishart D     (-S^-1/2, (nu-D-1)/2)    [D*D+1]   (Lambda, log|Lambda|) [D*D+1] 1
//
// Matrices are stored row-major and in full (both triangles). Gamma uses the
// shape/rate parameterisation (mean shape/rate). Wishart(nu, S) has
// E[Lambda] = nu S and density |Lambda|^{(nu-D-1)/2} exp(-tr(S^-1 Lambda)/2) / Z.
// Beta(a, b) is the K = 2 Dirichlet on (p, 1 - p): as the parameter of a
// two-category Categorical, category 0 has probability p.
//
// Constructors validate their arguments and throw ParameterError with a
// message naming the family, the parameter and the offending value.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>

namespace ppc::rt {

/// Invalid distribution parameters (non-positive concentration, non-SPD matrix, ...).
struct ParameterError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

using Vec = Eigen::VectorXd;
using Mat = Eigen::MatrixXd;
using Rng = std::mt19937_64;

// ---------------------------------------------------------------------------
class Dirichlet {
 public:
  explicit Dirichlet(Vec alpha);
  static Dirichlet fromNatural(const Vec& eta);
  int dim() const { return static_cast<int>(alpha_.size()); }
  const Vec& alpha() const { return alpha_; }
  Vec natural() const;
  Vec mean() const;
  Vec variance() const;
  Vec elog() const;                 ///< E[log x_k] = psi(alpha_k) - psi(sum alpha)
  Vec expectedStats() const { return elog(); }
  static double logNormalizer(const Vec& eta);
  double logNormalizer() const;
  double entropy() const;
  double logDensity(const Vec& x) const;  ///< x on the simplex (validated)
  Vec sample(Rng& rng) const;

 private:
  Vec alpha_;
};

class Beta {
 public:
  Beta(double a, double b);
  static Beta fromNatural(const Vec& eta);
  double a() const { return a_; }
  double b() const { return b_; }
  Vec natural() const;
  double mean() const { return a_ / (a_ + b_); }
  double variance() const;
  double elogP() const;             ///< E[log p]
  double elog1mP() const;           ///< E[log (1 - p)]
  Vec expectedStats() const;        ///< (E log p, E log(1-p))
  static double logNormalizer(const Vec& eta);
  double logNormalizer() const;
  double entropy() const;
  double logDensity(double p) const;
  double sample(Rng& rng) const;

 private:
  double a_, b_;
};

class Categorical {
 public:
  explicit Categorical(Vec probs);  ///< probabilities, must sum to 1 (|sum-1| <= 1e-9)
  static Categorical fromNatural(const Vec& eta);  ///< softmax
  int dim() const { return static_cast<int>(p_.size()); }
  const Vec& probs() const { return p_; }
  Vec natural() const;              ///< log p (log 0 = -inf allowed)
  Vec expectedStats() const { return p_; }
  static double logNormalizer(const Vec& eta);
  double logNormalizer() const;
  double entropy() const;
  double logDensity(int64_t x) const;
  int64_t sample(Rng& rng) const;

 private:
  Vec p_;
};

class Bernoulli {
 public:
  explicit Bernoulli(double p);
  static Bernoulli fromNatural(const Vec& eta);
  double p() const { return p_; }
  Vec natural() const;              ///< (logit p)
  double mean() const { return p_; }
  double variance() const { return p_ * (1 - p_); }
  Vec expectedStats() const;        ///< (p)
  static double logNormalizer(const Vec& eta);
  double logNormalizer() const;
  double entropy() const;
  double logDensity(int64_t x) const;
  int64_t sample(Rng& rng) const;

 private:
  double p_;
};

class Gamma {
 public:
  Gamma(double shape, double rate);
  static Gamma fromNatural(const Vec& eta);
  double shape() const { return a_; }
  double rate() const { return b_; }
  Vec natural() const;
  double mean() const { return a_ / b_; }
  double variance() const { return a_ / (b_ * b_); }
  double elog() const;              ///< psi(a) - log b
  Vec expectedStats() const;        ///< (E x, E log x)
  static double logNormalizer(const Vec& eta);
  double logNormalizer() const;
  double entropy() const;
  double logDensity(double x) const;
  double sample(Rng& rng) const;

 private:
  double a_, b_;
};

class Poisson {
 public:
  explicit Poisson(double rate);
  static Poisson fromNatural(const Vec& eta);
  double rate() const { return lambda_; }
  Vec natural() const;
  double mean() const { return lambda_; }
  double variance() const { return lambda_; }
  Vec expectedStats() const;        ///< (lambda)
  /// E[log x!] under this Poisson (exact sum up to rate 1000, asymptotic series above).
  double elogFactorial() const;
  static double logNormalizer(const Vec& eta);
  double logNormalizer() const;
  double entropy() const;
  double logDensity(int64_t x) const;
  int64_t sample(Rng& rng) const;

 private:
  double lambda_;
};

class Gaussian {
 public:
  Gaussian(double mean, double precision);
  static Gaussian fromNatural(const Vec& eta);
  double mean() const { return mu_; }
  double precision() const { return tau_; }
  double variance() const { return 1.0 / tau_; }
  Vec natural() const;
  Vec expectedStats() const;        ///< (E x, E x^2)
  static double logNormalizer(const Vec& eta);
  double logNormalizer() const;
  double entropy() const;
  double logDensity(double x) const;
  double sample(Rng& rng) const;

 private:
  double mu_, tau_;
};

class MvGaussian {
 public:
  MvGaussian(Vec mean, Mat precision);
  static MvGaussian fromNatural(const Vec& eta, int D);
  int dim() const { return static_cast<int>(mu_.size()); }
  const Vec& mean() const { return mu_; }
  const Mat& precision() const { return lambda_; }
  Mat covariance() const;
  Vec natural() const;              ///< (Lambda mu, -Lambda/2 row-major)
  Vec expectedStats() const;        ///< (mu, Sigma + mu mu^T row-major)
  static double logNormalizer(const Vec& eta, int D);
  double logNormalizer() const;
  double entropy() const;
  double logDensity(const Vec& x) const;
  Vec sample(Rng& rng) const;

 private:
  Vec mu_;
  Mat lambda_;
};

class Wishart {
 public:
  Wishart(double dof, Mat scale);
  static Wishart fromNatural(const Vec& eta, int D);
  int dim() const { return static_cast<int>(scale_.rows()); }
  double dof() const { return nu_; }
  const Mat& scale() const { return scale_; }
  Mat mean() const { return nu_ * scale_; }
  double elogdet() const;           ///< E[log |Lambda|]
  Vec natural() const;              ///< (-S^-1/2 row-major, (nu-D-1)/2)
  Vec expectedStats() const;        ///< (nu S row-major, E log|Lambda|)
  static double logNormalizer(const Vec& eta, int D);
  double logNormalizer() const;
  double entropy() const;
  double logDensity(const Mat& lambda) const;
  Mat sample(Rng& rng) const;       ///< Bartlett decomposition

 private:
  double nu_;
  Mat scale_;
};

// KL(q || p) = A(eta_p) - A(eta_q) - <eta_p - eta_q, E_q[T]>; throws on dimension mismatch.
double kl(const Dirichlet& q, const Dirichlet& p);
double kl(const Beta& q, const Beta& p);
double kl(const Categorical& q, const Categorical& p);
double kl(const Bernoulli& q, const Bernoulli& p);
double kl(const Gamma& q, const Gamma& p);
double kl(const Poisson& q, const Poisson& p);
double kl(const Gaussian& q, const Gaussian& p);
double kl(const MvGaussian& q, const MvGaussian& p);
double kl(const Wishart& q, const Wishart& p);

}  // namespace ppc::rt
