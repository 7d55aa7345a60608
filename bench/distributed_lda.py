#!/usr/bin/python3
"""LDA on the AP corpus (K = 20, 30 iterations) as a data-parallel run:
1 process against 2 processes under mpirun, on this machine.

    /usr/bin/python3 bench/distributed_lda.py [--runs 3] [--iters 30] [--k 20]

Prints the median inference seconds of each (summary.json, compile and
data reading excluded), the speedup, the largest relative difference of the
posteriors between the two, and the values summed over the processes per
iteration, read from the plan (the `sum` buffers of its distributed loops).
"""
import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile

import peers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPC = os.path.join(ROOT, "build", "bin", "ppc")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "btl", "self,vader"]
CPU = []  # --cpu for ppc


def command(k, iters):
    return [PPC, os.path.join(ROOT, "examples", "lda.ppl"), "-p", "V=10473", "-p", f"K={k}", "--infer",
            os.path.join(ROOT, "examples", "data", "ap_bow.csv"), "--map", "theta=doc", "--map", "x=word",
            "--weight", "count", "--iters", str(iters), "--tol", "0", "-q", *CPU]


def run(np, k, iters, out):
    subprocess.run(MPIRUN + ["-np", str(np)] + command(k, iters) + ["--out", out], check=True,
                   stdout=subprocess.DEVNULL)
    return json.load(open(os.path.join(out, "summary.json")))["inference_seconds"]


def largest_difference(a, b):
    worst = 0.0
    for name in os.listdir(a):
        if name.endswith(".csv"):
            for x, y in zip(csv.reader(open(os.path.join(a, name))), csv.reader(open(os.path.join(b, name)))):
                if x[0][0].isalpha():
                    continue
                for u, v in zip(map(float, x), map(float, y)):
                    worst = max(worst, abs(u - v) / max(abs(u), abs(v), 1e-300))
    return worst


def values_summed_per_iteration(k):
    plan = subprocess.run(MPIRUN + ["-np", "2"] + command(k, 1) + ["--emit=plan"], check=True,
                          capture_output=True, text=True).stdout
    sizes = {m.group(1): int(m.group(2)) for m in re.finditer(r"^buffer (\S+) : \w+\[(\d+)\]", plan, re.M)}
    iteration = plan[plan.index("\niteration {"):plan.index("\nfinal {")]
    total = 0
    for line in iteration.splitlines():
        m = re.match(r"\s*distributed parallel for .*? sum ((?:\S+ )*?\S+)  //", line)
        if m:
            total += sum(sizes[b] for b in m.group(1).split()) + 1  # + the ELBO terms
        elif "distributed parallel for" in line:
            total += 1
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--cpu", default=None, choices=sorted(peers.LEVELS) + ["native"],
                    help="run ppc with --cpu (e.g. x86-64-v3: the AVX2 path on an AVX-512 host)")
    args = ap.parse_args()
    print(peers.describe_host(args.cpu), flush=True)
    CPU.extend(peers.ppc_cpu_args(args.cpu))
    work = tempfile.mkdtemp(prefix="ppc_distributed_")
    times = {1: [], 2: []}
    for r in range(args.runs):
        for np in (1, 2):
            times[np].append(run(np, args.k, args.iters, os.path.join(work, f"np{np}_{r}")))
    one, two = statistics.median(times[1]), statistics.median(times[2])
    diff = largest_difference(os.path.join(work, "np1_0"), os.path.join(work, "np2_0"))
    shutil.rmtree(work)
    values = values_summed_per_iteration(args.k)
    print(f"LDA on AP, K = {args.k}, {args.iters} iterations, medians of {args.runs} runs (inference seconds)")
    print(f"  1 process:   {one:.3f} s   ({1000 * one / args.iters:.1f} ms per iteration)")
    print(f"  2 processes: {two:.3f} s   ({1000 * two / args.iters:.1f} ms per iteration)")
    print(f"  speedup: {one / two:.2f}x; largest relative difference of the posteriors: {diff:.1e}")
    print(f"  summed over the processes per iteration: {values} values ({8 * values / 1e6:.2f} MB per process each way)")


if __name__ == "__main__":
    main()
