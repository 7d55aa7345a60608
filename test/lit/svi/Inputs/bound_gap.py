"""bound_gap.py BATCH SVI TOLERANCE [rise]: the held-out bound per observation
in SVI/summary.json is within TOLERANCE (relative) of BATCH/summary.json's or
better; with `rise`, the stochastic run's ELBO estimates rose too (the mean
of its last fifth of steps above that of its first fifth). Prints both;
exits 1 if not."""
import json
import sys

batch = json.load(open(sys.argv[1] + "/summary.json"))
svi = json.load(open(sys.argv[2] + "/summary.json"))
tol = float(sys.argv[3])
b = batch["heldout"]["bound_per_observation"]
s = svi["heldout"]["bound_per_observation"]
gap = (b - s) / abs(b)
elbo = svi["elbo"]
fifth = max(1, len(elbo) // 5)
first, last = sum(elbo[:fifth]) / fifth, sum(elbo[-fifth:]) / fifth
rise = len(sys.argv) > 4 and sys.argv[4] == "rise"
ok = gap <= tol and (last > first or not rise)
print(f"bound per observation: batch {b:.6f}, svi {s:.6f}: {'within' if gap <= tol else 'NOT within'} {tol:g}")
if rise:
    print(f"ELBO estimates {'rose' if last > first else 'did NOT rise'}: first fifth {first:.6g}, last fifth {last:.6g}")
sys.exit(0 if ok else 1)
