# Coordinate ascent for pumps (alpha fixed): q(rate_i) = Gamma(alpha + x_i,
# E beta + t_i), q(beta) = Gamma(a + n alpha, b + sum E rate_i), iterated to
# its fixed point, against ppc's --out files.
import csv, sys

alpha, a, b = 0.7, 0.1, 1.0
rows = list(csv.DictReader(open(sys.argv[1])))
t = [float(r["t"]) for r in rows]
x = [float(r["x"]) for r in rows]
n = len(rows)
ebeta = a / b
for _ in range(10000):
    rates = [(alpha + x[i], ebeta + t[i]) for i in range(n)]
    beta = (a + n * alpha, b + sum(s / r for s, r in rates))
    ebeta = beta[0] / beta[1]

def close(u, v):
    return abs(u - v) <= 1e-9 * max(1.0, abs(v))

out = sys.argv[2]
qb = next(csv.DictReader(open(out + "/beta.csv")))
assert close(float(qb["shape"]), beta[0]) and close(float(qb["rate"]), beta[1]), (qb, beta)
print("beta agrees")
qr = list(csv.DictReader(open(out + "/rate.csv")))
assert len(qr) == n
for i in range(n):
    assert close(float(qr[i]["shape"]), rates[i][0]) and close(float(qr[i]["rate"]), rates[i][1]), (i, qr[i], rates[i])
print("rate agrees for", n, "pumps")
# BUGS Examples Vol. 1, "Pumps": posterior means of theta.
winbugs = [0.05983, 0.1015, 0.08915, 0.1163, 0.6032, 0.6120, 0.9017, 0.9017, 1.584, 1.993]
for i in range(n):
    mean = float(qr[i]["shape"]) / float(qr[i]["rate"])
    assert abs(mean - winbugs[i]) <= 0.05 * winbugs[i], (i, mean, winbugs[i])
print("WinBUGS means agree")
