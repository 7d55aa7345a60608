//===- runtime/Operators.h - every kernel of the runtime ------------------===//
//
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

// One header per family (its kernels beside its catalogue entry) and per
// group of kernels no family owns; runtime/Catalogue.cpp lists them all.
#include "runtime/factors/Arithmetic.h"
#include "runtime/factors/Bernoulli.h"
#include "runtime/factors/Binomial.h"
#include "runtime/factors/Beta.h"
#include "runtime/factors/Categorical.h"
#include "runtime/factors/Dirichlet.h"
#include "runtime/factors/Gamma.h"
#include "runtime/factors/Gates.h"
#include "runtime/factors/Gaussian.h"
#include "runtime/factors/GaussianChain.h"
#include "runtime/factors/MvGaussianChain.h"
#include "runtime/factors/MarkovChain.h"
#include "runtime/factors/Multinomial.h"
#include "runtime/factors/MvGaussian.h"
#include "runtime/factors/Poisson.h"
#include "runtime/factors/Wishart.h"
#include "runtime/kernels/DenseAlgebra.h"
#include "runtime/kernels/LdaReference.h"
#include "runtime/kernels/BinaryStatistics.h"
#include "runtime/kernels/PlateStatistics.h"
#include "runtime/kernels/ProductForm.h"
#include "runtime/kernels/Schedule.h"
#include "runtime/kernels/Vector.h"
