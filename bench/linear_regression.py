#!/usr/bin/python3
"""Bayesian linear regression: ppc against one GEMV over the data and
against scikit-learn's BayesianRidge.

    /usr/bin/python3 bench/linear_regression.py [--rows 1000000] [--cols 50] [--runs 3] [--threads 1] [--cpu x86-64-v3]

Synthetic data (seeded): N rows of D standard-normal inputs, y = X w + b +
noise, written once to a work folder. ppc runs examples/linear_regression.ppl
(an MvGaussian w, a Gaussian intercept, a Gamma noise precision).

Prints, each the median of --runs runs:
  * ppc's milliseconds per iteration (the median time between iterations
    over --iters iterations, --tol 0), and its ratio to one GEMV X v over the
    same matrix (numpy on its BLAS, --threads threads): the README goal is
    2x; and what a run does once (the first iteration tabulates X^T 1 and
    X^T y, the init block X^T X; the final block puts the rows' variances
    back);
  * ppc's time to converge (--tol 1e-10, inference only, and the whole run
    with reading the CSV) against BayesianRidge's fit (from arrays in memory);
  * the largest difference between ppc's posterior means and BayesianRidge's
    coef_ where the models coincide: ppc given BayesianRidge's final
    precisions (alpha_, lambda_) as constants, with a flat intercept.
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
from sklearn.linear_model import BayesianRidge  # noqa: E402

ROOT = peers.ROOT
PPC = os.path.join(ROOT, "build", "bin", "ppc")
MODEL = os.path.join(ROOT, "examples", "linear_regression.ppl")
FIXED = """@Model class FixedPrecisions(D: Long = 50, lambda: Double = 1.0, alpha: Double = 1.0) {
  val w = MvGaussian(0.0, lambda, D)
  val b = Gaussian(0.0, 1.0e-12)
  val n = ?
  val x = n.map(_ => Data(D))
  val y = n.map(i => Gaussian(w.dot(x(i)) + b, alpha))
}
"""


def data(workdir, N, D):
    rng = np.random.default_rng(20261125)
    X = rng.standard_normal((N, D))
    w = rng.standard_normal(D)
    y = X @ w + 0.5 + rng.standard_normal(N)
    path = os.path.join(workdir, f"regression_{N}x{D}.csv")
    peers.write_design_csv(path, X, y)
    return path, X, y


def ppc(model, path, args, extra):
    out = tempfile.mkdtemp(prefix="ppc_regression_")
    shutil.rmtree(out)
    cmd = [PPC, model, "--infer", path, "-p", f"D={args.cols}", "--threads", str(args.threads), "-q", "--out", out]
    start = time.perf_counter()
    subprocess.run(cmd + extra + peers.ppc_cpu_args(args.cpu), stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    summary = json.load(open(os.path.join(out, "summary.json")))
    w = peers.posterior(out, "w")[0][: args.cols]
    shutil.rmtree(out)
    return summary, wall, w


def main():
    args = peers.regression_arguments(__doc__.splitlines()[0])
    path, X, y = data(args.workdir, args.rows, args.cols)
    print(f"data: {args.rows} x {args.cols} ({os.path.getsize(path) / 1e6:.0f} MB of CSV)")

    gemv_ms = peers.gemv_ms(X, args.runs)

    per_iter, first, final = [], [], []
    for _ in range(args.runs):
        s, _, _ = ppc(MODEL, path, args, ["--iters", str(args.iters), "--tol", "0"])
        t = s["time"]  # seconds at the end of each iteration
        per_iter.append(peers.iteration_ms(s))
        first.append(t[0] * 1000)
        final.append((s["inference_seconds"] - t[-1]) * 1000)
    it_ms = statistics.median(per_iter)
    print(f"GEMV X v (numpy): {gemv_ms:.2f} ms; ppc per iteration: {it_ms:.2f} ms ({it_ms / gemv_ms:.2f}x GEMV; "
          f"the median over iterations 2..{args.iters})")
    print(f"ppc once per run: the first iteration {statistics.median(first):.0f} ms (with the tables X^T 1 and "
          f"X^T y; X^T X is made by the init block), the final block {statistics.median(final):.0f} ms (the rows' "
          f"variances for the outputs)")
    peers.goal(f"regression within 2x of one GEMV per iteration ({it_ms / gemv_ms:.2f}x)", it_ms <= 2 * gemv_ms)

    conv, walls, iters = [], [], []
    for _ in range(args.runs):
        s, wall, _ = ppc(MODEL, path, args, ["--iters", "1000", "--tol", "1e-10"])
        conv.append(s["inference_seconds"])
        walls.append(wall)
        iters.append(s["iterations"])
    br, model = [], None
    for _ in range(args.runs):
        start = time.perf_counter()
        model = BayesianRidge(tol=1e-10, n_iter=1000).fit(X, y)
        br.append(time.perf_counter() - start)
    ppc_s, wall_s, br_s = statistics.median(conv), statistics.median(walls), statistics.median(br)
    print(f"to convergence: ppc {ppc_s:.3f} s inference ({statistics.median(iters):.0f} iterations), "
          f"{wall_s:.3f} s with reading the CSV; BayesianRidge fit {br_s:.3f} s "
          f"(ppc inference {br_s / ppc_s:.1f}x faster)")
    peers.goal(f"regression converges faster than BayesianRidge ({br_s / ppc_s:.1f}x)", ppc_s < br_s)

    fixed = os.path.join(args.workdir, "fixed_precisions.ppl")
    with open(fixed, "w") as f:
        f.write(FIXED)
    _, _, w = ppc(fixed, path, args, ["--iters", "2000", "--tol", "1e-14", "-p", f"lambda={model.lambda_!r}",
                                      "-p", f"alpha={model.alpha_!r}"])
    diff = float(np.max(np.abs(w - model.coef_)))
    print(f"posterior means with BayesianRidge's precisions: max |ppc - coef_| = {diff:.2e}")
    peers.goal(f"posterior means equal BayesianRidge's to 1e-6 ({diff:.1e})", diff <= 1e-6)
    return 0


if __name__ == "__main__":
    sys.exit(main())
