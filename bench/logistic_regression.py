#!/usr/bin/python3
"""Bayesian logistic regression: ppc against one GEMV over the data, the
arithmetic floor, and scikit-learn's LogisticRegression.

    /usr/bin/python3 bench/logistic_regression.py [--rows 1000000] [--cols 50] [--runs 3] [--threads 1] [--cpu x86-64-v3]

Synthetic data (seeded): N rows of D standard-normal inputs, y ~
Bernoulli(sigmoid(X w + 0.5)), written once to a work folder. ppc runs
examples/logistic_regression.ppl (an MvGaussian w, a Gaussian intercept, the
Jaakkola-Jordan bound with one local parameter per row).

Prints, each the median of --runs runs:
  * ppc's milliseconds per iteration (the median time between iterations
    over --iters iterations, --tol 0) and its ratio to one GEMV X v over the
    same matrix (numpy on its BLAS, --threads threads): issue 26's goal is 3x;
  * the arithmetic floor: an iteration needs each row's E[(w.x_i + b)^2]
    (quadratic forms, N D(D+1)/2 multiply-adds) and the message
    sum_i lambda_i x_i x_i^T (the same again), at the host's peak rate on
    the ISA ppc runs (bench/peak_fma), times the threads;
  * scikit-learn's LogisticRegression fit (L2, lbfgs: a point estimate,
    for scale) and both models' accuracy on the training rows.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import peers

peers.early_setup()
peers.require("numpy", "sklearn")
import numpy as np  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

ROOT = peers.ROOT
PPC = os.path.join(ROOT, "build", "bin", "ppc")
MODEL = os.path.join(ROOT, "examples", "logistic_regression.ppl")


def data(workdir, N, D):
    rng = np.random.default_rng(20261126)
    X = rng.standard_normal((N, D))
    w = rng.standard_normal(D) / np.sqrt(D) * 2.0
    p = 1.0 / (1.0 + np.exp(-(X @ w + 0.5)))
    y = (rng.random(N) < p).astype(float)
    path = os.path.join(workdir, f"logistic_bench_{N}x{D}.csv")
    peers.write_design_csv(path, X, y)
    return path, X, y


def ppc(path, args, extra):
    out = tempfile.mkdtemp(prefix="ppc_logistic_")
    shutil.rmtree(out)
    cmd = [PPC, MODEL, "--infer", path, "-p", f"D={args.cols}", "--threads", str(args.threads), "-q", "--out", out]
    subprocess.run(cmd + extra + peers.ppc_cpu_args(args.cpu), stdout=subprocess.DEVNULL, check=True)
    summary = json.load(open(os.path.join(out, "summary.json")))
    w = peers.posterior(out, "w")[0][: args.cols]
    b = peers.posterior(out, "b")[0][0]
    shutil.rmtree(out)
    return summary, np.asarray(w), b


def main():
    args = peers.regression_arguments(__doc__.splitlines()[0])
    path, X, y = data(args.workdir, args.rows, args.cols)
    N, D = X.shape
    print(f"data: {N} x {D} ({os.path.getsize(path) / 1e6:.0f} MB of CSV), {y.mean():.3f} ones")

    gemv_ms = peers.gemv_ms(X, args.runs)
    peak = peers.peak_fma(args.cpu)
    floor_ms = N * D * (D + 1) / (peak * 1e9 * args.threads) * 1000

    per_iter, w, b = [], None, None
    for _ in range(args.runs):
        s, w, b = ppc(path, args, ["--iters", str(args.iters), "--tol", "0"])
        per_iter.append(peers.iteration_ms(s))
    it_ms = statistics.median(per_iter)
    print(f"GEMV X v (numpy): {gemv_ms:.2f} ms; ppc per iteration: {it_ms:.1f} ms ({it_ms / gemv_ms:.2f}x GEMV; "
          f"the median over iterations 2..{args.iters})")
    print(f"arithmetic floor: N D (D+1) = {N * D * (D + 1) / 1e9:.2f} G multiply-adds at {peak:.1f} G/s x "
          f"{args.threads} = {floor_ms:.1f} ms ({floor_ms / gemv_ms:.2f}x GEMV); ppc {it_ms / floor_ms:.2f}x it")
    peers.goal(f"logistic regression within 3x of one GEMV per iteration ({it_ms / gemv_ms:.2f}x)",
               it_ms <= 3 * gemv_ms)

    fits = []
    model = None
    for _ in range(args.runs):
        start = time.perf_counter()
        model = LogisticRegression(C=1.0, tol=1e-8, max_iter=1000).fit(X, y)
        fits.append(time.perf_counter() - start)
    ppc_acc = float(np.mean(((X @ w + b) > 0) == (y > 0.5)))
    sk_acc = float(np.mean(model.predict(X) == y))
    print(f"scikit-learn LogisticRegression fit: {statistics.median(fits):.2f} s; training accuracy "
          f"ppc {ppc_acc:.4f}, scikit-learn {sk_acc:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
