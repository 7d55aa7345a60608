"""Variational Bayes for a hidden Markov model with Dirichlet priors (Beal
2003, ch. 3; MacKay 1997), written independently of ppc: q(pi) q(A) q(B)
q(z) with q(z) exact per sequence by forward-backward over the expected
log probabilities. Starting from the Dirichlet posteriors in INIT_DIR
(pi.csv, A.csv, B.csv: alpha columns), it computes q(z), then iterates
[pi, A, B from q(z); q(z) from them] as ppc's schedule does, and its ELBO,
    sum over pi, A, B of -KL(q || prior) + sum over sequences of log Z_s,
with log Z_s the forward recursion's normalizer (the identity E_q[log p(x, z
| E log theta)] + H(q(z)) = log Z at the exact q(z)). Compares the whole
ELBO trace and the final posteriors with ppc's --out directory.
Usage: vb_hmm.py DATA.csv INIT_DIR OUT_DIR ITERATIONS K V PRIOR"""
import csv, json, math, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from reference_math import digamma  # noqa: E402

data, init, out, iters, K, V, prior = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), \
    int(sys.argv[6]), float(sys.argv[7])

seqs = {}
for r in csv.DictReader(open(data)):
    seqs.setdefault(int(r["seq"]), []).append(int(r["x"]))
seqs = [seqs[s] for s in sorted(seqs)]


def elog(alpha):
    s = digamma(sum(alpha))
    return [digamma(a) - s for a in alpha]


def kl_dirichlet(a, b):  # KL(Dir(a) || Dir(b))
    sa = sum(a)
    return (math.lgamma(sa) - sum(math.lgamma(x) for x in a) - math.lgamma(sum(b)) + sum(math.lgamma(x) for x in b)
            + sum((x - y) * (digamma(x) - digamma(sa)) for x, y in zip(a, b)))


def read_alpha(name, rows):
    rs = list(csv.DictReader(open(os.path.join(init, name + ".csv"))))
    assert len(rs) == rows
    return [[float(r[k]) for k in sorted((k for k in r if k.startswith("alpha_")), key=lambda k: int(k[6:]))]
            for r in rs]


pi = read_alpha("pi", 1)[0]
A = read_alpha("A", K)
B = read_alpha("B", K)


def forward_backward(x, lp, lA, lB):
    T = len(x)
    alpha, scale = [], []
    for t in range(T):
        if t == 0:
            a = [math.exp(lp[k] + lB[k][x[0]]) for k in range(K)]
        else:
            a = [sum(alpha[t - 1][j] * math.exp(lA[j][k]) for j in range(K)) * math.exp(lB[k][x[t]]) for k in range(K)]
        c = sum(a)
        alpha.append([v / c for v in a])
        scale.append(c)
    beta = [[1.0] * K for _ in range(T)]
    for t in range(T - 1, 0, -1):
        beta[t - 1] = [sum(math.exp(lA[j][k] + lB[k][x[t]]) * beta[t][k] for k in range(K)) / scale[t] for j in range(K)]
    marg = []
    for t in range(T):
        m = [alpha[t][k] * beta[t][k] for k in range(K)]
        s = sum(m)
        marg.append([v / s for v in m])
    pairs = [[0.0] * K for _ in range(K)]
    for t in range(1, T):
        p = [[alpha[t - 1][j] * math.exp(lA[j][k] + lB[k][x[t]]) * beta[t][k] for k in range(K)] for j in range(K)]
        s = sum(map(sum, p))
        for j in range(K):
            for k in range(K):
                pairs[j][k] += p[j][k] / s
    return marg, pairs, sum(math.log(c) for c in scale)


def update_z():
    lp, lA, lB = elog(pi), [elog(r) for r in A], [elog(r) for r in B]
    return [forward_backward(x, lp, lA, lB) for x in seqs]


def elbo(zs):
    total = -kl_dirichlet(pi, [prior] * K)
    total -= sum(kl_dirichlet(r, [prior] * K) for r in A)
    total -= sum(kl_dirichlet(r, [prior] * V) for r in B)
    return total + sum(logz for _, _, logz in zs)


zs = update_z()
trace = []
for it in range(iters):
    pi = [prior + sum(m[0][k] for m, _, _ in zs) for k in range(K)]
    A = [[prior + sum(p[j][k] for _, p, _ in zs) for k in range(K)] for j in range(K)]
    B = [[prior + sum(m[t][k] for (m, _, _), x in zip(zs, seqs) for t in range(len(x)) if x[t] == v) for v in range(V)]
         for k in range(K)]
    zs = update_z()
    trace.append(elbo(zs))

got = json.load(open(os.path.join(out, "summary.json")))["elbo"]
assert len(got) == iters, (len(got), iters)
worst = max(abs(a - b) / abs(b) for a, b in zip(got, trace))
assert worst < 1e-8, "ELBO traces differ: %g relative (ppc %r, reference %r)" % (worst, got[-1], trace[-1])
print("ELBO trace agrees for %d iterations (largest relative difference %.1e)" % (iters, worst))
for name, rows in (("pi", [pi]), ("A", A), ("B", B)):
    rs = list(csv.DictReader(open(os.path.join(out, name + ".csv"))))
    for r, want in zip(rs, rows):
        for k, a in enumerate(want):
            assert abs(float(r["alpha_%d" % k]) - a) < 1e-8 * a, (name, k, r, want)
zrows = list(csv.DictReader(open(os.path.join(out, "z.csv"))))
flat = [m[t] for m, _, _ in zs for t in range(len(m))]
assert len(zrows) == len(flat)
for r, m in zip(zrows, flat):
    for k in range(K):
        assert abs(float(r["p_%d" % k]) - m[k]) < 1e-8, (r, m)
print("q(pi), q(A), q(B) and every q(z_t) agree")
