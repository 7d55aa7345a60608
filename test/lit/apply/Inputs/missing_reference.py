# missing_reference.py CASE DIR [MORE]: checks a run with missing values
# against the conjugate answers, written here from the data the test made.
import csv, json, math, os, sys

case, out = sys.argv[1], sys.argv[2]
rows = lambda name: list(csv.DictReader(open(os.path.join(out, name + ".csv"))))
rel = lambda x, y: abs(x - y) / max(abs(x), abs(y), 1e-300)


def close(x, y, tol=1e-12):
    assert rel(x, y) <= tol, (x, y)


if case == "coin":
    # Beta(2, 3) prior, observed 1, 0, 1, 1: Beta(5, 4).
    p = rows("p")[0]
    close(float(p["alpha"]), 5.0)
    close(float(p["beta"]), 4.0)
    elbo = json.load(open(os.path.join(out, "summary.json")))["elbo"][-1]
    observed = json.load(open(os.path.join(sys.argv[3], "summary.json")))["elbo"][-1]
    close(elbo, observed)
    # The log evidence of the observed tosses: B(5, 4) / B(2, 3).
    lbeta = lambda a, b: math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    close(elbo, lbeta(5, 4) - lbeta(2, 3), 1e-9)
    pred = rows("x.predicted")
    assert [r["x"] for r in pred] == ["2", "4"], pred
    for r in pred:
        close(float(r["p"]), 5 / 9)
    print("Beta(5, 4): ELBO equal, P(x = 1) = 5/9 for rows 2, 4")
elif case == "counts":
    # Gamma(2, 0.5) prior, observed 3, 5, 0: Gamma(10, 3.5).
    lam = rows("lambda")[0]
    close(float(lam["shape"]), 10.0)
    close(float(lam["rate"]), 3.5)
    pred = rows("x.predicted")
    assert [r["x"] for r in pred] == ["1", "4"], pred
    for r in pred:
        close(float(r["mean"]), 10 / 3.5)
    print("Gamma(10, 3.5): E x = %r for rows 1, 4" % (10 / 3.5))
elif case == "gaussian":
    # N(1, precision 0.5) prior, tau = 4, observed 1.5, 0.7, 2.0.
    data, m0, t0, tau = [1.5, 0.7, 2.0], 1.0, 0.5, 4.0
    prec = t0 + tau * len(data)
    mean = (t0 * m0 + tau * sum(data)) / prec
    mu = rows("mu")[0]
    close(float(mu["mean"]), mean)
    close(float(mu["variance"]), 1 / prec)
    pred = rows("y.predicted")
    assert [r["y"] for r in pred] == ["1"], pred
    close(float(pred[0]["mean"]), mean)
    close(float(pred[0]["variance"]), 1 / prec + 1 / tau)
    print("N(%.4g, %.4g): predictive mean %.4g, variance %.4g for row 1" % (mean, 1 / prec, mean, 1 / prec + 1 / tau))
elif case == "mixture":
    truth = list(csv.DictReader(open(sys.argv[3])))
    cluster = rows("cluster")
    means, precs = rows("eruptionMean"), rows("eruptionPrec")
    pred = rows("eruptions.predicted")
    worst = 0.0
    for r in pred:
        i = int(r["cluster"])
        q = [float(cluster[i]["p_%d" % k]) for k in range(len(means))]
        m = [float(x["mean"]) for x in means]
        v = [float(x["variance"]) + float(p["rate"]) / (float(p["shape"]) - 1) for x, p in zip(means, precs)]
        mean = sum(qk * mk for qk, mk in zip(q, m))
        second = sum(qk * (vk + mk * mk) for qk, vk, mk in zip(q, v, m))
        worst = max(worst, rel(float(r["mean"]), mean), rel(float(r["variance"]), second - mean * mean))
        # A long wait (over 70 minutes) predicts the long eruptions' cluster.
        long = max(m)
        if float(truth[i]["waiting"]) > 70:
            assert abs(float(r["mean"]) - long) < 0.1, (i, r)
    assert len(pred) == 5 and worst <= 1e-9, (len(pred), worst)
    print("%d missing eruptions: mixtures of the clusters' predictives (largest relative difference %.2g)" %
          (len(pred), worst))
    print("the rows of long waits predict long eruptions")
