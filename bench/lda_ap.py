#!/usr/bin/python3
"""LDA on the AP corpus: ppc against scikit-learn and gensim, time to quality.

    /usr/bin/python3 bench/lda_ap.py [--runs 3] [--threads 1] [--skip-gensim] [--cpu x86-64-v3]

Runs each system --runs times on the same machine in the same invocation,
scikit-learn's runs alternating with ppc's, and prints medians and ratios. Every system's final posterior (topics lambda and
document proportions gamma, both Dirichlet parameters) is scored by one
evaluator, `lda_bound`: scikit-learn's variational bound (the ELBO with the
per-token indicators at their optimum for the given lambda and gamma), per
token. ppc's own ELBO trace (per iteration, indicators as its schedule left
them, so never above the bound) gives its time to reach scikit-learn's final
quality. Like for like with scikit-learn's fit, which evaluates no bound and
is scored by the evaluator alone: ppc's run is repeated with its ELBO at the
last iteration only (--elbo-every 0), timed, and scored by the same
evaluator, with the fewest iterations whose result the evaluator scores at
least scikit-learn's bound (found from the traced run's count, which its own
ELBO, a lower bound, overstates by an iteration or two).

Needs Debian's python3-sklearn and python3-gensim (only /usr/bin/python3
sees them). Model: K = 20, alpha = 0.1, beta = 0.01 (issue 6).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import peers

peers.early_setup()  # BLAS threads and kernels, before numpy loads
peers.require("numpy", "scipy", "sklearn")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy.special import digamma, gammaln, logsumexp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPC = os.path.join(ROOT, "build", "bin", "ppc")
DATA = os.path.join(ROOT, "examples", "data", "ap_bow.csv")
K, ALPHA, BETA = 20, 0.1, 0.01
REFERENCE = -8.2286  # scikit-learn's final bound, one thread, median of 3 (README)


def load_corpus():
    raw = np.loadtxt(DATA, delimiter=",", skiprows=1, dtype=np.int64)
    docs, words, counts = raw[:, 0], raw[:, 1], raw[:, 2]
    return sp.csr_matrix((counts.astype(np.float64), (docs, words)))


def dirichlet_expectation(a):
    return digamma(a) - digamma(a.sum(axis=1, keepdims=True))


def lda_bound(X, lam, gam):
    """scikit-learn's LatentDirichletAllocation._approx_bound, written out:
    sum_dw n_dw log sum_k exp(E log theta_dk + E log beta_kw)
    + E[log p(theta) - log q(theta)] + E[log p(beta) - log q(beta)]."""
    elog_theta, elog_beta = dirichlet_expectation(gam), dirichlet_expectation(lam)
    total = 0.0
    X = X.tocsr()
    for d in range(X.shape[0]):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        ids, cnt = X.indices[lo:hi], X.data[lo:hi]
        total += np.dot(cnt, logsumexp(elog_theta[d][:, None] + elog_beta[:, ids], axis=0))

    def dirichlet_terms(prior, q, elog):
        n = q.shape[1]
        return (np.sum((prior - q) * elog) + np.sum(gammaln(q) - gammaln(prior))
                + np.sum(gammaln(prior * n) - gammaln(q.sum(axis=1))))

    total += dirichlet_terms(ALPHA, gam, elog_theta)
    total += dirichlet_terms(BETA, lam, elog_beta)
    return total


def run_ppc(X, threads, seed, iters, cpu=None, extra=()):
    out = tempfile.mkdtemp(prefix="ppc_bench_")
    shutil.rmtree(out)
    cmd = [PPC, os.path.join(ROOT, "examples", "lda.ppl"), "-p", f"V={X.shape[1]}", "--infer", DATA,
           "--map", "theta=doc", "--map", "x=word", "--weight", "count", "--iters", str(iters), "--tol", "0",
           "--seed", str(seed), "--threads", str(threads), "--out", out, "-q"] + peers.ppc_cpu_args(cpu) + list(extra)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
    summary = json.load(open(os.path.join(out, "summary.json")))
    lam = peers.posterior(out, "phi")
    gam = peers.posterior(out, "theta")
    shutil.rmtree(out)
    # Time to quality counts the init block (the random initialization and
    # the first messages: scikit-learn's fit includes its own), not the
    # compile or the CSV reading (scikit-learn gets the matrix in memory).
    init = summary["init_seconds"]
    return {"wall": wall, "compile": summary["compile_seconds"], "trace": summary["elbo"],
            "time": [init + t for t in summary["time"]], "init": init,
            "bound": lda_bound(X, lam, gam)}


def iterations_to(run, bound):
    """The iterations a traced ppc run took to reach `bound` (nats, not per
    token), or None."""
    return next((i + 1 for i, e in enumerate(run["trace"]) if e >= bound), None)


def fewest_iterations(X, args, seed, start, target, tried):
    """The fewest iterations (from `start`, which the traced run's own ELBO
    reached `target` at) whose --elbo-every 0 run lda_bound scores at least
    `target` (nats), stepping down from `start` while the evaluator accepts
    and up while it does not; `tried` keeps each count's run. None when no
    count up to `start` + 2 is accepted or a run fails. The evaluator's
    optimal indicators put its score at or above ppc's own ELBO, so the
    count is `start` or fewer; the step up is a safeguard (the written
    topics are those of one refresh after the last ELBO)."""
    def accepted(n):
        if n not in tried:
            tried[n] = run_ppc(X, args.threads, seed, n, args.cpu, ["--elbo-every", "0"])
        return "error" not in tried[n] and tried[n]["bound"] >= target

    n = start
    while not accepted(n):
        if "error" in tried[n] or n >= start + 2:
            return None
        n += 1
    while n > 1 and accepted(n - 1):
        n -= 1
    return n


def run_sklearn(X, threads, seed):
    from sklearn.decomposition import LatentDirichletAllocation
    lda = LatentDirichletAllocation(n_components=K, doc_topic_prior=ALPHA, topic_word_prior=BETA,
                                    learning_method="batch", max_iter=30, n_jobs=threads, random_state=seed)
    start = time.perf_counter()
    lda.fit(X)
    seconds = time.perf_counter() - start
    gam = lda._unnormalized_transform(X)
    return {"seconds": seconds, "bound": lda_bound(X, lda.components_, gam)}


def run_gensim(X, seed):
    from gensim.models import LdaModel
    X = X.tocsr()
    corpus = [list(zip(X.indices[X.indptr[d]:X.indptr[d + 1]].tolist(),
                       X.data[X.indptr[d]:X.indptr[d + 1]].astype(int).tolist())) for d in range(X.shape[0])]
    start = time.perf_counter()
    model = LdaModel(corpus, num_topics=K, alpha=np.full(K, ALPHA), eta=BETA, passes=30, update_every=0,
                     chunksize=len(corpus), iterations=100, gamma_threshold=1e-3, random_state=seed,
                     id2word={i: str(i) for i in range(X.shape[1])})
    seconds = time.perf_counter() - start
    lam = model.state.get_lambda()
    gam, _ = model.inference(corpus)
    return {"seconds": seconds, "bound": lda_bound(X, lam, gam)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    peers.add_arguments(ap)
    ap.add_argument("--ppc-iters", type=int, default=60)
    ap.add_argument("--skip-gensim", action="store_true")
    args = ap.parse_args()
    if not args.skip_gensim and args.threads == 1:
        peers.require("gensim")
    print(f"{peers.describe_host(args.cpu)}")
    print(peers.numpy_blas(args.allow_reference_blas), flush=True)
    X = load_corpus()
    tokens = X.sum()
    print(f"AP corpus: {X.shape[0]} documents, {X.shape[1]} words, {int(tokens)} tokens; K={K}, "
          f"alpha={ALPHA}, beta={BETA}; {args.threads} thread(s), {args.runs} runs, medians", flush=True)

    # scikit-learn's runs and ppc's alternate (seed by seed: scikit-learn,
    # ppc traced, ppc like for like), so that the host's speed, which moves
    # by 10-20% over minutes, weighs on both alike. The like-for-like runs
    # aim at the median bound of scikit-learn's runs so far; where the final
    # median asks another count, the missing runs follow at the end.
    sk, runs, quiet = [], [], {}
    for seed in range(args.runs):
        sk.append(run_sklearn(X, args.threads, seed))
        r = run_ppc(X, args.threads, seed, args.ppc_iters, args.cpu)
        if "error" in r:
            print(f"ppc --threads {args.threads}: {r['error']}")
            return 1
        runs.append(r)
        target = statistics.median(x["bound"] for x in sk)
        n = iterations_to(r, target)
        if n is not None:
            quiet[seed] = {}
            fewest_iterations(X, args, seed, n, target, quiet[seed])
    sk_time = statistics.median(r["seconds"] for r in sk)
    sk_bound = statistics.median(r["bound"] for r in sk) / tokens
    print(f"scikit-learn batch, 30 iterations: {sk_time:.2f} s, bound {sk_bound:.4f} nats/token", flush=True)

    if not args.skip_gensim and args.threads == 1:
        gs = [run_gensim(X, seed) for seed in range(args.runs)]
        gs_time = statistics.median(r["seconds"] for r in gs)
        gs_bound = statistics.median(r["bound"] for r in gs) / tokens
        print(f"gensim batch, 30 passes:           {gs_time:.2f} s, bound {gs_bound:.4f} nats/token", flush=True)

    target = sk_bound * tokens
    reach = []
    for r in runs:
        hit = next((t for e, t in zip(r["trace"], r["time"]) if e >= target), None)
        reach.append(hit)
    per_iter = statistics.median(((r["time"][-1] - r["init"]) / len(r["time"])) for r in runs)
    init = statistics.median(r["init"] for r in runs)
    final = statistics.median(r["bound"] for r in runs) / tokens
    own = statistics.median(r["trace"][-1] for r in runs) / tokens
    compile_s = statistics.median(r["compile"] for r in runs)
    print(f"ppc, {args.ppc_iters} iterations: {per_iter * 1000:.0f} ms/iteration, init {init * 1000:.0f} ms, "
          f"compile {compile_s * 1000:.0f} ms, "
          f"final bound {final:.4f} nats/token (own ELBO {own:.4f})")
    if all(h is not None for h in reach):
        t = statistics.median(reach)
        print(f"ppc reaches scikit-learn's final bound after {t:.2f} s (init included, its ELBO evaluated every "
              f"iteration): {sk_time / t:.1f}x sooner")
        # Like for like: scikit-learn's fit evaluates no bound (evaluate_every
        # = -1; lda_bound scores its result afterwards, untimed). So does ppc
        # here: --elbo-every 0 (the same posteriors), timed, scored by
        # lda_bound, with the fewest iterations the evaluator accepts (the
        # runs above, between scikit-learn's, unless the final bound asks
        # another count).
        chosen, own = [], []
        for seed, r in enumerate(runs):
            n = iterations_to(r, target)
            own.append(n)
            tried = quiet.setdefault(seed, {})
            m = fewest_iterations(X, args, seed, n, target, tried)
            if m is None or "error" in tried[m]:
                failed = next((q for q in tried.values() if "error" in q), None)
                print(f"ppc --elbo-every 0: {failed['error'] if failed else f'no run up to {n} iterations reached the bound'}")
                return 1
            chosen.append((m, tried[m]))
        t_quiet = statistics.median(q["time"][-1] for _, q in chosen)
        lowest = min(q["bound"] for _, q in chosen) / tokens
        reached = lowest >= sk_bound
        print(f"ppc, with its ELBO at the last iteration only, as scikit-learn's fit, the fewest iterations the "
              f"evaluator scores at scikit-learn's bound ({statistics.median(m for m, _ in chosen):.0f}; "
              f"{', '.join(str(m) for m, _ in chosen)} by seed, against {', '.join(str(n) for n in own)} by its own "
              f"ELBO): {t_quiet:.2f} s (init included): {sk_time / t_quiet:.1f}x sooner; its bound "
              f"{lowest:.4f} nats/token in the worst run ({'at least' if reached else 'BELOW'} scikit-learn's)")
        peers.goal(f"LDA on AP, K = 20: time to scikit-learn's bound >= 25x sooner, like for like ({sk_time / t_quiet:.1f}x; "
                   f"{sk_time / t:.1f}x with ppc's ELBO every iteration; {args.threads} thread(s))",
                   reached and sk_time / t_quiet >= 25)
    else:
        print(f"ppc did not reach scikit-learn's final bound within {args.ppc_iters} iterations in every run")
        peers.goal("LDA on AP, K = 20: ppc reaches scikit-learn's bound", False)
    # scikit-learn's bound differs with n_jobs (-8.2286 on one thread here,
    # -8.2351 on two): also the time to the one-thread reference.
    reach_ref = [next((t for e, t in zip(r["trace"], r["time"]) if e >= REFERENCE * tokens), None) for r in runs]
    if all(h is not None for h in reach_ref):
        print(f"ppc reaches {REFERENCE} nats/token (scikit-learn's one-thread result) after "
              f"{statistics.median(reach_ref):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
