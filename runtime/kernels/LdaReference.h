//===- runtime/kernels/LdaReference.h - LDA's token update by hand --------===//
//
// The token update of LDA written by hand: the reference the tests and the
// micro-benchmarks compare the compiled plans with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

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

}  // extern "C"
