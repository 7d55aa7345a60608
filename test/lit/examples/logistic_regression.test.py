# Reference for logistic_regression.test, independent of ppc: mean-field
# q(w) q(b) for y_i ~ Bernoulli(sigmoid(w . x_i + b)) with the
# Jaakkola-Jordan bound (Bishop, PRML section 10.6), xi_i^2 = E (w . x_i + b)^2
# after each update, iterated to its fixed point:
#   q(w): S^-1 = p0 I + 2 sum_i lam_i x_i x_i^T, mu = S sum_i (y_i - 1/2 - 2 lam_i E b) x_i
#   q(b): prec = pb + 2 sum_i lam_i,  m = sum_i (y_i - 1/2 - 2 lam_i x_i . mu) / prec
# and the bound there:
#   -KL(q(w) || p(w)) - KL(q(b) || p(b)) + sum_i [(y_i - 1/2) E e_i + log sigmoid(xi_i) - xi_i / 2].
# Compares ppc's w.csv, b.csv and last ELBO with it to 1e-8.
import csv, json, math, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from linear_algebra import inverse, logdet, matvec, dot

data, out, p0, pb = sys.argv[1], sys.argv[2], 1.0, 0.01
rows = list(csv.DictReader(open(data)))
D = 16
X = [[float(r["x%d" % k]) for k in range(D)] for r in rows]
y = [float(r["republican"]) for r in rows]
N = len(rows)


def lam(xi):
    return 0.125 - xi * xi / 96.0 if xi < 1e-4 else math.tanh(xi / 2) / (4 * xi)


mu, S, mb, vb = [0.0] * D, [[1.0 if a == c else 0.0 for c in range(D)] for a in range(D)], 0.0, 1.0


def xis():
    E = [[S[a][c] + mu[a] * mu[c] for c in range(D)] for a in range(D)]
    return [math.sqrt(dot(X[i], matvec(E, X[i])) + 2 * dot(X[i], mu) * mb + vb + mb * mb) for i in range(N)]


for it in range(5000):
    old = mu + [mb]
    lams = [lam(v) for v in xis()]
    P = [[(p0 if a == c else 0.0) + 2 * sum(lams[i] * X[i][a] * X[i][c] for i in range(N)) for c in range(D)]
         for a in range(D)]
    S = inverse(P)
    mu = matvec(S, [sum((y[i] - 0.5 - 2 * lams[i] * mb) * X[i][a] for i in range(N)) for a in range(D)])
    lams = [lam(v) for v in xis()]
    prec = pb + 2 * sum(lams)
    mb = sum(y[i] - 0.5 - 2 * lams[i] * dot(X[i], mu) for i in range(N)) / prec
    vb = 1 / prec
    if max(abs(u - v) for u, v in zip(old, mu + [mb])) < 1e-13:
        break



bound = -0.5 * (p0 * sum(S[a][a] for a in range(D)) + p0 * dot(mu, mu) - D - D * math.log(p0) - logdet(S))
bound -= 0.5 * (pb * (vb + mb * mb) - 1 - math.log(pb * vb))
for i, xi in enumerate(xis()):
    bound += (y[i] - 0.5) * (dot(X[i], mu) + mb) - math.log1p(math.exp(-xi)) - xi / 2

w = next(csv.DictReader(open(os.path.join(out, "w.csv"))))
b = next(csv.DictReader(open(os.path.join(out, "b.csv"))))
rel = lambda u, v: abs(u - v) / max(1.0, abs(v))
worst = max([rel(float(w["mean_%d" % a]), mu[a]) for a in range(D)] +
            [rel(float(w["cov_%d_%d" % (a, c)]), S[a][c]) for a in range(D) for c in range(D)] +
            [rel(float(b["mean"]), mb), rel(float(b["variance"]), vb)])
elbo = json.load(open(os.path.join(out, "summary.json")))["elbo"][-1]
assert worst < 1e-8, "posteriors differ by %g" % worst
assert abs(elbo - bound) < 1e-8 * abs(bound), (elbo, bound)
print("coordinate ascent with the Jaakkola-Jordan bound agrees: w, b and the ELBO (after %d iterations)" % (it + 1))
