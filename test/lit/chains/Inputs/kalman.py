"""The Kalman filter and Rauch-Tung-Striebel smoother of the local level /
AR(1) model x_0 ~ N(m0, 1/p0), x_t = a x_{t-1} + N(0, 1/tau), y_t = x_t +
N(0, 1/r), written independently of ppc in its covariance form (Durbin &
Koopman, ch. 2), with the log likelihood by the prediction error
decomposition. With every parameter known, q(x) is exact and the ELBO is
log p(y): compares ppc's --out directory (x.csv: mean, variance; the last
ELBO) with both, to 1e-8 relative.
Usage: kalman.py DATA.csv COLUMN OUT_DIR VAR m0 p0 a tau r"""
import csv, json, math, os, sys

data, col, out, var = sys.argv[1:5]
m0, p0, a, tau, r = map(float, sys.argv[5:10])
y = [float(row[col]) for row in csv.DictReader(open(data))]
T = len(y)
# Filter: predicted (mp, Pp), filtered (mf, Pf); log likelihood.
mp, Pp, mf, Pf, loglik = [], [], [], [], 0.0
for t in range(T):
    if t == 0:
        m, P = m0, 1 / p0
    else:
        m, P = a * mf[-1], a * a * Pf[-1] + 1 / tau
    mp.append(m)
    Pp.append(P)
    F = P + 1 / r  # the prediction error's variance
    v = y[t] - m
    loglik += -0.5 * (math.log(2 * math.pi * F) + v * v / F)
    K = P / F
    mf.append(m + K * v)
    Pf.append(P * (1 - K))
# RTS smoother.
ms, Ps = mf[:], Pf[:]
for t in range(T - 2, -1, -1):
    J = Pf[t] * a / Pp[t + 1]
    ms[t] = mf[t] + J * (ms[t + 1] - mp[t + 1])
    Ps[t] = Pf[t] + J * J * (Ps[t + 1] - Pp[t + 1])
rows = list(csv.DictReader(open(os.path.join(out, var + ".csv"))))
assert len(rows) == T
worst = 0.0
for row, m, P in zip(rows, ms, Ps):
    worst = max(worst, abs(float(row["mean"]) - m) / max(1.0, abs(m)), abs(float(row["variance"]) - P) / P)
assert worst < 1e-8, "smoothed posteriors differ by %g" % worst
print("smoothed means and variances agree (largest relative difference %.1e)" % worst)
elbo = json.load(open(os.path.join(out, "summary.json")))["elbo"][-1]
assert abs(elbo - loglik) < 1e-8 * abs(loglik), (elbo, loglik)
print("ELBO equals the log likelihood %.10g" % loglik)
