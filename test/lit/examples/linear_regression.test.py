# References for linear_regression.test, independent of ppc:
#   exact   known noise precision, MvGaussian weights: the posterior is exact,
#           Sigma = (P0 + tau X^T X)^-1, mu = tau Sigma X^T y
#   cavi    unknown precision (Gamma), an intercept: mean-field coordinate
#           ascent q(w) q(b) q(tau), iterated to its fixed point
# Each compares ppc's --out files with the reference to 1e-8 relative.
import csv, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from linear_algebra import inverse, matvec, dot

mode, data, out = sys.argv[1], sys.argv[2], sys.argv[3]
rows = list(csv.DictReader(open(data)))
D = sum(1 for k in rows[0] if k.startswith("x"))
X = [[float(r["x%d" % j]) for j in range(D)] for r in rows]
y = [float(r["medv"]) for r in rows]
N = len(rows)
XtX = [[sum(X[i][a] * X[i][b] for i in range(N)) for b in range(D)] for a in range(D)]

def close(u, v, tol=1e-8):
    assert abs(u - v) <= tol * max(1.0, abs(v)), (u, v)

def check_w(mu, S):
    q = next(csv.DictReader(open(out + "/w.csv")))
    for a in range(D):
        close(float(q["mean_%d" % a]), mu[a])
        for b in range(D):
            close(float(q["cov_%d_%d" % (a, b)]), S[a][b])

if mode == "exact":
    tau, p0 = 0.05, 0.01
    S = inverse([[p0 * (a == b) + tau * XtX[a][b] for b in range(D)] for a in range(D)])
    mu = matvec(S, [tau * sum(X[i][a] * y[i] for i in range(N)) for a in range(D)])
    check_w(mu, S)
    print("exact posterior agrees:", D, "weights")
else:
    p0, pb, a0, b0 = 0.01, 0.0001, 1.0, 1.0
    Et, mb, vb, mw = 1.0, 0.0, 1.0 / pb, [0.0] * D
    S = [[0.0] * D for _ in range(D)]
    for _ in range(300):
        prec = pb + Et * N
        mb = Et * sum(y[i] - dot(X[i], mw) for i in range(N)) / prec
        vb = 1.0 / prec
        S = inverse([[p0 * (a == b) + Et * XtX[a][b] for b in range(D)] for a in range(D)])
        mw = matvec(S, [Et * sum(X[i][a] * (y[i] - mb) for i in range(N)) for a in range(D)])
        ess = sum((y[i] - dot(X[i], mw) - mb) ** 2 + dot(X[i], matvec(S, X[i])) for i in range(N)) + N * vb
        shape, rate = a0 + N / 2, b0 + ess / 2
        Et = shape / rate
    check_w(mw, S)
    qb = next(csv.DictReader(open(out + "/b.csv")))
    close(float(qb["mean"]), mb)
    close(float(qb["variance"]), vb)
    qt = next(csv.DictReader(open(out + "/tau.csv")))
    close(float(qt["shape"]), shape)
    close(float(qt["rate"]), rate)
    print("coordinate ascent agrees: w, b, tau")
