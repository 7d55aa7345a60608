//===- runtime/factors/Multinomial.h - the Multinomial family -------------===//
//
// A row x of K counts out of n = sum_k x_k known trials with Dirichlet
// probabilities p: observed only (as Binomial). The trials are a constant or
// a known input per row; the binder checks that each row's counts add up to
// them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

// ===== Multinomial =====
/// n rows x_i of K counts -> p: dst[pidx_i * K + k] += w_i x_ik
void ppc_multinomial_probs_avglog_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w, int64_t K,
                                        double* dst);
/// sum_i w_i (log n_i! - sum_k log x_ik! + sum_k x_ik E log p_k), n_i = sum_k x_ik
double ppc_multinomial_avglogfactor_obs_n(int64_t n, const double* x, const int64_t* pidx, const double* w,
                                          int64_t K, const double* stats_p);

}  // extern "C"
