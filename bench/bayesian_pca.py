#!/usr/bin/python3
"""Bayesian PCA on digits: ppc's time per iteration and the GEMM floor.

    /usr/bin/python3 bench/bayesian_pca.py [--runs 3] [--iters 30] [--components 10] [--cpu x86-64-v3]

examples/bayesian_pca.ppl with D = 64 and K components over the 1797 digit
images (examples/data/digits_counts.csv, the 8x8 block counts). No peer
runs here: BayesPy (whose GMM took about 1.3 s per iteration on digits on
this project's earlier hosts) is not a Debian package. The floor is one
product of the factors, Z W^T (N D K multiply-adds), at the host's peak
multiply-add rate on the vector ISA ppc runs (bench/peak_fma); VMP's
mean-field messages also need every pair's second moments (K^2 each way),
so ppc's multiple of that floor is large by construction.

Prints the median milliseconds per iteration of --runs runs (ppc's
inference_seconds / iterations, seeds 0, 1, ...), the floor and the ratio,
and the final ELBO.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import peers

ROOT = peers.ROOT
PPC = os.path.join(ROOT, "build", "bin", "ppc")
N, D = 1797, 64


def run(seed, args):
    out = tempfile.mkdtemp(prefix="ppc_pca_")
    shutil.rmtree(out)
    cmd = [PPC, os.path.join(ROOT, "examples", "bayesian_pca.ppl"), "-p", f"D={D}", "-p", f"K={args.components}",
           "--infer", os.path.join(ROOT, "examples", "data", "digits_counts.csv"), "--map", "y=p*",
           "--iters", str(args.iters), "--tol", "0", "--seed", str(seed), "--threads", str(args.threads), "-q",
           "--out", out] + peers.ppc_cpu_args(args.cpu)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    summary = json.load(open(os.path.join(out, "summary.json")))
    shutil.rmtree(out)
    return summary["inference_seconds"] / summary["iterations"], summary["elbo"][-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--components", type=int, default=10)
    peers.add_arguments(ap)
    args = ap.parse_args()
    print(f"{peers.describe_host(args.cpu)}; {args.threads} thread(s), {args.runs} runs")
    peak = peers.peak_fma(args.cpu)
    results = [run(seed, args) for seed in range(args.runs)]
    per_iter = statistics.median(r[0] for r in results) * 1000
    floor = N * D * args.components / (peak * 1e9) * 1000
    print(f"ppc: {per_iter:.2f} ms per iteration (K = {args.components}), ELBO {statistics.median(r[1] for r in results):.1f}")
    print(f"GEMM floor: N D K = {N * D * args.components / 1e6:.2f} M multiply-adds at {peak:.1f} G/s = "
          f"{floor:.3f} ms; ppc {per_iter / floor:.0f}x it")
    print("BayesPy: not installed here (not a Debian package); no ratio against it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
