#!/usr/bin/python3
"""Hidden Markov models: ppc's time per iteration and memory on generated sequences.

    /usr/bin/python3 bench/hmm.py [--runs 3] [--iters 20] [--sequences 1000] [--length 100]
                                  [--states 5] [--symbols 20] [--cpu x86-64-v3]

Sequences of symbols are drawn (seeded, into a temporary directory) from a
K-state HMM with sticky transitions, then fitted with the model of
test/lit/chains/Inputs/hmm.ppl (Dirichlet priors; each sequence's states a
chain updated by forward-backward, docs/chains-and-links.md). No peer runs
here: hmmlearn and BayesPy are not Debian packages. The arithmetic of one
forward-backward pass, about 4 K^2 multiply-adds per element, is printed
beside ppc's time per element so that the overheads (the emissions'
evidence, K per element; the messages to the globals) can be seen.

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

import peers

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
           "--seed", str(seed), "--threads", str(args.threads), "-q", "--out", out] + peers.ppc_cpu_args(args.cpu)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    summary = json.load(open(os.path.join(out, "summary.json")))
    shutil.rmtree(out)
    return summary["inference_seconds"] / summary["iterations"], summary["elbo"][-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--sequences", type=int, default=1000)
    ap.add_argument("--length", type=int, default=100)
    ap.add_argument("--states", type=int, default=5)
    ap.add_argument("--symbols", type=int, default=20)
    peers.add_arguments(ap)
    args = ap.parse_args()
    print(f"{peers.describe_host(args.cpu)}; {args.threads} thread(s), {args.runs} runs")
    work = tempfile.mkdtemp(prefix="ppc_hmm_")
    try:
        open(os.path.join(work, "hmm.ppl"), "w").write(MODEL)
        generate(os.path.join(work, "seq.csv"), args)
        results = [run(seed, args, work) for seed in range(args.runs)]
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
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
    print("hmmlearn, BayesPy: not installed here (not Debian packages); no ratio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
