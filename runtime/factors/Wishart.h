//===- runtime/factors/Wishart.h - the Wishart family ---------------------===//
//
// The Wishart distribution (dof nu, scale S) over D x D precision matrices:
// natural parameters (-S^-1/2, (nu-D-1)/2), statistics (E Lambda,
// E log|Lambda|); E[Lambda] = nu S.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

/// Scratch size (doubles) of the MvGaussian/Wishart kernels of dimension D.
#ifndef PPC_MV_SCRATCH
#define PPC_MV_SCRATCH(D) (3 * (D) * (D) + 2 * (D) + 1)
#endif

extern "C" {

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

/// (Lambda, log|Lambda|); scratch >= D*D; returns 1 if Lambda is not SPD.
int ppc_wishart_pointmass_stats(int64_t D, const double* lambda, double* stats, double* scratch);

/// ppc_wishart_stats_n that also stores each row's log|S| (NaN where -2 eta1
/// is not positive definite), for ppc_wishart_entropy_logdet_n
/// (codegen/transforms/EntropySharing.cpp).
void ppc_wishart_stats_logdet_n(int64_t n, int64_t D, const double* eta, double* stats, double* logdetS);
/// The entropies of n rows from nu (in eta) and their stored log|S|.
double ppc_wishart_entropy_logdet_n(int64_t n, int64_t D, const double* eta, const double* logdetS);

}  // extern "C"
