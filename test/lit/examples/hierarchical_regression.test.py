# Mean-field coordinate ascent for examples/hierarchical_regression.ppl,
# written independently of ppc: q(mu0) q(alpha_s) q(beta) q(tau), iterated
# to its fixed point, against ppc's --out files (1e-8 relative).
import csv, sys

rows = list(csv.DictReader(open(sys.argv[1])))
out = sys.argv[2]
S = 3
s = [int(r["species"]) for r in rows]
x = [float(r["sepal_length"]) for r in rows]
y = [float(r["petal_length"]) for r in rows]
N = len(rows)
n = [s.count(k) for k in range(S)]
m0, v0 = 0.0, 100.0
ma, va = [0.0] * S, [1.0] * S
mb, vb = 0.0, 100.0
Et, shape, rate = 1.0, 1.0, 1.0
for _ in range(5000):
    p = 0.01 + S * 1.0
    m0, v0 = sum(ma) / p, 1.0 / p
    for k in range(S):
        p = 1.0 + Et * n[k]
        ma[k] = (m0 + Et * sum(y[i] - mb * x[i] for i in range(N) if s[i] == k)) / p
        va[k] = 1.0 / p
    p = 0.01 + Et * sum(v * v for v in x)
    mb, vb = Et * sum(x[i] * (y[i] - ma[s[i]]) for i in range(N)) / p, 1.0 / p
    ess = sum((y[i] - ma[s[i]] - mb * x[i]) ** 2 + va[s[i]] + x[i] ** 2 * vb for i in range(N))
    shape, rate = 1.0 + N / 2, 1.0 + ess / 2
    Et = shape / rate

def close(u, v):
    assert abs(u - v) <= 1e-8 * max(1.0, abs(v)), (u, v)

def one(name):
    return next(csv.DictReader(open(out + "/" + name + ".csv")))

close(float(one("mu0")["mean"]), m0)
close(float(one("mu0")["variance"]), v0)
alpha = list(csv.DictReader(open(out + "/alpha.csv")))
for k in range(S):
    close(float(alpha[k]["mean"]), ma[k])
    close(float(alpha[k]["variance"]), va[k])
close(float(one("beta")["mean"]), mb)
close(float(one("beta")["variance"]), vb)
close(float(one("tau")["shape"]), shape)
close(float(one("tau")["rate"]), rate)
print("coordinate ascent agrees: mu0, alpha (%d species), beta, tau" % S)
