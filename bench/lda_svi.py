#!/usr/bin/python3
"""Streaming LDA (ppc --svi) against gensim's and scikit-learn's online LDA.

    /usr/bin/python3 bench/lda_svi.py [--train-tokens 50e6] [--big-tokens 500e6] [--small-tokens 5e6]
                                      [--workdir /tmp/ppc_svi] [--skip-peers] [--skip-memory]

Corpora are generated from LDA fitted by ppc on the AP corpus (K = 20, as
bench/lda_memory.py does): documents with AP's length distribution, topic
mixes from Dirichlet(0.1), each token's topic from the mix and its word from
that topic's posterior mean. They are doc,word,count CSVs kept in --workdir
(not in the repository): a training corpus, a held-out one of
--test-docs documents, and the two of the memory check.

1. Time to a held-out bound. gensim's LdaModel (one pass, chunksize 2000,
   update_every 1) and scikit-learn's LatentDirichletAllocation (online, one
   pass, batch_size 2000) fit K = 100 topics with alpha 0.1 and eta 0.01 on
   the training corpus, held in memory in each one's own format (not timed);
   ppc streams it from the CSV (--svi --batch 2000, timed from the start of
   its process). Every topic set is scored the same way: ppc's held-out
   bound of the test corpus with the topics given (--given phi=, theta and
   the tokens' topics fitted). ppc reports the bound every --heldout-every
   steps; the script prints the time ppc took to reach the bound gensim's
   one pass reaches, and the ratios. One thread each (BLAS included).
2. Memory independent of the data size: ppc --svi, one epoch, on
   --small-tokens and --big-tokens: peak resident memory, time and the
   first pass's reading speed (MB/s).
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

peers.early_setup()
peers.require("numpy", "scipy")

import numpy as np  # noqa: E402

import lda_memory  # noqa: E402  (the AP fit the corpora come from)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPC = os.path.join(ROOT, "build", "bin", "ppc")
LDA = os.path.join(ROOT, "examples", "lda.ppl")
V, K = 10473, 100
CPU = []


def generate(path, tokens, topics, rng, first_doc=0):
    """Writes a doc,word,count CSV of about `tokens` tokens; returns the documents."""
    ap = np.loadtxt(lda_memory.AP, delimiter=",", skiprows=1, dtype=np.int64)
    lengths = np.bincount(ap[:, 0], weights=ap[:, 2]).astype(np.int64)
    lengths = lengths[lengths > 0]
    k = topics.shape[0]
    cdf = np.cumsum(topics, axis=1)
    cdf /= cdf[:, -1:]
    written, docs = 0, 0
    with open(path + ".tmp", "w") as f:
        f.write("doc,word,count\n")
        while written < tokens:
            # A chunk of documents at a time, every token vectorized.
            n = rng.choice(lengths, size=20000)
            n = n[np.cumsum(n) <= max(tokens - written, n[0])] if written + n.sum() > tokens else n
            doc_of = np.repeat(np.arange(len(n)), n)
            theta = rng.dirichlet(np.full(k, 0.1), size=len(n))
            tcdf = np.cumsum(theta, axis=1)
            z = (rng.random(len(doc_of))[:, None] > tcdf[doc_of]).sum(axis=1).clip(0, k - 1)
            w = np.empty(len(doc_of), dtype=np.int64)
            u = rng.random(len(doc_of))
            for t in range(k):
                m = z == t
                w[m] = np.searchsorted(cdf[t], u[m]).clip(0, V - 1)
            keys, counts = np.unique(doc_of * V + w, return_counts=True)
            d = keys // V + first_doc + docs
            f.write("".join(f"{a},{b},{c}\n" for a, b, c in zip(d.tolist(), (keys % V).tolist(), counts.tolist())))
            written += int(n.sum())
            docs += len(n)
    os.replace(path + ".tmp", path)
    return docs


def corpus(workdir, name, tokens, topics, seed):
    path = os.path.join(workdir, f"{name}_{int(tokens)}.csv")
    if not os.path.exists(path):
        t = time.perf_counter()
        docs = generate(path, int(tokens), topics, np.random.default_rng(seed))
        print(f"  generated {path}: {docs} documents ({time.perf_counter() - t:.0f} s)", flush=True)
    return path


def read_bow(path):
    data = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64)
    return data[:, 0], data[:, 1], data[:, 2]


def write_phi(path, lam):
    """A topics x words Dirichlet as the phi.csv that ppc --out writes (--given reads it)."""
    with open(path, "w") as f:
        f.write("K," + ",".join(f"alpha_{j}" for j in range(lam.shape[1])) + "\n")
        for i, row in enumerate(lam):
            f.write(f"{i}," + ",".join(repr(float(x)) for x in row) + "\n")


def heldout_bound(phi_csv, test):
    """ppc's held-out bound per token of `test` with the topics given."""
    out = tempfile.mkdtemp(prefix="ppc_svi_eval_")
    shutil.rmtree(out)
    subprocess.run([PPC, LDA, "-p", f"V={V}", "-p", f"K={K}", "--infer", test, "--map", "theta=doc", "--map", "x=word",
                    "--weight", "count", "--given", f"phi={phi_csv}", "--out", out, "-q", *CPU],
                   stdout=subprocess.DEVNULL, check=True)
    s = json.load(open(os.path.join(out, "summary.json")))
    shutil.rmtree(out)
    tokens = read_bow(test)[2].sum()
    return s["elbo"][-1] / tokens


def run_gensim(train, test, workdir):
    peers.require("gensim")
    from gensim.models import LdaModel
    doc, word, count = read_bow(train)
    starts = np.flatnonzero(np.r_[True, doc[1:] != doc[:-1]])
    ends = np.r_[starts[1:], len(doc)]
    bow = [list(zip(word[s:e].tolist(), count[s:e].tolist())) for s, e in zip(starts, ends)]
    t = time.perf_counter()
    model = LdaModel(corpus=bow, num_topics=K, id2word={i: str(i) for i in range(V)}, alpha=np.full(K, 0.1),
                     eta=0.01, chunksize=2000, passes=1, update_every=1, eval_every=None, random_state=0)
    seconds = time.perf_counter() - t
    phi = os.path.join(workdir, "gensim_phi.csv")
    write_phi(phi, model.state.get_lambda())
    return seconds, heldout_bound(phi, test)


def run_sklearn(train, test, workdir):
    peers.require("sklearn")
    from scipy.sparse import csr_matrix
    from sklearn.decomposition import LatentDirichletAllocation
    doc, word, count = read_bow(train)
    X = csr_matrix((count.astype(np.float64), (doc, word)), shape=(doc.max() + 1, V))
    t = time.perf_counter()
    model = LatentDirichletAllocation(n_components=K, doc_topic_prior=0.1, topic_word_prior=0.01,
                                      learning_method="online", batch_size=2000, max_iter=1,
                                      total_samples=X.shape[0], n_jobs=1, random_state=0).fit(X)
    seconds = time.perf_counter() - t
    phi = os.path.join(workdir, "sklearn_phi.csv")
    write_phi(phi, model.components_)
    return seconds, heldout_bound(phi, test)


def run_ppc(path, extra, threads=1):
    out = tempfile.mkdtemp(prefix="ppc_svi_")
    shutil.rmtree(out)
    cmd = ["/usr/bin/time", "-f", "%M", PPC, LDA, "-p", f"V={V}", "-p", f"K={K}", "--infer", path, "--map",
           "theta=doc", "--map", "x=word", "--weight", "count", "--svi", "--batch", "2000", "--threads", str(threads),
           "--out", out, "-q", *extra, *CPU]
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit("ppc failed:\n" + proc.stderr)
    peak = int(proc.stderr.strip().splitlines()[-1]) / 1024 / 1024
    summary = json.load(open(os.path.join(out, "summary.json")))
    shutil.rmtree(out)
    return summary, peak, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train-tokens", default="50e6")
    ap.add_argument("--test-docs", type=int, default=2000)
    ap.add_argument("--small-tokens", default="5e6")
    ap.add_argument("--big-tokens", default="500e6")
    ap.add_argument("--heldout-every", type=int, default=10)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "ppc_svi"))
    ap.add_argument("--skip-peers", action="store_true", help="ppc's trace only (no gensim, no scikit-learn)")
    ap.add_argument("--skip-memory", action="store_true")
    peers.add_arguments(ap)
    args = ap.parse_args()
    print(peers.describe_host(args.cpu), flush=True)
    CPU.extend(peers.ppc_cpu_args(args.cpu))
    os.makedirs(args.workdir, exist_ok=True)
    topics = lda_memory.fitted_topics(args.workdir)
    train = corpus(args.workdir, "train", float(args.train_tokens), topics, 1)
    test = corpus(args.workdir, "test", args.test_docs * 195, topics, 2)
    print(f"LDA K={K}, alpha 0.1, eta 0.01; training corpus {train}, held-out {test}; 1 thread", flush=True)

    summary, peak, wall = run_ppc(train, ["--heldout", test, "--heldout-every", str(args.heldout_every)])
    trace = [(p["seconds"], p["bound_per_observation"]) for p in summary["svi"]["heldout"]]
    scan = summary["svi"]["scan_seconds"]
    print(f"  ppc --svi --batch 2000, one epoch ({summary['svi']['steps']} steps): {summary['time'][-1]:.1f} s of "
          f"steps (+ {scan:.1f} s to scan the file at {summary['svi']['scan_megabytes_per_second']:.0f} MB/s), "
          f"held-out bound {trace[-1][1]:.4f} nats/token, peak RSS {peak:.2f} GiB", flush=True)
    for s, b in trace:
        print(f"    {s + scan:8.1f} s  {b:.4f}")
    if not args.skip_peers:
        g_seconds, g_bound = run_gensim(train, test, args.workdir)
        print(f"  gensim LdaModel, one pass, chunksize 2000: {g_seconds:.1f} s, held-out bound {g_bound:.4f}",
              flush=True)
        s_seconds, s_bound = run_sklearn(train, test, args.workdir)
        print(f"  scikit-learn online LDA, one pass, batch 2000: {s_seconds:.1f} s, held-out bound {s_bound:.4f}",
              flush=True)
        reach = next((s + scan for s, b in trace if b >= g_bound), None)
        if reach is None:
            print(f"  ppc did not reach gensim's bound {g_bound:.4f} in one epoch ({trace[-1][1]:.4f})")
            peers.goal("ppc --svi reaches gensim's one-pass held-out bound in one epoch", False)
        else:
            print(f"  ppc reached gensim's bound after {reach:.1f} s: {g_seconds / reach:.1f}x faster than gensim, "
                  f"{s_seconds / reach:.1f}x than scikit-learn (whose one pass ends at {s_bound:.4f})")
            peers.goal("10x faster than gensim and scikit-learn to gensim's one-pass held-out bound",
                       min(g_seconds, s_seconds) / reach >= 10)
    if not args.skip_memory:
        rows = []
        for tokens in (args.small_tokens, args.big_tokens):
            path = corpus(args.workdir, "stream", float(tokens), topics, 3)
            summary, peak, wall = run_ppc(path, [])
            sv = summary["svi"]
            rows.append(peak)
            print(f"  {float(tokens) / 1e6:.0f}M tokens ({os.path.getsize(path) / 1e9:.2f} GB, {sv['data_size']} "
                  f"documents): one epoch in {wall:.0f} s ({summary['time'][-1]:.0f} s of steps, scan at "
                  f"{sv['scan_megabytes_per_second']:.0f} MB/s), peak RSS {peak:.3f} GiB", flush=True)
        print(f"  peak RSS ratio {rows[1] / rows[0]:.3f} for {float(args.big_tokens) / float(args.small_tokens):.0f}x "
              f"the tokens")
        peers.goal("peak RSS within 10% for the small and the big corpus", abs(rows[1] / rows[0] - 1) <= 0.10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
