"""Compares two --out directories of ppc (A B TOLERANCE [subset]): every posterior CSV has the same
header and shape, and every value agrees to a relative tolerance; the ELBO
traces in summary.json agree too. Prints the largest difference; exits 1
(naming the file, row and column) when a value is off."""
import csv
import json
import os
import sys

def main():
    a, b, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    # "subset": b may hold more posteriors than a (a stochastic run writes
    # only the globals).
    subset = len(sys.argv) > 4 and sys.argv[4] == "subset"
    worst = 0.0
    files = sorted(f for f in os.listdir(a) if f.endswith(".csv"))
    others = sorted(f for f in os.listdir(b) if f.endswith(".csv"))
    if (not set(files) <= set(others) if subset else files != others) or not files:
        print("different posterior files:", files, sorted(os.listdir(b)))
        return 1
    def rel(u, v):
        return abs(u - v) / max(abs(u), abs(v), 1e-300)
    for f in files:
        ra = list(csv.reader(open(os.path.join(a, f))))
        rb = list(csv.reader(open(os.path.join(b, f))))
        if ra[0] != rb[0] or len(ra) != len(rb):
            print(f"{f}: different header or row count ({len(ra)} and {len(rb)} lines)")
            return 1
        for i, (x, y) in enumerate(zip(ra[1:], rb[1:])):
            for j, (u, v) in enumerate(zip(x, y)):
                d = rel(float(u), float(v))
                worst = max(worst, d)
                if d > tol:
                    print(f"{f}: row {i}, column {ra[0][j]}: {u} and {v} differ by {d:.3g} relative")
                    return 1
    sa = json.load(open(os.path.join(a, "summary.json")))
    sb = json.load(open(os.path.join(b, "summary.json")))
    if len(sa["elbo"]) != len(sb["elbo"]):
        print(f"ELBO traces of {len(sa['elbo'])} and {len(sb['elbo'])} iterations")
        return 1
    for i, (u, v) in enumerate(zip(sa["elbo"], sb["elbo"])):
        if rel(u, v) > tol:
            print(f"ELBO of iteration {i + 1}: {u} and {v}")
            return 1
        worst = max(worst, rel(u, v))
    print(f"same posteriors: {len(files)} files, {len(sa['elbo'])} iterations, largest relative difference "
          f"{'below 1e-12' if worst < 1e-12 else f'{worst:.1e}'}")
    return 0

sys.exit(main())
