"""The Jaakkola-Jordan fixed point of Bayesian logistic regression, written
independently of ppc (Bishop, PRML section 10.6): w ~ N(0, p0 I), y_i ~
Bernoulli(sigmoid(w . x_i)), q(w) = N(mu, S) and one xi_i per observation,

    S^-1 = p0 I + 2 sum_i lambda(xi_i) x_i x_i^T,
    mu   = S sum_i (y_i - 1/2) x_i,
    xi_i^2 = x_i^T (S + mu mu^T) x_i,       lambda(xi) = tanh(xi / 2) / (4 xi),

iterated to its fixed point, and the bound there (Bishop (10.164)):

    L = -KL(q(w) || p(w)) + sum_i [(y_i - 1/2) mu . x_i + log sigmoid(xi_i) - xi_i / 2].

Usage: jj_reference.py DATA.csv OUT_DIR P0 [COLUMNS...]: compares ppc's w.csv
and last ELBO with the fixed point and prints the largest differences."""
import csv, json, math, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
from linear_algebra import inverse, logdet

data, out, p0 = sys.argv[1], sys.argv[2], float(sys.argv[3])
rows = list(csv.DictReader(open(data)))
cols = sys.argv[4:] or sorted((k for k in rows[0] if k.startswith("x")), key=lambda k: int(k[1:]))
X = [[float(r[c]) for c in cols] for r in rows]
y = [float(r["y"]) for r in rows]
D, N = len(cols), len(rows)




def lam(xi):
    return 0.125 - xi * xi / 96.0 if xi < 1e-4 else math.tanh(xi / 2) / (4 * xi)


xi = [1.0] * N
for it in range(2000):
    P = [[(p0 if a == b else 0.0) + 2 * sum(lam(xi[i]) * X[i][a] * X[i][b] for i in range(N)) for b in range(D)]
         for a in range(D)]
    S = inverse(P)
    h = [sum((y[i] - 0.5) * X[i][a] for i in range(N)) for a in range(D)]
    mu = [sum(S[a][b] * h[b] for b in range(D)) for a in range(D)]
    E = [[S[a][b] + mu[a] * mu[b] for b in range(D)] for a in range(D)]
    new = [math.sqrt(sum(X[i][a] * E[a][b] * X[i][b] for a in range(D) for b in range(D))) for i in range(N)]
    change = max(abs(u - v) for u, v in zip(new, xi))
    xi = new
    if change < 1e-15:
        break

kl = 0.5 * (p0 * sum(S[a][a] for a in range(D)) + p0 * sum(m * m for m in mu) - D - D * math.log(p0) - logdet(S))
bound = -kl
for i in range(N):
    m = sum(mu[a] * X[i][a] for a in range(D))
    bound += (y[i] - 0.5) * m - math.log1p(math.exp(-xi[i])) - xi[i] / 2

w = next(csv.DictReader(open(os.path.join(out, "w.csv"))))
dmean = max(abs(float(w["mean_%d" % a]) - mu[a]) for a in range(D))
dcov = max(abs(float(w["cov_%d_%d" % (a, b)]) - S[a][b]) for a in range(D) for b in range(D))
elbo = json.load(open(os.path.join(out, "summary.json")))["elbo"][-1]
print("fixed point after %d iterations" % (it + 1))
print("mean %s" % ("agrees" if dmean < 1e-8 else "DIFFERS by %g" % dmean))
print("covariance %s" % ("agrees" if dcov < 1e-8 else "DIFFERS by %g" % dcov))
print("elbo %s" % ("agrees" if abs(elbo - bound) < 1e-8 * abs(bound) else "DIFFERS: %r vs %r" % (elbo, bound)))
