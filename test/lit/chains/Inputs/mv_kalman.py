"""The Kalman filter and Rauch-Tung-Striebel smoother of a linear dynamical
system x_0 ~ N(m0 1, I / p0), x_t = A x_{t-1} + N(0, I / q),
y_t = x_t + N(0, I / r), written independently of ppc in its covariance form
(Durbin & Koopman, ch. 4; plain Python, Gauss-Jordan inverses), with the log
likelihood by the prediction error decomposition. With every parameter
known, q(x) is exact and the ELBO is log p(y): compares ppc's --out
directory (VAR.csv: mean_i, cov_i_j; the last ELBO) with both, to 1e-8
relative.
Usage: mv_kalman.py DATA.csv A.csv OUT_DIR VAR m0 p0 q r"""
import csv, json, math, os, sys

data, a_file, out, var = sys.argv[1:5]
m0, p0, q, r = map(float, sys.argv[5:9])
A = [[float(row["A%d" % j]) for j in range(len(row))] for row in csv.DictReader(open(a_file))]
D = len(A)
Y = [[float(row["y%d" % j]) for j in range(D)] for row in csv.DictReader(open(data))]
T = len(Y)


def mul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def tr(a):
    return [list(c) for c in zip(*a)]


def add(a, b, s=1.0):
    return [[x + s * y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


def eye(c=1.0):
    return [[c if i == j else 0.0 for j in range(D)] for i in range(D)]


def inverse_logdet(a):
    """Gauss-Jordan with partial pivoting: (a^-1, log|det a|)."""
    n = len(a)
    m = [row[:] + [1.0 if i == j else 0.0 for j in range(n)] for i, row in enumerate(a)]
    logdet = 0.0
    for c in range(n):
        p = max(range(c, n), key=lambda i: abs(m[i][c]))
        m[c], m[p] = m[p], m[c]
        piv = m[c][c]
        logdet += math.log(abs(piv))
        m[c] = [x / piv for x in m[c]]
        for i in range(n):
            if i != c and m[i][c] != 0.0:
                f = m[i][c]
                m[i] = [x - f * y for x, y in zip(m[i], m[c])]
    return [row[n:] for row in m], logdet


def col(v):
    return [[x] for x in v]


mp, Pp, mf, Pf, loglik = [], [], [], [], 0.0
for t in range(T):
    if t == 0:
        m, P = col([m0] * D), eye(1 / p0)
    else:
        m, P = mul(A, mf[-1]), add(mul(mul(A, Pf[-1]), tr(A)), eye(1 / q))
    mp.append(m)
    Pp.append(P)
    F = add(P, eye(1 / r))
    Finv, logdetF = inverse_logdet(F)
    v = add(col(Y[t]), m, -1.0)
    loglik += -0.5 * (D * math.log(2 * math.pi) + logdetF + mul(mul(tr(v), Finv), v)[0][0])
    K = mul(P, Finv)
    mf.append(add(m, mul(K, v)))
    Pf.append(add(P, mul(K, P), -1.0))
ms, Ps = mf[:], Pf[:]
for t in range(T - 2, -1, -1):
    J = mul(mul(Pf[t], tr(A)), inverse_logdet(Pp[t + 1])[0])
    ms[t] = add(mf[t], mul(J, add(ms[t + 1], mp[t + 1], -1.0)))
    Ps[t] = add(Pf[t], mul(mul(J, add(Ps[t + 1], Pp[t + 1], -1.0)), tr(J)))
got = list(csv.DictReader(open(os.path.join(out, var + ".csv"))))
assert len(got) == T, (len(got), T)
worst = 0.0
for row, m, P in zip(got, ms, Ps):
    scale_m = max(1.0, max(abs(x[0]) for x in m))
    scale_P = max(abs(x) for r_ in P for x in r_)
    for i in range(D):
        worst = max(worst, abs(float(row["mean_%d" % i]) - m[i][0]) / scale_m)
        for j in range(D):
            worst = max(worst, abs(float(row["cov_%d_%d" % (i, j)]) - P[i][j]) / scale_P)
assert worst < 1e-8, "smoothed posteriors differ by %g" % worst
print("smoothed means and covariances agree (largest relative difference %.1e)" % worst)
elbo = json.load(open(os.path.join(out, "summary.json")))["elbo"][-1]
assert abs(elbo - loglik) < 1e-8 * abs(loglik), (elbo, loglik)
print("ELBO equals the log likelihood %.10g" % loglik)
