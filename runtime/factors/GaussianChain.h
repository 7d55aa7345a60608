//===- runtime/factors/GaussianChain.h - a chain of Gaussians -------------===//
//
// x_0 ~ Gaussian(m0, p0), x_t ~ Gaussian(a x_{t-1}, tau): a linear-Gaussian
// state-space model's states over the elements of a plate (the local level
// model when a = 1; docs/chains-and-links.md). m0 and a are
// constants or Gaussians, p0 and tau constants or Gammas. The posterior of a
// chain is one Gaussian with a tridiagonal precision, updated by a Kalman
// (Rauch-Tung-Striebel) smoother, in its elimination form. One element's row
// of natural parameters (6 doubles) holds the coefficients of the log
// density terms that involve x_t:
//   [0] x_t   [1] x_t^2   (the children's messages, and the first element's prior)
//   [2] x_t x_{t-1}   [3] x_{t-1}^2   (the transition into x_t; 0 at the first)
//   [4] unused  [5] 1 at the first element
// and its statistics
//   [0] E x_t  [1] E x_t^2  [2] E x_t x_{t-1}  [3] E x_{t-1}^2  [4] E x_{t-1}  [5] the flag,
// so that the first two read like a Gaussian's and every message and ELBO
// term is a function of one row.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

/// -> the chain's element at position `pos`: dst += w (E p0 E m0, -E p0 / 2
/// on the node and the flag at the first; -E tau / 2 on x_t^2, E tau E a on
/// x_t x_{t-1}, -E tau E a^2 / 2 on x_{t-1}^2 after it). Statistics of m0 and a
/// are (E, E^2), of p0 and tau (E, E log).
void ppc_gchain_sample_avglog(int64_t pos, const double* stats_m0, const double* stats_p0, const double* stats_a,
                              const double* stats_tau, double w, double* dst);
/// -> m0 (Gaussian, on (m0, m0^2)): w (E p0 E x_0, -E p0 / 2) from the first element
void ppc_gchain_to_initial_mean(const double* stats_x, const double* stats_p0, double w, double* dst);
/// -> p0 (Gamma, on (p0, log p0)): w (-E (x_0 - m0)^2 / 2, 1/2) from the first element
void ppc_gchain_to_initial_precision(const double* stats_x, const double* stats_m0, double w, double* dst);
/// -> a (Gaussian): w (E tau E x_t x_{t-1}, -E tau E x_{t-1}^2 / 2) from every later element
void ppc_gchain_to_coefficient(const double* stats_x, const double* stats_tau, double w, double* dst);
/// -> tau (Gamma): w (-E (x_t - a x_{t-1})^2 / 2, 1/2) from every later element
void ppc_gchain_to_precision(const double* stats_x, const double* stats_a, double w, double* dst);
/// The smoother over the T rows of one chain: statistics from natural parameters.
void ppc_gchain_stats(int64_t T, const double* eta, double* stats);
/// E log p(x_t | x_{t-1}) (E log p(x_0) at the first element).
double ppc_gchain_avglogfactor(const double* stats_x, const double* stats_m0, const double* stats_p0,
                               const double* stats_a, const double* stats_tau);
/// The chain's entropy element by element: H(x_0) + sum_t H(x_t | x_{t-1}); n rows.
double ppc_gchain_entropy_n(int64_t n, const double* stats);

}  // extern "C"
