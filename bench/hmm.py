#!/usr/bin/python3
"""Hidden Markov models: ppc's time per iteration and memory on generated sequences.

    /usr/bin/python3 bench/hmm.py [--runs 3] [--iters 20] [--sequences 1000] [--length 100]
                                  [--states 5] [--symbols 20] [--cpu x86-64-v3]

Sequences of symbols are drawn (seeded, into a temporary directory) from a
K-state HMM with sticky transitions, then fitted with the model of
test/lit/chains/Inputs/hmm.ppl (Dirichlet priors; each sequence's states a
chain updated by forward-backward, docs/chains-and-links.md). No peer runs
here: hmmlearn and BayesPy are not Debian packages; the peer is a numpy
VB E-step written here (forward-backward vectorized over the sequences, one
K x K product per time step for all of them, with the expected log
parameters of a Dirichlet posterior, as a VB-HMM's iteration needs), timed on
the same sequences. The arithmetic of one forward-backward pass, about
4 K^2 multiply-adds per element, is printed beside ppc's time per element
so that the overheads (the emissions' evidence, K per element; the messages
to the globals) can be seen. `--schedule nested` keeps one sequence's chain
rows (K + K^2 + 1 doubles per element) in memory instead of every sequence's
(the states' posteriors are then not written out): the way to fit 10^7
elements with K = 20.

Prints the median milliseconds per iteration of --runs runs (ppc's
inference_seconds / iterations, seeds 0, 1, ...), nanoseconds per element,
the peak resident memory of one run, and the final ELBO.
"""
import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import peers

peers.early_setup()

ROOT = peers.ROOT
PPC = os.path.join(ROOT, "build", "bin", "ppc")

MODEL = """@Model class HMM(K: Long = 2, V: Long = 3) {
  val pi = Dirichlet(1.0, K)
  val A = (0L until K).map(_ => Dirichlet(1.0, K))
  val B = (0L until K).map(_ => Dirichlet(1.0, V))
  val z = ?.map(_ => ?.chain(Categorical(pi))(prev => Categorical(A(prev))))
  val x = z.map(s => s.map(zt => Categorical(B(zt))))
}
"""


def generate(path, args):
    rng = random.Random(1)
    K, V = args.states, args.symbols
    B = []
    for _ in range(K):
        row = [rng.random() ** 3 for _ in range(V)]
        B.append([v / sum(row) for v in row])

    def draw(p):
        u, c = rng.random(), 0.0
        for i, v in enumerate(p):
            c += v
            if u < c:
                return i
        return len(p) - 1

    with open(path, "w") as f:
        f.write("seq,x\n")
        for s in range(args.sequences):
            z = rng.randrange(K)
            for t in range(args.length):
                if t and rng.random() > 0.8:
                    z = rng.randrange(K)
                f.write("%d,%d\n" % (s, draw(B[z])))


def run(seed, args, work):
    out = os.path.join(work, "out%d" % seed)
    cmd = [PPC, os.path.join(work, "hmm.ppl"), "-p", f"K={args.states}", "-p", f"V={args.symbols}",
           "--infer", os.path.join(work, "seq.csv"), "--map", "z=seq", "--iters", str(args.iters), "--tol", "0",
           "--seed", str(seed), "--threads", str(args.threads), "--schedule", args.schedule, "-q", "--out", out]
    cmd += peers.ppc_cpu_args(args.cpu)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    summary = json.load(open(os.path.join(out, "summary.json")))
    shutil.rmtree(out)
    return summary["inference_seconds"] / summary["iterations"], summary["elbo"][-1]


def numpy_estep(X, K, V, rng):
    """One VB E-step of an HMM over the sequences X (S x T symbols) with
    random Dirichlet posteriors: the expected counts a VB-HMM's M-step needs
    and the log normalizer. Returns the seconds it took."""
    import numpy as np
    from scipy.special import digamma

    def elog(a):
        return digamma(a) - digamma(a.sum(-1, keepdims=True))

    pi = np.exp(elog(rng.gamma(1.0, 1.0, K) + 1))
    A = np.exp(elog(rng.gamma(1.0, 1.0, (K, K)) + 1))
    B = np.exp(elog(rng.gamma(1.0, 1.0, (K, V)) + 1))
    S, T = X.shape
    start = time.perf_counter()
    E = B.T[X]  # S x T x K: the emissions' evidence
    alpha = np.empty((T, S, K))
    c = np.empty((T, S))
    a = pi * E[:, 0]
    for t in range(T):
        if t:
            a = (alpha[t - 1] @ A) * E[:, t]
        c[t] = a.sum(1)
        alpha[t] = a / c[t][:, None]
    beta = np.ones((S, K))
    counts_A = np.zeros((K, K))
    counts_B = np.zeros((K, V))
    for t in range(T - 1, -1, -1):
        gamma = alpha[t] * beta
        np.add.at(counts_B.T, X[:, t], gamma)
        if t:
            w = E[:, t] * beta / c[t][:, None]
            counts_A += (alpha[t - 1].T @ w) * A
            beta = w @ A.T
    counts_pi = gamma.sum(0)
    log_z = np.log(c).sum()
    assert np.isfinite(log_z) and abs(counts_A.sum() - S * (T - 1)) < 1e-6 * S * T
    return time.perf_counter() - start



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--sequences", type=int, default=1000)
    ap.add_argument("--length", type=int, default=100)
    ap.add_argument("--states", type=int, default=5)
    ap.add_argument("--symbols", type=int, default=20)
    ap.add_argument("--schedule", default="auto", choices=["auto", "nested"])
    ap.add_argument("--skip-numpy", action="store_true")
    peers.add_arguments(ap)
    args = ap.parse_args()
    print(f"{peers.describe_host(args.cpu)}; {args.threads} thread(s), {args.runs} runs")
    work = tempfile.mkdtemp(prefix="ppc_hmm_")
    try:
        open(os.path.join(work, "hmm.ppl"), "w").write(MODEL)
        generate(os.path.join(work, "seq.csv"), args)
        results = [run(seed, args, work) for seed in range(args.runs)]
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        numpy_seconds = None
        if not args.skip_numpy:
            import numpy as np
            data = np.loadtxt(os.path.join(work, "seq.csv"), delimiter=",", skiprows=1, dtype=np.int64)
            X = data[:, 1].reshape(args.sequences, args.length)
            rng = np.random.default_rng(0)
            numpy_seconds = statistics.median(numpy_estep(X, args.states, args.symbols, rng) for _ in range(args.runs))
    finally:
        shutil.rmtree(work)
    elements = args.sequences * args.length
    per_iter = statistics.median(r[0] for r in results)
    K = args.states
    print(f"{args.sequences} sequences x {args.length} = {elements} elements, K = {K}, V = {args.symbols}")
    print(f"ppc: {per_iter * 1000:.2f} ms per iteration, {per_iter / elements * 1e9:.0f} ns per element "
          f"(forward-backward: about {4 * K * K} multiply-adds per element), ELBO "
          f"{statistics.median(r[1] for r in results):.1f}")
    print(f"peak resident memory of a run: {peak_kib / 1024:.0f} MiB "
          f"({peak_kib * 1024 / elements:.0f} bytes per element)")
    floor = elements * 4 * K * K / (peers.peak_fma(args.cpu) * 1e9)
    print(f"arithmetic floor (4 K^2 multiply-adds per element at this core's peak): {floor * 1000:.2f} ms; "
          f"ppc is {per_iter / floor:.0f}x it")
    if numpy_seconds is not None:
        print(f"numpy VB E-step (forward-backward over all sequences at once, OpenBLAS): "
              f"{numpy_seconds * 1000:.2f} ms per iteration: " +
              (f"ppc is {numpy_seconds / per_iter:.2f}x faster" if per_iter < numpy_seconds
               else f"ppc takes {per_iter / numpy_seconds:.2f}x numpy's time"))
    print("hmmlearn, BayesPy: not installed here (not Debian packages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
