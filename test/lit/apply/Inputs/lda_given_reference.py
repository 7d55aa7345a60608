# lda_given_reference.py HELD PHI ALPHA SUMMARY APPLY: LDA's bound on the
# held-out documents HELD with the topics held at the posterior in PHI (the
# CSV ppc wrote), by coordinate ascent written here from Blei, Ng & Jordan
# (2003), with the topics' expected log probabilities E log phi constant:
#   q(z_n) ∝ exp(E log theta_k + E log phi_{k,w_n}),  gamma = alpha + sum_n c_n q(z_n)
# and the bound E log p(theta) + sum_n c_n (E log p(z_n|theta) + E log p(w_n|z_n)
# - E log q(z_n)) - E log q(theta), summed over documents. Compares it with
# the held-out bound in SUMMARY (the trained run) and with the --given run's
# ELBO and theta in APPLY (relative 1e-9).
import csv, json, math, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from reference_math import digamma  # noqa: E402

held, phi_path, alpha, summary, apply_dir = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]


rows = list(csv.DictReader(open(phi_path)))
K = len(rows)
V = sum(1 for k in rows[0] if k.startswith("alpha_"))
elog_phi = []
for r in rows:
    a = [float(r["alpha_%d" % v]) for v in range(V)]
    s = digamma(sum(a))
    elog_phi.append([digamma(x) - s for x in a])

docs = {}
for r in csv.DictReader(open(held)):
    docs.setdefault(int(r["doc"]), []).append((int(r["word"]), float(r["count"])))

total, tokens, thetas = 0.0, 0.0, {}
for d in sorted(docs):
    words = docs[d]
    tokens += sum(c for _, c in words)
    gamma = [alpha + sum(c for _, c in words) / K] * K
    for it in range(100000):
        s = digamma(sum(gamma))
        elog_theta = [digamma(g) - s for g in gamma]
        new = [alpha] * K
        qs = []
        for w, c in words:
            logits = [elog_theta[k] + elog_phi[k][w] for k in range(K)]
            m = max(logits)
            e = [math.exp(x - m) for x in logits]
            z = sum(e)
            q = [x / z for x in e]
            qs.append(q)
            for k in range(K):
                new[k] += c * q[k]
        change = max(abs(x - y) for x, y in zip(new, gamma))
        gamma = new
        if change < 1e-13:
            break
    s = digamma(sum(gamma))
    elog_theta = [digamma(g) - s for g in gamma]
    qs = []
    for w, c in words:
        logits = [elog_theta[k] + elog_phi[k][w] for k in range(K)]
        m = max(logits)
        e = [math.exp(x - m) for x in logits]
        z = sum(e)
        qs.append([x / z for x in e])
    bound = math.lgamma(K * alpha) - K * math.lgamma(alpha) + sum((alpha - 1) * x for x in elog_theta)
    bound -= math.lgamma(sum(gamma)) - sum(math.lgamma(g) for g in gamma) + sum((g - 1) * x for g, x in zip(gamma, elog_theta))
    for (w, c), q in zip(words, qs):
        for k in range(K):
            if q[k] > 0:
                bound += c * q[k] * (elog_theta[k] + elog_phi[k][w] - math.log(q[k]))
    total += bound
    thetas[d] = gamma

rel = lambda x, y: abs(x - y) / max(abs(x), abs(y))
h = json.load(open(summary))["heldout"]
print("held-out observations: %d" % h["observations"])
assert h["observations"] == tokens
assert abs(h["bound_per_observation"] * tokens - h["elbo"]) <= 1e-9 * abs(h["elbo"])
assert rel(h["elbo"], total) <= 1e-9, (h["elbo"], total)
print("reference bound equals the held-out bound (relative %.2g)" % rel(h["elbo"], total))
elbo = json.load(open(apply_dir + "/summary.json"))["elbo"][-1]
assert rel(elbo, total) <= 1e-9, (elbo, total)
print("the --given run's ELBO equals it (relative %.2g)" % rel(elbo, total))
worst = 0.0
theta_rows = list(csv.DictReader(open(apply_dir + "/theta.csv")))
assert len(theta_rows) == len(thetas)
for r in theta_rows:
    d = int(r["doc"])
    for k in range(K):
        worst = max(worst, rel(float(r["alpha_%d" % k]), thetas[d][k]))
assert worst <= 1e-9, worst
print("theta of %d documents equal the reference's (largest relative difference %.2g)" % (len(thetas), worst))
