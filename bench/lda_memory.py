#!/usr/bin/python3
"""LDA on large synthetic corpora: peak memory and time per sweep, K = 100.

    /usr/bin/python3 bench/lda_memory.py [--tokens 5e6,20e6,50e6] [--workdir /tmp/ppc_memory]

The corpora are generated from LDA fitted by ppc on the AP corpus (K = 20,
30 iterations): documents with AP's length distribution, topic mixes drawn
from Dirichlet(0.1) and words from the fitted topics' posterior means. Each
corpus is a doc,word,count CSV (generated once, kept in --workdir). ppc then
runs two sweeps with K = 100 (nested schedule, one local sweep, no restart)
and the script prints the peak resident memory of the process and the time
per sweep, which should grow linearly with the tokens.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import peers

peers.require("numpy")

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPC = os.path.join(ROOT, "build", "bin", "ppc")
AP = os.path.join(ROOT, "examples", "data", "ap_bow.csv")
V = 10473


def fitted_topics(workdir):
    out = os.path.join(workdir, "ap_fit")
    if not os.path.exists(os.path.join(out, "phi.csv")):
        subprocess.run([PPC, os.path.join(ROOT, "examples", "lda.ppl"), "-p", f"V={V}", "--infer", AP, "--map",
                        "theta=doc", "--map", "x=word", "--weight", "count", "--iters", "30", "--out", out, "-q"],
                       stdout=subprocess.DEVNULL, check=True)
    lam = peers.posterior(out, "phi")
    return lam / lam.sum(axis=1, keepdims=True)


def generate(path, tokens, topics, rng):
    ap = np.loadtxt(AP, delimiter=",", skiprows=1, dtype=np.int64)
    lengths = np.bincount(ap[:, 0], weights=ap[:, 2]).astype(np.int64)
    lengths = lengths[lengths > 0]
    k = topics.shape[0]
    written = 0
    doc = 0
    with open(path + ".tmp", "w") as f:
        f.write("doc,word,count\n")
        while written < tokens:
            n = int(min(rng.choice(lengths), tokens - written))
            theta = rng.dirichlet(np.full(k, 0.1))
            counts = rng.multinomial(n, theta @ topics)
            words = np.nonzero(counts)[0]
            f.write("".join(f"{doc},{w},{c}\n" for w, c in zip(words.tolist(), counts[words].tolist())))
            written += n
            doc += 1
    os.replace(path + ".tmp", path)
    return doc


CPU = []  # --cpu for ppc


def run(path, threads):
    out = tempfile.mkdtemp(prefix="ppc_memory_")
    shutil.rmtree(out)
    cmd = ["/usr/bin/time", "-f", "%M", PPC, os.path.join(ROOT, "examples", "lda.ppl"), "-p", f"V={V}", "-p", "K=100",
           "--infer", path, "--map", "theta=doc", "--map", "x=word", "--weight", "count", "--local-iters", "1",
           "--local-tol", "0", "--no-local-restart", "--iters", "3", "--tol", "0", "--threads", str(threads),
           "--out", out, "-q", *CPU]
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    wall = time.perf_counter() - start
    peak = int(proc.stderr.strip().splitlines()[-1]) / 1024 / 1024
    summary = json.load(open(os.path.join(out, "summary.json")))
    shutil.rmtree(out)
    t = summary["time"]
    return (t[-1] - t[0]) / (len(t) - 1), peak, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", default="5e6,20e6,50e6")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "ppc_memory"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cpu", default=None, choices=sorted(peers.LEVELS) + ["native"],
                    help="run ppc with --cpu (e.g. x86-64-v3: the AVX2 path on an AVX-512 host)")
    args = ap.parse_args()
    print(peers.describe_host(args.cpu), flush=True)
    CPU.extend(peers.ppc_cpu_args(args.cpu))
    os.makedirs(args.workdir, exist_ok=True)
    rng = np.random.default_rng(0)
    topics = fitted_topics(args.workdir)
    print(f"LDA K=100 on corpora generated from ppc's AP fit; {args.threads} thread(s)", flush=True)
    rows = []
    for tokens in (int(float(x)) for x in args.tokens.split(",")):
        path = os.path.join(args.workdir, f"lda_{tokens}.csv")
        if not os.path.exists(path):
            docs = generate(path, tokens, topics, rng)
            print(f"  generated {path}: {docs} documents", flush=True)
        nnz = sum(1 for _ in open(path)) - 1
        sweep, peak, wall = run(path, args.threads)
        rows.append((tokens, nnz, sweep, peak))
        print(f"  {tokens / 1e6:.0f}M tokens ({nnz / 1e6:.1f}M distinct doc-word pairs): {sweep:.2f} s/sweep, "
              f"{sweep / tokens * 1e9:.1f} ns/token, peak RSS {peak:.2f} GiB (whole run {wall:.0f} s)", flush=True)
    if len(rows) > 1:
        base = rows[0]
        for r in rows[1:]:
            print(f"  {r[0] / base[0]:.1f}x tokens -> {r[2] / base[2]:.2f}x time per sweep")
    return 0


if __name__ == "__main__":
    sys.exit(main())
