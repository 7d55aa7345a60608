"""Check the ELBO trace of an --out directory: every value finite, and no
step down by more than 1e-9 relative (VMP never decreases the ELBO; the
slack is rounding). Usage: monotone.py OUT_DIR [EXPECTED_ITERATIONS]"""
import json
import math
import sys


def main():
    with open(sys.argv[1] + "/summary.json") as f:
        elbo = json.load(f)["elbo"]
    # nlohmann::json writes NaN and infinities as null.
    for i, e in enumerate(elbo):
        if not isinstance(e, (int, float)) or not math.isfinite(e):
            print("not finite: ELBO at iteration %d is %r" % (i + 1, e))
            return 1
    for i in range(1, len(elbo)):
        if elbo[i] < elbo[i - 1] - 1e-9 * abs(elbo[i - 1]):
            print("decrease at iteration %d: %.17g -> %.17g (relative %.3g)" %
                  (i + 1, elbo[i - 1], elbo[i], (elbo[i - 1] - elbo[i]) / abs(elbo[i - 1])))
            return 1
    # A run cut short (an error, a convergence test) would check less than asked.
    if len(sys.argv) > 2 and len(elbo) != int(sys.argv[2]):
        print("expected %s iterations, got %d" % (sys.argv[2], len(elbo)))
        return 1
    print("monotone: %d iterations" % len(elbo))
    return 0


if __name__ == "__main__":
    sys.exit(main())
