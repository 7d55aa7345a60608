"""Multinomial logistic regression under VMP with Bouchard's bound, written
independently of ppc: W_k ~ N(0, I) (k < K), e_ik = W_k . x_i, y_i ~
Categorical(softmax(e_i)); q(W_k) = N(mu_k, S_k), and per observation the
bound's alpha_i and xi_ik (Bouchard 2007):
    S_k^-1 = I + 2 sum_i lam_ik x_i x_i^T,
    mu_k   = S_k sum_i (y_ik - 1/2 + 2 lam_ik alpha_i) x_i,
    xi_ik  = sqrt(E (e_ik - alpha_i)^2),  alpha_i = argmin f_i (convex; bisection),
iterated to the fixed point, and the bound there,
    sum_k -KL(q(W_k) || p) + sum_i [E e_{i,y_i} - f_i(alpha_i)].
Compares ppc's W.csv (or w0.csv, w1.csv, ...: one file per category) and last
ELBO with it to 1e-8. With `ref`, category 0's log-odds are the constant 0 (a
reference category) and the weights are w1.csv ... w{K-1}.csv.
Usage: softmax_reference.py DATA.csv OUT_DIR K D [plate|args|ref]"""
import csv, json, math, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
from linear_algebra import inverse, logdet

data, out, K, D = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
form = sys.argv[5] if len(sys.argv) > 5 else "plate"
learned = range(1, K) if form == "ref" else range(K)  # categories with weights
rows = list(csv.DictReader(open(data)))
X = [[float(r["x%d" % d]) for d in range(D)] for r in rows]
Y = [int(r["y"]) for r in rows]
N = len(rows)


def lam(xi):
    return 0.125 - xi * xi / 96.0 if xi < 1e-4 else math.tanh(xi / 2) / (4 * xi)




def moments(i, mu, S):  # E e_ik, Var e_ik (0, 0 for a reference category)
    x = X[i]
    return [(sum(m * v for m, v in zip(mu[k], x)),
             sum(x[a] * S[k][a][b] * x[b] for a in range(D) for b in range(D))) if k in learned else (0.0, 0.0)
            for k in range(K)]


def bound(mv):
    def phi(m, v, a):
        return math.sqrt(v + (m - a) ** 2)

    def slope(a):
        return 1 - K / 2 - 2 * sum(lam(phi(m, v, a)) * (m - a) for m, v in mv)

    lo = min(m for m, _ in mv) - 1
    hi = max(m for m, _ in mv) + 1
    while slope(lo) > 0:
        lo -= 10
    while slope(hi) < 0:
        hi += 10
    for _ in range(100):
        mid = (lo + hi) / 2
        if slope(mid) < 0:
            lo = mid
        else:
            hi = mid
    a = (lo + hi) / 2
    f = a + sum((m - a) / 2 + phi(m, v, a) / 2 + math.log1p(math.exp(-phi(m, v, a))) for m, v in mv)
    return a, [phi(m, v, a) for m, v in mv], f


mu = [[0.0] * D for _ in range(K)]
S = [[[1.0 if a == b else 0.0 for b in range(D)] for a in range(D)] for _ in range(K)]
for it in range(3000):
    old = [v for m in mu for v in m]
    for k in learned:
        local = [bound(moments(i, mu, S)) for i in range(N)]
        P = [[(1.0 if a == b else 0.0) + 2 * sum(lam(local[i][1][k]) * X[i][a] * X[i][b] for i in range(N))
              for b in range(D)] for a in range(D)]
        S[k] = inverse(P)
        h = [sum(((Y[i] == k) - 0.5 + 2 * lam(local[i][1][k]) * local[i][0]) * X[i][a] for i in range(N))
             for a in range(D)]
        mu[k] = [sum(S[k][a][b] * h[b] for b in range(D)) for a in range(D)]
    if max(abs(u - v) for u, v in zip(old, [v for m in mu for v in m])) < 1e-13:
        break

elbo = 0.0
for k in learned:
    elbo -= 0.5 * (sum(S[k][a][a] for a in range(D)) + sum(m * m for m in mu[k]) - D - logdet(S[k]))
for i in range(N):
    mv = moments(i, mu, S)
    elbo += mv[Y[i]][0] - bound(mv)[2]

if form == "plate":
    Wrows = list(csv.DictReader(open(os.path.join(out, "W.csv"))))
else:
    Wrows = {k: next(csv.DictReader(open(os.path.join(out, "w%d.csv" % k)))) for k in learned}
worst = 0.0
for k in learned:
    for a in range(D):
        worst = max(worst, abs(float(Wrows[k]["mean_%d" % a]) - mu[k][a]))
        for b in range(D):
            worst = max(worst, abs(float(Wrows[k]["cov_%d_%d" % (a, b)]) - S[k][a][b]))
got = json.load(open(os.path.join(out, "summary.json")))["elbo"][-1]
print("fixed point after %d sweeps" % (it + 1))
print("q(W) %s" % ("agrees" if worst < 1e-8 else "DIFFERS by %g" % worst))
print("elbo %s" % ("agrees" if abs(got - elbo) < 1e-8 * abs(elbo) else "DIFFERS: %r vs %r" % (got, elbo)))
