"""References for test/lit/apply/one-pass.test, computed here from the files.

  one_pass_reference.py mixture DATA.csv GIVEN_DIR OUT_DIR
      Old Faithful's mixture (examples/gaussian_mixture.ppl) with every
      global held at GIVEN_DIR's posteriors: q(cluster_n) is the softmax over
      k of E log pi_k + E log N(eruptions_n | mu_k, tau_k) + E log N(waiting_n
      | nu_k, rho_k), the coordinate optimum, which no later iteration can
      move. Compares OUT_DIR/cluster.csv with it.
  one_pass_reference.py poisson DATA.csv OUT_DIR SHAPE RATE
      examples/poisson_gamma.ppl: lambda_d's posterior is exactly
      Gamma(shape + sum_n x_nd, rate + N). Compares OUT_DIR/lambda.csv.
"""
import csv
import math
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from reference_math import digamma  # noqa: E402


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def expected_log_normal(x, mean, var, shape, rate):
    """E log N(x | mu, tau) for mu ~ N(mean, var), tau ~ Gamma(shape, rate)."""
    e_log_tau = digamma(shape) - math.log(rate)
    e_tau = shape / rate
    return 0.5 * e_log_tau - 0.5 * math.log(2 * math.pi) - 0.5 * e_tau * ((x - mean) ** 2 + var)


def mixture(data, given, out):
    w = rows(f"{given}/weights.csv")[0]
    K = sum(1 for c in w if c.startswith("alpha_"))
    alpha = [float(w[f"alpha_{k}"]) for k in range(K)]
    e_log_pi = [digamma(a) - digamma(sum(alpha)) for a in alpha]
    params = {name: rows(f"{given}/{name}.csv") for name in
              ("eruptionMean", "eruptionPrec", "waitingMean", "waitingPrec")}
    got = rows(f"{out}/cluster.csv")
    worst = 0.0
    for n, row in enumerate(rows(data)):
        logits = []
        for k in range(K):
            s = e_log_pi[k]
            for x, m, p in ((float(row["eruptions"]), "eruptionMean", "eruptionPrec"),
                            (float(row["waiting"]), "waitingMean", "waitingPrec")):
                mk, pk = params[m][k], params[p][k]
                s += expected_log_normal(x, float(mk["mean"]), float(mk["variance"]),
                                         float(pk["shape"]), float(pk["rate"]))
            logits.append(s)
        top = max(logits)
        z = sum(math.exp(l - top) for l in logits)
        for k in range(K):
            worst = max(worst, abs(math.exp(logits[k] - top) / z - float(got[n][f"p_{k}"])))
    print(f"mixture: {len(got)} responsibilities equal the coordinate optimum "
          f"(largest difference {worst:.1e})" if worst < 1e-9 else f"mixture: differ by {worst:.3g}")


def poisson(data, out, shape, rate):
    table = rows(data)
    got = rows(f"{out}/lambda.csv")
    worst = 0.0
    for d, g in enumerate(got):
        total = sum(float(r[f"p{d}"]) for r in table)
        a, b = shape + total, rate + len(table)
        worst = max(worst, abs(float(g["shape"]) - a) / a, abs(float(g["rate"]) - b) / b)
    print(f"poisson: {len(got)} rates exact (largest relative difference {worst:.1e})"
          if worst < 1e-12 else f"poisson: differ by {worst:.3g}")


if sys.argv[1] == "mixture":
    mixture(*sys.argv[2:5])
else:
    poisson(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
