//===- runtime/factors/MarkovChain.h - a chain of Categoricals ------------===//
//
// z_0 ~ Categorical(pi), z_t ~ Categorical(A(z_{t-1})): a hidden Markov
// model's states over the elements of a plate (docs/chains-and-links.md).
// Its posterior is structured, not one Categorical per element:
// q(z_0..z_{T-1}) is a chain whose update is the forward-backward recursion.
// One element's row, of K + K^2 + 1 doubles, holds (natural parameters /
// statistics):
//   [0, K)          node log-potentials (the children's evidence, plus E log pi
//                   at the first element) / the marginal q(z_t)
//   [K, K + K^2)    the edge log-potentials E log A(j, k) of (z_{t-1} = j,
//                   z_t = k) / the pair marginal q(z_{t-1} = j, z_t = k); at
//                   the first element, which has no pair: the whole chain's
//                   entropy, then 0
//   K + K^2         1 at the first element, 0 elsewhere
// so that the first K entries read like a Categorical's, and every message
// and ELBO term is a function of one row.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

extern "C" {

/// -> the chain's element at position `pos` of its plate: dst += w (E log pi
/// on the nodes and the first-element flag if pos == 0, else E log A on the
/// edges); stats_A holds the K rows of A's statistics (E log A(j, .)).
void ppc_chain_sample_avglog(int64_t K, int64_t pos, const double* stats_pi, const double* stats_A, double w,
                             double* dst);
/// -> pi: dst += w q(z_0) (only the first element's row adds anything)
void ppc_chain_to_initial(int64_t K, const double* stats_z, double w, double* dst);
/// -> A (all K rows, K x K): dst += w q(z_{t-1} = j, z_t = k)
void ppc_chain_to_transition(int64_t K, const double* stats_z, double w, double* dst);
/// The forward-backward recursion over the T rows of one chain: statistics
/// (marginals, pair marginals, flag) from the natural parameters.
void ppc_chain_stats(int64_t T, int64_t K, const double* eta, double* stats);
/// The same, returning the log normalizer log sum_z exp(sum_t node_t(z_t) +
/// edge_t(z_{t-1}, z_t)) (tests).
double ppc_chain_stats_lognorm(int64_t T, int64_t K, const double* eta, double* stats);
/// E log p(z_t | z_{t-1}) of one element: sum_k q_0(k) E log pi_k at the
/// first, sum_jk q(j, k) E log A(j, k) after it.
double ppc_chain_avglogfactor(int64_t K, const double* stats_z, const double* stats_pi, const double* stats_A);
/// The entropy of the chains whose first rows are among these n rows (the
/// forward-backward pass keeps each chain's entropy in its first row).
double ppc_chain_entropy_n(int64_t n, int64_t K, const double* stats);
/// A random start for one element's row (mixture symmetry breaking): a
/// random marginal, and the pair marginal with the element before's random
/// marginal (the generator is keyed by the element).
void ppc_random_chain(int64_t K, int64_t seed, int64_t posterior, int64_t element, double* eta, double* stats);

}  // extern "C"
