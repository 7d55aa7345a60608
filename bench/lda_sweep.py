#!/usr/bin/python3
"""One VMP sweep of LDA on the AP corpus (every variable updated once), K = 100.

    /usr/bin/python3 bench/lda_sweep.py [--runs 3] [--k 100] [--iters 10]

The iteration is ppc's nested schedule with one local sweep, no restart and
no tolerance: the topics, then per document its tokens' indicators and its
topic mix, then the indicators once more (the refresh), fused with the
document's counts to the topics and the ELBO terms. Every variable is
updated once, the indicators twice. Prints the median time per iteration (the first, which
also pays for page faults, is left out), the ratio from 1 to 2 threads and
the peak resident memory of the process.

ppc runs in both orders of the documents' loop: batches of documents by
blocks of words (codegen/transforms/RowBlocking.cpp, forced with `--l2-cache=2M`) and
the documents' order (`--disable-plan-opt=block-rows`: each token's rows
fetched from L3 as it comes). Which one ppc chooses by default depends on
the machine's per-core L2 (blocks from 2 MiB up); the script prints it. Next to them, the loop's rows alone:
bench/row_traffic (built here as the ppc_row_traffic target) replays them,
with one multiply-add per entry, in either order on the same threads'
split; their 1 -> 2 thread ratios show what the memory system allows the
loop at the time of the run (it varies on a shared machine). Runs
alternate between the thread counts and the orders, so that the machine's
drift falls on all.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess

import peers
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPC = os.path.join(ROOT, "build", "bin", "ppc")
ROW_TRAFFIC = os.path.join(ROOT, "build", "bin", "ppc_row_traffic")


CPU = []  # --cpu for ppc


def run(k, threads, iters, data, vocabulary, extra=()):
    out = tempfile.mkdtemp(prefix="ppc_sweep_")
    shutil.rmtree(out)
    cmd = ["/usr/bin/time", "-f", "%M", PPC, os.path.join(ROOT, "examples", "lda.ppl"), "-p", f"V={vocabulary}",
           "-p", f"K={k}", "--infer", data, "--map", "theta=doc", "--map", "x=word", "--weight", "count",
           "--local-iters", "1", "--local-tol", "0", "--no-local-restart", "--iters", str(iters), "--tol", "0",
           "--threads", str(threads), "--out", out, "-q", *extra, *CPU]
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    peak_kib = int(proc.stderr.strip().splitlines()[-1])
    summary = json.load(open(os.path.join(out, "summary.json")))
    shutil.rmtree(out)
    t = summary["time"]
    per_iter = statistics.median(t[i] - t[i - 1] for i in range(2, len(t)))
    return per_iter, peak_kib / 1024, summary["compile_seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--data", default=os.path.join(ROOT, "examples", "data", "ap_bow.csv"))
    ap.add_argument("--vocabulary", type=int, default=10473)
    ap.add_argument("--cpu", default=None, choices=sorted(peers.LEVELS) + ["native"],
                    help="run ppc with --cpu (e.g. x86-64-v3: the AVX2 path on an AVX-512 host)")
    args = ap.parse_args()
    print(peers.describe_host(args.cpu), flush=True)
    CPU.extend(peers.ppc_cpu_args(args.cpu))
    print(f"LDA sweep, K={args.k}, {os.path.basename(args.data)}: median of {args.runs} runs x "
          f"{args.iters - 2} iterations", flush=True)
    subprocess.run(["cmake", "--build", os.path.join(ROOT, "build"), "--target", "ppc_row_traffic"],
                   stdout=subprocess.DEVNULL, check=True)
    getconf = subprocess.run(["getconf", "LEVEL2_CACHE_SIZE"], capture_output=True, text=True).stdout.strip()
    l2 = int(getconf) if getconf.isdigit() else 0  # what ppc reads (sysconf)
    print(f"  this machine's L2: {l2 // 1024} KiB per core; ppc's default order: "
          f"{'blocks' if l2 >= 2 << 20 else 'the documents'}", flush=True)
    orders = {"blocked": ("--l2-cache=2M",), "documents": ("--disable-plan-opt=block-rows",)}
    runs = {(o, t): [] for o in orders for t in (1, 2)}
    replay = {(o, t): [] for o in orders for t in (1, 2)}
    for _ in range(args.runs):
        for threads in (1, 2):
            for order, extra in orders.items():
                runs[order, threads].append(run(args.k, threads, args.iters, args.data, args.vocabulary, extra))
                out = subprocess.run([ROW_TRAFFIC, args.data, str(args.k), str(threads), "9"] +
                                     (["blocked"] if order == "blocked" else []),
                                     capture_output=True, text=True, check=True).stdout
                replay[order, threads].append(float(out) / 1000)
    for order, label in (("blocked", "ppc, in blocks (--l2-cache=2M)"),
                         ("documents", "ppc, documents' order (--disable-plan-opt=block-rows)")):
        times = {}
        print(f"  {label}:")
        for threads in (1, 2):
            times[threads] = statistics.median(r[0] for r in runs[order, threads])
            rss = max(r[1] for r in runs[order, threads])
            compile_s = statistics.median(r[2] for r in runs[order, threads])
            print(f"    {threads} thread(s): {times[threads] * 1000:.1f} ms/sweep, peak RSS {rss:.0f} MiB, "
                  f"compile {compile_s * 1000:.0f} ms", flush=True)
        print(f"    1 -> 2 threads: {times[1] / times[2]:.2f}x")
    for order, label in (("blocked", "in blocks of 256 documents x 256 words"), ("documents", "in the documents' order")):
        low = {t: statistics.median(replay[order, t]) for t in (1, 2)}
        print(f"  the documents' loop's rows alone (ppc_row_traffic), {label}: {low[1] * 1000:.1f} ms on 1 thread, "
              f"{low[2] * 1000:.1f} ms on 2 ({low[1] / low[2]:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
