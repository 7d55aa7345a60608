//===- runtime/factors/MvGaussianChain.h - a chain of MvGaussians ---------===//
//
// x_0 ~ MvGaussian(m0, P0), x_t ~ MvGaussian(A x_{t-1}, Q): a linear
// dynamical system's states (dimension D) over the elements of a plate
// (BayesPy's GaussianMarkovChain; docs/chains-and-links.md). m0 is a
// constant or an MvGaussian, P0 and Q constants (c I) or Wisharts, and A a
// constant c (the matrix c I), a known matrix (D rows of Data(D)), the whole
// plate of its D rows, each an MvGaussian of dimension D (learnt), or one
// MvGaussian of dimension D^2 over vec(A), row-major (learnt jointly). The
// kernels take A's dimension `dimA`: D^2 (with D > 1) is the joint layout. The posterior of
// a chain is one Gaussian with a block-tridiagonal precision, updated by a
// Kalman (Rauch-Tung-Striebel) smoother in its elimination form.
//
// One element's row, of W = 3 D^2 + 2 D + 2 doubles (row-major blocks), holds
// the natural parameters of the log density terms that involve x_t:
//   [0, D)                h_t on x_t          \ the children's messages and the
//   [D, D + D^2)          J_t on x_t x_t^T    / first element's prior: an MvGaussian's
//   [D + D^2, D + 2D^2)   C_t on x_t x_{t-1}^T   (the transition: E Q E A)
//   [D + 2D^2, D + 3D^2)  K_t on x_{t-1} x_{t-1}^T (the transition: -E[A^T Q A] / 2)
//   [D + 3D^2, W - 2)     unused
//   W - 2                 unused                W - 1   1 at the first element
// and its statistics
//   E x_t, E x_t x_t^T, E x_t x_{t-1}^T, E x_{t-1} x_{t-1}^T, E x_{t-1},
//   H(x_t | x_{t+1..}) (the element's share of the chain's entropy), the flag,
// so that the first D + D^2 read like an MvGaussian's (every child of an
// element reads it as one) and every message and ELBO term is a function of
// one row.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

/// Doubles per element: 3 D^2 + 2 D + 2.
int64_t ppc_mvchain_width(int64_t D);
/// -> the chain's element at `pos`: dst += w (E P0 E m0, -E P0 / 2, flag) at
/// the first; (-E Q / 2 on x_t x_t^T, E Q E A on x_t x_{t-1}^T, -E[A^T Q A] / 2
/// on x_{t-1} x_{t-1}^T) after it. stats_A: A's D rows of (E a, E a a^T)
/// (point masses for a constant c I or a known matrix).
void ppc_mvchain_sample_avglog(int64_t D, int64_t pos, const double* stats_m0, const double* stats_P0,
                               int64_t dimA, const double* stats_A, const double* stats_Q, double w, double* dst);
/// -> m0 (MvGaussian): w (E P0 E x_0, -E P0 / 2) from the first element
void ppc_mvchain_to_initial_mean(int64_t D, const double* stats_x, const double* stats_P0, double w, double* dst);
/// -> P0 (Wishart): w (-E (x_0 - m0)(x_0 - m0)^T / 2, 1/2) from the first element
void ppc_mvchain_to_initial_precision(int64_t D, const double* stats_x, const double* stats_m0, double w,
                                      double* dst);
/// -> A: its D rows, row d w (sum_e E Q_de E[x_t,e x_{t-1}], -E Q_dd E[x_{t-1} x_{t-1}^T] / 2) from
/// every later element, exact for a diagonal E Q (a constant c I: otherwise
/// the rows' messages would depend on each other's means, and rows with a
/// Wishart Q are refused at compile time, passes/AlgorithmMatching.cpp);
/// or vec(A) (dimA = D^2): w (vec(E Q E[x_t x_{t-1}^T]), -(E Q kron E[x_{t-1} x_{t-1}^T]) / 2).
void ppc_mvchain_to_transition(int64_t D, const double* stats_x, int64_t dimA, const double* stats_Q, double w,
                               double* dst);
/// -> Q (Wishart): w (-E (x_t - A x_{t-1})(x_t - A x_{t-1})^T / 2, 1/2) from every later element
void ppc_mvchain_to_precision(int64_t D, const double* stats_x, int64_t dimA, const double* stats_A, double w,
                              double* dst);
/// The smoother over the T rows of one chain: statistics from natural
/// parameters. A chain whose precision is not positive definite gets NaN
/// statistics (which the ELBO then reports).
void ppc_mvchain_stats(int64_t T, int64_t D, const double* eta, double* stats);
/// E log p(x_t | x_{t-1}) (E log p(x_0) at the first element).
double ppc_mvchain_avglogfactor(int64_t D, const double* stats_x, const double* stats_m0, const double* stats_P0,
                                int64_t dimA, const double* stats_A, const double* stats_Q);
/// The chains' entropy, element by element (the shares the smoother stored); n rows.
double ppc_mvchain_entropy_n(int64_t n, int64_t D, const double* stats);

}  // extern "C"
