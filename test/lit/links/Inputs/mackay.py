import csv, math, os, sys
out = sys.argv[1]
pred = list(csv.DictReader(open(os.path.join(out, "y.predicted.csv"))))
fit = list(csv.DictReader(open(os.path.join(out, "y.1.csv"))))
assert len(pred) == 1 and pred[0]["n"] == "0", pred
m, v = float(fit[0]["mean"]), float(fit[0]["variance"])
want = 1 / (1 + math.exp(-m / math.sqrt(1 + math.pi * v / 8)))
got = float(pred[0]["p"])
assert abs(got - want) < 1e-9 * want, (got, want)
print("predicted p of row 0 agrees with MacKay's approximation")
