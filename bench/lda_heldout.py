#!/usr/bin/python3
"""LDA on AP, trained and then scored on held-out documents: ppc against scikit-learn.

    /usr/bin/python3 bench/lda_heldout.py [--runs 3] [--threads 1] [--iters 30] [--cpu x86-64-v3]
    /usr/bin/python3 bench/lda_heldout.py --write-split DIR   (DIR/train.csv, DIR/held.csv; then exits)

The split (docs/inference.md): the first 2000 documents of
examples/data/ap_bow.csv train, the other 246 are held out (renumbered from
0). Both systems fit K = 20 topics (alpha = 0.1, beta = 0.01, batch
variational Bayes, --iters iterations each) on the training documents and
score the held-out ones:

  * ppc: one command, `--infer train.csv --heldout held.csv`: the held-out
    ELBO with the trained topics given, per token;
  * scikit-learn: `fit` then `perplexity(held)`, which is exp(-bound/token)
    with its bound including the topics' KL term (a constant over held-out
    documents that makes its perplexity larger).

So that neither definition favours one side, one evaluator written here
(`heldout_bound`) also scores both systems' trained topics the same way:
each held-out document's bound maximized over its theta and topic
indicators (coordinate ascent to convergence) with the topics fixed at
their posterior. Times: scikit-learn's fit + perplexity (matrix in memory),
ppc's whole command (compiling, reading the CSVs, fit, held-out run).
Medians of --runs; ratios in the same invocation.
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
K, ALPHA, BETA, TRAIN_DOCS = 20, 0.1, 0.01, 2000


def split(workdir):
    raw = np.loadtxt(DATA, delimiter=",", skiprows=1, dtype=np.int64)
    V = int(raw[:, 1].max()) + 1
    train, held = raw[raw[:, 0] < TRAIN_DOCS], raw[raw[:, 0] >= TRAIN_DOCS].copy()
    held[:, 0] -= TRAIN_DOCS
    paths = []
    for name, part in (("train", train), ("held", held)):
        path = os.path.join(workdir, name + ".csv")
        np.savetxt(path, part, fmt="%d", delimiter=",", header="doc,word,count", comments="")
        paths.append(path)
    matrix = lambda p: sp.csr_matrix((p[:, 2].astype(np.float64), (p[:, 0], p[:, 1])), shape=(p[:, 0].max() + 1, V))
    return V, paths, matrix(train), matrix(held)


def heldout_bound(X, lam, tol=1e-10, max_iter=2000):
    """Sum over the documents of X of the bound maximized over q(theta_d) and
    q(z_d) with the topics fixed at Dirichlet(lam) (no topic terms)."""
    elog_beta = digamma(lam) - digamma(lam.sum(axis=1, keepdims=True))
    total = 0.0
    for d in range(X.shape[0]):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        ids, cnt = X.indices[lo:hi], X.data[lo:hi]
        eb = elog_beta[:, ids]  # K x n
        gamma = np.full(K, ALPHA + cnt.sum() / K)
        for _ in range(max_iter):
            elog_theta = digamma(gamma) - digamma(gamma.sum())
            logits = elog_theta[:, None] + eb
            q = np.exp(logits - logsumexp(logits, axis=0))
            new = ALPHA + q @ cnt
            done = np.max(np.abs(new - gamma)) < tol
            gamma = new
            if done:
                break
        elog_theta = digamma(gamma) - digamma(gamma.sum())
        # With q(z) at its optimum, the z terms are sum_n c_n logsumexp_k(...).
        total += cnt @ logsumexp(elog_theta[:, None] + eb, axis=0)
        total += (gammaln(K * ALPHA) - K * gammaln(ALPHA) + (ALPHA - 1) * elog_theta.sum()
                  - gammaln(gamma.sum()) + gammaln(gamma).sum() - ((gamma - 1) * elog_theta).sum())
    return total


def run_ppc(V, train, held, args, seed):
    out = tempfile.mkdtemp(prefix="ppc_heldout_")
    shutil.rmtree(out)
    cmd = [PPC, os.path.join(ROOT, "examples", "lda.ppl"), "-p", f"V={V}", "-p", f"K={K}", "--infer", train,
           "--heldout", held, "--map", "theta=doc", "--map", "x=word", "--weight", "count", "--iters",
           str(args.iters), "--tol", "0", "--seed", str(seed), "--threads", str(args.threads), "--out", out,
           "-q"] + peers.ppc_cpu_args(args.cpu)
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    summary = json.load(open(os.path.join(out, "summary.json")))
    lam = peers.posterior(out, "phi")
    shutil.rmtree(out)
    h = summary["heldout"]
    return {"wall": wall, "heldout_seconds": h["seconds"], "per_token": h["bound_per_observation"],
            "perplexity": h["perplexity"], "lam": lam}


def run_sklearn(Xtrain, Xheld, args, seed):
    from sklearn.decomposition import LatentDirichletAllocation
    lda = LatentDirichletAllocation(n_components=K, doc_topic_prior=ALPHA, topic_word_prior=BETA,
                                    learning_method="batch", max_iter=args.iters, n_jobs=args.threads,
                                    random_state=seed)
    start = time.perf_counter()
    lda.fit(Xtrain)
    perplexity = lda.perplexity(Xheld)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "perplexity": perplexity, "lam": lda.components_}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--write-split", metavar="DIR", help="write the split as DIR/train.csv and DIR/held.csv and exit")
    peers.add_arguments(ap)
    args = ap.parse_args()
    if args.write_split:
        os.makedirs(args.write_split, exist_ok=True)
        split(args.write_split)
        print(f"wrote {args.write_split}/train.csv and {args.write_split}/held.csv")
        return 0
    print(peers.describe_host(args.cpu))
    print(peers.numpy_blas(args.allow_reference_blas), flush=True)
    workdir = tempfile.mkdtemp(prefix="ppc_heldout_split_")
    try:
        V, (train, held), Xtrain, Xheld = split(workdir)
        tokens = Xheld.sum()
        print(f"AP split: {Xtrain.shape[0]} training documents, {Xheld.shape[0]} held out ({int(tokens)} tokens); "
              f"K={K}, alpha={ALPHA}, beta={BETA}, {args.iters} iterations; {args.threads} thread(s), "
              f"{args.runs} runs, medians", flush=True)
        sk = [run_sklearn(Xtrain, Xheld, args, seed) for seed in range(args.runs)]
        pp = [run_ppc(V, train, held, args, seed) for seed in range(args.runs)]
    finally:
        shutil.rmtree(workdir)
    sk_time = statistics.median(r["seconds"] for r in sk)
    sk_perp = statistics.median(r["perplexity"] for r in sk)
    pp_time = statistics.median(r["wall"] for r in pp)
    pp_held = statistics.median(r["heldout_seconds"] for r in pp)
    pp_perp = statistics.median(r["perplexity"] for r in pp)
    print(f"scikit-learn: fit + perplexity {sk_time:.2f} s; perplexity() {sk_perp:.1f} (its bound includes the "
          f"topics' KL term)")
    print(f"ppc:          whole command {pp_time:.2f} s (held-out run {pp_held:.2f} s); held-out perplexity "
          f"{pp_perp:.1f} ({statistics.median(r['per_token'] for r in pp):.4f} nats/token)")
    common_sk = statistics.median(np.exp(-heldout_bound(Xheld, r["lam"]) / tokens) for r in sk)
    common_pp = statistics.median(np.exp(-heldout_bound(Xheld, r["lam"]) / tokens) for r in pp)
    print(f"one evaluator (documents' bound at its optimum, topics fixed): scikit-learn's topics {common_sk:.1f}, "
          f"ppc's topics {common_pp:.1f}")
    print(f"ratio: ppc {sk_time / pp_time:.1f}x faster (fit + held-out evaluation, same run)")
    peers.goal(f"held-out perplexity no worse than scikit-learn's ({pp_perp:.1f} vs {sk_perp:.1f}; one evaluator "
               f"{common_pp:.1f} vs {common_sk:.1f})", pp_perp <= sk_perp and common_pp <= common_sk * 1.001)
    peers.goal(f"fit + held-out evaluation >= 10x faster than scikit-learn ({sk_time / pp_time:.1f}x)",
               sk_time / pp_time >= 10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
