"""Compares posteriors of two --out directories up to a relabelling of the
components: near.py A B TOLERANCE SPEC... where SPEC is FILE:COLUMN (the
column's values over the rows, sorted) or FILE:PREFIX* (the first row's
columns whose names start with PREFIX, sorted). Prints the largest relative
difference of each SPEC; exits 1 when one is above TOLERANCE."""
import csv
import os
import sys


def values(directory, spec):
    name, column = spec.split(":")
    rows = list(csv.reader(open(os.path.join(directory, name))))
    header, body = rows[0], rows[1:]
    if column.endswith("*"):
        cols = [i for i, h in enumerate(header) if h.startswith(column[:-1])]
        return sorted(float(body[0][i]) for i in cols)
    i = header.index(column)
    return sorted(float(r[i]) for r in body)


def main():
    a, b, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    status = 0
    for spec in sys.argv[4:]:
        u, v = values(a, spec), values(b, spec)
        if len(u) != len(v) or not u:
            print(f"{spec}: {len(u)} and {len(v)} values")
            return 1
        worst = max(abs(x - y) / max(abs(x), abs(y), 1e-300) for x, y in zip(u, v))
        ok = worst <= tol
        status = status or not ok
        print(f"{spec}: {'within' if ok else 'NOT within'} {tol:g} (largest relative difference {worst:.2g})")
    return status


sys.exit(main())
