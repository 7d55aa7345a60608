"""Two ppc output folders hold the same run: every posterior CSV's numbers
and summary.json's ELBO trace agree to a relative tolerance.

    same_run.py DIR_A DIR_B TOL
"""
import csv
import json
import math
import os
import sys


def numbers(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(v) for v in r] for r in rows[1:]]


def close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def main():
    a, b, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    files = sorted(f for f in os.listdir(a) if f.endswith(".csv"))
    if files != sorted(f for f in os.listdir(b) if f.endswith(".csv")) or not files:
        sys.exit(f"different outputs: {files}")
    worst = 0.0
    for name in files:
        ha, ra = numbers(os.path.join(a, name))
        hb, rb = numbers(os.path.join(b, name))
        if ha != hb or len(ra) != len(rb):
            sys.exit(f"{name}: different columns or rows")
        for x, y in zip(ra, rb):
            for u, v in zip(x, y):
                if not close(u, v, tol):
                    sys.exit(f"{name}: {u!r} != {v!r}")
                worst = max(worst, abs(u - v) / max(1.0, abs(u), abs(v)))
    ea = json.load(open(os.path.join(a, "summary.json")))["elbo"]
    eb = json.load(open(os.path.join(b, "summary.json")))["elbo"]
    if len(ea) != len(eb) or not all(close(u, v, tol) for u, v in zip(ea, eb)):
        sys.exit(f"ELBO traces differ: {ea[-1]!r} vs {eb[-1]!r}")
    if any(v < u - 1e-9 * abs(u) for u, v in zip(ea, ea[1:])):
        sys.exit("the ELBO decreased")
    print(f"same run: {len(files)} outputs, {len(ea)} ELBO values (largest difference {worst:.1e})")


main()
