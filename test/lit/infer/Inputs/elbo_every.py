"""A run with --elbo-every against the same run evaluating every iteration.

    elbo_every.py EVERY_DIR FULL_DIR ITERATIONS...

The posteriors are the same bits: skipping the ELBO's terms changes nothing
else. EVERY_DIR's ELBO trace holds the values of FULL_DIR's at exactly
ITERATIONS (summary.json's elbo_iterations), to 1e-12 relative: with
--elbo-every N > 1 a Dirichlet's entropy is computed in the ELBO block
instead of shared with its statistics (the same terms, summed apart).
"""
import json
import os
import sys


def main():
    every, full, expected = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
    files = sorted(f for f in os.listdir(full) if f.endswith(".csv"))
    if not files or files != sorted(f for f in os.listdir(every) if f.endswith(".csv")):
        sys.exit(f"different outputs: {files}")
    for name in files:
        if open(os.path.join(every, name)).read() != open(os.path.join(full, name)).read():
            sys.exit(f"{name} differs")
    se = json.load(open(os.path.join(every, "summary.json")))
    sf = json.load(open(os.path.join(full, "summary.json")))
    if se["elbo_iterations"] != expected:
        sys.exit(f"evaluated at {se['elbo_iterations']}, expected {expected}")
    if sf["elbo_iterations"] != list(range(1, len(sf["elbo"]) + 1)):
        sys.exit("the full run did not evaluate every iteration")
    if len(se["elbo"]) != len(expected) or len(se["time"]) != len(expected):
        sys.exit("a value or a time per evaluated iteration")
    for it, value in zip(expected, se["elbo"]):
        if abs(value - sf["elbo"][it - 1]) > 1e-12 * abs(value):
            sys.exit(f"iteration {it}: ELBO {value!r}, every iteration gives {sf['elbo'][it - 1]!r}")
    if se["iterations"] != sf["iterations"]:
        sys.exit("different numbers of iterations")
    print(f"same posteriors; ELBO at {len(expected)} of {se['iterations']} iterations, equal to the full trace's")


main()
