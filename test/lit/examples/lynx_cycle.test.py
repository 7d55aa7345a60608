"""Checks examples/lynx_cycle.ppl's posteriors (lynx_cycle.test).
Usage: lynx_cycle.test.py DATA.csv OUT_SEED1 OUT_SEED2"""
import cmath, csv, json, math, sys

data, out1, out2 = sys.argv[1:4]
y = [float(r["log10_count"]) for r in csv.DictReader(open(data))]

# The reference: y_t = a0 + a1 y_{t-1} + a2 y_{t-2} by least squares (normal
# equations, Gauss-Jordan), whose characteristic roots give the cycle.
rows = [(1.0, y[t - 1], y[t - 2]) for t in range(2, len(y))]
target = y[2:]
G = [[sum(r[i] * r[j] for r in rows) for j in range(3)] + [sum(r[i] * v for r, v in zip(rows, target))] for i in range(3)]
for c in range(3):
    p = max(range(c, 3), key=lambda i: abs(G[i][c]))
    G[c], G[p] = G[p], G[c]
    G[c] = [v / G[c][c] for v in G[c]]
    for i in range(3):
        if i != c:
            G[i] = [a - G[i][c] * b for a, b in zip(G[i], G[c])]
a1, a2 = G[1][3], G[2][3]
root = (a1 + cmath.sqrt(a1 * a1 + 4 * a2)) / 2  # z^2 = a1 z + a2
ar_period = 2 * math.pi / abs(cmath.phase(root))


def eigen(out):
    A = [[float(r["mean_0"]), float(r["mean_1"])] for r in csv.DictReader(open(out + "/A.csv"))]
    tr, det = A[0][0] + A[1][1], A[0][0] * A[1][1] - A[0][1] * A[1][0]
    return (tr + cmath.sqrt(tr * tr - 4 * det)) / 2


ev = eigen(out1)
assert ev.imag != 0, "real eigenvalues: no cycle %r" % ev
period = 2 * math.pi / abs(cmath.phase(ev))
assert abs(period - ar_period) < 0.1 * ar_period, (period, ar_period)
assert 0.5 < abs(ev) < 1.0, abs(ev)
print("a damped cycle: period %.2f years (AR(2): %.2f), modulus %.3f" % (period, ar_period, abs(ev)))
e1, e2 = (json.load(open(o + "/summary.json"))["elbo"][-1] for o in (out1, out2))
assert abs(e1 - e2) < 1e-6 * abs(e1), (e1, e2)
print("same optimum from both seeds")
