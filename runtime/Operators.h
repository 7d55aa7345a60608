// VMP operator kernels: messages ("AverageLogarithm", Infer.NET naming),
// ELBO terms ("AverageLogFactor" = E_q[log f]), expected sufficient
// statistics, log-normalizers, entropies and KL divergences, as extern "C"
// functions over contiguous double arrays.
//
// Rules for every kernel: no exceptions, no allocation, no virtual calls, no
// global state; arguments are plain pointers and int64 sizes. Preconditions
// (valid parameters, indices in range, non-aliasing destination) are the
// caller's: data and parameters are validated once, at load time, by
// runtime/Distributions.h and the data loader. Kernels that need temporary
// storage take a caller-provided `scratch` (size stated per kernel).
//
// ---------------------------------------------------------------------------
// Layouts (see runtime/Distributions.h for the family definitions):
//   natural parameters eta and expected statistics E[T] of one variable are
//   flat arrays; a plate of n variables is row-major n x d.
//     Dirichlet K  eta = alpha-1 [K]            stats = E log p [K]
//     Beta         eta = (a-1, b-1)             stats = (E log p, E log(1-p))   (= Dirichlet K=2)
//     Categorical  eta = log-potentials [K]     stats = probabilities [K]
//     Bernoulli    eta = logit [1]              stats = P(x=1) [1]
//     Gamma        eta = (-rate, shape-1)       stats = (E x, E log x)
//     Poisson      eta = log rate [1]           stats = E x [1]
//     Gaussian     eta = (tau mu, -tau/2)       stats = (E x, E x^2)
//     MvGaussian D eta = (Lambda mu, -Lambda/2) stats = (E x [D], E x x^T [D*D])
//     Wishart D    eta = (-S^-1/2, (nu-D-1)/2)  stats = (E Lambda [D*D], E log|Lambda|)
//   A constant parent is passed as point-mass statistics (helpers
//   ppc_*_pointmass_stats), e.g. a constant rate b as (b, log b); the
//   kernels are then exactly the "constant argument" operators.
//
// Messages: every *_avglog kernel ACCUMULATES  dst += w * m, where m is the
// natural-parameter message (the coefficients of the target's sufficient
// statistics in E_{q(other args)}[log f]). The posterior natural parameter of
// a variable is the sum of the messages from all its factors (the prior's
// included). Plate-batch kernels take optional index arrays pidx (nullptr =
// every element uses parent row 0) and optional weights w (nullptr = 1).
//
// ---------------------------------------------------------------------------
// Operator table (factor, argument -> kernel; reads). "stats(v)" is the
// expected sufficient statistics of variable v, "const" a compile-time or
// data constant. These are the scheduler's dependency annotations.
//
//  factor                 | target | message kernel                    | reads
//  -----------------------+--------+-----------------------------------+------------------------------
//  p ~ Dirichlet(alpha)   | p      | ppc_dirichlet_probs_avglog[_n]    | const alpha
//                         | ELBO   | ppc_dirichlet_sym_avglogfactor    | const alpha (symmetric), stats(p)
//                         |        | ppc_dirichlet_avglogfactor[_n]    | const alpha, stats(p)
//  p ~ Beta(a, b)         | p      | ppc_beta_p_avglog                 | const a, b
//                         | ELBO   | ppc_beta_avglogfactor             | const a, b, stats(p)
//  x ~ Categorical(p)     | p      | ppc_categorical_probs_avglog      | stats(x)   (obs: _obs[_n] reads x)
//   (p Dirichlet or Beta) | x      | ppc_categorical_sample_avglog     | stats(p)
//                         | ELBO   | ppc_categorical_avglogfactor[_obs[_n]] | stats(x), stats(p)
//  x ~ Bernoulli(p)       | p      | ppc_bernoulli_p_avglog[_obs_n]    | stats(x)
//   (p Beta)              | x      | ppc_bernoulli_sample_avglog       | stats(p)
//                         | ELBO   | ppc_bernoulli_avglogfactor[_obs_n]| stats(x), stats(p)
//  x ~ Gamma(a, b)        | x      | ppc_gamma_sample_avglog           | const a, stats(b)
//   (a const; b const     | b      | ppc_gamma_rate_avglog[_obs_n]     | const a, stats(x)
//    or Gamma)            | ELBO   | ppc_gamma_avglogfactor[_obs_n]    | const a, stats(x), stats(b)
//  x ~ Poisson(l)         | l      | ppc_poisson_rate_avglog[_obs_n]   | stats(x)
//   (l const or Gamma)    | x      | ppc_poisson_sample_avglog         | stats(l)
//                         | ELBO   | ppc_poisson_avglogfactor[_obs_n]  | stats(x), E log x!, stats(l)
//  x ~ Gaussian(m, t)     | x      | ppc_gaussian_sample_avglog        | stats(m), stats(t)
//   (m const or Gaussian; | m      | ppc_gaussian_mean_avglog[_obs_n]  | stats(x), stats(t)
//    t const or Gamma)    | t      | ppc_gaussian_precision_avglog[_obs_n] | stats(x), stats(m)
//                         | ELBO   | ppc_gaussian_avglogfactor[_obs_n] | stats(x), stats(m), stats(t)
//  x ~ MvGaussian(m, L)   | x      | ppc_mvgaussian_sample_avglog      | stats(m), stats(L)
//   (m const or MvGauss.; | m      | ppc_mvgaussian_mean_avglog[_obs_n] | stats(x), stats(L)
//    L const or Wishart)  | L      | ppc_mvgaussian_precision_avglog[_obs_n] | stats(x), stats(m)
//                         | ELBO   | ppc_mvgaussian_avglogfactor[_obs_n] | stats(x), stats(m), stats(L)
//  L ~ Wishart(nu, S)     | L      | ppc_wishart_sample_avglog         | const nu, S^-1
//                         |        | ppc_wishart_iso_sample_avglog     | const nu, s (S = s I)
//                         | ELBO   | ppc_wishart_avglogfactor          | const nu, S^-1, log|S|, stats(L)
//                         |        | ppc_wishart_iso_avglogfactor      | const nu, s, stats(L)
//  x ~ Categorical(phi(z))| z, th, | ppc_lda_token / ppc_lda_doc       | stats(theta), stats(phi)[.,x]
//   z ~ Categorical(th)   | phi    |   (writes q(z) to r; accumulates into theta's and phi's eta)
//  cases(c), branches k   | c      | ppc_cases_selector_avglog (K-ary), ppc_cases_bernoulli_avglog
//                         |        |   reads the branches' avglogfactor sums ell_k
//                         | q(c)   | ppc_cases_posterior               | ell (log prior + branch ELBO)
//                         | ELBO   | ppc_cases_avglogfactor            | q(c), ell
//  enter/exit of branch k | any    | ppc_gate_accumulate               | q(c), branch message
//
// Per-variable kernels (any factor graph): ppc_<family>_stats_n (eta -> E[T]),
// ppc_<family>_lognorm_n, ppc_<family>_entropy_n, ppc_<family>_kl_n.
// The ELBO of a model is sum_factors avglogfactor + sum_latents entropy.
#pragma once

#include <cstdint>

/// Scratch size (doubles) of the MvGaussian/Wishart kernels of dimension D.
#define PPC_MV_SCRATCH(D) (3 * (D) * (D) + 2 * (D) + 1)

extern "C" {

// ===== Vector helpers (K-vectors; fixed summation order, so results do not
// depend on the vector width the loop was compiled for) =====
/// y[i] += w * x[i]
void ppc_axpy(int64_t n, double w, const double* x, double* y);
/// dst[c][r] = src[r][c] (rows x cols to cols x rows)
void ppc_transpose(int64_t rows, int64_t cols, const double* src, double* dst);
/// y[i] += w * x[i * stride] (a column of a row-major array)
void ppc_axpy_strided(int64_t n, int64_t stride, double w, const double* x, double* y);
/// dst[r][c] += w * src[c][r] for columns c in [begin, min(begin + count,
/// cols)) of a rows x cols array, from its cols x rows (datum-major) form:
/// every column of a datum-major sum at once (codegen/ColumnFission.cpp).
void ppc_axpy_transposed(int64_t rows, int64_t cols, int64_t begin, int64_t count, double w, const double* src,
                         double* dst);
/// sum_i x[i] * y[i]
double ppc_dot(int64_t n, const double* x, const double* y);
/// log sum_i exp(x[i]); -inf for n == 0
double ppc_logsumexp(int64_t n, const double* x);
/// x <- softmax(x); returns logsumexp of the input
double ppc_softmax_inplace(int64_t n, double* x);

// ===== Schedule support =====
/// A random categorical posterior for symmetry breaking: q uniform on the
/// simplex, a pure function of (seed, stream, element) (a counter-based
/// generator, so any element can be drawn alone, in any order, on any rank).
/// stats = q, eta = log q (unless eta is null).
void ppc_random_simplex(int64_t k, int64_t seed, int64_t stream, int64_t element, double* eta, double* stats);
/// The same for a Bernoulli posterior: stats = p, eta = logit p.
void ppc_random_bernoulli(int64_t seed, int64_t stream, int64_t element, double* eta, double* stats);
/// mean_i |current[i] - previous[i]|, then previous <- current (the local
/// sweeps' convergence test).
double ppc_mean_abs_change(int64_t n, const double* current, double* previous);

// ===== Categorical posteriors in the exponential domain =====
// q(z) = softmax(sum_j m_j) = normalize(prod_j exp(m_j)): when every message
// m_j is a row or an entry of a parent's E log statistics, the exponentials
// are tables refreshed with the parents, and a categorical update costs K
// products instead of K exponentials (codegen/Plan.cpp, "product form").
/// dst[i] = value
void ppc_fill(int64_t n, double value, double* dst);
/// dst[i] *= src[i]
void ppc_mul_n(int64_t n, const double* src, double* dst);
/// dst[i] = a[i] * b[i]: the identity, then two factors, in one pass (the
/// plan folds `fill 1; mul a; mul b` into it).
void ppc_mul2_n(int64_t n, const double* a, const double* b, double* dst);
/// dst[i] = src[i]: the identity times one factor.
void ppc_copy_n(int64_t n, const double* src, double* dst);
/// dst[i] = exp(src[i] - max_j src[j]) (a row: the shift cancels in q);
/// *shift = max_j src[j], for the log normalizer below.
void ppc_exp_shifted_n(int64_t n, const double* src, double* dst, double* shift);
/// dst[c][r] = exp(src[r][c] - shifts[c]) with shifts[c] = max_r src[r][c]:
/// a rows x cols array (a parent indexed by the condition's case r and a
/// datum c) as a cols x rows table, so that a datum's row of factors is
/// contiguous; the shift of column c cancels in q for every datum c. Only
/// columns [begin, min(begin + count, cols)): blocks of columns are independent.
void ppc_exp_shifted_transposed(int64_t rows, int64_t cols, int64_t begin, int64_t count, const double* src,
                                double* dst, double* shifts);
/// probs = prod / sum(prod); eta = log(probs) unless null. An all-zero
/// product (every case underflowed even after the shifts) gives NaN, which
/// the run reports as a non-finite ELBO.
void ppc_categorical_stats_from_product(int64_t K, const double* prod, double* eta, double* probs);
/// The same, and returns log sum(prod) + shift: with `shift` the sum of the
/// tables' shifts, that is log sum_k exp(sum_j m_j[k]), the categorical's
/// log normalizer. Right after q(z) is updated from its messages m_j, it
/// equals z's entropy plus the expected log factors z is in (each
/// sum_k q(z=k) m_j[k] when the factor is linear in z's indicator): the
/// code generator's collapsed ELBO term for z.
double ppc_categorical_stats_from_product_lognorm(int64_t K, const double* prod, double shift, double* eta,
                                                  double* probs);
/// The categorical's normalized product, consumed where it is computed
/// (codegen/ProductNormalizerFusion.cpp): no row of products or
/// probabilities is stored.
/// acc[k] += w b[k] / sum_j a[j] b[j]: a message sum_i w_i q_i to a parent
/// that is the same for every i (LDA: the tokens' counts to their document's
/// topic mix) is a[k] times sum_i w_i b_i[k] / s_i, so the loop over i
/// accumulates that and ppc_mul_add_n multiplies a in once after it.
void ppc_dot_inverse_axpy(int64_t K, const double* a, const double* b, double w, double* acc);
/// dst[k] += w a[k] b[k] / s with s = sum_j a[j] b[j] (a message to a parent
/// row that changes with i: the tokens' counts to their word's topics);
/// returns log s + shift, as ppc_categorical_stats_from_product_lognorm.
double ppc_product_axpy_lognorm(int64_t K, const double* a, const double* b, double shift, double w, double* dst);
/// The same, storing s in *norm and returning the shift alone: the ELBO
/// takes sum_i w_i log s_i from ppc_weighted_log_sum after the loop.
double ppc_product_axpy_norm(int64_t K, const double* a, const double* b, double shift, double w, double* dst,
                             double* norm);
/// sum_i w[i] log x[i] (w null: weights 1), vectorized.
double ppc_weighted_log_sum(int64_t n, const double* x, const double* w);
/// The same without the normalizer.
void ppc_product_axpy(int64_t K, const double* a, const double* b, double w, double* dst);
/// Prefetches row idx[i + ahead] of a table of rows of `width` doubles
/// when i + ahead < n (codegen/RowPrefetch.cpp); no effect on any value.
void ppc_prefetch_row(const int64_t* idx, int64_t i, int64_t n, int64_t ahead, const double* table, int64_t width);
/// dst[i] += a[i] * b[i]
void ppc_mul_add_n(int64_t n, const double* a, const double* b, double* dst);

// ===== Small SPD linear algebra (row-major D x D) =====
/// inv = A^-1 and *logdet = log|A| by Cholesky; scratch >= D*D. Returns 0, or
/// 1 when A is not (numerically) positive definite (inv, logdet then unspecified).
int ppc_spd_inverse_logdet(int64_t D, const double* A, double* inv, double* logdet, double* scratch);

// ===== Point-mass statistics of constants (constant parents) =====
void ppc_gamma_pointmass_stats(double x, double* stats);     ///< (x, log x)
void ppc_gaussian_pointmass_stats(double x, double* stats);  ///< (x, x^2)
void ppc_dirichlet_pointmass_stats(int64_t K, const double* p, double* stats);  ///< log p
void ppc_mvgaussian_pointmass_stats(int64_t D, const double* x, double* stats); ///< (x, x x^T)
/// (Lambda, log|Lambda|); scratch >= D*D; returns 1 if Lambda is not SPD.
int ppc_wishart_pointmass_stats(int64_t D, const double* lambda, double* stats, double* scratch);

// ===== Dirichlet (and Beta as K = 2), n rows of K =====
/// elog[i,k] = psi(alpha[i,k]) - psi(sum_k alpha[i,k])
void ppc_dirichlet_elog_n(int64_t n, int64_t K, const double* alpha, double* elog);
/// stats from natural parameters: alpha = eta + 1
void ppc_dirichlet_stats_n(int64_t n, int64_t K, const double* eta, double* elog);
/// sum_i A(eta_i) = sum_i [sum_k lgamma(alpha_ik) - lgamma(sum_k alpha_ik)]
double ppc_dirichlet_lognorm_n(int64_t n, int64_t K, const double* eta);
/// `elog`: the rows' statistics (ppc_dirichlet_stats_n of eta). The entropy
/// is then log B(alpha) - sum_k (alpha_k - 1) E log p_k: one lgamma per entry
/// and no digamma (the statistics already hold them).
double ppc_dirichlet_entropy_n(int64_t n, int64_t K, const double* eta, const double* elog);
/// ppc_dirichlet_stats_n, and each row's log normalizer A(eta_i) (as
/// ppc_dirichlet_lognorm_n) in lognorm[i]: its lgamma share the digammas'
/// shifts and logarithms (codegen/LgammaSharing.cpp).
void ppc_dirichlet_stats_lognorm_n(int64_t n, int64_t K, const double* eta, double* elog, double* lognorm);
/// ppc_dirichlet_entropy_n from the rows' log normalizers that
/// ppc_dirichlet_stats_lognorm_n stored with `elog`: no special function.
double ppc_dirichlet_entropy_lognorm_n(int64_t n, int64_t K, const double* eta, const double* elog,
                                       const double* lognorm);
double ppc_dirichlet_kl_n(int64_t n, int64_t K, const double* eta_q, const double* eta_p);
/// Dirichlet(alpha) factor -> p: dst += w * (alpha - 1)
void ppc_dirichlet_probs_avglog(int64_t K, const double* alpha, double w, double* dst);
/// the same for n variables sharing alpha: dst[i,:] += w * (alpha - 1)
void ppc_dirichlet_probs_avglog_n(int64_t n, int64_t K, const double* alpha, double w, double* dst);
/// E[log Dir(p; alpha)] = -log B(alpha) + sum_k (alpha_k - 1) E log p_k
double ppc_dirichlet_avglogfactor(int64_t K, const double* alpha, const double* elog_p);
/// The same for the symmetric prior Dirichlet(alpha, K) the language writes:
/// log B is K lgamma(alpha) - lgamma(K alpha), two lgammas instead of K + 1.
double ppc_dirichlet_sym_avglogfactor(int64_t K, double alpha, const double* elog_p);
/// sum over n variables p_i ~ Dirichlet(alpha) with shared alpha, elog_p n x K
double ppc_dirichlet_avglogfactor_n(int64_t n, int64_t K, const double* alpha, const double* elog_p);

// ===== Beta factor (the variable is a Dirichlet K = 2) =====
/// Beta(a, b) -> p: dst += w * (a - 1, b - 1)
void ppc_beta_p_avglog(double a, double b, double w, double* dst);
/// -log B(a, b) + (a-1) E log p + (b-1) E log(1-p);  stats_p = (E log p, E log(1-p))
double ppc_beta_avglogfactor(double a, double b, const double* stats_p);

// ===== Categorical =====
/// rows of probabilities from natural parameters (softmax of each row)
void ppc_categorical_stats_n(int64_t n, int64_t K, const double* eta, double* probs);
/// sum_i logsumexp(eta_i)
double ppc_categorical_lognorm_n(int64_t n, int64_t K, const double* eta);
/// sum_i -sum_k q_ik log q_ik  (from probabilities; 0 log 0 = 0)
double ppc_categorical_entropy_n(int64_t n, int64_t K, const double* probs);
/// sum_i sum_k q_ik (log q_ik - log p_ik)  (from probabilities)
double ppc_categorical_kl_n(int64_t n, int64_t K, const double* probs_q, const double* probs_p);
/// x ~ Categorical(p) -> p: dst += w * q(x)          (probs_x = stats(x))
void ppc_categorical_probs_avglog(int64_t K, const double* probs_x, double w, double* dst);
/// observed x -> p: dst[x] += w                      (0 <= x < K)
void ppc_categorical_probs_avglog_obs(int64_t K, int64_t x, double w, double* dst);
/// n observations: dst[pidx_i * K + x_i] += w_i
void ppc_categorical_probs_avglog_obs_n(int64_t n, int64_t K, const int64_t* x, const int64_t* pidx,
                                        const double* w, double* dst);
/// -> x: dst += w * E log p
void ppc_categorical_sample_avglog(int64_t K, const double* elog_p, double w, double* dst);
/// sum_k q(x=k) E log p_k
double ppc_categorical_avglogfactor(int64_t K, const double* probs_x, const double* elog_p);
/// E log p_x for an observed x
double ppc_categorical_avglogfactor_obs(int64_t K, int64_t x, const double* elog_p);
/// sum_i w_i E log p[pidx_i, x_i]
double ppc_categorical_avglogfactor_obs_n(int64_t n, int64_t K, const int64_t* x, const int64_t* pidx,
                                          const double* w, const double* elog_p);

// ===== Bernoulli =====
void ppc_bernoulli_stats_n(int64_t n, const double* eta, double* p);     ///< p = sigmoid(eta)
double ppc_bernoulli_lognorm_n(int64_t n, const double* eta);            ///< sum softplus(eta)
double ppc_bernoulli_entropy_n(int64_t n, const double* p);              ///< from probabilities
double ppc_bernoulli_kl_n(int64_t n, const double* p_q, const double* p_p);
/// x ~ Bernoulli(p) -> p: dst += w * (E x, 1 - E x)
void ppc_bernoulli_p_avglog(double ex, double w, double* dst);
/// n observations/expectations ex_i (0/1 when observed): dst[2*pidx_i + (0,1)] += w_i (ex_i, 1-ex_i)
void ppc_bernoulli_p_avglog_obs_n(int64_t n, const double* ex, const int64_t* pidx, const double* w,
                                  double* dst);
/// -> x: dst[0] += w * (E log p - E log(1-p))
void ppc_bernoulli_sample_avglog(const double* stats_p, double w, double* dst);
/// E x E log p + (1 - E x) E log(1-p)
double ppc_bernoulli_avglogfactor(double ex, const double* stats_p);
double ppc_bernoulli_avglogfactor_obs_n(int64_t n, const double* ex, const int64_t* pidx, const double* w,
                                        const double* stats_p);

// ===== Gamma(shape, rate) =====
void ppc_gamma_stats_n(int64_t n, const double* eta, double* stats);    ///< (a/b, psi(a) - log b)
double ppc_gamma_lognorm_n(int64_t n, const double* eta);               ///< lgamma(a) - a log b
double ppc_gamma_entropy_n(int64_t n, const double* eta);
double ppc_gamma_kl_n(int64_t n, const double* eta_q, const double* eta_p);
/// x ~ Gamma(a, b) -> x: dst += w * (-E b, a - 1)
void ppc_gamma_sample_avglog(double shape, const double* stats_rate, double w, double* dst);
/// -> b: dst += w * (-E x, a)
void ppc_gamma_rate_avglog(double shape, const double* stats_x, double w, double* dst);
/// n observed x_i, rate row pidx_i: dst[2*pidx_i + :] += w_i (-x_i, a)
void ppc_gamma_rate_avglog_obs_n(int64_t n, double shape, const double* x, const int64_t* pidx,
                                 const double* w, double* dst);
/// a E log b - lgamma(a) + (a-1) E log x - E b E x
double ppc_gamma_avglogfactor(double shape, const double* stats_x, const double* stats_rate);
double ppc_gamma_avglogfactor_obs_n(int64_t n, double shape, const double* x, const int64_t* pidx,
                                    const double* w, const double* stats_rate);

// ===== Poisson =====
void ppc_poisson_stats_n(int64_t n, const double* eta, double* mean);   ///< exp(eta)
double ppc_poisson_lognorm_n(int64_t n, const double* eta);
/// E[log x!] for x ~ Poisson(rate) (exact sum up to rate 1000, asymptotic beyond)
double ppc_poisson_elogfact(double rate);
double ppc_poisson_entropy_n(int64_t n, const double* eta);
double ppc_poisson_kl_n(int64_t n, const double* eta_q, const double* eta_p);
/// x ~ Poisson(l) -> l: dst += w * (-1, E x)
void ppc_poisson_rate_avglog(double ex, double w, double* dst);
void ppc_poisson_rate_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                   double* dst);
/// -> x: dst[0] += w * E log l
void ppc_poisson_sample_avglog(const double* stats_rate, double w, double* dst);
/// E x E log l - E l - E log x!
double ppc_poisson_avglogfactor(double ex, double elogfact_x, const double* stats_rate);
/// observed counts: sum_i w_i (x_i E log l - E l - lgamma(x_i + 1))
double ppc_poisson_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                      const double* stats_rate);

// ===== Gaussian(mean, precision) =====
void ppc_gaussian_stats_n(int64_t n, const double* eta, double* stats); ///< (mu, mu^2 + 1/tau)
double ppc_gaussian_lognorm_n(int64_t n, const double* eta);            ///< tau mu^2/2 - log(tau)/2
double ppc_gaussian_entropy_n(int64_t n, const double* eta);
double ppc_gaussian_kl_n(int64_t n, const double* eta_q, const double* eta_p);
/// x ~ N(m, t) -> x: dst += w * (E t E m, -E t / 2)
void ppc_gaussian_sample_avglog(const double* stats_mean, const double* stats_prec, double w, double* dst);
/// -> m: dst += w * (E t E x, -E t / 2)
void ppc_gaussian_mean_avglog(const double* stats_x, const double* stats_prec, double w, double* dst);
void ppc_gaussian_mean_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                    const double* stats_prec, double* dst);
/// -> t: dst += w * (-(E x^2 - 2 E x E m + E m^2)/2, 1/2)
void ppc_gaussian_precision_avglog(const double* stats_x, const double* stats_mean, double w, double* dst);
void ppc_gaussian_precision_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                         const double* stats_mean, double* dst);
/// (E log t - log 2 pi)/2 - E t (E x^2 - 2 E x E m + E m^2)/2
double ppc_gaussian_avglogfactor(const double* stats_x, const double* stats_mean, const double* stats_prec);
/// observed x_i with parents at row pidx_i (both mean and precision)
double ppc_gaussian_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                       const double* stats_mean, const double* stats_prec);

// ===== MvGaussian(mean, precision), dimension D =====
// Kernels taking `scratch` need PPC_MV_SCRATCH(D) = 3*D*D + 2*D + 1 doubles.
/// returns 1 (stats unspecified) when -2 eta2 is not SPD
int ppc_mvgaussian_stats(int64_t D, const double* eta, double* stats, double* scratch);
/// A(eta) = mu^T Lambda mu / 2 - log|Lambda| / 2 (NaN when not SPD)
double ppc_mvgaussian_lognorm(int64_t D, const double* eta, double* scratch);
double ppc_mvgaussian_entropy(int64_t D, const double* eta, double* scratch);
double ppc_mvgaussian_kl(int64_t D, const double* eta_q, const double* eta_p, double* scratch);
/// x ~ N(m, L) -> x: dst += w * (E L E m, -E L / 2)
void ppc_mvgaussian_sample_avglog(int64_t D, const double* stats_mean, const double* stats_prec, double w,
                                  double* dst);
/// -> m: dst += w * (E L E x, -E L / 2)
void ppc_mvgaussian_mean_avglog(int64_t D, const double* stats_x, const double* stats_prec, double w,
                                double* dst);
/// -> L: dst += w * (-(E xx^T - E x E m^T - E m E x^T + E mm^T)/2, 1/2)
void ppc_mvgaussian_precision_avglog(int64_t D, const double* stats_x, const double* stats_mean, double w,
                                     double* dst);
/// (E log|L| - D log 2 pi)/2 - tr(E L (E xx^T - E x E m^T - E m E x^T + E mm^T))/2
double ppc_mvgaussian_avglogfactor(int64_t D, const double* stats_x, const double* stats_mean,
                                   const double* stats_prec);

/// n posteriors (rows of D + D*D): stats(eta) row by row; a row whose -2 eta2 is
/// not SPD gets NaN statistics (which the ELBO then reports).
void ppc_mvgaussian_stats_n(int64_t n, int64_t D, const double* eta, double* stats);
/// the sum of the n rows' entropies (NaN when one is not SPD)
double ppc_mvgaussian_entropy_n(int64_t n, int64_t D, const double* eta);
/// observed x_i (rows of D) with weights w_i, parent rows pidx_i (null: all row 0):
///   -> m: dst[r] += w_i (E L_r x_i, -E L_r / 2)
void ppc_mvgaussian_mean_avglog_obs_n(int64_t n, int64_t D, const double* x, const int64_t* pidx, const double* w,
                                      const double* stats_prec, double* dst);
///   -> L: dst[r] += w_i (-((x_i - E m)(x_i - E m)^T + Cov m)/2, 1/2)
void ppc_mvgaussian_precision_avglog_obs_n(int64_t n, int64_t D, const double* x, const int64_t* pidx,
                                           const double* w, const double* stats_mean, double* dst);
///   sum_i w_i ((E log|L| - D log 2 pi)/2 - ((x_i - E m)^T E L (x_i - E m) + tr(E L Cov m))/2)
double ppc_mvgaussian_avglogfactor_obs_n(int64_t n, int64_t D, const double* x, const int64_t* pidx,
                                         const double* w, const double* stats_mean, const double* stats_prec);

// ===== Wishart(dof nu, scale S), dimension D; scratch: PPC_MV_SCRATCH(D) doubles =====
/// n posteriors (rows of D*D + 1): stats (E L, E log|L|); NaN rows when not a Wishart
void ppc_wishart_stats_n(int64_t n, int64_t D, const double* eta, double* stats);
double ppc_wishart_entropy_n(int64_t n, int64_t D, const double* eta);
/// Wishart(nu, s I) -> L: dst += w * (-I/(2 s), (nu - D - 1)/2)
void ppc_wishart_iso_sample_avglog(int64_t D, double nu, double s, double w, double* dst);
/// E log Wishart(L | nu, s I) = (nu-D-1)/2 E log|L| - tr(E L)/(2 s) - A(nu, s I)
double ppc_wishart_iso_avglogfactor(int64_t D, double nu, double s, const double* stats_L);
/// returns 1 (stats unspecified) when -2 eta1 is not SPD
int ppc_wishart_stats(int64_t D, const double* eta, double* stats, double* scratch);
/// A = nu/2 log|S| + nu D/2 log 2 + log Gamma_D(nu/2) (NaN when not SPD)
double ppc_wishart_lognorm(int64_t D, const double* eta, double* scratch);
/// the same from (nu, log|S|) without a matrix
double ppc_wishart_lognorm_params(int64_t D, double nu, double logdet_S);
double ppc_wishart_entropy(int64_t D, const double* eta, double* scratch);
double ppc_wishart_kl(int64_t D, const double* eta_q, const double* eta_p, double* scratch);
/// Wishart(nu, S) -> L: dst += w * (-S^-1/2, (nu - D - 1)/2)
void ppc_wishart_sample_avglog(int64_t D, double nu, const double* S_inv, double w, double* dst);
/// (nu-D-1)/2 E log|L| - tr(S^-1 E L)/2 - A(nu, S)
double ppc_wishart_avglogfactor(int64_t D, double nu, const double* S_inv, double logdet_S,
                                const double* stats_L);

// ===== Mixture inner loop (LDA: x ~ Categorical(phi(z)), z ~ Categorical(theta)) =====
/// One token (or distinct word of a document) with count w:
///   r = softmax(elog_theta + elog_phi_w)              (written to r, K doubles)
///   dst_theta += w r ;  dst_phi_w += w r               (natural-parameter messages)
/// Returns w * logsumexp(elog_theta + elog_phi_w), which equals
///   w * (sum_k r_k (E log theta_k + E log phi_kw) - sum_k r_k log r_k),
/// i.e. the token's E[log p(z|theta)] + E[log p(x|z,phi)] + H[q(z)] at the
/// optimal q(z): the caller adds the Dirichlet avglogfactor and entropy terms.
/// elog_phi_w, dst_phi_w are the K contiguous entries of word w (a V x K,
/// word-major, layout of phi's statistics and messages).
double ppc_lda_token(int64_t K, const double* elog_theta, const double* elog_phi_w, double w, double* r,
                     double* dst_theta, double* dst_phi_w);
/// All n (word, count) pairs of one document: words[i] indexes the V x K
/// arrays elog_phi_t / dst_phi_t; counts may be nullptr (all 1). r: scratch of
/// K doubles (holds the last token's q(z) on return). Returns the sum of the
/// ppc_lda_token values.
double ppc_lda_doc(int64_t n, int64_t K, const int64_t* words, const double* counts, const double* elog_theta,
                   const double* elog_phi_t, double* r, double* dst_theta, double* dst_phi_t);

// ===== Gaussian statistics of a whole data plate (codegen/BatchStatistics.cpp) =====
// T(x) = (x, x x^T) for the n rows x_i of D doubles (D = 1: the Gaussian's (x, x^2)).
/// means[j] = sum_i w[i][j] T(x_i) / totals[j], totals[j] = sum_i w[i][j], for the
/// n x k weights w (a zero row where totals[j] = 0). Rows of means: D + D*D.
/// memo (nullable, 1 + n*k doubles, zeros at first): returns at once when w
/// equals the weights memo holds (bitwise), the means and totals being theirs;
/// otherwise computes them and keeps a copy of w in memo.
void ppc_gaussian_weighted_moments(int64_t n, int64_t k, const double* w, int64_t D, const double* x, double* means,
                                   double* totals, double* memo);
/// out[i][j] = <T(x_i), eta[j]> + offsets[j] for the k rows eta[j] of D + D*D doubles.
void ppc_gaussian_moment_products(int64_t n, int64_t k, int64_t D, const double* x, const double* eta,
                                  const double* offsets, double* out);

// ===== Gates (VMP conditionals: if / case / switch) =====
/// ell_k = log prior(c=k) + local ELBO of branch k. q = softmax(ell); returns
/// logsumexp(ell) = sum_k q_k ell_k + H(q), the gate's ELBO contribution at the optimum.
double ppc_cases_posterior(int64_t K, const double* ell, double* q);
/// sum_k q_k ell_k - sum_k q_k log q_k for a given q (0 log 0 = 0).
double ppc_cases_avglogfactor(int64_t K, const double* q, const double* ell);
/// cases -> Categorical selector c: dst[k] += w * branch_avglog (the branch's summed avglogfactors)
void ppc_cases_selector_avglog(int64_t k, double branch_avglog, double w, double* dst);
/// if/else on a Bernoulli c: dst[0] += w * (ell_true - ell_false)  (logit message)
void ppc_cases_bernoulli_avglog(double ell_true, double ell_false, double w, double* dst);
/// enter/exit of branch k: dst += q[k] * msg  (n doubles) -- a branch's message weighted by q(c=k)
void ppc_gate_accumulate(int64_t n, const double* q, int64_t k, const double* msg, double* dst);

}  // extern "C"
