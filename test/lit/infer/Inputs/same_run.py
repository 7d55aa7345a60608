"""same_run.py A B ELBO_TOL VALUE_TOL: two --out directories hold the same run:
ELBO traces equal to ELBO_TOL relative, every posterior CSV to VALUE_TOL
relative (entries below 1 in magnitude: absolute). Prints 'same run: N
iterations' or the first difference, and exits 1 on a difference."""
import csv
import json
import os
import sys

a, b, elbo_tol, value_tol = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
ea, eb = (json.load(open(os.path.join(d, "summary.json")))["elbo"] for d in (a, b))
if len(ea) != len(eb):
    sys.exit(f"different lengths: {len(ea)} and {len(eb)} iterations")
for i, (x, y) in enumerate(zip(ea, eb)):
    if abs(x - y) > elbo_tol * abs(y):
        sys.exit(f"ELBO differs at iteration {i + 1}: {x!r} and {y!r}")
files = sorted(f for f in os.listdir(a) if f.endswith(".csv"))
if files != sorted(f for f in os.listdir(b) if f.endswith(".csv")):
    sys.exit("different posterior files")
for f in files:
    ra, rb = (list(csv.reader(open(os.path.join(d, f)))) for d in (a, b))
    if ra[0] != rb[0] or len(ra) != len(rb):
        sys.exit(f"{f}: different shapes")
    for r, (x, y) in enumerate(zip(ra[1:], rb[1:])):
        for c, (u, v) in enumerate(zip(x, y)):
            u, v = float(u), float(v)
            if abs(u - v) > value_tol * max(1.0, abs(v)):
                sys.exit(f"{f}: row {r + 1} column {ra[0][c]}: {u!r} and {v!r}")
print(f"same run: {len(ea)} iterations")
